"""ddlog's cache directory: what a command can rebuild but would rather not (the driver JVM's
class archive, the parser tables), under $XDG_CACHE_HOME/ddlog, else ~/.cache/ddlog."""
from __future__ import annotations

import os
from typing import Mapping

from ddlog import environment


def cache_dir(environ: Mapping[str, str] | None = None) -> str | None:
    """The directory, created if need be; None when it cannot be written (then nothing is
    cached)."""
    base = (environment.get(environment.XDG_CACHE_HOME, environ=environ)
            or os.path.join(os.path.expanduser("~"), ".cache"))
    return writable_dir(os.path.join(base, "ddlog"))


def writable_dir(directory: str) -> str | None:
    """`directory`, created if need be, or None when it cannot be written."""
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError:
        return None
    return directory if os.access(directory, os.W_OK) else None
