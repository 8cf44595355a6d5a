"""A Spark Connect server on loopback, started from the pyspark wheel's own
`sbin/start-connect-server.sh --wait` in a process group of its own (the benchmarks of the
Connect backend, bench/backends.py, and its tests, tests/e2e/test_connect.py)."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pyspark

SPARK_HOME = Path(pyspark.__file__).parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ConnectServer:
    """`start()` it, then reach it at `url`; `stop()` ends it. `conf`: its Spark settings."""

    def __init__(self, work: Path, master: str = "local[2]", driver_memory: str = "2g",
                 conf: dict[str, str] | None = None):
        self.work = work
        self.port = free_port()
        self.url = f"sc://127.0.0.1:{self.port}"
        self.master, self.driver_memory = master, driver_memory
        self.conf = {"spark.ui.enabled": "false", "spark.log.level": "WARN",
                     "spark.sql.warehouse.dir": str(work / "warehouse"), **(conf or {})}
        self.proc: subprocess.Popen | None = None
        self.log = work / "connect-server.log"

    def start(self, timeout: float = 300) -> "ConnectServer":
        env = dict(os.environ, SPARK_HOME=str(SPARK_HOME), SPARK_LOG_DIR=str(self.work),
                   SPARK_PID_DIR=str(self.work), SPARK_LOCAL_IP="127.0.0.1")
        for key in ("SPARK_REMOTE", "SPARK_CONNECT_MODE_ENABLED", "SPARK_MASTER"):
            env.pop(key, None)
        conf = {**self.conf, "spark.connect.grpc.binding.port": str(self.port),
                "spark.connect.grpc.binding.address": "127.0.0.1"}
        args = [str(SPARK_HOME / "sbin" / "start-connect-server.sh"), "--wait",
                "--master", self.master, "--driver-memory", self.driver_memory]
        for key, value in conf.items():
            args += ["--conf", f"{key}={value}"]
        with open(self.log, "w") as out:
            self.proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, env=env,
                                         start_new_session=True)
        deadline = time.time() + timeout
        while True:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", self.port)) == 0:
                    return self
            if self.proc.poll() is not None or time.time() > deadline:
                self.stop()
                raise RuntimeError(f"no Connect server on port {self.port}:\n"
                                   f"{self.log.read_text()[-3000:]}")
            time.sleep(0.5)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=30)
