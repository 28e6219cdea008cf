"""A spec that cannot run is refused at composition with one line naming the config path or file.

Covers: finite, in-range values for every numeric field; cross-field rules across groups; saved
specs that must be complete; config files that are unreadable, malformed or cyclic; names that
would leave runs/ or conf/; fields removed because nothing read them.
"""

from __future__ import annotations

import copy
import typing
from pathlib import Path
from typing import Any

import annotated_types
import pytest
import yaml
from pydantic import BaseModel, ValidationError

from slca.config.compose import compose_spec, options, validate_spec
from slca.config.errors import SpecError
from slca.config.io import dump_spec, load_spec, write_spec
from slca.config.spec import GROUPS, Spec
from tests.config.models import every_model
from tests.badinput import assert_refused, run_cli, snapshot

# (overrides, path the one-line error must name, words it must say)
CROSS_FIELD = [
    (["downsample.m=32", "train.rl.n=4"], "downsample.m", "exceed"),
    (["experiment=efficient_grpo_single_turn", "train.rl.n=1"], "train.rl.n", "m=2"),
    (["downsample=random", "downsample.m=9"], "downsample.m", "train.rl.n=8"),
    (["downsample.m=1"], "downsample.m", "greater than or equal to 2"),
    (["train.sft.micro_batch_size=64"], "train.sft.micro_batch_size", "train.sft.batch_size=16"),
    (["train.rl.mini_batch_prompts=32"], "train.rl.mini_batch_prompts", "train.rl.prompts_per_step=16"),
    (["experiment=paper_slca", "train.rl.mini_batch_prompts=48"], "train.rl.mini_batch_prompts", "does not divide"),
    (["run.stages=[eval,data]"], "run.stages", "order"),
    (["run.stages=[data,sft,sft]"], "run.stages", "twice"),
    (["run.stages=[]"], "run.stages", "at least 1"),
    (["reward.w_process=0", "reward.w_summary=0"], "reward.w_process", "w_process + w_summary"),
    (["reward.w_format=-5"], "reward.w_format", "greater than or equal to 0"),
    (["reward.success_threshold=5"], "reward.success_threshold", "less than or equal to 1"),
    (["reward.success_thresholds=[0.5,1.5]"], "reward.success_thresholds", "outside [0, 1]"),
    (["reward.success_thresholds=[0.5,0.5]"], "reward.success_thresholds", "twice"),
    (["reward.no_call_penalty=0.5"], "reward.no_call_penalty", "less than or equal to 0"),
    (["reward.judge.failure_score=2"], "reward.judge.failure_score", "less than or equal to 1"),
    (["filter.correct_threshold=1.5"], "filter.correct_threshold", "less than or equal to 1"),
    (["train.rl.max_response_length=4000"], "train.rl.max_response_length", "backbone.max_position_embeddings=2048"),
    (["train.rl.top_p=0"], "train.rl.top_p", "greater than 0"),
    (["eval.top_p=1.5"], "eval.top_p", "less than or equal to 1"),
    (["train.rl.clip_low=1"], "train.rl.clip_low", "less than 1"),
    (["train.rl.entropy_coeff=-0.1"], "train.rl.entropy_coeff", "greater than or equal to 0"),
    (["estimator.w_process=-1"], "estimator.w_process", "greater than or equal to 0"),
    (["estimator=toolpo", "estimator.lam=-1"], "estimator.lam", "greater than or equal to 0"),
    (["data.tools_per_row=[5,3]"], "data.tools_per_row", "lo <= hi"),
    (["data.tools_per_row=[0,3]"], "data.tools_per_row", "lo <= hi"),
    (["data.tools_per_row=[2,9]"], "data.tools_per_row", "data.n_tools=8"),
    (["data.parallel_fraction=0.5", "data.irrelevant_fraction=0.5", "data.multistep_fraction=0.5"], "data.multistep_fraction", "sum to 1.5"),
    (["backbone.num_heads=3"], "backbone.num_heads", "backbone.hidden_size=128"),
    (["backbone.num_kv_heads=3"], "backbone.num_kv_heads", "backbone.num_heads=4"),
    (["eval.seeds=[0,0]"], "eval.seeds", "twice"),
    (["eval.seeds=[]"], "eval.seeds", "at least 1"),
    (["eval.seeds=[-1]"], "eval.seeds.0", "greater than or equal to 0"),
    (["eval.system_prompts=[dataset,dataset]"], "eval.system_prompts", "twice"),
    (["eval.generator=nope"], "eval.generator", "registered: hf, openai, vllm"),
    (["eval.split=sft"], "eval.split", "'eval' or 'rl'"),
    (["backend=verl", "backend.save_freq=0"], "backend.save_freq", "neither -1"),
    (["backend=verl", "backend.test_freq=-3"], "backend.test_freq", "neither -1"),
    (["run.seed=-1"], "run.seed", "greater than or equal to 0"),
    (["train.rl.system_prompt=no_such_prompt.txt"], "train.rl.system_prompt", "neither a registered system prompt"),
    (["eval.system_prompts=[dataset,no_such_prompt.txt]"], "eval.system_prompts.1", "nor a file"),
    (["run.name=."], "run.name", "plain name"),
    (["run.name=../../x"], "run.name", "plain name"),
    (["run.name=a/b"], "run.name", "plain name"),
    (["run.name="], "run.name", "plain name"),
    (["experiment=../../elsewhere/evil"], "experiment", "plain name"),
    (["estimator=../estimator/grpo"], "estimator", "plain name"),
    (["experiment="], "experiment", "an option name is needed"),
    (["train.rl.temperature=inf"], "train.rl.temperature", "finite"),
    (["train.rl.kl_coef=inf"], "train.rl.kl_coef", "finite"),
    (["train.rl.grad_clip=inf"], "train.rl.grad_clip", "finite"),
    (["train.rl.entropy_coeff=nan"], "train.rl.entropy_coeff", "finite"),
    (["train.sft.lr=-inf"], "train.sft.lr", "finite"),
]


# (overrides, path, words): the extreme inputs that used to crash or hang after composition accepted them.
EXTREME = [
    (["run.seed=1180591620717411303424"], "run.seed", "less than or equal to 4294967295"),
    (["train.rl.n=99999999999999999999999"], "train.rl.n", "less than or equal to 1024"),
    (["train.rl.prompts_per_step=1000000000000"], "train.rl.prompts_per_step", "less than or equal to 65536"),
    (["train.rl.prompts_per_step=1024", "train.rl.n=128"], "train.rl.n", "131072 per step"),
    (["train.curate.rollouts=1024", "train.curate.batch_prompts=128"], "train.curate.batch_prompts", "131072 sequences"),
    (["eval.seeds=[0,4294967296]"], "eval.seeds.1", "less than or equal to 4294967295"),
    (["backbone.hidden_size=16384", "backbone.intermediate_size=65536", "backbone.num_layers=256"], "backbone.hidden_size", "parameters"),
    (["train.rl.max_response_length=100000000"], "train.rl.max_response_length", "less than or equal to 16777216"),
]


@pytest.mark.parametrize(("overrides", "path", "words"), [*CROSS_FIELD, *EXTREME], ids=[" ".join(o) for o, _, _ in [*CROSS_FIELD, *EXTREME]])
def test_a_spec_that_cannot_run_is_refused_at_composition_naming_its_path(overrides: list[str], path: str, words: str) -> None:
    with pytest.raises(SpecError) as info:
        compose_spec(overrides)
    text = str(info.value)
    assert text.startswith(f"config error at {path}:"), text
    assert words in text and "\n" not in text, text


@pytest.mark.parametrize(
    ("overrides", "path"),
    [(["downsample.m=32", "train.rl.n=4"], "downsample.m"), (["run.stages=[eval,data]"], "run.stages"),
     (["train.rl.temperature=inf"], "train.rl.temperature"), (["run.name=../../x"], "run.name")],
)
def test_config_validate_and_cfg_job_refuse_it_in_one_line_and_write_nothing(
    overrides: list[str], path: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    spec_file = tmp_path / "spec.yaml"
    write_spec(compose_spec([]), spec_file)
    before = snapshot([tmp_path])
    assert_refused(run_cli(["run", "--cfg", "job", *overrides], capsys), f"config error at {path}")
    assert_refused(run_cli(["config", "validate", spec_file, *overrides], capsys), f"config error at {path}")
    assert_refused(run_cli(["run", *overrides], capsys), f"config error at {path}")  # refused before any stage runs
    assert snapshot([tmp_path]) == before


def _leaf_paths(node: Any, prefix: str = "") -> list[str]:
    paths = []
    for key, value in node.items():
        paths.append(prefix + key)
        if isinstance(value, dict):
            paths += _leaf_paths(value, f"{prefix}{key}.")
    return paths


def _float_paths(model: BaseModel, prefix: str = "") -> list[tuple[str, str]]:
    """(dotted path, `Model.field`) of every float field (scalar or tuple of floats) under `model`."""
    found = []
    for name, info in type(model).model_fields.items():
        value = getattr(model, name)
        if isinstance(value, BaseModel):
            found += _float_paths(value, f"{prefix}{name}.")
        elif float in (info.annotation, *typing.get_args(info.annotation)):
            found.append((prefix + name, f"{type(model).__name__}.{name}"))
    return found


def _set(data: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    data = copy.deepcopy(data)
    node = data
    *parents, leaf = path.split(".")
    for part in parents:
        node = node[part]
    node[leaf] = [value] if isinstance(node[leaf], list) else value
    return data


def test_every_float_field_of_every_option_refuses_inf_and_nan_naming_its_path(composed_option) -> None:
    checked = set()  # each model's field once: the other variants repeat the default options' fields
    for group, option in ((g, o) for g in GROUPS for o in options(g)):
        data = composed_option(group, option)
        for path, field in _float_paths(validate_spec(data)):
            if field in checked:
                continue
            for bad in (float("inf"), float("-inf"), float("nan")):
                with pytest.raises(SpecError) as info:
                    validate_spec(_set(data, path, bad))
                assert str(info.value).startswith(f"config error at {path}"), (path, str(info.value))
            checked.add(field)
    assert len(checked) >= 40, sorted(checked)


BOUND_TYPES = (annotated_types.Ge, annotated_types.Gt, annotated_types.Le, annotated_types.Lt)
# Numeric fields whose range a validator checks instead of the field's metadata.
RANGE_IN_VALIDATOR = {
    "VerlBackend.save_freq": "-1 or a step count >= 1",
    "VerlBackend.test_freq": "-1 or a step count >= 1",
    "HierRReward.success_thresholds": "each in [0, 1]",
    "SyntheticData.tools_per_row": "1 <= lo <= hi <= n_tools",
}


def _numeric_fields() -> list[tuple[type[BaseModel], str, list[Any]]]:
    """(model, field, bounds) for every int or float field (scalar, optional or list items) of every model."""
    found = []
    for model in every_model(Spec):
        for name, info in model.model_fields.items():
            args, numeric = [info.annotation], False
            while args:
                current = args.pop()
                numeric = numeric or current in (int, float)
                args += typing.get_args(current)
            if not numeric:
                continue
            bounds = [m for m in info.metadata if isinstance(m, BOUND_TYPES)]
            for inner in typing.get_args(info.annotation):
                bounds += [m for m in getattr(inner, "__metadata__", ()) if isinstance(m, BOUND_TYPES)]  # list[Seed]
            found.append((model, name, bounds))
    return found


def test_every_numeric_field_documents_a_range() -> None:
    """A bound in the field's metadata, or a rule in a validator (named in RANGE_IN_VALIDATOR)."""
    unbounded = [f"{m.__name__}.{n}" for m, n, bounds in _numeric_fields() if not bounds and f"{m.__name__}.{n}" not in RANGE_IN_VALIDATOR]
    assert not unbounded, f"numeric fields without a documented range: {unbounded}"


def test_every_numeric_field_has_an_upper_bound() -> None:
    """Composition refuses a number the code cannot run (an overflowing seed, a step of 10**23 rollouts)."""
    fields = _numeric_fields()
    assert len(fields) > 120
    uncapped = [
        f"{model.__name__}.{name}" for model, name, bounds in fields
        if not any(isinstance(b, (annotated_types.Le, annotated_types.Lt)) for b in bounds)
        and f"{model.__name__}.{name}" not in RANGE_IN_VALIDATOR
    ]
    assert not uncapped, f"numeric fields without an upper bound: {uncapped}"


# Values for the required fields of models that have no all-default instance.
REQUIRED_SAMPLES: dict[str, dict[str, Any]] = {
    "HubBackbone": {"name": "hub", "hub_id": "org/model", "chat_template": "qwen", "max_position_embeddings": 4096},
    "ToucanData": {"sft_path": "s.parquet", "rl_path": "r.parquet", "eval_path": "e.parquet"},
}


def _past(bound: Any, value: Any) -> Any:
    """The first value past an upper bound, of the bound's own type."""
    if isinstance(bound, annotated_types.Lt):
        return value
    return value + 1 if isinstance(value, int) else value * 2 if value > 0 else value + 1.0


def test_every_upper_bound_refuses_the_value_just_past_it_naming_the_field() -> None:
    checked = 0
    for model, name, bounds in _numeric_fields():
        for bound in bounds:
            limit = getattr(bound, "le", None) if isinstance(bound, annotated_types.Le) else getattr(bound, "lt", None)
            if limit is None:
                continue
            base = {k: v for k, v in REQUIRED_SAMPLES.get(model.__name__, {}).items() if k != name}
            over = _past(bound, limit)
            item_bound = bound not in model.model_fields[name].metadata  # a bound on list items
            with pytest.raises(ValidationError) as info:
                model.model_validate({**base, name: [over] if item_bound else over})
            assert info.value.errors()[0]["loc"][0] == name, (model.__name__, name, info.value.errors()[0])
            checked += 1
    assert checked > 120


def test_the_seed_bound_is_what_every_seeded_generator_takes() -> None:
    """Oracle: numpy's legacy seeding (which verl calls) takes MAX_SEED and refuses one more; the RL
    round seed derived from the largest run.seed still fits an int64."""
    import numpy as np

    from slca.config.limits import MAX_SEED, MAX_STEPS

    np.random.RandomState(MAX_SEED)
    with pytest.raises(ValueError):
        np.random.RandomState(MAX_SEED + 1)
    assert (MAX_SEED * 7919 + MAX_STEPS) * 64 + 64 < 2**63  # slca/backends/local/rl.py's round seed


# ----------------------------------------------------------------------------- saved specs


@pytest.mark.parametrize("experiment", ["embedded_demo", "paper_slca"])
def test_a_saved_spec_missing_any_key_is_refused_naming_that_key(experiment: str, tmp_path: Path) -> None:
    full = yaml.safe_load(dump_spec(compose_spec([f"experiment={experiment}"])))
    paths = _leaf_paths(full)
    assert len(paths) > 100
    for path in paths:
        data = copy.deepcopy(full)
        node = data
        *parents, leaf = path.split(".")
        for part in parents:
            node = node[part]
        del node[leaf]
        target = tmp_path / "spec.yaml"
        target.write_text(yaml.dump(data, Dumper=yaml.CSafeDumper))  # libyaml: over 100 specs written per case
        with pytest.raises(SpecError) as info:
            load_spec(target)
        assert str(info.value).startswith(f"config error at {path}: missing from the saved spec {target}"), str(info.value)


def test_a_missing_key_never_takes_the_group_default_instead_of_the_experiments_value(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = compose_spec(["experiment=embedded_demo"])
    assert spec.train.rl.n != compose_spec(["experiment=paper_slca"]).train.rl.n  # the group default differs
    data = yaml.safe_load(dump_spec(spec))
    del data["train"]["rl"]["n"]
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(data))
    assert_refused(run_cli(["config", "validate", path], capsys), "train.rl.n", str(path))
    assert_refused(run_cli(["run", "--cfg", "job", "--spec", path], capsys), "train.rl.n", str(path))


def test_overlays_still_compose_from_group_defaults(tmp_path: Path) -> None:
    overlay = tmp_path / "mine.yaml"
    overlay.write_text("# @package _global_\ndefaults:\n  - embedded_demo\nexperiment: mine\ndescription: d\n")
    assert load_spec(overlay).train.rl.n == compose_spec([]).train.rl.n


# ----------------------------------------------------------------------------- config files

OVERLAY = "# @package _global_\n"


def alias_bomb(header: str = OVERLAY) -> bytes:
    """A "billion laughs" document: nine anchors, each a list of nine aliases of the one before (9**9 leaves)."""
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 9)]
    return (header + "\n".join(lines) + "\n").encode()


BAD_FILES = [
    ("alias_bomb.yaml", alias_bomb(), "aliases are expanded"),
    ("alias_bomb_spec.yaml", alias_bomb(header=""), "aliases are expanded"),
    ("recursive_alias.yaml", (OVERLAY + "defaults:\n  - embedded_demo\nexperiment: r\ndescription: &d [*d]\n").encode(), "contains itself"),
    ("yaml_syntax.yaml", (OVERLAY + "defaults:\n  - embedded_demo\nexperiment: [unclosed\n").encode(), "not valid YAML"),
    ("latin1.yaml", (OVERLAY + "experiment: x\ndescription: caf").encode() + b"\xe9\n", "not UTF-8"),
    ("self_include.yaml", (OVERLAY + "defaults:\n  - self_include\nexperiment: self_include\n").encode(), "self_include"),
    ("a_list.yaml", (OVERLAY + "- a\n- b\n").encode(), "mapping"),
    ("saved_list.yaml", b"- experiment\n- run\n", "mapping"),
    ("empty.yaml", b"", "mapping"),
    ("defaults_int.yaml", (OVERLAY + "defaults: 3\nexperiment: d\n").encode(), "defaults must be a list"),
    ("deep.yaml", b"experiment: " + b"[" * 20000 + b"]" * 20000 + b"\n", "deep.yaml"),
    ("evil_name.yaml", (OVERLAY + "defaults:\n  - embedded_demo\nexperiment: ../../evil\ndescription: d\n").encode(), "plain name"),
    ("unknown_default.yaml", (OVERLAY + "defaults:\n  - nope\nexperiment: u\n").encode(), "nope"),
    ("train_list.yaml", (OVERLAY + "defaults:\n  - embedded_demo\nexperiment: t\ntrain: [1, 2]\n").encode(), "Cannot merge DictConfig with ListConfig"),
    ("interpolation.yaml", (OVERLAY + "defaults:\n  - embedded_demo\nexperiment: t\ndescription: ${oops}\n").encode(), "oops"),
    ("bad_value.yaml", (OVERLAY + "defaults:\n  - embedded_demo\nexperiment: b\ntrain:\n  rl:\n    n: -3\n").encode(), "train.rl.n"),
]


@pytest.mark.parametrize(("name", "content", "words"), BAD_FILES, ids=[b[0] for b in BAD_FILES])
def test_a_bad_config_file_is_refused_in_one_line_naming_the_file(
    name: str, content: bytes, words: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    before = snapshot([tmp_path])
    for argv in (["config", "validate", path], ["run", "--cfg", "job", "--spec", path]):
        result = run_cli(argv, capsys)
        assert_refused(result, words)
        assert str(path) in result.err or "config error at" in result.err, result.err
    assert snapshot([tmp_path]) == before


@pytest.mark.parametrize(
    ("override", "words"),
    [("train.rl.n=[", "config error at train.rl.n: value '[' is not valid YAML"), ("train.rl.n", "not KEY=VALUE"),
     ("+train.rl.foo=1", "a saved spec is complete"), ("train.rl.nope=1", "config error at train.rl.nope: unknown key"),
     ("estimator=../grpo", "config error at estimator: unknown option"), ("experiment=../x", "config error at experiment"),
     ("run.name=../../x", "config error at run.name"), ("run.stages=[eval,data]", "config error at run.stages"),
     ("downsample.m=64", "config error at downsample.m")],
)
def test_a_bad_override_on_a_saved_spec_is_one_line(override: str, words: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_spec(compose_spec([]), tmp_path / "spec.yaml")
    before = snapshot([tmp_path])
    assert_refused(run_cli(["config", "validate", path, override], capsys), words)
    assert_refused(run_cli(["run", "--cfg", "job", "--spec", path, override], capsys), words)
    assert snapshot([tmp_path]) == before


def test_an_alias_bomb_is_refused_in_under_a_second_by_validate_and_cfg_job(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import time

    path = tmp_path / "bomb.yaml"
    path.write_bytes(alias_bomb())
    assert len(path.read_bytes()) < 500
    run_cli(["config", "validate", path], capsys)  # untimed: imports the refusal path once (an expansion takes minutes, not this)
    for argv in (["config", "validate", path], ["run", "--spec", path, "--cfg", "job"]):
        started = time.monotonic()
        result = run_cli(argv, capsys)
        assert time.monotonic() - started < 1.0, argv
        assert_refused(result, str(path), "100000 YAML nodes")


def test_an_alias_bomb_in_an_override_value_on_a_saved_spec_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_spec(compose_spec([]), tmp_path / "spec.yaml")
    bomb = alias_bomb(header="").decode().replace("\n", ", ").replace("a0: ", "{a0: ", 1).rstrip(", ") + "}"
    assert_refused(run_cli(["config", "validate", path, f"description={bomb}"], capsys), "config error at description", "aliases are expanded")


# Legal file names that are not Hydra option names: each composes as the overlay it holds.
ODD_NAMES = ["exp=1", "exp,2", "exp(1)", "expérience", "実験", "it's", 'say "hi"', "a..b", "back\\slash", "sp ace", "${x}", "[x]"]


@pytest.mark.parametrize("stem", ODD_NAMES)
def test_an_overlay_with_any_legal_file_name_composes(stem: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / f"{stem}.yaml"
    path.write_text(OVERLAY + "defaults:\n  - embedded_demo\nexperiment: odd\ndescription: d\ntrain:\n  rl:\n    n: 4\n", encoding="utf-8")
    result = run_cli(["config", "validate", path], capsys)
    assert (result.code, result.err) == (0, ""), result.err
    assert result.out == f"{path}: valid (experiment odd)\n"


def test_run_spec_cfg_job_composes_an_overlay_with_an_odd_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "exp=1,(ü).yaml"
    path.write_text(OVERLAY + "defaults:\n  - embedded_demo\nexperiment: odd\ndescription: d\ntrain:\n  rl:\n    n: 4\n", encoding="utf-8")
    result = run_cli(["run", "--spec", path, "--cfg", "job", "train.rl.lr=2e-6"], capsys)
    assert result.code == 0, result.err
    printed = yaml.safe_load(result.out)
    assert (printed["experiment"], printed["train"]["rl"]["n"], printed["train"]["rl"]["lr"]) == ("odd", 4, 2e-6)


def test_an_error_inside_an_odd_named_overlay_names_the_file_not_its_copy(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "exp=1.yaml"
    path.write_text(OVERLAY + "defaults:\n  - nope\nexperiment: u\n", encoding="utf-8")
    result = run_cli(["config", "validate", path], capsys)
    assert_refused(result, "nope", str(path))
    assert "user-overlay" not in result.err


def test_an_overlay_named_like_a_built_in_experiment_extends_the_built_in(tmp_path: Path) -> None:
    path = tmp_path / "embedded_demo.yaml"
    path.write_text(OVERLAY + "defaults:\n  - embedded_demo\nexperiment: embedded_demo\ndescription: mine\ntrain:\n  rl:\n    n: 4\n")
    spec = load_spec(path)
    builtin = compose_spec([])
    assert (spec.description, spec.train.rl.n) == ("mine", 4)
    assert spec.train.rl.lr == builtin.train.rl.lr and spec.filter == builtin.filter


def test_a_spec_file_that_is_missing_or_a_directory_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert_refused(run_cli(["config", "validate", tmp_path / "absent.yaml"], capsys), "not found", "absent.yaml")
    assert_refused(run_cli(["config", "validate", tmp_path], capsys), str(tmp_path))


# ----------------------------------------------------------------------------- removed fields


@pytest.mark.parametrize("override", ["train.sft.enabled=false", "train.rl.enabled=false", "backend.dtype=bfloat16", "eval.success_threshold=0.5"])
def test_fields_nothing_read_are_gone(override: str) -> None:
    """run.stages decides which stages run; the backbone trains in float32 (bfloat16 weights on CPU
    lose updates below their precision); reward.success_threshold is the one success threshold."""
    with pytest.raises(SpecError, match=rf"^config error at {override.split('=')[0]}: unknown key"):
        compose_spec([override])
