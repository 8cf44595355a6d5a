"""Bound sources and sinks of a state (`ddlog run --input R=SOURCE --output R=SINK`): checking
the bindings against the program, and reading every bound input as a DataFrame.

Bindings live in the state's manifest (relation -> spec text), so `refresh` and every later
commit know them. A bare `FILE.dat` is stored under "*": it supplies every input relation that
no other binding names.
"""
from __future__ import annotations

from ddlog.app.dat import read_dat
from ddlog.app.database import Database
from ddlog.runtime.io import (BindingError, Spec, check_apart, check_sink_path, parse_binding,
                              parse_spec, read_source)

ALL = "*"


def bind(db: Database, inputs: list[str], outputs: list[str]) -> None:
    """Check `--input` / `--output` arguments and record them on the database (they are
    stored with its next commit)."""
    bound: dict[str, str] = {}
    for text in inputs:
        rel, spec = parse_binding(text)
        key = ALL if rel is None else rel
        if rel is not None:
            db.input_relation(rel, verb="bind")
        if key in bound:
            what = "a bare .dat file" if key == ALL else f"relation {rel}"
            raise BindingError(f"--input {text}: {what} is bound twice")
        bound[key] = str(spec)
    sinks: dict[str, str] = {}
    for text in outputs:
        rel, spec = parse_binding(text, sink=True)
        info = db.relation(rel)
        if info.role == "internal":
            raise BindingError(f"--output {text}: {rel} is an internal relation; declare it "
                               f"`output relation` to write it out")
        if rel in sinks:
            raise BindingError(f"--output {text}: relation {rel} is bound twice")
        if spec.kind == "csv":
            from ddlog.runtime.io import check_csv_columns

            check_csv_columns(info, spec)
        sinks[rel] = str(spec)
    check_apart(written_paths(db, sinks), db.state.path if db.state is not None else None)
    for text in sinks.values():
        check_sink_path(parse_spec(text, sink=True))
    db.inputs, db.outputs = bound, sinks


def written_paths(db: Database, sinks: dict[str, str] | None = None) -> list[tuple[str, Spec]]:
    """What a command rewrites besides the state: its sinks, and a checkpoint directory the
    user gave (Spark writes and deletes there), for check_apart."""
    out = [(f"--output {rel}", parse_spec(text, sink=True))
           for rel, text in sorted((db.outputs if sinks is None else sinks).items())]
    given = db.options.conf.get("spark.checkpoint.dir")
    if given:
        out.append(("spark.checkpoint.dir", Spec("parquet", given)))
    return out


def bound_sources(db: Database) -> dict[str, Spec]:
    """The input bindings, each relation's (or ALL's, a bare .dat file) as a Spec."""
    return {key: parse_spec(text) for key, text in sorted(db.inputs.items())}


def source_frames(db: Database, sources: dict[str, Spec]) -> dict:
    """Every bound input relation's rows now (DataFrames c0..cN, possibly with duplicates);
    `sources`: the bindings, as bound_sources gives them."""
    out = {}
    dats: dict[str, dict[str, set[tuple]]] = {}
    for key, spec in sources.items():
        if spec.kind == "dat":
            if spec.target not in dats:
                try:
                    dats[spec.target] = read_dat(db, spec.target)
                except OSError as err:
                    raise BindingError(f"cannot read {spec}: {err.strerror}") from None
            rows = dats[spec.target]
            targets = ([key] if key != ALL
                       else [r for r in db.input_names if r not in db.inputs])
            for rel in targets:
                out[rel] = db.rows_frame(db.relations[rel], sorted(rows.get(rel, ()),
                                                                      key=repr))
        else:
            out[key] = read_source(db.spark, spec, db.relations[key])
    return out
