"""The Spark Connect backend: a session whose Spark runs in a server (`sc://HOST:PORT`,
Databricks serverless and shared clusters, `pyspark --remote`), reached through PySpark's
public DataFrame API only. runtime/backend/__init__.py lists what a backend does.

A Connect client builds plans in Python and sends them whole; the server analyses them when
they run or when their schema is asked for, so there is nothing to gain from building them
below the API. What differs from the classic backend:

- leaves: a small result's rows come to Python and go back as a local relation
  (`createDataFrame`, sent as Arrow); a large one is a checkpoint the server keeps
  (`localCheckpoint`, or `checkpoint` when the server has a checkpoint directory);
- checkpoints are the session's on the server: the engine runs on the caller's session
  itself (engine_session), not on a new one, so that its results can be read there;
- Spark jobs are counted from the server's job listing (its monitoring REST API, beside its
  web UI) when the client can reach it; Connect's protocol itself does not list jobs. Spark's
  planning is not told apart from the run: the server plans as it runs;
- `ddlog sql` checks a query's parsed plan as Spark's EXPLAIN prints it.
"""
from __future__ import annotations

import json
import re
import urllib.request
import weakref
from contextlib import contextmanager
from typing import Callable, Hashable, Iterator

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

NAME = "connect"


def col(name: str) -> Column:
    """`F.col(name)`: a Connect column is an expression built in Python, without a round
    trip, so there is nothing to remember."""
    return F.col(name)


def remembered(key: Hashable, make: Callable[[], Column]) -> Column:
    return make()


def select(df: DataFrame, *cols: str | Column) -> DataFrame:
    return df.select(*cols)


def union_many(dfs: list[DataFrame], by_name: bool = False,
               columns: list[list[Column]] | None = None) -> DataFrame:
    """The union of `dfs` in their order (see the classic backend), by the API's unions: the
    server flattens a chain of them into one node when it analyses the plan."""
    frames = dfs if columns is None else [d.select(*cs) for d, cs in zip(dfs, columns)]
    out = frames[0]
    for d in frames[1:]:
        out = out.unionByName(d) if by_name else out.union(d)
    return out


def aggregate_where(dfs: DataFrame | list[DataFrame], keys: list[str], value: Column,
                    cond: Column) -> DataFrame:
    frames = dfs if isinstance(dfs, list) else [dfs]
    return union_many(frames, by_name=True).groupBy(*keys).agg(value).filter(cond)


# -- leaves ------------------------------------------------------------------------------------

def collect_local(df: DataFrame) -> tuple[DataFrame, int, list]:
    """`df`'s rows collected (one action) and sent back as a local relation: a leaf without
    lineage, which the server reads without a job. Returns it, its row count and the rows
    (for rows_leaf)."""
    rows = df.collect()
    return df.sparkSession.createDataFrame(rows, schema=df.schema), len(rows), rows


def rows_leaf(local: DataFrame, rows: list, start: int, stop: int, column: str,
              one_partition: bool) -> DataFrame:
    """Rows start..stop of a collected pack as a local relation of their own, read out of
    their struct column `column`."""
    struct = local.schema[column].dataType
    leaf = local.sparkSession.createDataFrame([r[column] for r in rows[start:stop]],
                                              schema=struct)
    return leaf.coalesce(1) if one_partition else leaf


def local_rows(local: DataFrame, rows: list, columns: list[str] | None = None) -> list:
    """A collected pack's rows: already here (collect_local's), so the server is not asked
    again. Rows keep every column; callers read them by position from the first."""
    if columns and list(local.columns[:len(columns)]) != columns:
        return local.select(*columns).collect()
    return rows


def json_frame(spark: SparkSession, schema: T.StructType, text: str) -> DataFrame:
    """JSON lines (one object per row, of `schema`) as a local relation of the lines, parsed
    by the server (so that values read back exactly as the classic backend reads them)."""
    if not text:
        return spark.createDataFrame([], schema=schema)
    text = spark.createDataFrame([(line,) for line in text.split("\n")], schema="value string")
    parsed = F.from_json("value", schema, {"allowNonNumericNumbers": "true"})
    return text.select(parsed.alias("r")).select(*[F.col(f"r.{f.name}").alias(f.name)
                                                   for f in schema.fields])


def checkpoint_leaf(df: DataFrame) -> DataFrame:
    """`df`'s rows checkpointed by the server (written by the first action on the result):
    reliably in its checkpoint directory when it has one, else on its executors. At most the
    session's shuffle partitions (merged without a shuffle), as in the classic backend."""
    spark = df.sparkSession
    cut = (df.checkpoint(eager=False) if checkpoint_dir(spark)
           else df.localCheckpoint(eager=False))
    limit = int(spark.conf.get("spark.sql.shuffle.partitions"))
    return cut.coalesce(limit)


# Spark prints a row count to three significant digits: 1234567 is "1.23E+6"
_STATS = re.compile(r"Statistics\(sizeInBytes=[^,)]*(?:, rowCount=([0-9.E+]+))?")


def estimated_rows(df: DataFrame) -> int | None:
    """The optimiser's row count of `df`'s plan, read from its cost explanation; None when it
    has none."""
    text = df._explain_string(mode="cost")
    optimized = text.split("== Optimized Logical Plan ==", 1)[-1]
    found = _STATS.search(optimized)
    return int(float(found[1])) if found and found[1] else None


# -- the session -------------------------------------------------------------------------------

def is_local(spark: SparkSession) -> bool:
    return str(spark.conf.get("spark.master", "")).startswith("local")


def checkpoint_dir(spark: SparkSession) -> str | None:
    return spark.conf.get("spark.checkpoint.dir", None) or None


def executors(spark: SparkSession) -> int | None:
    """Not known to a Connect client: the server's cluster is its own business."""
    return None


def adopt(spark: SparkSession, df: DataFrame) -> DataFrame:
    """`df` as a DataFrame of `spark` (another session of the same server): its plan, sent
    by `spark`. Plans that read a session's checkpoints stay in that session."""
    if df.sparkSession is spark:
        return df
    return DataFrame(df._plan, spark)


def is_set(spark: SparkSession, key: str) -> bool:
    return False


@contextmanager
def tagging(spark: SparkSession, tag: str, label: str) -> Iterator[None]:
    """Tag the operations this thread starts inside with `tag` (Connect's tags are the
    session's, per thread)."""
    spark.addTag(tag)
    try:
        yield
    finally:
        spark.removeTag(tag)


COUNTS_LATER = True  # one look at the server's job listing counts the whole epoch's

# The server's job listing (its monitoring REST API) of each session, found at its first use:
# None where the client cannot reach it.
_LISTINGS: "weakref.WeakKeyDictionary[SparkSession, str | None]" = weakref.WeakKeyDictionary()
_TIMEOUT = 2.0  # seconds to wait for the listing, which a firewall may swallow


def counts_jobs(spark: SparkSession) -> bool:
    """Whether the server's job listing can be read: its web UI runs (`spark.ui.enabled`), on
    the Connect server's host at `spark.ui.port`, and answers for the session's application."""
    if spark not in _LISTINGS:
        _LISTINGS[spark] = _listing(spark)
    return _LISTINGS[spark] is not None


def _listing(spark: SparkSession) -> str | None:
    conf = spark.conf
    if str(conf.get("spark.ui.enabled", "true")).lower() == "false":
        return None
    app = application_url(spark.client._builder.host, conf.get("spark.ui.port", "4040"),
                          conf.get("spark.app.id", ""))
    try:
        _read(app)  # the application's summary: small, and proves the address
    except (OSError, ValueError):
        return None
    return app + "/jobs"


def application_url(host: str, port: str, app: str) -> str:
    """The REST address of an application on a driver's UI (IPv6 hosts in brackets)."""
    host = f"[{host}]" if ":" in host and not host.startswith("[") else host
    return f"http://{host}:{port}/api/v1/applications/{app}"


def _read(url: str):
    with urllib.request.urlopen(url, timeout=_TIMEOUT) as answer:
        return json.load(answer)


def jobs_tagged(spark: SparkSession, tags: list[str]) -> dict[str, int]:
    """How many of the server's jobs carried each of `tags` (the server tags a job with each
    of the session's tags as `..._Tag_<tag>`), as its status store lists them; 0 each when
    the listing cannot be read."""
    counts = dict.fromkeys(tags, 0)
    url = _LISTINGS.get(spark)
    if url is None or not tags:
        return counts
    try:
        jobs = _read(url)
    except (OSError, ValueError):
        return counts
    return tagged_counts(jobs, tags)


def tagged_counts(jobs: list[dict], tags: list[str]) -> dict[str, int]:
    """How many of `jobs` (the REST listing's entries) carry each of `tags`."""
    counts = dict.fromkeys(tags, 0)
    by_suffix = {f"_Tag_{tag}": tag for tag in tags}
    for job in jobs:
        for server_tag in job.get("jobTags") or ():
            found = by_suffix.get(server_tag[server_tag.rfind("_Tag_"):])
            if found is not None:
                counts[found] += 1
    return counts


def plan(df: DataFrame) -> bool:
    """The server plans a query as it runs it: nothing to do apart."""
    return False


# What a query's parsed plan may hold (the simple names EXPLAIN prints): anything else is a
# command or runs something (TRANSFORM's scripts).
_QUERY_NODES = frozenset("""
Project Filter Aggregate Sort GlobalLimit LocalLimit Limit Offset Tail Union Intersect Except
Distinct Deduplicate Join LateralJoin Generate Window Expand Sample Pivot Unpivot Repartition
RepartitionByExpression RebalancePartitions SubqueryAlias UnresolvedRelation
UnresolvedInlineTable LocalRelation OneRowRelation Range UnresolvedWith WithCTE
CTERelationDef CTERelationRef UnresolvedHint UnresolvedSubqueryColumnAliases
UnresolvedTableValuedFunction UnresolvedTVFAliases UnresolvedHaving Subquery
""".split())
_NODE = re.compile(r"^[\s:+|\-]*'?(\w+)")


def parsed_plan(spark: SparkSession, query: str) -> tuple[list[tuple[str, bool]], str]:
    """The parsed plan of `query` as the server's EXPLAIN prints it (nothing runs): see
    plan_nodes."""
    return plan_nodes(spark.sql(f"EXPLAIN EXTENDED {query}").collect()[0][0])


def plan_nodes(explained: str) -> tuple[list[tuple[str, bool]], str]:
    """The parsed plan's nodes in an EXPLAIN EXTENDED text, root first, each (simple name,
    whether it may be a command: not a known query node), and the parsed plan's text."""
    header = "== Parsed Logical Plan =="
    if header not in explained:  # not a plan: nothing to accept
        return [("?", True)], explained
    parsed = explained.split(header, 1)[1].split("\n== ", 1)[0]
    nodes = []
    for line in parsed.strip("\n").splitlines():
        found = _NODE.match(line)
        if found and (not nodes or re.match(r"^[\s:|]*[+:]-", line)):
            nodes.append((found[1], found[1] not in _QUERY_NODES))
    return nodes or [("?", True)], parsed
