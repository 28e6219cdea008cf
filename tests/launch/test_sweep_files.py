"""Sweep files and multirun overrides: expansion, composition of every shipped sweep, and refusals."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from slca.launch.grid import load_sweep_file, point_key, points, split_multirun
from slca.launch.sweep import plan_runs
from tests.badinput import assert_refused, run_cli, snapshot

REPO = Path(__file__).resolve().parents[2]


def test_a_grid_expands_to_its_cartesian_product_in_file_order_with_the_last_key_fastest() -> None:
    grid = {"estimator": ["grpo", "slca_grpo"], "run.seed": [0, 1, 2]}
    expected = [{"estimator": e, "run.seed": s} for e in ("grpo", "slca_grpo") for s in (0, 1, 2)]
    assert points(grid) == expected
    assert [point_key(p) for p in expected[:2]] == ["estimator-grpo_run.seed-0", "estimator-grpo_run.seed-1"]
    assert point_key({"eval.constructions": ["native", "context"], "data.rl_path": "a/b c"}) == "eval.constructions-native+context_data.rl_path-a-b-c"


def test_multirun_overrides_with_a_comma_list_are_swept_and_bracketed_or_quoted_lists_stay_whole() -> None:
    fixed, grid = split_multirun(["estimator=grpo,slca_grpo", "run.seed=0,1,2", "run.stages=[data,sft]", "logger=none", "run.name='a,b'"])
    assert fixed == ["run.stages=[data,sft]", "logger=none", "run.name='a,b'"]
    assert grid == {"estimator": ["grpo", "slca_grpo"], "run.seed": ["0", "1", "2"]}


@pytest.mark.parametrize("name", sorted(p.stem for p in (REPO / "sweeps").glob("*.yaml")))
def test_every_shipped_sweep_file_composes_every_run_with_its_grid_values_and_the_sweep_as_wandb_group(name: str, tmp_path: Path) -> None:
    sweep = load_sweep_file(REPO / "sweeps" / f"{name}.yaml")
    plans = plan_runs(sweep, [], tmp_path / "sweep")
    assert len(plans) == len(points(sweep.grid)) and len({p.key for p in plans}) == len(plans)
    for plan in plans:
        dumped = plan.spec.model_dump(mode="json")
        for key, value in plan.point.items():
            node = dumped
            for part in key.split("."):
                node = node[part]
            assert node == value or node == {"name": value} or node.get("name") == value if isinstance(node, dict) else node == value
        assert plan.spec.run.dir == str(tmp_path / "sweep" / "runs" / plan.key)
        assert plan.spec.experiment == sweep.experiment
        assert getattr(plan.spec.logger, "group", sweep.name) == sweep.name
    assert not (tmp_path / "sweep").exists(), "planning writes nothing"


def test_the_shipped_sweeps_cover_the_main_comparison_the_efficiency_ablation_and_the_eval_protocol_grid() -> None:
    main = load_sweep_file(REPO / "sweeps" / "main_comparison.yaml")
    assert main.grid == {"estimator": ["grpo", "slca_grpo"], "run.seed": [0, 1, 2]} and main.seed_keys == ["run.seed"]
    ablation = load_sweep_file(REPO / "sweeps" / "efficiency_ablation.yaml")
    assert ablation.grid == {"filter.k": [1, 2], "downsample.m": [4, 8]}
    protocol = load_sweep_file(REPO / "sweeps" / "eval_protocol.yaml")
    assert set(protocol.grid) == {"eval.constructions", "eval.thinking", "eval.system_prompts"} and len(points(protocol.grid)) == 12


GOOD = {"name": "s", "experiment": "embedded_smoke", "grid": {"estimator": ["grpo", "slca_grpo"]}}

BAD_FILES = [
    ("not-yaml", "name: [unclosed\n", ("not valid YAML", "line")),
    ("not-a-mapping", "- a\n- b\n", ("a sweep file is a mapping",)),
    ("unknown-key", yaml.safe_dump({**GOOD, "grdi": {}}), ("grdi", "extra")),
    ("no-grid", yaml.safe_dump({"name": "s", "experiment": "embedded_smoke"}), ("grid", "required")),
    ("empty-values", yaml.safe_dump({**GOOD, "grid": {"estimator": []}}), ("grid", "estimator has no values")),
    ("twice", yaml.safe_dump({**GOOD, "grid": {"run.seed": [0, 0]}}), ("grid", "run.seed lists a value twice")),
    ("bad-key", yaml.safe_dump({**GOOD, "grid": {"run..seed": [0]}}), ("grid", "run..seed")),
    ("bad-name", yaml.safe_dump({**GOOD, "name": "../up"}), ("name", "plain name")),
    ("seed-not-in-grid", yaml.safe_dump({**GOOD, "seed_keys": ["run.seed"]}), ("seed_keys", "run.seed", "not in the grid")),
    ("bad-point", yaml.safe_dump({**GOOD, "grid": {"estimator": ["grpo", "nope"]}}), ("run estimator-nope", "estimator")),
    ("bad-override", yaml.safe_dump({**GOOD, "overrides": ["train.rl.n=-3"]}), ("train.rl.n",)),
    ("nested-value", yaml.safe_dump({**GOOD, "grid": {"estimator": [{"a": 1}]}}), ("grid.estimator",)),
]


@pytest.mark.parametrize("case, text, mentions", BAD_FILES, ids=[c[0] for c in BAD_FILES])
def test_a_bad_sweep_file_is_refused_in_one_line_naming_the_file_and_field_and_writes_nothing(
    case: str, text: str, mentions: tuple[str, ...], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    sweep_file = tmp_path / f"{case}.yaml"
    sweep_file.write_text(text)
    before = snapshot([tmp_path])
    result = run_cli(["sweep", str(sweep_file), "--dir", str(tmp_path / "out")], capsys)
    expected = mentions if case in ("bad-point", "bad-override") else (str(sweep_file), *mentions)
    assert_refused(result, *expected)
    assert snapshot([tmp_path]) == before


def test_a_missing_sweep_file_a_multirun_that_sweeps_nothing_and_results_of_a_non_sweep_directory_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    before = snapshot([tmp_path])
    assert_refused(run_cli(["sweep", str(tmp_path / "nope.yaml")], capsys), "nope.yaml", "not found")
    unreadable = tmp_path.parent / f"{tmp_path.name}-mem.yaml"  # opens, then every read fails (EIO)
    unreadable.symlink_to("/proc/self/mem")
    assert_refused(run_cli(["sweep", str(unreadable)], capsys), str(unreadable), "cannot read it: Input/output error")
    assert_refused(run_cli(["sweep", str(tmp_path)], capsys), str(tmp_path), "cannot read it: Is a directory")
    assert_refused(run_cli(["run", "-m", "estimator=grpo"], capsys), "multirun", "key=a,b")
    assert_refused(run_cli(["run", "-m", "estimator=grpo,"], capsys), "multirun", "empty value")
    assert_refused(run_cli(["run", "-m", "--spec", "x.yaml", "estimator=grpo,rloo"], capsys), "run -m takes overrides only")
    assert_refused(run_cli(["results", str(tmp_path)], capsys), str(tmp_path), "not a sweep directory")
    assert snapshot([tmp_path]) == before


def test_a_multirun_becomes_a_sweep_whose_directory_is_run_dir_or_named_after_the_experiment_and_its_overrides(tmp_path: Path) -> None:
    from slca.launch.sweep import multirun_sweep

    sweep, extra, where = multirun_sweep(["experiment=embedded_smoke", "estimator=grpo,slca_grpo", "run.seed=0,1", f"run.dir={tmp_path}"])
    assert where == tmp_path and extra == []
    assert sweep.experiment == "embedded_smoke" and sweep.seed_keys == ["run.seed"] and sweep.overrides == ["experiment=embedded_smoke"]
    assert len(points(sweep.grid)) == 4
    again, _, default_dir = multirun_sweep(["experiment=embedded_smoke", "run.seed=0,1", "estimator=grpo,slca_grpo"])
    same, _, same_dir = multirun_sweep(["estimator=grpo,slca_grpo", "experiment=embedded_smoke", "run.seed=0,1"])
    assert default_dir == same_dir == Path("runs/sweeps") / again.name and again.name.startswith("embedded_smoke-multirun-")


def test_a_sweep_or_a_submission_evaluating_a_run_directory_that_is_not_there_is_refused_before_anything_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """As `slca eval --from runs/nope` is refused at once: no sweep directory, no run started."""
    monkeypatch.chdir(tmp_path)
    sweep_file = tmp_path / "evals.yaml"
    sweep_file.write_text(yaml.safe_dump({**GOOD, "overrides": ["run.stages=[data,eval]", "logger=none"], "grid": {"eval.seeds": [[0], [1]]}}))
    untrained = tmp_path / "untrained"  # a run directory whose sft and rl stages never finished
    untrained.mkdir()
    (untrained / "spec.yaml").write_text("experiment: embedded_smoke\n")
    before = snapshot([tmp_path])
    result = run_cli(["sweep", str(sweep_file), "--dir", str(tmp_path / "out"), "eval.from_run=runs/nope"], capsys)
    assert_refused(result, "eval.from_run=runs/nope", "no such directory, and no run under runs/")
    result = run_cli(["sweep", str(sweep_file), "--dir", str(tmp_path / "out"), f"eval.from_run={untrained}"], capsys)
    assert_refused(result, "eval.from_run", str(untrained), "holds no trained policy")
    result = run_cli(["run", "experiment=embedded_smoke", "launcher=slurm", "run.stages=[data,eval]", "eval.from_run=runs/nope",
                      f"run.dir={tmp_path / 'one'}"], capsys)
    assert_refused(result, "eval.from_run=runs/nope", "no such directory, and no run under runs/")
    assert snapshot([tmp_path]) == before
