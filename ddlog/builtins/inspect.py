"""The functions an `Inspect` may call: run for their effect, on the driver, once per change
of the rule's valuations at the Inspect (ddlog/app/inspect.py runs them). DDlog runs such
functions as Rust extern functions marked `#[has_side_effects]`; these are the ones DDlog's
own tests use, by their qualified names, with their parameter types.

    inspect_log::log(file, msg)   append the line `msg` to the file `file`
"""
from __future__ import annotations

from ddlog.types import STRING, TInt, Type

EFFECTS: dict[str, tuple[Type, ...]] = {
    "inspect_log::log": (STRING, STRING),
}

# The variables an Inspect's arguments see besides the rule's: the epoch that made the change
# (DDlog's transaction timestamp) and the change's weight (+1 an insertion, -1 a deletion).
TIMESTAMP, WEIGHT = "ddlog_timestamp", "ddlog_weight"
INSPECT_VARS: dict[str, Type] = {TIMESTAMP: TInt(False, 64), WEIGHT: TInt(True, 64)}
