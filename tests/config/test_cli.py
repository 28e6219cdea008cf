"""The `slca` command line: help without heavy imports, --cfg job, --spec round-trip, clear errors."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from slca.cli import main
from slca.config.compose import compose_spec
from slca.config.errors import SpecError
from slca.config.io import dump_spec, load_spec, write_spec

REPO = Path(__file__).resolve().parents[2]


def _slca(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "slca.cli", *args], capture_output=True, text=True, cwd=cwd or REPO, timeout=120)


def test_help_imports_neither_torch_nor_transformers() -> None:
    code = (
        "import sys\n"
        "from slca.cli import build_parser\n"
        "build_parser().format_help()\n"
        "heavy = [m for m in ('torch', 'transformers', 'hydra', 'pyarrow', 'wandb', 'verl') if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
    proc = _slca("--help")
    assert proc.returncode == 0 and "run" in proc.stdout and "config" in proc.stdout


def test_cfg_job_prints_resolved_spec_and_runs_nothing(tmp_path: Path) -> None:
    proc = _slca("run", "--cfg", "job", "estimator=grpo", f"run.dir={tmp_path / 'r'}")
    assert proc.returncode == 0, proc.stderr
    printed = yaml.safe_load(proc.stdout)
    assert printed["estimator"]["name"] == "grpo" and printed["estimator"]["eps"] == 1e-6
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(
    ("override", "fragment"),
    [
        ("estimator=nope", "config error at estimator: unknown option 'nope'"),
        ("train.rl.nope=1", "config error at train.rl.nope: unknown key"),
        ("train.rl.lr=abc", "config error at train.rl.lr: Input should be a valid number"),
    ],
)
def test_bad_override_exits_nonzero_with_one_line(override: str, fragment: str) -> None:
    proc = _slca("run", "--cfg", "job", override)
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr


def test_spec_round_trip_is_identical(tmp_path: Path) -> None:
    for overrides in ([], ["experiment=paper_slca"], ["experiment=efficient_grpo_multi_turn", "downsample.m=6"]):
        spec = compose_spec(overrides)
        path = write_spec(spec, tmp_path / "spec.yaml")
        again = load_spec(path)
        assert again == spec
        assert dump_spec(again) == dump_spec(spec)


def test_spec_file_reruns_via_cli(tmp_path: Path) -> None:
    spec = compose_spec(["estimator=rloo", "train.rl.n=4"])
    path = write_spec(spec, tmp_path / "spec.yaml")
    proc = _slca("run", "--cfg", "job", "--spec", str(path))
    assert proc.returncode == 0, proc.stderr
    assert load_spec(path) == compose_spec(["estimator=rloo", "train.rl.n=4"])
    assert yaml.safe_load(proc.stdout) == spec.model_dump(mode="json")
    # Overrides on top of a saved spec reach existing keys only.
    assert main(["run", "--cfg", "job", "--spec", str(path), "train.rl.n=8"]) == 0
    assert main(["run", "--cfg", "job", "--spec", str(path), "train.rl.nope=8"]) == 2


def test_experiment_overlay_file_composes(tmp_path: Path) -> None:
    overlay = tmp_path / "my_ablation.yaml"
    overlay.write_text(
        "# @package _global_\n"
        "defaults:\n  - embedded_demo\n  - override /estimator: toolpo\n"
        "experiment: my_ablation\ndescription: ToolPO on the embedded set\nestimator:\n  lam: 0.5\n"
    )
    spec = load_spec(overlay)
    assert spec.experiment == "my_ablation" and spec.estimator.name == "toolpo" and spec.estimator.lam == 0.5
    proc = _slca("config", "validate", str(overlay))
    assert proc.returncode == 0 and "valid" in proc.stdout
    bad = tmp_path / "bad.yaml"
    bad.write_text("# @package _global_\ndefaults:\n  - embedded_demo\nexperiment: bad\ndescription: x\ntrain:\n  rl:\n    n: -3\n")
    proc = _slca("config", "validate", str(bad))
    assert proc.returncode == 2 and "config error at train.rl.n" in proc.stderr


def test_run_directory_holds_spec_and_provenance(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from slca.pipeline import prepare_run_dir

    monkeypatch.setenv("SLCA_JUDGE_API_KEY", "sk-secret-value-123")
    spec = compose_spec(["reward.judge.name=llm", f"run.dir={tmp_path / 'run'}"])
    spec, run_dir = prepare_run_dir(spec, argv=["slca", "run"])
    assert load_spec(run_dir / "spec.yaml") == spec
    prov = json.loads((run_dir / "provenance.json").read_text())
    assert {"created_utc", "git", "packages", "python", "host", "seeds", "platform"} <= set(prov)
    assert prov["packages"]["slca"] and prov["packages"]["torch"].startswith("2.")
    assert set(prov["git"]) == {"commit", "dirty"}
    for path in (run_dir / "spec.yaml", run_dir / "provenance.json"):
        assert "sk-secret-value-123" not in path.read_text()
    assert not list(run_dir.glob(".*.tmp")), "atomic writes leave no temporary files"


def test_default_run_dir_is_experiment_and_utc_stamp() -> None:
    from datetime import datetime, timezone

    from slca.pipeline import resolve_run_dir

    spec = compose_spec([])
    path = resolve_run_dir(spec, now=datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc))
    assert path == Path("runs/embedded_demo/20260102T030405Z")


def test_group_option_override_on_a_saved_spec(tmp_path: Path) -> None:
    path = write_spec(compose_spec([]), tmp_path / "spec.yaml")
    spec = load_spec(path, ["logger=none", "estimator=grpo", "estimator.eps=0.5"])
    assert spec.logger.name == "none" and spec.estimator.name == "grpo" and spec.estimator.eps == 0.5
    with pytest.raises(SpecError, match=r"^config error at logger: unknown option 'tensorboard'; options: none, wandb$"):
        load_spec(path, ["logger=tensorboard"])


def test_changed_spec_does_not_reuse_or_overwrite_a_finished_stage(tmp_path: Path) -> None:
    from slca.config.io import load_spec as load
    from slca.pipeline import StageMismatch, prepare_run_dir, run_pipeline
    from slca.tracking.tracker import Tracker

    run_dir = tmp_path / "run"
    spec, _ = prepare_run_dir(compose_spec([f"run.dir={run_dir}", "run.stages=[data]", f"data.cache_dir={tmp_path / 'cache'}",
                                            "data.n_sft=20", "data.n_rl=10", "data.n_eval=5"]))
    with Tracker(run_dir) as tracker:
        assert [o.status for o in run_pipeline(spec, run_dir, tracker)] == ["done"]
        assert [o.status for o in run_pipeline(spec, run_dir, tracker)] == ["skipped"]
    changed = spec.model_copy(update={"data": spec.data.model_copy(update={"n_rl": 11})})
    with pytest.raises(StageMismatch, match=r"stage 'data' in .* was produced by a different spec"):
        prepare_run_dir(changed)
    assert load(run_dir / "spec.yaml").data.n_rl == 10  # the run's spec.yaml still describes its results
    proc = _slca("run", "--spec", str(run_dir / "spec.yaml"), "data.n_rl=11")
    assert proc.returncode == 2 and "produced by a different spec" in proc.stderr and "Traceback" not in proc.stderr


# ----------------------------------------------------------------------------- flags among overrides


def _override_commands() -> dict[tuple[str, ...], argparse.ArgumentParser]:
    """Every sub-command (nested ones included) whose parser takes OVERRIDE positionals."""
    from slca.cli import build_parser

    found: dict[tuple[str, ...], argparse.ArgumentParser] = {}
    stack: list[tuple[tuple[str, ...], argparse.ArgumentParser]] = [((), build_parser())]
    while stack:
        path, parser = stack.pop()
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                stack += [((*path, name), sub) for name, sub in action.choices.items()]
            elif action.dest == "overrides":
                found[path] = parser
    return found


def test_every_command_that_takes_overrides_is_known_here() -> None:
    assert set(_override_commands()) == {("run",), ("sweep",), ("eval",), ("config", "validate"), ("data", "curate")}


def _flag_value(action: argparse.Action) -> list[str]:
    """A value the flag's parser accepts (its first choice, or the first candidate its type takes)."""
    if action.nargs == 0:
        return []
    if action.choices:
        return [action.choices[0]]
    for candidate in ("1", "1-2", "VALUE"):
        try:
            (action.type or str)(candidate)
        except (ValueError, TypeError, argparse.ArgumentTypeError):
            continue
        return [candidate] * (action.nargs if isinstance(action.nargs, int) else 1)  # `--compare BASE RL` takes two
    raise AssertionError(f"no value for {action.option_strings}")


@pytest.mark.parametrize("command", sorted(_override_commands()), ids=" ".join)
def test_each_flag_may_stand_between_overrides(command: tuple[str, ...]) -> None:
    from slca.cli import build_parser

    parser = _override_commands()[command]
    leading = ["FILE.yaml" for a in parser._get_positional_actions() if a.dest != "overrides"]
    flags = [a for a in parser._get_optional_actions() if a.dest != "help"]
    for action in flags:
        required = [part for a in flags if a.required and a is not action for part in (a.option_strings[-1], *_flag_value(a))]
        argv = [*command, *leading, "estimator=grpo", action.option_strings[-1], *_flag_value(action), "train.rl.n=4", *required]
        args = build_parser().parse_args(argv)
        assert args.overrides == ["estimator=grpo", "train.rl.n=4"], argv
        assert getattr(args, action.dest) not in (None, False), argv
    assert flags or command == ("config", "validate")


def test_run_cfg_job_reads_overrides_on_both_sides_of_a_flag(capsys: pytest.CaptureFixture[str]) -> None:
    from tests.badinput import run_cli

    result = run_cli(["run", "experiment=paper_slca", "--cfg", "job", "backend=verl"], capsys)
    assert result.code == 0, result.err
    printed = yaml.safe_load(result.out)
    assert (printed["experiment"], printed["backend"]["name"]) == ("paper_slca", "verl")


def test_run_spec_given_after_an_override_still_applies_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.badinput import run_cli

    path = write_spec(compose_spec([]), tmp_path / "spec.yaml")
    result = run_cli(["run", "train.rl.n=4", "--spec", path, "estimator=grpo", "--cfg", "job"], capsys)
    assert result.code == 0, result.err
    printed = yaml.safe_load(result.out)
    assert (printed["train"]["rl"]["n"], printed["estimator"]["name"]) == (4, "grpo")


def test_eval_cfg_job_reads_overrides_on_both_sides_of_its_flags(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.badinput import run_cli

    result = run_cli(["eval", "eval.limit=3", "--model", tmp_path, "estimator=grpo", "--cfg", "job", "eval.n=1"], capsys)
    assert result.code == 0, result.err
    printed = yaml.safe_load(result.out)
    assert (printed["eval"]["limit"], printed["eval"]["model_dir"], printed["estimator"]["name"]) == (3, str(tmp_path), "grpo")


def test_config_validate_reads_overrides_around_debug(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.badinput import run_cli

    path = write_spec(compose_spec([]), tmp_path / "spec.yaml")
    result = run_cli(["config", "validate", path, "train.rl.n=4", "--debug", "train.rl.n=999999"], capsys)
    assert result.code == 2 and "config error at train.rl.n" in result.err  # the override after the flag applied


def test_a_file_named_like_a_flag_is_taken_after_a_double_dash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.badinput import run_cli

    monkeypatch.chdir(tmp_path)
    write_spec(compose_spec([]), tmp_path / "-spec.yaml")
    assert run_cli(["config", "validate", "--", "-spec.yaml"], capsys).code == 0
    result = run_cli(["config", "validate", "--", "-spec.yaml", "train.rl.n=999999"], capsys)
    assert result.code == 2 and "config error at train.rl.n" in result.err, result.err  # the file and its override both read
