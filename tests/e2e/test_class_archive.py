"""The driver JVM's class archive, for real (runtime/class_archive.py): the first command
writes it at exit and names it only once a JVM maps it; later commands map it and answer the
same, with nothing of the JVM's on their output; an archive cut short is removed before a
driver would map it (it would crash the JVM), and the command still answers."""
from __future__ import annotations

import os

from tests.e2e.cli_support import PROGRAMS, DDlogCLI, parse_dump

TC = PROGRAMS / "tc.dl"
WANT = {"Path{.src = 1, .dst = 2}", "Path{.src = 1, .dst = 3}", "Path{.src = 2, .dst = 3}"}


def test_commands_write_and_map_the_class_archive(tmp_path):
    cache = tmp_path / "cache"
    env = {"DDLOG_CLASS_ARCHIVE_DIR": str(cache)}
    cli = DDlogCLI(tmp_path / "spark", tmp_path)
    state = tmp_path / "state"
    r = cli("shell", TC, "--state", state, input="start;\ninsert Edge(1,2), insert Edge(2,3);\n"
            "commit;\n", env=env)
    assert r.code == 0 and r.err == "", r
    names = os.listdir(cache)
    assert len(names) == 1 and names[0].startswith("driver-") and names[0].endswith(".jsa"), \
        names  # no .part left behind
    archive = cache / names[0]
    size = archive.stat().st_size
    assert names[0].endswith(f"-{size}.jsa") and size > 10_000_000

    r = cli("query", "--state", state, "Path", env=env)
    assert r.code == 0 and r.err == "", r
    assert parse_dump(r.out, "Path") == WANT and set(r.out.splitlines()) == WANT, r.out
    assert os.listdir(cache) == names  # mapped, not written again

    data = archive.read_bytes()
    archive.chmod(0o600)
    archive.unlink()
    cut = cache / names[0].replace(f"-{size}.jsa", f"-{size // 2}.jsa")
    cut.write_bytes(data[:size // 2])
    r = cli("query", "--state", state, "Path", env=env)
    assert r.code == 0 and r.err == "", r
    assert set(r.out.splitlines()) == WANT, r.out
    assert not cut.exists()
    assert not list(tmp_path.glob("hs_err*"))  # no JVM crashed
