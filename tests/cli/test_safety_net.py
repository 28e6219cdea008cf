"""The CLI's safety net: an unexpected error is one stderr line plus a log holding the traceback,
`--debug` prints the traceback instead, and the real entry point keeps both promises and exit codes."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.badinput import run_cli
from tests.cli.conftest import SMALL


def _cache_under_a_file(tmp: Path) -> list[str]:
    """A real failure nobody anticipates: the synthetic-data cache path runs through a plain file."""
    (tmp / "plain").write_text("a file, not a folder\n")
    return ["run", *SMALL, "run.stages=[data]", f"run.dir={tmp / 'run'}", f"data.cache_dir={tmp / 'plain' / 'cache'}"]


def test_an_unexpected_error_is_one_line_naming_a_log_that_holds_the_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = run_cli(_cache_under_a_file(tmp_path), capsys)
    lines = result.err.strip().splitlines()
    assert result.code == 70 and len(lines) == 1 and "Traceback" not in result.err
    assert lines[0].startswith("slca: unexpected error: NotADirectoryError")
    log = Path(re.search(r"traceback in (\S+\.log)", lines[0]).group(1))
    assert log.parent == tmp_path / "run" / "logs"  # beside the run it belongs to
    text = log.read_text()
    assert "Traceback (most recent call last)" in text and "NotADirectoryError" in text
    assert text.splitlines()[0].startswith("slca run ")  # the command that failed heads the log


@pytest.mark.parametrize("where", ["before the command", "after the command"])
def test_debug_prints_the_traceback_and_writes_no_log(
    where: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    argv = _cache_under_a_file(tmp_path)
    argv = ["--debug", *argv] if where == "before the command" else [*argv, "--debug"]
    result = run_cli(argv, capsys)
    assert result.code == 70
    assert "Traceback (most recent call last)" in result.err and "NotADirectoryError" in result.err
    assert not (tmp_path / "run" / "logs").exists() and not (tmp_path / ".cache" / "slca" / "logs").exists()


def test_expected_refusals_stay_one_line_under_debug(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    result = run_cli(["--debug", "run", "--cfg", "job", "estimator=nope"], capsys)
    assert result.code == 2 and result.err.strip().splitlines() == [result.err.strip()] and "Traceback" not in result.err


def test_the_installed_entry_point_exits_with_the_same_codes_and_one_line(tmp_path: Path) -> None:
    def slca(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "slca.cli", *args], capture_output=True, text=True, cwd=tmp_path, timeout=300)

    usage = slca("run", "--nope")
    assert usage.returncode == 2 and usage.stderr.count("\n") == 1 and "--nope" in usage.stderr and usage.stdout == ""
    crash = slca(*_cache_under_a_file(tmp_path))
    assert crash.returncode == 70 and crash.stderr.count("\n") == 1 and "traceback in" in crash.stderr
    assert "Traceback" not in crash.stderr


def test_a_log_that_cannot_go_where_asked_falls_back_to_the_temp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tempfile

    from slca.app import write_log

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "plain").write_text("a file, so no logs/ folder can be made under it\n")
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        log = write_log(tmp_path / "plain" / "logs", ["run", "estimator=grpo"])
    assert log.parent == tmp_path / "tmp" / "slca-logs"
    text = log.read_text()
    assert text.startswith("slca run estimator=grpo\n") and "RuntimeError: boom" in text


def test_a_reader_that_closes_the_pipe_is_not_an_error(tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "slca.cli", "config", "groups"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # before the command writes anything: every write meets a closed pipe
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141 and err == ""
    assert not (tmp_path / ".cache").exists()  # nothing logged as a crash
