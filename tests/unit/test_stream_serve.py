"""The parts of `ddlog stream` and `ddlog serve` that need no JVM: trigger parsing, the
manifest's stream record (checked like the rest of the manifest), the server's token check and
the private serve file, the client's fallback when nobody answers."""
from __future__ import annotations

import functools
import json
import os
import stat

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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


def test_server_takes_only_requests_that_prove_its_token():
    from ddlog.app.serve import proof

    server = Server(_NoDatabase())  # type: ignore[arg-type]
    assert not server.authentic("", "")
    assert not server.authentic("n" * 32, "x" * 64)
    assert not server.authentic("n" * 32, proof("another token", "request", "n" * 32))
    assert not server.authentic("n" * 32, proof(server.token, "hello", "n" * 32))
    assert server.authentic("n" * 32, proof(server.token, "request", "n" * 32))
    # the proof binds its parts apart: ("ab", "c") is not ("a", "bc")
    assert proof("t", "ab", "c") != proof("t", "a", "bc")


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
    # a pid that is no live ddlog server: a stale file
    (tmp_path / ".serve.json").write_text(json.dumps({"port": 1, "token": "t", "pid": 2**22}))
    assert find_server(str(tmp_path)) is None
    (tmp_path / ".serve.json").write_text(json.dumps({"port": 1, "token": "t",
                                                      "pid": os.getpid()}))
    assert find_server(str(tmp_path)) is None  # alive, but not a `ddlog serve`
    client = Client(1, "t", os.getpid())
    assert not client.hello(timeout=5)  # nobody listens on port 1
    assert client.call({"op": "hello"}, timeout=5) is None


def test_a_stale_serve_file_gets_neither_token_nor_command(tmp_path):
    """Another program listening on the port a killed server left in its serve file: the
    client's hello fails (it cannot prove the token), and what it was sent holds no token."""
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    seen: list[tuple[str, dict, bytes]] = []

    class Impostor(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0") or 0))
            seen.append((self.command, dict(self.headers), body))
            data = json.dumps({"status": 0, "pid": os.getpid(), "proof": "f" * 64,
                               "stdout": "Reach{.node = 9}: +1\n"}).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = _answer

        def log_message(self, *args) -> None:
            pass

    httpd = HTTPServer(("127.0.0.1", 0), Impostor)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        client = Client(httpd.server_address[1], "the secret token", os.getpid())
        assert not client.hello(timeout=5)
        assert client.call({"op": "command", "argv": ["feed"]}, timeout=5) is None
    finally:
        httpd.shutdown()
    assert seen and all(b"the secret token" not in body
                        and "the secret token" not in json.dumps(headers)
                        for _, headers, body in seen)


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


def test_an_idle_served_shell_session_expires(monkeypatch):
    """A client gone in the middle of a shell session leaves its session (and its open
    transaction) behind: it is dropped after SESSION_IDLE seconds without a request."""
    from types import SimpleNamespace

    from ddlog.app import serve

    server = Server(_NoDatabase())  # type: ignore[arg-type]
    server.sessions["old"] = SimpleNamespace(used=0.0)
    server.sessions["new"] = SimpleNamespace(used=1_000_000.0)
    monkeypatch.setattr(serve.time, "monotonic", lambda: 1_000_000.0 + 10)
    server._expire()
    assert set(server.sessions) == {"new"}
    answer = server._shell_step("shell-push", {"session": "old", "chunk": "dump;"})
    assert "idle too long" in answer["refused"]


# -- seeded fuzzing: change files' text and served requests --------------------------------



@settings(max_examples=300, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.one_of(st.binary(max_size=300),
                      st.text(max_size=200).map(lambda t: t.encode("utf-8")),
                      st.lists(st.dictionaries(st.sampled_from(["node", "weight", "Weight",
                                                                "x", ""]),
                                               st.one_of(st.integers(-3, 3), st.text(max_size=3),
                                                         st.none(), st.booleans())),
                               max_size=5).map(lambda rows: "\n".join(
                                   json.dumps(r) for r in rows).encode())),
       kind=st.sampled_from(["csv", "json"]))
def test_a_change_files_text_is_taken_or_refused_with_a_located_message(tmp_path, data, kind):
    """Whatever bytes a change file holds, its text check passes or raises ChangeFileError
    naming the file (and a line), never anything else."""
    from ddlog.runtime.io.changes import ChangeFileError, _check_text

    info = _root()
    path = tmp_path / f"f.{kind}"
    path.write_bytes(data)
    try:
        _check_text(str(path), kind, f"change file {path}", info, "weight")
    except ChangeFileError as err:
        assert str(path) in str(err)


@functools.lru_cache(maxsize=None)
def _root():
    from ddlog.plan import load_text

    return load_text("input relation Root(node: bigint)\n").program.relations["Root"]


@functools.lru_cache(maxsize=None)
def _listening():
    """One server for every example, answering on a loopback port (it never touches a
    database: every request that would is refused first)."""
    import threading
    from http.server import ThreadingHTTPServer
    from types import SimpleNamespace

    from ddlog.app.serve import _handler

    server = Server(_NoDatabase())  # type: ignore[arg-type]
    server.db = SimpleNamespace(state=SimpleNamespace(path="/nonexistent/state"))
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(server))
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return server, httpd.server_address[1]


@settings(max_examples=200, deadline=None, derandomize=True)
@given(body=st.one_of(st.binary(max_size=200),
                      st.dictionaries(st.sampled_from(["op", "argv", "session", "chunk",
                                                       "texts", "stdin", "token"]),
                                      st.one_of(st.text(max_size=8), st.integers(),
                                                st.lists(st.text(max_size=8), max_size=4),
                                                st.none()), max_size=5)
                      .map(lambda d: json.dumps(d).encode())),
       authentic=st.booleans())
def test_served_requests_are_answered_or_refused(body, authentic):
    """Whatever a request's body, the server answers it (or refuses it) without failing;
    one that does not prove the token is refused before its body is read."""
    import http.client
    import secrets

    from ddlog.app.serve import AUTH, NONCE, proof

    server, port = _listening()
    nonce = secrets.token_hex(16)
    auth = proof(server.token, "request", nonce) if authentic else "f" * 64
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("POST", "/", body=body, headers={NONCE: nonce, AUTH: auth})
    resp = conn.getresponse()
    answer = json.loads(resp.read())
    conn.close()
    assert resp.status == (200 if authentic else 403) or (authentic and resp.status == 400)
    assert isinstance(answer, dict)
    if not authentic:
        assert answer == {"refused": "not authenticated"}


def test_polled_batches_fix_their_files_once_and_replay_the_same(tmp_path):
    """A stream that lists its directories itself (Spark Connect): batch N's files are fixed
    before it is applied; a batch not committed is given again with the same files (a file
    that arrived since waits for the next); a file is in one batch only; hidden files and
    subdirectories are not change files."""
    from ddlog.app.stream import Polled
    from ddlog.runtime.io import Spec

    watched = tmp_path / "edge"
    watched.mkdir()
    (watched / "a.csv").write_text("src,dst\n1,2\n")
    (watched / ".a.csv.crc").write_text("")
    (watched / "_tmp").write_text("")
    (watched / "sub").mkdir()
    log = str(tmp_path / "state" / "stream" / "polled")
    sources = {"Edge": Spec("csv", str(watched))}
    first = Polled(log, sources).next(-1)
    assert first is not None
    batch, files = first
    assert batch == 0 and [f["path"] for f in files] == [str(watched / "a.csv")]
    (watched / "b.csv").write_text("src,dst\n2,3\n")
    # not committed: the same batch, the same files, from the log (a new process)
    assert Polled(log, sources).next(-1) == (0, files)
    # committed: the next batch holds b.csv only, then nothing is left
    polled = Polled(log, sources)
    batch, files = polled.next(0)
    assert batch == 1 and [f["path"] for f in files] == [str(watched / "b.csv")]
    assert polled.next(1) is None
    assert Polled(log, sources).next(1) is None
