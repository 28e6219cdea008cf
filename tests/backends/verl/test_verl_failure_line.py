"""When verl exits non-zero, slca's one-line error carries the last line of verl.log that names an error
(a Ray out-of-memory kill says only "exited with status 1" otherwise)."""

from __future__ import annotations

from pathlib import Path

from slca.backends.verl.stages import last_error_line

RAY_OOM = ("ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory. "
           "Memory on the node (IP: 10.0.0.5, ID: 4f2a) where the task was running was 120.01GB / 125.00GB (0.96)")


def test_the_failure_line_names_ray_running_out_of_memory_when_the_log_does(tmp_path: Path) -> None:
    log = tmp_path / "verl.log"
    log.write_text("\n".join([
        "(TaskRunner pid=1) step 3",
        "Traceback (most recent call last):",
        '  File "main_ppo.py", line 42, in run',
        "\x1b[36m(raylet)\x1b[0m " + RAY_OOM,
        "",
        "(raylet) [2026-12-06 02:00:00] shutting down: received SIGTERM",
        "*** SIGTERM received at time=1765000000 on cpu 3 ***",
    ]) + "\n")
    assert last_error_line(log) == ("(raylet) " + RAY_OOM)[:300]
    assert "Task was killed due to the node running low on memory" in last_error_line(log)


def test_the_last_error_line_wins_and_a_log_with_none_or_no_log_gives_nothing(tmp_path: Path) -> None:
    log = tmp_path / "verl.log"
    log.write_text("ValueError: first\nstep 1 loss 0.5\nRuntimeError: CUDA error: an illegal memory access\nexit\n")
    assert last_error_line(log) == "RuntimeError: CUDA error: an illegal memory access"
    log.write_text("step 1 loss 0.5\nwarning_count=0 error_rate=0.0\n")
    assert last_error_line(log) == ""
    assert last_error_line(tmp_path / "missing.log") == ""


def test_only_the_logs_tail_is_read(tmp_path: Path) -> None:
    log = tmp_path / "verl.log"
    log.write_bytes(b"KeyError: early\n" + b"x" * 200_000 + b"\nstep 9\n")
    assert last_error_line(log) == ""
    assert last_error_line(log, tail_bytes=300_000) == "KeyError: early"
