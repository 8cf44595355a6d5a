"""What the backends read of Spark's printed plans, without a JVM: the Connect backend's row
estimate (the optimiser's statistics as `explain(mode="cost")` prints them) and its reading of
a parsed plan for `ddlog sql`'s check."""
from __future__ import annotations

from ddlog.runtime.backend import connect


class Printed:
    """A DataFrame of which only its cost explanation is asked."""

    def __init__(self, text: str):
        self.text = text

    def _explain_string(self, mode: str) -> str:
        assert mode == "cost"
        return self.text


COST = """== Optimized Logical Plan ==
Filter (c0#1L > 1), Statistics(sizeInBytes=12.0 MiB{rows})
+- Relation [c0#1L] parquet, Statistics(sizeInBytes=24.0 MiB, rowCount=2.00E+6)

== Physical Plan ==
*(1) Filter (c0#1L > 1)
"""


def test_a_row_count_is_read_whole_in_every_notation():
    assert connect.estimated_rows(Printed(COST.format(rows=", rowCount=1.23E+6"))) == 1_230_000
    assert connect.estimated_rows(Printed(COST.format(rows=", rowCount=42"))) == 42
    # the root has no count: not the leaf's below it either (the first statistics are the root's)
    assert connect.estimated_rows(Printed(COST.format(rows=""))) is None


def test_a_parsed_plan_is_read_root_first_and_commands_are_told():
    insert = """== Parsed Logical Plan ==
'InsertIntoStatement 'UnresolvedRelation [t], [], false, false, false
+- 'Project [*]
   +- 'UnresolvedRelation [Reach], [], false

== Analyzed Logical Plan ==
InsertIntoStatement ...
"""
    nodes, text = connect.plan_nodes(insert)
    assert nodes == [("InsertIntoStatement", True), ("Project", False),
                     ("UnresolvedRelation", False)]
    assert "Analyzed" not in text
    select = """== Parsed Logical Plan ==
'Aggregate ['x], ['x, unresolvedalias('count(1))]
+- 'Join Inner
   :- 'UnresolvedRelation [Reach], [], false
   +- 'SubqueryAlias e
      +- 'UnresolvedRelation [Edge], [], false
"""
    nodes, _ = connect.plan_nodes(select)
    assert [n for n, _ in nodes] == ["Aggregate", "Join", "UnresolvedRelation", "SubqueryAlias",
                                     "UnresolvedRelation"]
    assert not any(command for _, command in nodes)
    assert connect.plan_nodes("== Parsed Logical Plan ==\nShowTables\n")[0] == [("ShowTables",
                                                                                  True)]
    assert connect.plan_nodes("nothing")[0] == [("?", True)]


def test_jobs_are_counted_by_the_session_tags_the_server_gives_them():
    """The server's job listing names a session's tag as `..._Tag_<tag>`: each of ours is
    counted, others' (another session, another operation) are not."""
    def job(*tags: str) -> dict:
        return {"jobTags": list(tags)}

    mine = "SparkConnect_SessionTag_User__Session_s1_Tag_"
    jobs = [job(mine + "ddlog-1-5", "spark-session-x"), job(mine + "ddlog-1-5"),
            job(mine + "ddlog-2-6", "SparkConnect_OperationTag_User__Session_s1_Operation_o"),
            job("SparkConnect_SessionTag_User__Session_s2_Tag_other"), job(), {"jobId": 3}]
    assert connect.tagged_counts(jobs, ["ddlog-1-5", "ddlog-2-6", "ddlog-3-7"]) == {
        "ddlog-1-5": 2, "ddlog-2-6": 1, "ddlog-3-7": 0}


def test_the_job_listing_is_on_the_connect_servers_host():
    assert connect.application_url("10.0.0.5", "4040", "app-1") == \
        "http://10.0.0.5:4040/api/v1/applications/app-1"
    assert connect.application_url("::1", "4041", "local-2") == \
        "http://[::1]:4041/api/v1/applications/local-2"
