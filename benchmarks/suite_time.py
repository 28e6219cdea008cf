"""The test suite's own time: runs `pytest` as `make test` does (or reads a JUnit XML it wrote) and prints
the wall time, the summed time of every test (setup + call + teardown), their ratio (how much the
workers overlap: 1.0 is one lane, 2.0 two lanes always busy) and the 30 slowest tests.

Every closing note reports the suite's time with this tool:
    python benchmarks/suite_time.py                      # the whole suite, as `make test` runs it
    python benchmarks/suite_time.py -- -m "not slow"     # arguments after -- go to pytest
    python benchmarks/suite_time.py --junit report.xml   # only report on a finished run's JUnit XML
"""

from __future__ import annotations

import argparse
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
SHOWN = 30


class TestTime(NamedTuple):
    nodeid: str
    seconds: float
    outcome: str


def read_junit(path: Path) -> tuple[list[TestTime], float]:
    """(one record per test case, pytest's session seconds) of a JUnit XML file written by pytest; a
    case's `time` is its setup + call + teardown."""
    root = ET.parse(path).getroot()
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    tests = []
    for case in root.iter("testcase"):
        module = (case.get("classname") or "").replace(".", "/")
        outcome = next((child.tag for child in case if child.tag in ("failure", "error", "skipped")), "passed")
        name = (case.get("name") or "").split("@", 1)[0]  # less pytest-xdist's group suffix
        tests.append(TestTime(f"{module}.py::{name}", float(case.get("time") or 0.0), outcome))
    return tests, float(suite.get("time") or 0.0) if suite is not None else 0.0


def run_suite(pytest_args: list[str], junit: Path) -> tuple[int, float]:
    """(pytest's exit code, wall seconds) of the suite run with the Makefile's pytest command."""
    # make splits PYTEST_ARGS like a shell line: quote each argument (`-m "not slow"` stays one).
    command = ["make", "-s", "-C", str(ROOT), "test", f"PYTEST_ARGS=--junitxml={junit} {shlex.join(pytest_args)}"]
    start = time.perf_counter()
    code = subprocess.run(command).returncode
    return code, time.perf_counter() - start


def report(tests: list[TestTime], session: float, wall: float | None) -> None:
    total = sum(t.seconds for t in tests)
    counts = {outcome: sum(t.outcome == outcome for t in tests) for outcome in ("passed", "failure", "error", "skipped")}
    print(f"\n{len(tests)} tests: {counts['passed']} passed, {counts['failure']} failed, {counts['error']} errors, {counts['skipped']} skipped")
    print(f"pytest session   {session:8.1f} s ({session / 60:.1f} min): the suite's time, collection included")
    print(f"summed test time {total:8.1f} s ({total / 60:.1f} min)")
    if session:
        print(f"summed / session {total / session:8.2f}x (the workers' overlap)")
    if wall is not None:
        print(f"make test wall   {wall:8.1f} s ({wall / 60:.1f} min): environments built or checked, then the suite")
    print(f"\nthe {SHOWN} slowest tests (setup + call + teardown):")
    for t in sorted(tests, key=lambda t: -t.seconds)[:SHOWN]:
        print(f"{t.seconds:8.1f} s  {t.outcome:7s}  {t.nodeid}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--junit", type=Path, help="report on this JUnit XML instead of running the suite")
    parser.add_argument("--keep", type=Path, help="after running the suite, keep its JUnit XML here")
    parser.add_argument("pytest_args", nargs="*", help="passed to pytest (after --)")
    args = parser.parse_args()
    if args.junit:
        report(*read_junit(args.junit), None)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        junit = Path(tmp) / "suite.xml"
        code, wall = run_suite(args.pytest_args, junit)
        if not junit.exists():
            print(f"pytest wrote no report (exit {code})", file=sys.stderr)
            return code or 1
        report(*read_junit(junit), wall)
        if args.keep:
            shutil.copyfile(junit, args.keep)
    return code


if __name__ == "__main__":
    sys.exit(main())
