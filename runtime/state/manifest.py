"""The manifest of a state directory: what one committed epoch consists of.

It names the program (by hash), the epoch, every trace's Parquet batches (with each file's
size, so that opening a state can check that every file is there and whole) and the bound
sources and sinks, and it carries a checksum of all that: an edited or damaged manifest is
refused instead of being believed.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass, field

FORMAT = 3
# the formats this ddlog reads: 2 stored every batch as Parquet, 3 stores a small one as JSON
# lines (runtime/state/persist.py); a format-2 state is read as it is and written as 3
READS = (2, 3)
# what StateDir.new_batch_path makes; the only paths a manifest may name
BATCH_PATH = re.compile(r"data/e[0-9]{6}-[0-9a-f]{12}")

@dataclass
class BatchEntry:
    path: str  # relative to the state directory
    lo: int
    hi: int
    rows: int
    files: dict[str, int] = field(default_factory=dict)  # file name -> size in bytes


@dataclass
class TraceEntry:
    schema: str  # the batches' Spark schema, as JSON (read back without touching the files)
    iters: list[int]
    batches: list[BatchEntry]


@dataclass
class Manifest:
    program_sha256: str
    program_file: str  # where the program was read from when the state was created
    epoch: int
    traces: dict[str, TraceEntry] = field(default_factory=dict)
    # relation -> SOURCE / SINK spec (runtime/io/specs.py); "*" binds a .dat file to every input
    inputs: dict[str, str] = field(default_factory=dict)
    outputs: dict[str, str] = field(default_factory=dict)
    committed_at: float = 0.0
    format: int = FORMAT
    # `ddlog stream`: its sources (relation -> FORMAT:DIR), the last micro-batch committed and,
    # when the command listed the files itself (on Spark Connect), "by": "client",
    # written with the epoch so that a replayed batch is recognised (exactly once)
    stream: dict = field(default_factory=dict)
    # the user modules the program imports: file (relative to the program's directory) ->
    # sha256 of its text. They are read from beside the program, outside the state, so an
    # edited module is another program and is refused like an edited program.
    modules: dict[str, str] = field(default_factory=dict)
    # the library directories (absolute) where imported modules were looked for after the
    # program's own (`-L`): a state opened again finds its modules where they were found
    libraries: list[str] = field(default_factory=list)
    # what the cost-based fallback measured, by stratum number: `scratch` (its last
    # evaluation from scratch: seconds, rows, iterations, cold, deltas), `gave_up` (its last
    # incremental run that gave up: ratio, left) and `paces` (its last incremental iterations:
    # seen; how its rules misjudged finished runs: misses), each when there is one
    # (runtime/fallback.py)
    costs: dict[str, dict] = field(default_factory=dict)
    # the internal relations whose traces hold multiplicities, not sets
    # (ddlog/plan/compile.py: counted_relations)
    counted: list[str] = field(default_factory=list)

    def body(self) -> dict:
        return asdict(self)

    def to_json(self) -> str:
        body = self.body()
        return json.dumps({**body, "checksum": _checksum(body)}, indent=1, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> "Manifest":
        """Raises ValueError naming what is wrong: not JSON, another format, a checksum that
        does not match (the file was edited or damaged), a field of the wrong shape."""
        d = json.loads(text)
        if not isinstance(d, dict):
            raise ValueError("not a JSON object")
        if d.get("format") not in READS:
            raise ValueError(f"unknown state format {d.get('format')!r} (this ddlog reads "
                             f"formats {', '.join(map(str, READS))})")
        checksum = d.pop("checksum", None)
        if checksum != _checksum(d):
            raise ValueError("its checksum does not match its contents (it was edited or "
                             "damaged)")
        m = _Reader(d)
        traces = {}
        for name, t in m.dict("traces").items():
            where = f"traces.{name}"
            t = _Reader(t, where)
            batches = []
            for k, b in enumerate(t.list("batches")):
                b = _Reader(b, f"{where}.batches[{k}]")
                path = b.str("path")
                if not BATCH_PATH.fullmatch(path):
                    raise ValueError(f"{b.where}.path: {path!r} is not a batch of this state")
                files = {f: _Reader.check_int(n, f"{b.where}.files.{f}")
                         for f, n in b.dict("files").items()}
                batches.append(BatchEntry(path, b.int("lo"), b.int("hi"), b.int("rows"), files))
            traces[name] = TraceEntry(t.str("schema"), [_Reader.check_int(i, f"{where}.iters")
                                                        for i in t.list("iters")], batches)
        inputs = {k: _Reader.check_str(v, f"inputs.{k}") for k, v in m.dict("inputs").items()}
        outputs = {k: _Reader.check_str(v, f"outputs.{k}") for k, v in m.dict("outputs").items()}
        committed = d.get("committed_at", 0.0)
        if not isinstance(committed, (int, float)):
            raise ValueError("committed_at: not a number")
        stream = {}
        if m.dict("stream"):
            st = _Reader(m.dict("stream"), "stream")
            stream = {"sources": {k: _Reader.check_str(v, f"stream.sources.{k}")
                                  for k, v in st.dict("sources").items()},
                      "batch": st.int("batch")}
            if "by" in st.d:  # who listed the files: ddlog/app/stream.py (absent: Spark)
                stream["by"] = st.str("by")
        modules = {k: _Reader.check_str(v, f"modules.{k}") for k, v in m.dict("modules").items()}
        return cls(m.str("program_sha256"), m.str("program_file"), m.int("epoch"), traces,
                   inputs, outputs, float(committed), FORMAT, stream, modules,
                   m.strings("libraries"), _costs(m.dict("costs")), m.strings("counted"))


def _checksum(body: dict) -> str:
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":"))
                          .encode("utf-8")).hexdigest()


class _Reader:
    """Typed access to one JSON object of the manifest, with errors that name the field."""

    def __init__(self, d, where: str = ""):
        if not isinstance(d, dict):
            raise ValueError(f"{where or 'the manifest'}: not a JSON object")
        self.d, self.where = d, where

    def _get(self, key: str):
        if key not in self.d:
            raise ValueError(f"{self._name(key)}: missing")
        return self.d[key]

    def _name(self, key: str) -> str:
        return f"{self.where}.{key}" if self.where else key

    def str(self, key: str) -> str:
        return self.check_str(self._get(key), self._name(key))

    def int(self, key: str) -> int:
        return self.check_int(self._get(key), self._name(key))

    def number(self, key: str) -> float:
        return self.check_number(self._get(key), self._name(key))

    def flag(self, key: str) -> bool:
        """A true/false field that states written before it lack: false there."""
        v = self.d.get(key, False)
        if not isinstance(v, bool):
            raise ValueError(f"{self._name(key)}: not true or false")
        return v

    def strings(self, key: str) -> list[str]:
        """A list of strings that states written before it lack: empty there."""
        v = self.d.get(key, [])
        if not isinstance(v, list):
            raise ValueError(f"{self._name(key)}: not a list")
        return [self.check_str(s, f"{self._name(key)}[{k}]") for k, s in enumerate(v)]

    def counts(self, key: str) -> list[int]:
        """A list of non-negative integers that states written before it lack: empty there."""
        v = self.d.get(key, [])
        if not isinstance(v, list):
            raise ValueError(f"{self._name(key)}: not a list")
        return [self.check_int(n, f"{self._name(key)}[{k}]") for k, n in enumerate(v)]

    def points(self, key: str) -> list[list]:
        """A list of [rows, rows before, seconds] (Paces.seen)."""
        out = []
        for k, v in enumerate(self.list(key)):
            name = f"{self._name(key)}[{k}]"
            if not isinstance(v, list) or len(v) != 3:
                raise ValueError(f"{name}: not [rows, rows before, seconds]")
            p = _Reader(dict(zip(("rows", "before", "seconds"), v)), name)
            out.append([p.int("rows"), p.int("before"), p.number("seconds")])
        return out

    def misses(self, key: str) -> dict[str, list[float]]:
        """Per rule of the fallback, non-negative numbers (Paces.misses); states written
        before they were kept lack them: none there."""
        out = {}
        for rule, v in self.dict(key).items():
            name = f"{self._name(key)}.{rule}"
            if rule not in ("depth", "guess"):
                raise ValueError(f"{name}: not a rule of the fallback")
            if not isinstance(v, list):
                raise ValueError(f"{name}: not a list")
            out[rule] = [self.check_number(x, f"{name}[{k}]") for k, x in enumerate(v)]
        return out

    def list(self, key: str) -> list:
        v = self._get(key)
        if not isinstance(v, list):
            raise ValueError(f"{self._name(key)}: not a list")
        return v

    def dict(self, key: str) -> dict:
        v = self.d.get(key, {})
        if not isinstance(v, dict):
            raise ValueError(f"{self._name(key)}: not a JSON object")
        return v

    @staticmethod
    def check_str(v, name: str) -> str:
        if not isinstance(v, str):
            raise ValueError(f"{name}: not a string")
        return v

    @staticmethod
    def check_number(v, name: str) -> float:
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not 0 <= v < float("inf"):
            raise ValueError(f"{name}: not a non-negative number")
        return float(v)

    @staticmethod
    def check_int(v, name: str) -> int:
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            raise ValueError(f"{name}: not a non-negative integer")
        return v


# the fields of each measurement a manifest's `costs` holds per stratum, and their kinds
_COSTS = {"scratch": {"seconds": _Reader.number, "rows": _Reader.int,
                      "iterations": _Reader.int, "cold": _Reader.flag,
                      "deltas": _Reader.counts},
          "gave_up": {"ratio": _Reader.number, "left": _Reader.int},
          "paces": {"seen": _Reader.points, "misses": _Reader.misses}}


def _costs(d: dict) -> dict[str, dict]:
    """The manifest's `costs`, checked field by field (a state written before they were
    kept has none)."""
    out = {}
    for stratum, measured in d.items():
        where = f"costs.{stratum}"
        if not stratum.isdigit():
            raise ValueError(f"{where}: not a stratum number")
        m = _Reader(measured, where)
        out[stratum] = {}
        for name, value in m.d.items():
            if name not in _COSTS:
                raise ValueError(f"{where}.{name}: not a measurement")
            v = _Reader(value, f"{where}.{name}")
            if set(v.d) - set(_COSTS[name]):
                raise ValueError(f"{v.where}: unknown fields "
                                 f"{', '.join(sorted(set(v.d) - set(_COSTS[name])))}")
            out[stratum][name] = {key: read(v, key) for key, read in _COSTS[name].items()}
    return out
