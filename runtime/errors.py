"""Spark's failures in the words of this engine.

A failed Spark job surfaces in Python as a PySpark exception (with an error condition such as
DIVIDE_BY_ZERO) or as a raw Py4JJavaError, each with a JVM stack trace. The user needs one line
that says what went wrong in DDlog's terms: `describe(err)` gives it, or None when `err` is not
a Spark failure at all.
"""
from __future__ import annotations

import re

# Spark error condition -> what it means for a DDlog program
_CONDITIONS = {
    "DIVIDE_BY_ZERO": "division by zero",
    "REMAINDER_BY_ZERO": "division by zero (in %)",
    "ARITHMETIC_OVERFLOW": "integer overflow: a result does not fit in 64 bits (bigint and "
                           "the integer types are stored as 64-bit longs)",
    "BINARY_ARITHMETIC_OVERFLOW": "integer overflow: a result does not fit in 64 bits (bigint "
                                  "and the integer types are stored as 64-bit longs)",
    "CAST_OVERFLOW": "a value does not fit the type it is cast to",
    "CAST_INVALID_INPUT": "a value cannot be converted to the type it is cast to",
}

# A file the engine reads that is not what it wrote: a checksum that does not match, a file
# gone or cut short. Found in the message or in the JVM causes.
_DAMAGE = re.compile(r"ChecksumException|FileNotFoundException|FAILED_READ_FILE|"
                     r"is not a Parquet file|ParquetDecodingException|EOFException|"
                     r"CANNOT_READ_FILE_FOOTER|PATH_NOT_FOUND")
_FILE = re.compile(r"(?:file:/*)?(/[^\s:'\"`]+\.(?:parquet|crc|json|csv|dat|txt))|"
                   r"(?:[Pp]ath does not exist|PATH_NOT_FOUND\][^:]*): (?:file:)?(/[^\s'\"`]+)")


def is_spark_failure(err: BaseException) -> bool:
    try:
        from py4j.protocol import Py4JError
        from pyspark.errors import PySparkException
    except ImportError:  # pragma: no cover - pyspark is a dependency
        return False
    return isinstance(err, (PySparkException, Py4JError))


def describe(err: BaseException) -> str | None:
    """One line for a Spark failure (None when `err` is something else)."""
    if not is_spark_failure(err):
        return None
    text = str(err)
    condition = _condition(err)
    if condition == "USER_RAISED_EXCEPTION":
        # raise_error(...) in a compiled expression: the message is ours
        m = re.search(r"\[USER_RAISED_EXCEPTION\]\s*(.*?)(?:\s+SQLSTATE:.*)?$",
                      text.splitlines()[0] if text else "")
        return m.group(1) if m else "an expression failed"
    if _DAMAGE.search(text):
        where = unreadable_file(err)
        kind = ("a checksum does not match" if "ChecksumException" in text else
                "it does not exist" if re.search(r"PATH_NOT_FOUND|FileNotFound|does not exist",
                                                 text) else "it cannot be read")
        return f"cannot read {where or 'a file'}: {kind}"
    if condition in _CONDITIONS:
        return _CONDITIONS[condition]
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return first or type(err).__name__


def is_damage(err: BaseException) -> bool:
    """Whether a Spark failure came from reading a damaged or missing file (a state's, or a
    user's: unreadable_file says which)."""
    return is_spark_failure(err) and bool(_DAMAGE.search(str(err)))


def unreadable_file(err: BaseException) -> str | None:
    """The file a failure to read names, if it names one."""
    m = _FILE.search(str(err))
    if m is None:
        return None
    return "/" + (m.group(1) or m.group(2)).lstrip("/")


def _condition(err: BaseException) -> str | None:
    get = getattr(err, "getCondition", None) or getattr(err, "getErrorClass", None)
    try:
        return get() if get is not None else None
    except Exception:  # a Py4JJavaError has no condition
        return None
