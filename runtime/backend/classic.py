"""The classic backend: a session whose JVM runs in this process (py4j), reached below
PySpark's API where that is faster. runtime/backend/__init__.py lists what a backend does.

Plans are built as Catalyst nodes on the JVM in one step, where PySpark's API takes many.

PySpark builds a plan one operator at a time, and Spark analyses every DataFrame as it is
built: a union of n frames is n - 1 unions, each analysing the grown plan again (as a balanced
tree, each frame about log n times). Made here as one node over the frames' analysed plans, it
is analysed once, in a small fraction of the time a balanced tree of unions of many small
aggregates takes. Likewise a select here costs fewer py4j round trips than PySpark's
(`select`, `col`).
"""
from __future__ import annotations

import threading
import weakref
from contextlib import contextmanager
from typing import TYPE_CHECKING, Callable, Hashable, Iterator

from py4j.java_gateway import JavaClass, JavaMember, JavaPackage, JVMView
from pyspark.sql import Column, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.classic.dataframe import DataFrame


if TYPE_CHECKING:
    from py4j.java_gateway import JavaObject

NAME = "classic"


def union_many(dfs: list[DataFrame], by_name: bool = False,
               columns: list[list[Column]] | None = None) -> DataFrame:
    """The union of `dfs` (one at least), in their order, matching columns by position or,
    with `by_name`, by name: one Catalyst `Union` node, as Spark's own `union` makes when it
    flattens a chain of them. `columns`, one list per frame of named columns (aliases or
    column references): each frame is first projected onto its list (`df.select(*cols)`),
    in the same plan, analysed with the union."""
    spark = dfs[0].sparkSession
    if len(dfs) == 1 and columns is None:
        return dfs[0]
    return _frame(spark, _union_plan(dfs, by_name, columns))


def aggregate_where(dfs: DataFrame | list[DataFrame], keys: list[str], value: Column,
                    cond: Column) -> DataFrame:
    """`df.groupBy(*keys).agg(value).filter(cond)` as one plan (an `Aggregate` under a
    `Filter`), analysed once: the API's way analyses the aggregate, then the filter over it.
    `value` is named; `cond` may read it and the keys. A list of frames is their union by
    name, in the same plan. (A Z-set's consolidation is the commonest plan the engine builds,
    so the analysis this saves is paid for in nearly every action.)"""
    frames = dfs if isinstance(dfs, list) else [dfs]
    spark = frames[0].sparkSession
    jvm = jvm_of(spark)
    logical = _logical(spark)
    child = _union_plan(frames, True, None)  # a frame's own plan when it is one
    attrs = [jvm.org.apache.spark.sql.catalyst.analysis.UnresolvedAttribute.quoted(k)
             for k in keys]
    conversions = _conversions(spark)
    agg = logical.Aggregate(_seq(spark, attrs),
                            _seq(spark, [*attrs, conversions.expression(value._jc)]),
                            child, jvm.scala.Option.empty())
    return _frame(spark, logical.Filter(conversions.expression(cond._jc), agg))


def struct_leaf(spark, rows: JavaObject, schema: JavaObject, column: str,
                one_partition: bool) -> DataFrame:
    """Rows held on the JVM (a list of `Row`s of `schema`) as a local relation, read out of
    their struct column `column` (its fields become the columns) and, with `one_partition`,
    said to be one partition (a `coalesce(1)`): the three steps of a pack's frame as one plan,
    analysed once, where the API's way (a local relation, a select and a coalesce) analyses
    each step's plan again, for every frame."""
    jvm = jvm_of(spark)
    logical = _logical(spark)
    # fresh attributes for every leaf, as a new DataFrame's would be
    attrs = jvm.org.apache.spark.sql.catalyst.types.DataTypeUtils.toAttributes(schema)
    plan = logical.LocalRelation.fromExternalRows(attrs, _seq(spark, rows))
    star = jvm.org.apache.spark.sql.catalyst.analysis.UnresolvedStar(
        jvm.scala.Some(_seq(spark, [column])))
    plan = logical.Project(_seq(spark, [star]), plan)
    if one_partition:
        plan = logical.Repartition(1, False, plan)
    return _frame(spark, plan)


def _union_plan(dfs: list[DataFrame], by_name: bool,
                columns: list[list[Column]] | None) -> JavaObject:
    """The logical plan of union_many (not yet analysed); of one frame without `columns`,
    its own plan."""
    spark = dfs[0].sparkSession
    plans = [d._jdf.logicalPlan() for d in dfs]
    if columns is not None:
        project = _logical(spark).Project
        conversions = _conversions(spark)
        plans = [project(_seq(spark, [conversions.expression(c._jc) for c in cols]), plan)
                 for cols, plan in zip(columns, plans)]
    if len(plans) == 1:
        return plans[0]
    return _logical(spark).Union(_seq(spark, plans), by_name, False)


def _conversions(spark) -> JavaObject:
    """Spark's converter of a Column to its Catalyst expression (`.expression(jc)`, unresolved
    until its plan is analysed). Reaching it is a py4j round trip: fetched once per plan, not
    once per column (a pack's projections hold a few columns per frame)."""
    classic = jvm_of(spark).org.apache.spark.sql.classic
    return getattr(classic, "ColumnConversions$").__getattr__("MODULE$")


def _logical(spark):
    """Catalyst's package of logical plan nodes."""
    return jvm_of(spark).org.apache.spark.sql.catalyst.plans.logical


def col(name: str) -> Column:
    """`F.col(name)`, made once per JVM (kept by the engine's view of it, jvm_of)."""
    return remembered(name, lambda: F.col(name))


def remembered(key: Hashable, make: Callable[[], Column]) -> Column:
    """The Column `make()` gives, made once per JVM as `col` is, for a Column that depends on
    nothing but `key`: an expression over named columns that an operator builds again in
    every iteration (each function, operator and alias of a Column is a py4j round trip).
    A column's name is its own key; other keys are tuples."""
    made = jvm_of().columns
    found = made.get(key)
    if found is None:
        found = made[key] = make()
    return found


def select(df: DataFrame, *cols: str | Column) -> DataFrame:
    """`df.select(*cols)` in fewer py4j round trips: PySpark names each string column by a
    call of its own and hands the columns over one call each (an ArrayList's `add`); here a
    name's column is remembered (`col`) and the list goes over ten at a time (`_seq`). The
    same plan, analysed the same way."""
    spark = df.sparkSession
    jcols = [(col(c) if isinstance(c, str) else c)._jc for c in cols]
    return DataFrame(df._jdf.select(_seq(spark, jcols)), spark)


def _seq(spark, items) -> JavaObject:
    """A Scala Seq of `items` (a Python list of JVM objects or strings, or a JVM list).

    py4j passes a Python list as a new ArrayList with its elements added one round trip each;
    `List.of` takes up to ten in one, so a Seq of a few costs two round trips in all (the
    commonest lists here hold one to three)."""
    jvm = jvm_of(spark)
    if isinstance(items, list):
        chunks = [items[k:k + _LIST_OF] for k in range(0, len(items), _LIST_OF)] or [[]]
        listed = jvm.java.util.List.of(*chunks[0])
        if len(chunks) > 1:
            listed = jvm.java.util.ArrayList(listed)
            for chunk in chunks[1:]:
                listed.addAll(jvm.java.util.List.of(*chunk))
        items = listed
    return jvm.org.apache.spark.api.python.PythonUtils.toSeq(items)


_LIST_OF = 10  # java.util.List.of's overloads take up to ten elements


def _frame(spark, plan: JavaObject) -> DataFrame:
    """A DataFrame of a logical plan made on the JVM (analysed here, once)."""
    jdf = jvm_of(spark).org.apache.spark.sql.classic.Dataset.ofRows(spark._jsparkSession, plan)
    return DataFrame(jdf, spark)


# -- leaves ------------------------------------------------------------------------------------

def collect_local(df: DataFrame) -> tuple[DataFrame, int, tuple[JavaObject, JavaObject]]:
    """`df`'s rows collected on the JVM (one action; they never cross to Python) behind a
    local-relation leaf: no lineage, exact statistics, and read without a Spark job. Returns
    it, its row count and the rows with their schema (JVM objects, for rows_leaf)."""
    spark = df.sparkSession
    jschema = df._jdf.schema()
    jrows = df._jdf.collectAsList()
    local = spark._jsparkSession.createDataFrame(jrows, jschema)
    return DataFrame(local, spark), jrows.size(), (jrows, jschema)


def rows_leaf(local: DataFrame, held: tuple[JavaObject, JavaObject], start: int, stop: int,
              column: str, one_partition: bool) -> DataFrame:
    """Rows start..stop of a collected pack (collect_local's rows and schema) as a local
    relation of their own, read out of their struct column `column`."""
    jrows, jschema = held
    return struct_leaf(local.sparkSession, jrows.subList(start, stop), jschema, column,
                       one_partition)


def local_rows(local: DataFrame, held: tuple[JavaObject, JavaObject],
               columns: list[str] | None = None) -> list:
    """A collected pack's rows (of `columns`, or all) in Python: read from its local relation,
    which takes no Spark job (they were collected on the JVM, never crossed to Python)."""
    return (local.select(*columns) if columns else local).collect()


def json_frame(spark: SparkSession, schema: T.StructType, text: str) -> DataFrame:
    """JSON lines (one object per row, of `schema`) as a local relation: the text goes to the
    JVM as one string, split and parsed there, and the optimiser folds the parse into the
    leaf. No text is no rows."""
    jview, jspark = jvm_of(spark), spark._jsparkSession
    if not text:
        return DataFrame(jspark.createDataFrame(jview.java.util.ArrayList(),
                                                jspark.parseDataType(schema.json())), spark)
    jlines = jview.java.util.regex.Pattern.compile("\n").splitAsStream(text).toList()
    lines = DataFrame(jspark.createDataset(jlines, jview.org.apache.spark.sql.Encoders.STRING())
                      .toDF(), spark)
    return _parsed(lines, schema)


def _parsed(text: DataFrame, schema: T.StructType) -> DataFrame:
    parsed = F.from_json("value", schema, {"allowNonNumericNumbers": "true"})
    return text.select(parsed.alias("r")).select(*[col(f"r.{f.name}").alias(f.name)
                                                   for f in schema.fields])


def checkpoint_leaf(df: DataFrame) -> DataFrame:
    """`df`'s rows behind a new plan leaf: a local checkpoint (written by the first action on
    the result), without the plan's lineage *or* its statistics.

    The rows are Spark's own (`Dataset.localCheckpoint`'s RDD, which copies each row the plan
    yields), kept as they are: a leaf of them reads them with a plain projection. A leaf
    over the Rows of `javaRDD` instead converts every row it reads back from a Java object,
    interpreted in small actions, several times slower.

    The leaf is not the Dataset that `localCheckpoint` returns: that keeps the size estimate
    of the plan it cuts, Catalyst multiplies estimates through joins, and fixpoints join data
    derived from earlier checkpoints with each other, so the estimates' exponents compound
    until optimising a plan takes minutes. A leaf made from the checkpointed RDD starts from
    the default estimate every time.

    With a checkpoint directory set (on a cluster: runtime/spark.reliable_checkpoints), the
    checkpoint is a reliable one, written there: a local checkpoint lives on an executor and
    is lost with it. It is cached too, so that writing it does not recompute it.

    Its partitions are at most the session's shuffle partitions: a union's partitions are
    its inputs' added up, and a fixpoint unions what it read from earlier checkpoints, so
    without a bound their number (and the tasks of every later job) could double with each
    iteration. Merging partitions needs no shuffle."""
    spark = df.sparkSession
    reliable = spark._jsc.sc().getCheckpointDir().isDefined()
    cut = df._jdf.checkpoint(False) if reliable else df._jdf.localCheckpoint(False)
    rdd = cut.logicalPlan().rdd()  # the plan's rows, copied, kept by the first action
    if reliable:
        rdd.persist(jvm_of(spark).org.apache.spark.storage.StorageLevel.MEMORY_AND_DISK())
    limit = int(spark.conf.get("spark.sql.shuffle.partitions"))
    if rdd.getNumPartitions() > limit:
        rdd = rdd.toJavaRDD().coalesce(limit).rdd()
    return DataFrame(spark._jsparkSession.internalCreateDataFrame(rdd, df._jdf.schema(), False),
                     spark)


def estimated_rows(df: DataFrame) -> int | None:
    """Spark's estimate of `df`'s rows, without running it: the optimiser's row count when it
    has one, else the plan's estimated size over a row's default size (a file source's size
    on disk, a cached DataFrame's size in memory). None when Spark knows nothing (a plan over
    a Python RDD, or rows given to `createDataFrame`: its default size)."""
    stats = df._jdf.queryExecution().optimizedPlan().stats()
    count = stats.rowCount()
    if count.isDefined():
        return int(count.get())
    size = int(stats.sizeInBytes())
    if size >= df.sparkSession._jsparkSession.sessionState().conf().defaultSizeInBytes():
        return None
    return size // max(1, df._jdf.schema().defaultSize())


# -- the session -------------------------------------------------------------------------------

def is_local(spark: SparkSession) -> bool:
    return spark.sparkContext.master.startswith("local")


def checkpoint_dir(spark: SparkSession) -> str | None:
    return spark.sparkContext.getCheckpointDir()


def executors(spark: SparkSession) -> int:
    """How many executors have joined the application (the driver not counted)."""
    return spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() - 1


def adopt(spark: SparkSession, df: DataFrame) -> DataFrame:
    """`df` (a DataFrame of another session of the same SparkContext) as a DataFrame of
    `spark`: the same analysed plan, planned and run under `spark`'s settings."""
    if df.sparkSession is spark:
        return df
    j = jvm_of(spark).org.apache.spark.sql.classic.Dataset.ofRows(spark._jsparkSession,
                                                                   df._jdf.logicalPlan())
    return DataFrame(j, spark)


def is_set(spark: SparkSession, key: str) -> bool:
    """Whether `key` is set in the session or in the SparkContext's configuration (not only
    Spark's default)."""
    return (spark._jsparkSession.sessionState().conf().contains(key)
            or spark.sparkContext.getConf().contains(key))


@contextmanager
def tagging(spark: SparkSession, tag: str, label: str) -> Iterator[None]:
    """Tag the jobs this thread starts inside with `tag`, and show them as `label` in
    Spark's UI; the thread's call-site properties are restored afterwards."""
    sc = spark.sparkContext
    own = {key: sc.getLocalProperty(key) for key in _CALL_SITE}
    sc.addJobTag(tag)
    for key in _CALL_SITE:
        sc.setLocalProperty(key, f"ddlog {label}")
    try:
        yield
    finally:
        sc.removeJobTag(tag)
        for key, value in own.items():
            sc.setLocalProperty(key, value)


# Spark's thread-local properties that, when both are set, stand for the call site
_CALL_SITE = ("callSite.short", "callSite.long")
_BUS_WAIT_MS = 10_000


def counts_jobs(spark: SparkSession) -> bool:
    return True


COUNTS_LATER = False  # each scope's jobs are counted as it ends


def jobs_tagged(spark: SparkSession, tags: list[str]) -> dict[str, int]:
    """How many jobs carried each of `tags`. The status tracker learns of a job from the
    listener bus, which runs behind the scheduler (the more so on a busy machine): it is let
    catch up first, so that the count is every job started, not only those already
    reported."""
    jsc = spark.sparkContext._jsc.sc()
    try:
        jsc.listenerBus().waitUntilEmpty(_BUS_WAIT_MS)
    except Exception:  # a bus that stays busy: count what it has reported
        pass
    tracker = jsc.statusTracker()
    return {tag: len(tracker.getJobIdsForTag(tag)) for tag in tags}


def plan(df: DataFrame) -> bool:
    """Have Spark plan `df`'s query now (analysis, optimisation, physical planning), so that
    the action that runs it next finds it planned and its time can be told apart."""
    df._jdf.queryExecution().executedPlan()
    return True


def parsed_plan(spark: SparkSession, query: str) -> tuple[list[tuple[str, bool]], str]:
    """What `ddlog sql` checks of a query, parsed by Spark's parser without running it: its
    plan's nodes, root first, each as (simple class name, whether it is a command), and the
    plan as text. Raises PySparkException when it does not parse."""
    plan = spark._jsparkSession.sessionState().sqlParser().parsePlan(query)
    command = jvm_of(spark).java.lang.Class.forName(
        "org.apache.spark.sql.catalyst.plans.logical.Command")
    nodes, todo = [], [plan]
    while todo:
        node = todo.pop()
        nodes.append((node.getClass().getSimpleName(),
                      bool(command.isAssignableFrom(node.getClass()))))
        children = node.children()
        todo.extend(children.apply(k) for k in range(children.size()))
    return nodes, plan.toString()


# ---------------------------------------------------------------------------------------------
# The engine's view of the JVM

_VIEWS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_VIEWS_LOCK = threading.Lock()


def jvm_of(spark: SparkSession | None = None) -> "_RememberingView":
    """The engine's view of the JVM (of `spark`'s, or else of the running SparkContext's
    gateway): one that remembers the classes and static methods it has found.

    PySpark names a JVM function afresh on every call: `F.col("x")` is a py4j round trip to
    find the class `functions`, one to find its method `col`, and only then the call; its
    helpers (`PythonUtils.toSeq` behind every list of columns) do the same. Building an
    epoch's plans makes thousands of such calls. A class and its methods do not change while
    the JVM runs, so the answers are kept, as py4j already keeps the methods of each object it
    holds. The view is the engine's own (PySpark's `SparkContext._jvm` is left as it is): the
    engine's plan building reaches the JVM through it."""
    from pyspark import SparkContext

    client = (spark.sparkContext._gateway if spark is not None
              else SparkContext._gateway)._gateway_client
    with _VIEWS_LOCK:
        view = _VIEWS.get(client)
        if view is None:
            plain = SparkContext._jvm
            view = _VIEWS[client] = _RememberingView(client, plain._jvm_name, id=plain._id)
        return view


class _Remembering:
    """Keeps what py4j's `__getattr__` finds: packages, classes and methods. Static fields are
    values, and are asked for each time."""

    _found: dict

    def __init__(self, *args, **kwargs):
        self._found = {}
        super().__init__(*args, **kwargs)

    def __getattr__(self, name: str):
        if name == "_found":
            raise AttributeError(name)
        if name.startswith("__"):  # py4j's own handling of magic names
            return super().__getattr__(name)
        found = self._found.get(name)
        if found is None:
            found = _remembering(super().__getattr__(name))
            if isinstance(found, (JavaClass, JavaPackage, JavaMember)):
                self._found[name] = found
        return found


class _RememberingView(_Remembering, JVMView):
    """Remembers a column reference by name too (backend.col): an unresolved name is the
    same in every plan, and the engine names the same few columns thousands of times an
    epoch (each a py4j round trip, and one more when py4j frees it). Likewise the
    expressions over named columns that operators build in every iteration
    (backend.remembered)."""

    columns: dict

    def __init__(self, *args, **kwargs):
        self.columns = {}
        super().__init__(*args, **kwargs)


class _RememberingPackage(_Remembering, JavaPackage):
    pass


class _RememberingClass(_Remembering, JavaClass):
    pass


def _remembering(found):
    """A package or class py4j found, as one that remembers its own look-ups."""
    if isinstance(found, JavaClass) and not isinstance(found, _RememberingClass):
        return _RememberingClass(found._fqn, found._gateway_client)
    if isinstance(found, JavaPackage) and not isinstance(found, _RememberingPackage):
        return _RememberingPackage(found._fqn, found._gateway_client, found._jvm_id)
    return found
