"""Crash safety of the state directory.

A shell process commits a list of transactions to a state and is killed with SIGKILL (its whole
process group, JVM included) at random moments of its commits, several rounds in a row; one
round is killed at the worst moment on purpose: every Parquet file of the epoch written, the
manifest not yet renamed. After each kill the state must be at the last epoch the process
finished committing (or the one it was finishing), the next process must open it with exactly
the oracle's contents for that epoch and go on from there, and at the end the outputs must be
the oracle's for all transactions, with no unreferenced files left behind.

DDLOG_TEST_SEED=<n> replays the kill delays of a failing run.
"""
from __future__ import annotations

import json
import os
import queue
import random
import threading
import time

from ddlog.plan import load
from ddlog.values import format_record
from tests.e2e.cli_support import PROGRAMS, DDlogCLI, kill_group, manifest_epoch
from tests.oracle import apply_updates, evaluate

TC = PROGRAMS / "tc.dl"

# (kind, relation, row); ("clear", R, None) empties R
TRANSACTIONS = [
    [("insert", "Edge", (1, 2)), ("insert", "Edge", (2, 3)), ("insert", "Edge", (3, 4))],
    [("insert", "Edge", (4, 1)), ("delete", "Edge", (2, 3))],
    [("insert", "Edge", (2, 3)), ("insert", "Edge", (5, 5)), ("delete", "Edge", (1, 2))],
    [("clear", "Edge", None), ("insert", "Edge", (1, 2)), ("insert", "Edge", (2, 1)),
     ("insert", "Edge", (2, 6))],
]


def script(first_epoch: int) -> str:
    """Dump everything (so the test sees what the process opened), then commit the remaining
    transactions, announcing each."""
    lines = ["dump;", "dump Edge;", "echo opened;"]
    for k, txn in enumerate(TRANSACTIONS[first_epoch:], start=first_epoch + 1):
        lines.append("start;")
        for kind, rel, row in txn:
            if kind == "clear":
                lines.append(f"clear {rel};")
            else:
                lines.append(f"{kind} {rel}({', '.join(map(str, row))});")
        lines += ["commit;", f"echo committed {k};"]
    lines.append("dump;")
    return "\n".join(lines) + "\n"


class Oracle:
    def __init__(self):
        self.program = load(str(TC)).program
        self.inputs = [{"Edge": set()}]  # inputs after epoch k
        for txn in TRANSACTIONS:
            cur = self.inputs[-1]
            for kind, rel, row in txn:
                if kind == "clear":
                    cur = {**cur, rel: set()}
                else:
                    cur = apply_updates(cur, [(kind, rel, row)])
            self.inputs.append(cur)

    def records(self, epoch: int, relations) -> set[str]:
        values = evaluate(self.program, self.inputs[epoch])
        return {format_record(r, self.program.relations[r].columns, row)
                for r in relations for row in values[r]}


class Running:
    """A shell process whose stdout is read line by line as it comes."""

    def __init__(self, cli: DDlogCLI, state, epoch: int, env=None):
        self.p = cli.popen("shell", TC, "--state", state, env=env)
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.out: list[str] = []
        self.err: list[str] = []
        self.ended = False
        threading.Thread(target=self._read, daemon=True).start()
        # stderr is drained too: a full pipe would block the process
        threading.Thread(target=lambda: self.err.extend(self.p.stderr), daemon=True).start()
        self.p.stdin.write(script(epoch))
        self.p.stdin.close()

    def _read(self) -> None:
        for line in self.p.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def wait_for(self, marker: str, timeout: float = 900) -> bool:
        """Collect output until `marker` (True) or the end of the output (False)."""
        deadline = time.time() + timeout
        while not self.ended:
            try:
                line = self.lines.get(timeout=max(1.0, deadline - time.time()))
            except queue.Empty:
                raise AssertionError(f"no {marker!r} after {timeout} s; output so far: "
                                     f"{self.out}; stderr: {''.join(self.err)[-2000:]}")
            if line is None:
                self.ended = True
                break
            self.out.append(line)
            if line == marker:
                return True
        return False

    def finish(self) -> tuple[int, str]:
        while self.wait_for("\0never"):
            pass
        self.p.wait(timeout=900)
        return self.p.returncode, "".join(self.err)

    def committed(self) -> int | None:
        done = [int(line.split()[1]) for line in self.out if line.startswith("committed ")]
        return max(done) if done else None

    def opened_with(self) -> set[str]:
        end = self.out.index("opened")
        return {line for line in self.out[:end] if "{" in line}


def test_state_survives_kills_during_commits(tmp_path_factory):
    seed = int(os.environ.get("DDLOG_TEST_SEED", random.randrange(1 << 30)))
    rng = random.Random(seed)
    cli = DDlogCLI(tmp_path_factory.mktemp("spark"), tmp_path_factory.mktemp("cwd"))
    state = tmp_path_factory.mktemp("crash") / "state"
    oracle = Oracle()
    everything = ["Path", "Edge"]
    epoch = 0
    # (what to wait for after the process opened the state, then a delay range in seconds,
    # extra environment)
    rounds = [("committed 1", (0.0, 6.0), None),
              (None, (0.0, 0.0), {"DDLOG_FAILPOINT": "before-manifest-rename"}),
              (None, (1.0, 8.0), None)]
    started = time.time()

    def log(msg: str) -> None:  # shown when the test fails (or with -s)
        print(f"[{time.time() - started:6.1f}s] {msg}", flush=True)

    for n, (marker, (lo, hi), env) in enumerate(rounds):
        where = f"seed {seed}, round {n}, from epoch {epoch}"
        if epoch == len(TRANSACTIONS):
            break  # a fast machine committed everything before the kills
        log(f"{where}: starting")
        run = Running(cli, state, epoch, env)
        assert run.wait_for("opened"), (where, run.out, run.err)
        log(f"{where}: opened")
        if epoch:
            assert run.opened_with() == oracle.records(epoch, everything), where
        if env is None:
            reached = marker is None or run.wait_for(marker)
            delay = rng.uniform(lo, hi)
            log(f"{where}: {marker!r} seen: {reached}; killing in {delay:.1f}s")
            time.sleep(delay)
            kill_group(run.p)
        else:
            run.p.wait(timeout=900)  # the failpoint kills it (its JVM follows; make sure)
            kill_group(run.p)
            reached = True
        run.wait_for("\0never")  # drain what it printed before dying
        after = manifest_epoch(state)
        last = run.committed() or epoch
        log(f"{where}: killed; last announced {last}, manifest at {after}")
        assert reached and after in (last, last + 1), (where, after, run.out)
        if env is not None:
            # killed after writing every file of the epoch, before the rename: not committed
            assert after == epoch and len(os.listdir(state / "data")) > len(referenced(state))
        epoch = after

    log(f"final round from epoch {epoch}")
    run = Running(cli, state, epoch)
    code, err = run.finish()
    log("final round done")
    where = f"seed {seed}, final round from epoch {epoch}"
    assert code == 0, (where, err)
    assert run.opened_with() == oracle.records(epoch, everything), where
    final = {line for line in run.out[run.out.index("opened"):] if "{" in line}
    assert final == oracle.records(len(TRANSACTIONS), ["Path"]), where
    assert manifest_epoch(state) == len(TRANSACTIONS)
    # the garbage of the interrupted commits is gone
    assert sorted(os.listdir(state / "data")) == sorted(referenced(state))


def referenced(state) -> list[str]:
    m = json.loads((state / "manifest.json").read_text())
    return [os.path.basename(b["path"]) for t in m["traces"].values() for b in t["batches"]]

