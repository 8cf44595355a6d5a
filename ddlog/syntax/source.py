"""Reading the text of programs and command files.

Every file a user gives (a `.dl` program, a `.dat` command file, a program stored in a state)
is read here: UTF-8, a leading byte-order mark ignored (editors on Windows write one), and
bytes that are not UTF-8 reported at their line and column instead of as a decoder error.
"""
from __future__ import annotations

from ddlog.errors import DDlogError, Span

BOM = "\ufeff"


def decode(data: bytes, file: str) -> str:
    """`data` as text; a DDlogError located at the first byte that is not UTF-8."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        good = data[:err.start].decode("utf-8")
        line = good.count("\n") + 1
        col = err.start - (data.rfind(b"\n", 0, err.start) + 1) + 1
        bad = data[err.start:err.end].hex(" ")
        raise DDlogError(f"the file is not UTF-8 text: byte {bad} at line {line}, column "
                         f"{col} cannot be decoded", Span(file, line, col, line, col + 1)) \
            from None
    return text[1:] if text.startswith(BOM) else text


def read_text(path: str, name: str | None = None) -> str:
    """The text of the file at `path` (OSError when it cannot be read); `name` is what
    messages call it (the path by default)."""
    with open(path, "rb") as f:
        data = f.read()
    return decode(data, name or path)
