"""The client side of `ddlog serve` (ddlog/app/serve.py): when a server answers for the state
a command names, the command runs there and this process only prints what it sends back.

`forward` returns None when no server answers (no serve file, nobody listening on its port, or
a wrong token: a server killed without cleaning up, its port reused by another program); the
command then opens the state itself, as without a server.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any, Iterator

from ddlog.app.serve import SERVE_FILE
from ddlog.errors import DDlogError
from ddlog.syntax.source import read_text


@dataclass(frozen=True)
class Server:
    port: int
    token: str

    def call(self, request: dict[str, Any], timeout: float | None = None) -> dict | None:
        """The server's answer, or None when nobody (or someone else) answers."""
        data = json.dumps({**request, "token": self.token}).encode("utf-8")
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}/", data=data,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                answer = json.loads(resp.read().decode("utf-8"))
        except (urllib.error.URLError, ConnectionError, ValueError, OSError):
            return None
        if not isinstance(answer, dict) or "refused" in answer:
            return None
        return answer


def find_server(state_dir: str) -> Server | None:
    path = os.path.join(os.path.abspath(state_dir), SERVE_FILE)
    try:
        with open(path, encoding="utf-8") as f:
            info = json.load(f)
        return Server(int(info["port"]), str(info["token"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def forward(args: argparse.Namespace, argv: list[str]) -> int | None:
    """Run the command on the state's server; its exit status, or None without a server."""
    server = find_server(args.state)
    if server is None or server.call({"op": "hello"}, timeout=10) is None:
        return None
    if args.command == "shell":
        return _shell(server, args)
    request: dict[str, Any] = {"op": "command", "argv": argv, "texts": {}}
    if args.command == "feed":
        if args.file is not None:
            request["texts"][args.file] = read_text(args.file)
        elif not args.updates and not sys.stdin.isatty():
            request["stdin"] = sys.stdin.read()
    answer = server.call(request)
    return None if answer is None else _print(answer)


def _print(answer: dict) -> int | None:
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
                                    "program_sha256": program_hash(read_text(args.program))}
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
        chunks = iter(sys.stdin.readline, "")
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
