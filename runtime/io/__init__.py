"""Sources and sinks: where bound input relations come from and output relations go.

    SOURCE  table:NAME | parquet:PATH | csv:PATH | json:PATH | dat:PATH (or any PATH.dat)
    SINK    table:NAME | parquet:PATH | csv:PATH | json:PATH

A source is read as a set of rows typed by the relation's columns: columns are matched by the
declared names (ignoring case; extra columns are ignored); CSV (with a header row) is read
as text and converted, JSON lines and Parquet/tables must have castable types. One Spark job
checks what the types cannot: no nulls outside `Option` columns, values that fit `bit<N>` /
`signed<N>`, text that converts. A `.dat` file of DDlog commands is read by ddlog/app/database.py
(it needs the literal reader), so `read_source` does not take one.

A sink is rewritten as a whole after each commit, with the relation's declared column names.
Paths are made absolute when bound, so a state can be refreshed from any directory.
"""
from ddlog.runtime.io.sinks import check_apart, check_sink_path, write_sink
from ddlog.runtime.io.sources import check_csv_columns, read_source
from ddlog.runtime.io.specs import SINK_KINDS, SOURCE_KINDS, BindingError, Spec, parse_binding, parse_spec

__all__ = ["SINK_KINDS", "SOURCE_KINDS", "BindingError", "Spec", "check_apart", "check_csv_columns",
           "check_sink_path", "parse_binding", "parse_spec", "read_source", "write_sink"]
