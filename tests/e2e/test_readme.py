"""The README, run as a user runs it from a checkout, and its printed output compared with what
the commands print.

- Every ```console block, in order, in one fresh working directory holding a copy of
  `programs/`: a line `$ cmd` is a command (continued while it ends in `\\` or a quote is
  open), `>> text` lines are what is typed into it, every other line is what it prints
  (stdout and stderr as a terminal shows them). `cmd &` starts in the background (its first
  lines are its output) and `kill %1` stops it. `make ...` runs in the checkout itself
  (`make demo`). `.venv/bin/ddlog` is the ddlog of the Python running the tests.
- Every ```python block followed by a ```text block: the snippet runs (in that directory) and
  prints the text.

What differs by machine is masked on both sides: the working directory (the README's
/home/me), seconds (`4.02s`), a loopback port and a pid, and the counts of Spark jobs and
fixpoint iterations of an epoch's summary. When the README changes, this test follows it;
when the code changes what a command prints, the README is updated in the same commit.
"""
from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.e2e.cli_support import ROOT

README = ROOT / "README.md"
HOME = "/home/me"  # the README's working directory


@dataclass
class Step:
    command: str
    typed: list[str] = field(default_factory=list)
    expected: list[str] = field(default_factory=list)
    line: int = 0  # where the README has it


def blocks(text: str, lang: str) -> list[tuple[int, list[str]]]:
    """The ```lang blocks of a Markdown text: (line number of the first line, lines)."""
    out, lines = [], text.splitlines()
    k = 0
    while k < len(lines):
        if lines[k].strip() == f"```{lang}":
            start = k + 1
            k += 1
            while lines[k].strip() != "```":
                k += 1
            out.append((start + 1, lines[start:k]))
        k += 1
    return out


def _complete(command: str) -> bool:
    if command.endswith("\\"):
        return False
    try:
        shlex.split(command, comments=True)
    except ValueError:  # a quote still open
        return False
    return True


def console_steps(lines: list[str], first: int) -> list[Step]:
    steps: list[Step] = []
    k = 0
    while k < len(lines):
        line = lines[k]
        if line.startswith("$ "):
            command, at = line[2:], first + k
            while not _complete(command):
                k += 1
                command += "\n" + lines[k]
            steps.append(Step(command, line=at))
        elif line.startswith(">> "):
            steps[-1].typed.append(line[3:])
        else:
            steps[-1].expected.append(line)
        k += 1
    return steps


def python_snippets(text: str) -> list[tuple[int, str, list[str]]]:
    """(line, code, printed lines) of every ```python block followed by a ```text block
    (with at most a line of prose between them, such as "prints")."""
    out = []
    pythons, texts = blocks(text, "python"), dict(blocks(text, "text"))
    lines = text.splitlines()
    for line, code in pythons:
        k = line + len(code)  # 0-based: the line after the closing fence
        prose = 0
        while k < len(lines) and not lines[k].startswith("```") and prose <= 1:
            prose += bool(lines[k].strip())
            k += 1
        if k < len(lines) and lines[k].strip() == "```text":
            out.append((line, "\n".join(code), texts[k + 2]))
    return out


MASKS = [
    (re.compile(r"\b\d+(\.\d+)?s\b"), "<seconds>"),
    (re.compile(r"127\.0\.0\.1:\d+"), "127.0.0.1:<port>"),
    (re.compile(r"\bpid \d+"), "pid <pid>"),
    (re.compile(r"\b\d+ Spark jobs"), "<n> Spark jobs"),
    (re.compile(r"\b\d+ iterations"), "<n> iterations"),
]


def masked(lines: list[str], work: Path) -> list[str]:
    out = []
    for line in lines:
        line = line.replace(str(work), HOME).rstrip()
        for pattern, mask in MASKS:
            line = pattern.sub(mask, line)
        out.append(line)
    while out and not out[-1]:
        out.pop()
    return out


class Session:
    """A terminal in `work`: commands run one after another, with ddlog on the PATH."""

    def __init__(self, work: Path):
        self.work = work
        self.background: list[subprocess.Popen] = []
        bin_dir = os.path.dirname(sys.executable)
        self.env = {k: v for k, v in os.environ.items()
                    if k not in ("PYTHONPATH", "SPARK_MASTER")}
        self.env["PATH"] = bin_dir + os.pathsep + self.env.get("PATH", "")

    def run(self, step: Step) -> list[str]:
        command = step.command.replace(".venv/bin/ddlog", "ddlog")
        if re.fullmatch(r"kill %(\d+)", command.split("#")[0].strip()):
            job = int(command.split("%")[1].split()[0])
            p = self.background[job - 1]
            p.send_signal(signal.SIGTERM)
            p.wait(timeout=120)
            return []
        if command.split("#")[0].rstrip().endswith("&"):
            return self._start(command.split("#")[0].rstrip()[:-1], len(step.expected))
        cwd = ROOT if command.startswith("make ") else self.work
        if command.startswith("make "):
            command = f"{command} PYTHON={sys.executable}"
        typed = "".join(t + "\n" for t in step.typed)
        p = subprocess.run(["bash", "-c", f"{command} 2>&1"], input=typed, cwd=cwd,
                           env=self.env, capture_output=True, text=True, timeout=900)
        assert p.returncode == 0, f"README line {step.line}: `{command}` exited " \
                                  f"{p.returncode}:\n{p.stdout}"
        return p.stdout.splitlines()

    def _start(self, command: str, lines: int) -> list[str]:
        p = subprocess.Popen(["bash", "-c", f"exec {command} 2>&1"], cwd=self.work,
                             env=self.env, stdout=subprocess.PIPE, text=True,
                             start_new_session=True)
        self.background.append(p)
        return [p.stdout.readline().rstrip("\n") for _ in range(lines)]

    def close(self) -> None:
        for p in self.background:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(timeout=60)


@pytest.fixture
def work(tmp_path) -> Path:
    shutil.copytree(ROOT / "programs", tmp_path / "programs")
    return tmp_path


def test_the_readme_is_parsed_as_expected():
    """The parser finds what the README shows (so that the run below cannot pass by finding
    nothing)."""
    text = README.read_text(encoding="utf-8")
    steps = [s for line, b in blocks(text, "console") for s in console_steps(b, line)]
    commands = [s.command.split()[0] for s in steps]
    assert commands.count("ddlog") >= 9 and "make" in commands
    assert any(s.typed for s in steps)  # the shell's session
    assert any(s.command.rstrip().split("#")[0].rstrip().endswith("&") for s in steps)
    assert python_snippets(text)


@pytest.mark.slow
def test_the_readme_prints_what_it_says(work):
    text = README.read_text(encoding="utf-8")
    session = Session(work)
    wrong = []
    try:
        for line, block in blocks(text, "console"):
            for step in console_steps(block, line):
                got = masked(session.run(step), work)
                want = masked(step.expected, work)
                if got != want:
                    wrong.append(f"README line {step.line}: $ {step.command}\n--- README\n"
                                 + "\n".join(want) + "\n--- printed\n" + "\n".join(got))
        for line, code, printed in python_snippets(text):
            p = subprocess.run([sys.executable, "-c", code], cwd=work, env=session.env,
                               capture_output=True, text=True, timeout=600)
            got = masked((p.stdout + p.stderr).splitlines(), work)
            if p.returncode != 0 or got != masked(printed, work):
                wrong.append(f"README line {line}: the Python snippet\n--- README\n"
                             + "\n".join(masked(printed, work)) + "\n--- printed\n"
                             + "\n".join(got))
    finally:
        session.close()
    assert not wrong, "\n\n".join(wrong)
