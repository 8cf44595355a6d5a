"""The parts of `ddlog stream` and `ddlog serve` that need no JVM: trigger parsing, the
manifest's stream record (checked like the rest of the manifest), the server's token check and
the private serve file, the client's fallback when nobody answers."""
from __future__ import annotations

import json
import os
import stat

import pytest

from ddlog.app.client import Server as Client, find_server
from ddlog.app.serve import Server, _write_private
from ddlog.app.stream import Trigger
from ddlog.errors import DDlogError
from ddlog.runtime.state.manifest import Manifest
from tests.support import resealed


def test_trigger_parse():
    assert Trigger.parse("available-now") == Trigger(True)
    assert Trigger.parse("5s") == Trigger(False, "5 seconds")
    assert Trigger.parse("250ms") == Trigger(False, "250 milliseconds")
    assert Trigger.parse("2m") == Trigger(False, "2 minutes")
    for bad in ("soon", "0s", "-5s", "5", "5 s", "1d"):
        with pytest.raises(DDlogError, match="--trigger"):
            Trigger.parse(bad)


def test_manifest_records_the_stream_batch():
    m = Manifest("0" * 64, "p.dl", 3, stream={"sources": {"Edge": "csv:/in/e"}, "batch": 7})
    back = Manifest.from_json(m.to_json())
    assert back.stream == {"sources": {"Edge": "csv:/in/e"}, "batch": 7}
    assert Manifest.from_json(Manifest("0" * 64, "p.dl", 1).to_json()).stream == {}
    for bad, why in [({"sources": {}, "batch": -1}, "stream.batch"),
                     ({"sources": {"Edge": 3}, "batch": 1}, "stream.sources.Edge"),
                     ({"sources": {}}, "stream.batch: missing")]:
        with pytest.raises(ValueError, match=why):
            Manifest.from_json(resealed(Manifest("0" * 64, "p.dl", 3), stream=bad))


class _NoDatabase:
    """Requests refused before the server touches its database."""


def test_server_refuses_requests_without_its_token():
    server = Server(_NoDatabase())  # type: ignore[arg-type]
    assert server.answer({"op": "hello"}) == {"refused": "bad token"}
    assert server.answer({"op": "command", "token": "x" * 64}) == {"refused": "bad token"}
    assert "pid" in server.answer({"op": "hello", "token": server.token})
    assert "refused" in server.answer({"op": "dance", "token": server.token})
    assert server.served == 1  # only requests with the token count


def test_serve_file_is_private(tmp_path):
    path = tmp_path / ".serve.json"
    _write_private(str(path), '{"port": 1}')
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    _write_private(str(path), '{"port": 2}')  # replaced, still private
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600 and '"port": 2' in path.read_text()


def test_client_falls_back_without_a_server(tmp_path):
    assert find_server(str(tmp_path)) is None
    (tmp_path / ".serve.json").write_text("not json")
    assert find_server(str(tmp_path)) is None
    (tmp_path / ".serve.json").write_text(json.dumps({"port": 1, "token": "t"}))
    found = find_server(str(tmp_path))
    assert found == Client(1, "t")
    assert found.call({"op": "hello"}, timeout=5) is None  # nobody listens on port 1


def test_serve_refuses_a_shell_whose_modules_were_edited(tmp_path):
    """The server runs the program it opened: a client whose modules beside its program
    differ from those the state was built with is refused."""
    from types import SimpleNamespace

    from ddlog.runtime.state import program_hash

    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "m.dl").write_text("input relation E(x: bigint)\n")
    manifest = Manifest("0" * 64, str(tmp_path / "p.dl"), 1,
                        modules={"lib/m.dl": program_hash("input relation E(x: bigint)\n")})
    server = Server.__new__(Server)
    server.db = SimpleNamespace(manifest=manifest, file=str(tmp_path / "p.dl"))
    assert server._edited_modules(str(tmp_path / "p.dl")) == []
    (tmp_path / "lib" / "m.dl").write_text("input relation E(x: bigint, y: bigint)\n")
    assert server._edited_modules(str(tmp_path / "p.dl")) == ["lib/m.dl"]
    (tmp_path / "lib" / "m.dl").unlink()
    assert server._edited_modules(str(tmp_path / "p.dl")) == ["lib/m.dl"]
