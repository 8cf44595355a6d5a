"""Regular expressions over strings, what DDlog's `regex` library (ddlog/builtins/lib/regex.dl)
is written with: `pattern_valid(p)`, `pattern_matches(text, p)`, `pattern_find(text, p)`,
`pattern_find_all(text, p)`, and for a set of patterns `patterns_valid(ps)` and
`patterns_match(text, ps)`. A pattern that is not a valid regular expression matches nothing,
and a set holding one matches nothing.

Patterns follow Rust's regex crate as far as Java's regular expressions, which Spark runs, read
them alike: the classes `\\w`, `\\d`, `\\b` are Unicode's (Java's flag `(?U)`), and a named
group is written `(?P<name>..)` or `(?<name>..)`. On Spark a pattern is first compiled with
`java.util.regex.Pattern.compile` through `try_reflect`, which gives null for an invalid one;
every match is then Spark's `regexp_*` with that pattern, so an invalid pattern (which would
fail the whole query in `regexp_like`) is never run.

`try_reflect` is nondeterministic to Spark, and a higher-order function's lambda does not
prepare such an expression before it runs: inside a closure (and for each pattern of a set) a
pattern is only checked for unclosed groups and classes, so there a pattern invalid otherwise
fails the epoch with Spark's message. A set is checked as a whole: each of its patterns must
pass that check, and their alternation must compile.
"""
from __future__ import annotations

import re
from dataclasses import replace

from ddlog.builtins.base import Builtin, fixed
from ddlog.types import BOOL, STRING, TOption, TVec

_NAMED_GROUP = r"\(\?P<"  # Rust's (and Python's) named group; Java writes `(?<`
_LETTERS = r"\\p\{?L\}?"  # Unicode's letters, which Python's `re` does not name
_ESCAPE = r"\\."
_CLASS = r"\[\^?\]?[^\]]*\]"  # a bracketed class, one level (escapes already gone)


def _java(sx, pattern):
    F = sx.F
    return F.concat(F.lit("(?U)"), F.regexp_replace(pattern, _NAMED_GROUP, "(?<"))


def _plausible(sx, pattern):
    """Whether a pattern closes its groups and classes: what can be checked of it without
    compiling it."""
    F = sx.F
    bare = F.regexp_replace(F.regexp_replace(pattern, _ESCAPE, ""), _CLASS, "")
    opened = F.length(bare) - F.length(F.replace(bare, F.lit("("), F.lit("")))
    closed = F.length(bare) - F.length(F.replace(bare, F.lit(")"), F.lit("")))
    return (opened == closed) & ~F.contains(bare, F.lit("["))


def _compiles(sx, java):
    F = sx.F
    return F.call_function("try_reflect", F.lit("java.util.regex.Pattern"), F.lit("compile"),
                           java).isNotNull()


def _compiled(sx, pattern):
    """The pattern as Java reads it, or null when it is not a valid regular expression."""
    F = sx.F
    java = _java(sx, pattern)
    ok = _plausible(sx, pattern) if sx.in_closure else _compiles(sx, java)
    return F.when(ok, java)


def _set(sx, patterns):
    """The alternation of a set of patterns as Java reads it, or null when one of them is not
    a valid regular expression or there are none."""
    F = sx.F
    each = F.forall(patterns, lambda p: _plausible(sx, p))
    java = F.concat(F.lit("(?U)"), F.array_join(F.transform(
        patterns, lambda p: F.concat(F.lit("(?:"), F.regexp_replace(p, _NAMED_GROUP, "(?<"),
                                     F.lit(")"))), "|"))
    ok = each if sx.in_closure else each & _compiles(sx, java)
    return F.when(ok & (F.size(patterns) > 0), java)


def _python(pattern: str) -> re.Pattern | None:
    """The oracle's reading of a pattern, None when it is invalid."""
    try:
        return re.compile(re.sub(_LETTERS, r"[^\\W\\d_]", pattern))
    except re.error:
        return None


def _matches_spark(sx, args, types, ty):
    F = sx.F
    return F.coalesce(F.regexp_like(args[0], _compiled(sx, args[1])), F.lit(False))


def _find_spark(sx, args, types, ty):
    F = sx.F
    pattern = _compiled(sx, args[1])
    return F.when(F.regexp_like(args[0], pattern),  # (regexp_extract's pattern is a text)
                  F.call_function("regexp_extract", args[0], pattern, F.lit(0)))


def _find_all_spark(sx, args, types, ty):
    F = sx.F
    pattern = _compiled(sx, args[1])
    return F.coalesce(F.regexp_extract_all(args[0], pattern, F.lit(0)),
                      F.array().cast(sx.spark_type(ty)))


def _set_python(patterns: tuple[str, ...]) -> list[re.Pattern] | None:
    compiled = [_python(p) for p in patterns]
    return None if any(p is None for p in compiled) else compiled  # type: ignore[return-value]


def _find_python(text: str, pattern: str) -> str | None:
    p = _python(pattern)
    m = p.search(text) if p is not None else None
    return m.group(0) if m is not None else None


def _find_all_python(text: str, pattern: str) -> tuple[str, ...]:
    p = _python(pattern)
    return tuple(m.group(0) for m in p.finditer(text)) if p is not None else ()


# every one tells an invalid pattern by an expression a Spark lambda cannot hold, so lowers
# otherwise inside one (_compiled, _set)
REGEXES: dict[str, Builtin] = {b.name: replace(b, closure_aware=True) for b in [
    Builtin("pattern_valid", 1, "pattern_valid(string) -> bool",
            "whether a text is a valid regular expression", fixed(STRING, result=BOOL),
            lambda sx, a, ts, t: _compiled(sx, a[0]).isNotNull(),
            lambda a, ts, t: _python(a[0]) is not None),
    Builtin("pattern_matches", 2, "pattern_matches(string, string) -> bool",
            "whether the regular expression (the second) matches somewhere in the text",
            fixed(STRING, STRING, result=BOOL), _matches_spark,
            lambda a, ts, t: _find_python(a[0], a[1]) is not None),
    Builtin("pattern_find", 2, "pattern_find(string, string) -> Option<string>",
            "the leftmost match of the regular expression in the text",
            fixed(STRING, STRING, result=TOption(STRING)), _find_spark,
            lambda a, ts, t: _find_python(a[0], a[1])),
    Builtin("pattern_find_all", 2, "pattern_find_all(string, string) -> Vec<string>",
            "the successive matches of the regular expression in the text, none overlapping",
            fixed(STRING, STRING, result=TVec(STRING)), _find_all_spark,
            lambda a, ts, t: _find_all_python(a[0], a[1])),
    Builtin("patterns_valid", 1, "patterns_valid(Vec<string>) -> bool",
            "whether each of the texts is a valid regular expression",
            fixed(TVec(STRING), result=BOOL),
            lambda sx, a, ts, t: _set(sx, a[0]).isNotNull() | (sx.F.size(a[0]) == 0),
            lambda a, ts, t: _set_python(a[0]) is not None),
    Builtin("patterns_match", 2, "patterns_match(string, Vec<string>) -> bool",
            "whether one of the regular expressions matches somewhere in the text (none does "
            "when one is invalid)", fixed(STRING, TVec(STRING), result=BOOL),
            lambda sx, a, ts, t: sx.F.coalesce(sx.F.regexp_like(a[0], _set(sx, a[1])),
                                               sx.F.lit(False)),
            lambda a, ts, t: any(p.search(a[0]) for p in _set_python(a[1]) or [])),
]}
