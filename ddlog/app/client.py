"""The client side of `ddlog serve` (ddlog/app/serve.py): when a server answers for the state
a command names, the command runs there and this process only prints what it sends back.

`forward` returns None when no server answers: no serve file, its pid not a live ddlog
server, or nobody on its port who can prove it holds the token (a server killed without
cleaning up, its port reused by another program, which then gets neither the token nor the
command); the command then opens the state itself, as without a server. A server that
answers but refuses the command says why, and the command fails with that.
"""
from __future__ import annotations

import argparse
import hmac
import http.client
import json
import os
import secrets
import sys
from dataclasses import dataclass
from typing import Any, Iterator

from ddlog.app.protocol import AUTH, NONCE, PROOF, SERVE_FILE, proof
from ddlog.errors import DDlogError
from ddlog.limits import MAX_LINE
from ddlog.syntax.source import read_stream, read_text


@dataclass(frozen=True)
class Server:
    port: int
    token: str
    pid: int

    def _exchange(self, method: str, body: bytes | None, headers: dict[str, str],
                  timeout: float | None) -> tuple[int, dict[str, str], bytes] | None:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            conn.request(method, "/", body=body, headers=headers)
            resp = conn.getresponse()
            return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
        except (OSError, http.client.HTTPException):
            return None
        finally:
            conn.close()

    def hello(self, timeout: float = 10) -> bool:
        """Whether the server on the port is this state's: it proves it holds the token
        (an HMAC of a fresh nonce), and it is the process the serve file names."""
        nonce = secrets.token_hex(16)
        got = self._exchange("GET", None, {NONCE: nonce}, timeout)
        if got is None or got[0] != 200:
            return False
        try:
            answer = json.loads(got[2].decode("utf-8"))
        except ValueError:
            return False
        return (isinstance(answer, dict) and answer.get("pid") == self.pid
                and hmac.compare_digest(str(answer.get("proof", "")),
                                        proof(self.token, "hello", nonce)))

    def call(self, request: dict[str, Any], timeout: float | None = None) -> dict | None:
        """The server's answer (with "refused" and why, when it does not take the request),
        or None when nobody, or somebody who cannot prove holding the token, answers."""
        nonce = secrets.token_hex(16)
        data = json.dumps(request).encode("utf-8")
        got = self._exchange("POST", data, {"Content-Type": "application/json", NONCE: nonce,
                                            AUTH: proof(self.token, "request", nonce)},
                             timeout)
        if got is None:
            return None
        _, headers, body = got
        if not hmac.compare_digest(headers.get(PROOF.lower(), ""),
                                   proof(self.token, "answer", nonce, body)):
            return None
        try:
            answer = json.loads(body.decode("utf-8"))
        except ValueError:
            return None
        return answer if isinstance(answer, dict) else None


def find_server(state_dir: str) -> Server | None:
    """The server the state's serve file names, if its process is a live ddlog server."""
    path = os.path.join(os.path.realpath(state_dir), SERVE_FILE)
    try:
        with open(path, encoding="utf-8") as f:
            info = json.load(f)
        server = Server(int(info["port"]), str(info["token"]), int(info["pid"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return server if _a_server(server.pid) else None


def _a_server(pid: int) -> bool:
    """Whether `pid` is a live process that is a `ddlog serve` (where /proc says what a
    process runs; elsewhere, alive is all that is checked)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: not our server
        return False
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = f.read().split(b"\0")
    except OSError:
        return True
    return b"serve" in argv and any(b"ddlog" in a for a in argv)


def forward(args: argparse.Namespace, argv: list[str]) -> int | None:
    """Run the command on the state's server; its exit status, or None without a server."""
    server = find_server(args.state)
    if server is None or not server.hello():
        return None
    if args.command == "shell":
        return _shell(server, args)
    request: dict[str, Any] = {"op": "command", "argv": _resolved(argv, args.state),
                               "texts": {}}
    if args.command == "feed":
        if args.file is not None:
            request["texts"][args.file] = read_text(args.file)
        elif not args.updates and not sys.stdin.isatty():
            request["stdin"] = read_stream(sys.stdin)
    answer = server.call(request)
    return None if answer is None else _print(answer)


def _resolved(argv: list[str], state: str) -> list[str]:
    """The command line with its --state resolved (symbolic links followed): the server runs
    in a directory of its own."""
    real = os.path.realpath(state)
    out, k = [], 0
    while k < len(argv):
        a = argv[k]
        if a == "--state" and k + 1 < len(argv):
            out += [a, real]
            k += 2
            continue
        out.append(f"--state={real}" if a.startswith("--state=") else a)
        k += 1
    return out


def _print(answer: dict) -> int | None:
    if "refused" in answer:
        raise DDlogError(f"the ddlog server of this state refused the command: "
                         f"{answer['refused']}")
    sys.stdout.write(answer.get("stdout", ""))
    sys.stdout.flush()
    sys.stderr.write(answer.get("stderr", ""))
    sys.stderr.flush()
    return answer.get("status")


def _shell(server: Server, args: argparse.Namespace) -> int | None:
    """A shell session on the server: the program must be the state's; input goes over in
    chunks (a whole --commands file, a piped line, a terminal line), output comes back."""
    from ddlog.runtime.state import program_hash

    open_request: dict[str, Any] = {"op": "shell-open", "program": args.program,
                                    "program_sha256": program_hash(read_text(args.program)),
                                    "internal": args.output_internal_relations}
    chunks: Iterator[str]
    if args.commands is not None:
        text = read_text(args.commands)
        open_request.update(file=args.commands, text=text)
        chunks = iter([text])
    elif sys.stdin.isatty():
        from ddlog.app.shell import PROMPT, terminal_lines

        open_request.update(interactive=True)
        chunks = terminal_lines(lambda: PROMPT, sys.stdout)
    else:
        chunks = iter(lambda: sys.stdin.readline(MAX_LINE), "")
    answer = server.call(open_request)
    if answer is None:
        return None
    if "session" not in answer:
        return _print(answer)
    session = answer["session"]
    for chunk in chunks:
        answer = server.call({"op": "shell-push", "session": session, "chunk": chunk})
        if answer is None:
            raise DDlogError("the ddlog server of this state stopped during the session")
        status = _print(answer)
        if status is not None:
            return status
    answer = server.call({"op": "shell-finish", "session": session})
    if answer is None:
        raise DDlogError("the ddlog server of this state stopped during the session")
    return _print(answer)
