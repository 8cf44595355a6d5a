"""`ddlog serve --state DIR`: one long-running owner of a state, with its SparkSession, engine
and traces warm, answering `feed`, `refresh`, `query`, `sql` and `shell` for that state.

Finding it. The server writes `DIR/.serve.json` (readable by its owner only: mode 0600) with
its pid, its loopback port and a random token; a client that finds the file (ddlog/app/
client.py) checks that the pid is a live process and that whoever listens on the port holds
the token, without sending it: it sends a random nonce and the server answers with an HMAC of
it under the token (`proof`). Every request then carries an HMAC of its own nonce under the
token in its headers, checked before its body is read (and a body of at most MAX_REQUEST
bytes), and every answer an HMAC of the nonce and the answer's body, which the client checks.
So a stale file (a server killed with SIGKILL) whose port another program took gets neither
the token nor a command, and cannot pass for the server; the client then opens the state
itself. The server holds the state's writer lock for its whole life, so no other process
commits behind its back.

Serving. A client sends its command line, its state directory resolved (symbolic links
followed, so that a client in any directory finds it), its stdin, and the text of the files it
names: the server never opens a path a client names. The server runs the very command
function the CLI would, on its warm Database, and returns the exit status with what the
command printed; a command it does not take for this state is answered with why. Requests are handled one at a time: concurrent
feeds become consecutive epochs, each its own, none lost, and a query sees the last committed
epoch. A shell is a session: its chunks of input arrive one request each and run on a `Shell`
kept for the session, so a transaction may span requests; a session idle for SESSION_IDLE
seconds is dropped, with its open transaction.

Stopping. SIGTERM or SIGINT finishes the request being served, removes the file and releases
the state; after SIGKILL the last committed epoch is on disk as always.
"""
from __future__ import annotations

import argparse
import contextlib
import hmac
import io
import json
import os
import secrets
import signal
import sys
import threading
import time
import traceback
import uuid
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any, Callable

from ddlog.app.protocol import AUTH, NONCE, PROOF, SERVE_FILE, proof
from ddlog.errors import DDlogError

if TYPE_CHECKING:
    from ddlog.app.database import Database
    from ddlog.app.shell import Shell, SourceWindow
    from ddlog.syntax.commands import StatementSplitter

MAX_REQUEST = 256 << 20  # bytes of a request's body: a command's input files travel in it
SESSION_IDLE = 3600.0  # seconds a served shell session may wait for its next input


@dataclass(frozen=True)
class CommandLine:
    """What the server runs of the CLI, handed to it by the CLI (so this module does not
    import it back): the commands it serves, the argument parser, the dispatcher that runs
    a parsed command, and the exit status and message of an error that ends one."""

    served: tuple[str, ...]
    parser: Callable[[], argparse.ArgumentParser]
    run: Callable[[argparse.Namespace], int]
    failure: Callable[[Exception], tuple[int, str]]


@dataclass
class _Session:
    """A client's shell: its Shell (transaction included), its input so far, its output."""

    shell: "Shell"
    splitter: "StatementSplitter"
    out: io.StringIO
    err: io.StringIO
    window: "SourceWindow | None" = None  # piped input: the last lines, for caret lines
    used: float = 0.0  # time.monotonic() of its last request


class Server:
    def __init__(self, db: "Database", cli: CommandLine | None = None):
        self.db = db
        self.cli = cli
        self.token = secrets.token_hex(32)
        self.lock = threading.Lock()  # one request at a time: feeds are epochs in a row
        self.sessions: dict[str, _Session] = {}
        self.httpd: ThreadingHTTPServer | None = None
        self.served = 0

    # -- life --------------------------------------------------------------------------------

    def serve(self, report) -> None:
        """Warm up, publish the serve file, answer until SIGTERM/SIGINT."""
        db = self.db
        db.keep_open = True
        db.engine  # the SparkSession and the state's traces, before the first request
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.httpd.daemon_threads = True
        port = self.httpd.server_address[1]
        path = db.state.file(SERVE_FILE)
        _write_private(path, json.dumps({"pid": os.getpid(), "port": port,
                                         "token": self.token}))
        stop = threading.Event()

        def on_signal(signum, frame):
            stop.set()
            threading.Thread(target=self.httpd.shutdown, daemon=True).start()

        previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
        report(f"serving {db.state.path} (epoch {db.epoch}) on 127.0.0.1:{port}, pid "
               f"{os.getpid()}; stop with SIGTERM or Ctrl-C")
        try:
            self.httpd.serve_forever(poll_interval=0.2)
        finally:
            for s, handler in previous.items():
                signal.signal(s, handler)
            self.httpd.server_close()
            with self.lock:  # a request still running finishes first
                with contextlib.suppress(FileNotFoundError):
                    os.remove(path)
        report(f"stopped after {self.served} request{'s' if self.served != 1 else ''}; "
               f"{db.state.path} is at epoch {db.epoch}")

    # -- requests ----------------------------------------------------------------------------

    def authentic(self, nonce: str, auth: str) -> bool:
        """Whether a request's headers show its sender holds the token."""
        return bool(nonce) and hmac.compare_digest(auth, proof(self.token, "request", nonce))

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        """The answer to an authentic request (its body)."""
        op = request.get("op")
        if op == "hello":  # a client checks that the server lives before sending its input
            return {"pid": os.getpid(), "state": self.db.state.path}
        with self.lock:
            self._expire()
            self.served += 1
            if op == "command":
                return self._command(request)
            if op == "shell-open":
                return self._shell_open(request)
            if op in ("shell-push", "shell-finish"):
                return self._shell_step(op, request)
        return {"refused": f"unknown request {op!r}"}

    def _command(self, request: dict) -> dict:
        cli = self.cli
        out, err = io.StringIO(), io.StringIO()
        with _redirected(out, err, request.get("stdin")):
            try:
                args = cli.parser().parse_args(request["argv"])
            except SystemExit as exit_:  # argparse printed its usage error
                return {"status": exit_.code or 0, "stdout": out.getvalue(),
                        "stderr": err.getvalue()}
            if args.command not in cli.served:
                return {"refused": f"`ddlog {args.command}` is not served"}
            if os.path.realpath(args.state) != os.path.realpath(self.db.state.path):
                return {"refused": f"this server serves {self.db.state.path}, not "
                                   f"{args.state}"}
            args.served, args.texts = self.db, request.get("texts") or {}
            try:
                status = cli.run(args)
            except Exception:  # a bug: the client shows its traceback, the server goes on
                err.write(traceback.format_exc())
                status = 70
        return {"status": status, "stdout": out.getvalue(), "stderr": err.getvalue()}

    def _edited_modules(self, program: str | None) -> list[str]:
        """The modules beside the client's program that differ from those the state was
        built with (the server runs the program it opened, not the client's files)."""
        from ddlog.errors import DDlogError
        from ddlog.syntax.source import read_text
        from ddlog.runtime.state import program_hash

        home = os.path.dirname(os.path.abspath(program or self.db.file))
        edited = []
        for rel, digest in sorted(self.db.manifest.modules.items()):
            try:
                same = program_hash(read_text(os.path.join(home, rel))) == digest
            except (OSError, DDlogError):  # missing, or not UTF-8
                same = False
            if not same:
                edited.append(rel)
        return edited

    def _shell_open(self, request: dict) -> dict:
        from ddlog.app.shell import Shell, SourceWindow
        from ddlog.syntax.commands import StatementSplitter
        from ddlog.runtime.state import program_hash

        if request.get("program_sha256") != program_hash(self.db.text):
            path = request.get("program", "the program")
            return {"status": 1, "stdout": "",
                    "stderr": f"error: state {self.db.state.path} belongs to a different "
                              f"program (built from {self.db.manifest.program_file}), not "
                              f"{path}\n"}
        edited = self._edited_modules(request.get("program"))
        if edited:
            return {"status": 1, "stdout": "",
                    "stderr": f"error: state {self.db.state.path} was built with other "
                              f"contents of {', '.join(edited)} (beside "
                              f"{request.get('program')}): an edited module makes another "
                              f"program\n"}
        file = request.get("file") or "<stdin>"
        out, err = io.StringIO(), io.StringIO()
        shell = Shell(self.db, out=out, err=err, interactive=bool(request.get("interactive")),
                      internal=bool(request.get("internal")))
        shell.file = file
        text = request.get("text")
        if text is not None:  # a whole file: its text for the caret lines
            session = _Session(shell, StatementSplitter(file, source=text), out, err)
            shell.source = lambda: text
        else:
            session = _Session(shell, StatementSplitter(file), out, err, SourceWindow())
            shell.source = session.window.text
        key = uuid.uuid4().hex
        session.used = time.monotonic()
        self.sessions[key] = session
        return {"session": key, "stdout": "", "stderr": ""}

    def _expire(self) -> None:
        """Drop the shell sessions idle for SESSION_IDLE seconds (a client gone without
        finishing), their open transactions with them."""
        now = time.monotonic()
        for key in [k for k, s in self.sessions.items() if now - s.used > SESSION_IDLE]:
            del self.sessions[key]

    def _shell_step(self, op: str, request: dict) -> dict:
        session = self.sessions.get(str(request.get("session")))
        if session is None:
            return {"refused": "no such shell session (it ended, or was idle too long)"}
        session.used = time.monotonic()
        try:
            if op == "shell-push":
                chunk = str(request.get("chunk", ""))
                if session.window is not None:
                    session.window.add(chunk)
                status = session.shell.push(session.splitter, chunk)
            else:
                status = session.shell.finish(session.splitter)
        except Exception as err:  # a failure that is not the input's: the session is over
            try:
                status, message = self.cli.failure(err)
            except Exception:  # a bug: the client shows its traceback, the server goes on
                status, message = 70, traceback.format_exc()
            session.err.write(message + "\n")
        out, err = session.out.getvalue(), session.err.getvalue()
        session.out.seek(0), session.out.truncate()
        session.err.seek(0), session.err.truncate()
        if status is not None:
            del self.sessions[str(request.get("session"))]
        return {"status": status, "stdout": out, "stderr": err}


@contextlib.contextmanager
def _redirected(out: io.StringIO, err: io.StringIO, stdin: str | None):
    """A served command prints into the response. Requests run one at a time, so swapping
    the process's streams is safe."""
    saved = sys.stdin
    sys.stdin = io.StringIO(stdin or "")
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            yield
    finally:
        sys.stdin = saved


def _handler(server: Server):
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            # who is asking, before anything of the body is read
            nonce = self.headers.get(NONCE, "")
            if not server.authentic(nonce, self.headers.get(AUTH, "")):
                self._send(403, {"refused": "not authenticated"}, "")
                self.close_connection = True
                return
            try:
                length = int(self.headers.get("Content-Length", "0"))
                if not 0 <= length <= MAX_REQUEST:
                    self._send(413, {"refused": f"a request of {length} bytes: at most "
                                                f"{MAX_REQUEST}"}, nonce)
                    self.close_connection = True
                    return
                request = json.loads(self.rfile.read(length).decode("utf-8"))
                if not isinstance(request, dict):
                    raise ValueError("not an object")
            except (ValueError, UnicodeDecodeError):
                self._send(400, {"refused": "bad request"}, nonce)
                return
            self._send(200, server.answer(request), nonce)

        def _send(self, code: int, body: dict, nonce: str) -> None:
            data = json.dumps(body).encode("utf-8")
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            if nonce:
                self.send_header(PROOF, proof(server.token, "answer", nonce, data))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802
            # an unauthenticated hello: the server proves it holds the token, for a nonce
            nonce = self.headers.get(NONCE, "")
            if not 16 <= len(nonce) <= 128:
                self._send(400, {"refused": "bad request"}, "")
                return
            self._send(200, {"pid": os.getpid(),
                             "proof": proof(server.token, "hello", nonce)}, "")

        def log_message(self, format: str, *args) -> None:  # noqa: A002
            pass  # quiet, as a command-line tool should be

    return Handler


def _write_private(path: str, text: str) -> None:
    """Write a file only its owner can read, atomically (never readable by others, not even
    for a moment)."""
    tmp = f"{path}.tmp-{os.getpid()}"
    with contextlib.suppress(FileNotFoundError):
        os.remove(tmp)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def serve_state(db: "Database", cli: CommandLine) -> None:
    if db.state is None:  # pragma: no cover - the CLI always gives one
        raise DDlogError("ddlog serve needs --state DIR")
    Server(db, cli).serve(lambda line: print(f"ddlog serve: {line}", file=sys.stderr, flush=True))
