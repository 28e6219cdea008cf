"""Data commands stopped mid-write: SIGTERM ends them like Ctrl-C (one line, exit 143, no temporary
left); a temporary left by a SIGKILLed writer is removed by the next command writing the same output,
and a live writer's is never touched. Real `slca` processes, real signals."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from slca.data.io import read_rows
from tests.signalling import reaped, signal_when, wait_ready

ROWS = 20_000  # about 35 MB of jsonl: seconds of converting, so a signal lands mid-write


@pytest.fixture(scope="module")
def big_sft(synth_set, tmp_path_factory) -> Path:
    """A large SFT .jsonl: the synthetic set's conversations repeated."""
    lines = [json.dumps(row, ensure_ascii=False) + "\n" for row in read_rows(synth_set.sft)]
    path = tmp_path_factory.mktemp("big") / "sft.jsonl"
    with open(path, "w", encoding="utf-8") as handle:
        for i in range(ROWS):
            handle.write(lines[i % len(lines)])
    return path


def _start(*args: str, cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "slca.cli", *args], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _temporaries(final: Path) -> list[Path]:
    """What the writers of `final` keep beside it while they write (files or folders)."""
    return sorted(p for p in final.parent.iterdir() if p.name.startswith(f".{final.name}.") and p.name.endswith(".tmp"))


def _written(final: Path) -> Path | None:
    """A temporary of `final` that holds data (its writer is then mid-write), if any."""
    for path in _temporaries(final):
        files = [p for p in path.rglob("*") if p.is_file()] if path.is_dir() else [path]
        if any(f.stat().st_size > 0 for f in files):
            return path
    return None


@pytest.mark.parametrize("command", ["convert", "validate --out", "synth"])
def test_sigterm_mid_write_exits_143_with_one_line_and_leaves_no_temporary(command, big_sft, tmp_path) -> None:
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    final, args = {
        "convert": (out_dir / "lf.jsonl", ["data", "convert", str(big_sft), str(out_dir / "lf.jsonl")]),
        "validate --out": (out_dir / "valid.jsonl", ["data", "validate", str(big_sft), "--split", "sft", "--out", str(out_dir / "valid.jsonl")]),
        "synth": (out_dir / "set", ["data", "synth", "--out", str(out_dir / "set"), "--n-sft", str(ROWS)]),
    }[command]
    proc = _start(*args, cwd=tmp_path)
    _, err = signal_when(proc, lambda: _written(final), "a temporary with data")
    assert proc.returncode == 143, err
    assert err.splitlines() == ["slca: terminated"]
    assert sorted(os.listdir(out_dir)) == [], "no temporary, no half-written output, no registry entry"


def test_a_temporary_left_by_a_sigkilled_convert_is_removed_by_the_next_convert_to_the_same_file(big_sft, tmp_path) -> None:
    final = tmp_path / "lf" / "train.jsonl"
    args = ("data", "convert", str(big_sft), str(final))
    proc = _start(*args, cwd=tmp_path)
    signal_when(proc, lambda: _written(final), "a temporary with data", signal.SIGKILL)
    (left,) = _temporaries(final)  # nothing can remove it under SIGKILL

    again = subprocess.run([sys.executable, "-m", "slca.cli", *args], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    (line,) = again.stderr.splitlines()
    assert line.startswith("slca: removed ") and left.name in line and f"process {proc.pid}" in line
    assert _temporaries(final) == [] and not left.exists()
    with open(final, encoding="utf-8") as handle:
        converted = [json.loads(text) for text in handle]
    assert len(converted) == ROWS and all(row["messages"] for row in converted)
    assert json.loads((final.parent / "dataset_info.json").read_text())["train"]["file_name"] == "train.jsonl"


def test_the_temporary_of_a_live_writer_is_left_alone(big_sft, synth_set, tmp_path) -> None:
    """A writer stopped (SIGSTOP) mid-write is alive: another convert to the same file publishes its own
    output beside the stopped writer's temporary and leaves that temporary as it is."""
    final = tmp_path / "train.jsonl"
    with reaped(_start("data", "convert", str(big_sft), str(final), cwd=tmp_path)) as writer:
        temporary = wait_ready(writer, lambda: _written(final), "a temporary with data")
        writer.send_signal(signal.SIGSTOP)
        # The signal is delivered asynchronously: the writer may write on for a moment after kill() returns.
        stopped = psutil.Process(writer.pid)
        while stopped.status() != psutil.STATUS_STOPPED:
            time.sleep(0.01)
        size = temporary.stat().st_size
        other = subprocess.run([sys.executable, "-m", "slca.cli", "data", "convert", str(synth_set.sft), str(final)],
                               cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert other.returncode == 0, other.stderr
        assert "removed" not in other.stderr
        assert temporary.is_file() and temporary.stat().st_size == size
    assert sum(1 for _ in open(final, encoding="utf-8")) == sum(1 for _ in read_rows(synth_set.sft))
