"""`ddlog sql`: what a query over a state may be. A query reads the relations (each a view of
its declared columns); it never writes a file, a table or a setting: the state's files, a
user's directory and a served session's settings are not a query's to change.

The query is parsed by Spark's own parser (so that what is checked is what would run) and
accepted when its plan is a query (SELECT, WITH, VALUES, TABLE, set operations: no node of it
a command or an insert), or when it is one of the commands that only show something (SHOW ...,
DESCRIBE ..., EXPLAIN ...). Functions that reach the JVM's classes (`reflect`, `java_method`)
are refused too: they can call anything, exiting the server included.
"""
from __future__ import annotations

import re

from ddlog.errors import DDlogError

# commands that only show: a plan whose root is one of these (by its class's simple name)
_SHOWING = re.compile(r"Show\w*|Describe\w*|ExplainCommand")
# nodes that write, wherever they are in a query's plan
_WRITING = re.compile(r"InsertInto\w*|Call|\w*Write\w*")
_JVM_CALLS = re.compile(r"\b(reflect|java_method|try_reflect)\s*\(", re.IGNORECASE)


class SqlError(DDlogError):
    """A query that `ddlog sql` does not run."""


def check_read_only(spark, query: str) -> None:
    """Raise SqlError unless `query` only reads (see above). Parsing takes no Spark job."""
    from pyspark.errors import PySparkException

    from ddlog.runtime import backend
    from ddlog.runtime.errors import describe

    try:
        nodes, text = backend.of(spark).parsed_plan(spark, query)
    except PySparkException as err:
        raise SqlError(f"sql: {describe(err)}") from None
    root, root_command = nodes[0]
    if root_command:
        if not _SHOWING.fullmatch(root):
            raise SqlError(f"sql: `{_first_word(query)}` is not a query: `ddlog sql` only "
                           f"reads (SELECT, WITH, VALUES, TABLE, SHOW, DESCRIBE, EXPLAIN); "
                           f"change a state with `ddlog feed`")
        return
    for name, command in nodes:
        if _WRITING.fullmatch(name) or command:
            raise SqlError(f"sql: the query writes ({name}): `ddlog sql` only reads; change "
                           f"a state with `ddlog feed`")
    if _JVM_CALLS.search(text):
        raise SqlError("sql: reflect and java_method call into the JVM and are not run by "
                       "`ddlog sql`")


def _first_word(query: str) -> str:
    words = re.sub(r"--[^\n]*|/\*.*?\*/", " ", query, flags=re.S).split()
    return words[0].upper() if words else ""
