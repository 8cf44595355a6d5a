"""Reading the text of programs and command files.

Every file a user gives (a `.dl` program, a `.dat` command file, a program stored in a state)
is read here: UTF-8, a leading byte-order mark ignored (editors on Windows write one), and
bytes that are not UTF-8 reported at their line and column instead of as a decoder error.
"""
from __future__ import annotations

from typing import TextIO

from ddlog.errors import DDlogError, Span
from ddlog.limits import MAX_TEXT_BYTES

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
    messages call it (the path by default). More than MAX_TEXT_BYTES is refused (a device
    such as /dev/zero, a wrong file) before it fills the memory."""
    with open(path, "rb") as f:
        data = f.read(MAX_TEXT_BYTES + 1)
    _check_size(len(data), name or path)
    return decode(data, name or path)


def read_stream(stream: TextIO, name: str = "<stdin>") -> str:
    """All of a text stream (standard input), at most MAX_TEXT_BYTES of it."""
    text = stream.read(MAX_TEXT_BYTES + 1)
    _check_size(len(text), name)
    return text[1:] if text.startswith(BOM) else text


def _check_size(n: int, name: str) -> None:
    if n > MAX_TEXT_BYTES:
        raise DDlogError(f"{name}: more than {MAX_TEXT_BYTES >> 20} MiB of text; ddlog reads "
                         f"programs and command files of at most that size")
