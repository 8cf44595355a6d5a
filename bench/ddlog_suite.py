"""DDlog's own test programs (its `test/datalog_tests`), run as DDlog's scripts run them, each
output compared byte for byte with the `.dump.expected` there. Needs a checkout of DDlog
(github.com/vmware/differential-datalog); nothing of it is copied into this project.

A program test runs as `ddlog shell X.dl < X.dat` (`three` with --output-internal-relations,
as run-tests.sh gives it); a library test (test-libs.sh) through a program that imports its
module, with --no-init-snapshot. Prints one line per test: PASS, or the first difference or
error.

    python bench/ddlog_suite.py --ddlog ~/differential-datalog
    python bench/ddlog_suite.py --ddlog ~/differential-datalog three path
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

PROGRAMS = ["bit_shift", "lb", "lb_reflective", "modules", "ovn_ftl", "path", "simple",
            "simple2", "simple3", "streams", "three", "tutorial"]
LIBRARIES = ["std_test", "uuid_test", "net_test", "json_test", "fp_test", "regex_test",
             "internment_test", "tinyset_test", "url_test", "vec_test", "map_test", "set_test",
             "hashset_test", "group_test", "base64_test", "time_test", "ddvalue_test"]
FLAGS = {"three": ["--output-internal-relations"]}
# DDlog gives these tests' extern functions Rust bodies (X.rs); here they get DDlog ones,
# written beside the program as X.extern.dl
EXTERNS = {"tutorial": "function string_slice_unsafe(x: string, from: bit<64>, to: bit<64>): "
                       "string { x.substr(from, to) }\n"}


def run(name: str, here: str) -> str:
    """PASS, or what differs. `here`: a copy of DDlog's test directory."""
    if name in LIBRARIES:
        program = os.path.join(here, f"main_{name}.dl")
        with open(program, "w", encoding="utf-8") as f:
            f.write(f"import {name}\n")
        flags = ["--no-init-snapshot"]
    else:
        program, flags = os.path.join(here, f"{name}.dl"), FLAGS.get(name, [])
    if name in EXTERNS:
        with open(os.path.join(here, f"{name}.extern.dl"), "w", encoding="utf-8") as f:
            f.write(EXTERNS[name])
    dat = os.path.join(here, f"{name}.dat")
    with open(dat if os.path.exists(dat) else os.devnull, encoding="utf-8") as stdin:
        done = subprocess.run([sys.executable, "-m", "ddlog", "shell", program, *flags],
                              stdin=stdin, capture_output=True, text=True, cwd=here)
    if done.returncode != 0:
        first = (done.stderr.strip().splitlines() or ["(no message)"])[0]
        return f"exit {done.returncode}: {first[:160]}"
    with open(os.path.join(here, f"{name}.dump.expected"), encoding="utf-8") as f:
        expected = f.read()
    if done.stdout == expected:
        return "PASS"
    got, want = done.stdout.splitlines(), expected.splitlines()
    for k, (a, b) in enumerate(zip(got, want)):
        if a != b:
            return f"line {k + 1}: got {a[:70]!r}, expected {b[:70]!r}"
    return f"{len(got)} lines, expected {len(want)}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ddlog", required=True, help="a checkout of differential-datalog")
    ap.add_argument("tests", nargs="*", help="the tests to run (all by default)")
    args = ap.parse_args()
    tests = os.path.join(args.ddlog, "test", "datalog_tests")
    names = args.tests or PROGRAMS + LIBRARIES
    passed = 0
    with tempfile.TemporaryDirectory() as work:
        here = os.path.join(work, "datalog_tests")
        shutil.copytree(tests, here, ignore=shutil.ignore_patterns("*_ddlog", "*.rs"))
        for name in names:
            result = run(name, here)
            passed += result == "PASS"
            print(f"{name:<16} {result}", flush=True)
    print(f"{passed} of {len(names)} print their expected dump")


if __name__ == "__main__":
    main()
