"""Every option of every group and every experiment composes and validates; bad overrides fail clearly."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from pydantic import BaseModel

from slca.config.compose import CONF_DIR, compose_dict, compose_spec, options, validate_spec
from slca.config.errors import SpecError
from slca.config.spec import GROUPS, Spec
from tests.config.models import every_model

GROUP_OPTIONS = [(group, option) for group in GROUPS for option in options(group)]
EXPERIMENTS = options("experiment")


def test_every_group_has_options() -> None:
    for group in GROUPS:
        assert options(group), f"conf/{group}/ has no options"


@pytest.mark.parametrize(("group", "option"), GROUP_OPTIONS, ids=[f"{g}={o}" for g, o in GROUP_OPTIONS])
def test_option_composes_and_validates(group: str, option: str, composed_option) -> None:
    spec = validate_spec(composed_option(group, option))
    node = getattr(spec, group)
    assert isinstance(node, BaseModel)
    declared = yaml.safe_load((CONF_DIR / group / f"{option}.yaml").read_text())
    # The option's own name (or kind + name for backbones) survives composition.
    assert node.name == declared["name"]


@pytest.mark.parametrize(("group", "option"), GROUP_OPTIONS, ids=[f"{g}={o}" for g, o in GROUP_OPTIONS])
def test_option_yaml_lists_every_field(group: str, option: str, composed_option) -> None:
    """Every field is in the YAML, so any value can be overridden without a '+' prefix."""
    spec = validate_spec(composed_option(group, option))
    declared = yaml.safe_load((CONF_DIR / group / f"{option}.yaml").read_text())
    _assert_covers(getattr(spec, group), declared, group)


def _assert_covers(model: BaseModel, declared: dict, path: str) -> None:
    for name in type(model).model_fields:
        assert name in declared, f"{path}.{name} is missing from the YAML"
        value = getattr(model, name)
        if isinstance(value, BaseModel):
            _assert_covers(value, declared[name], f"{path}.{name}")


def test_root_yaml_lists_every_run_and_train_field() -> None:
    declared = yaml.safe_load((CONF_DIR / "config.yaml").read_text())
    spec = compose_spec([])
    _assert_covers(spec.run, declared["run"], "run")
    _assert_covers(spec.train, declared["train"], "train")


@pytest.mark.parametrize("experiment", EXPERIMENTS)
def test_experiment_composes(experiment: str) -> None:
    spec = compose_spec([f"experiment={experiment}"])
    assert spec.experiment == experiment, "each overlay names itself in `experiment`"
    assert spec.description


def test_default_is_the_embedded_demo() -> None:
    spec = compose_spec([])
    assert spec.experiment == "embedded_demo"
    assert (spec.data.name, spec.backbone.kind, spec.backend.name, spec.launcher.name) == ("synthetic", "tiny", "local", "local")
    assert (spec.estimator.name, spec.filter.name, spec.downsample.name) == ("slca_grpo", "pre_rollout", "max_variance")
    assert spec.logger.name == "wandb" and spec.logger.mode == "offline"


def test_paper_twins_differ_only_in_estimator() -> None:
    slca = compose_spec(["experiment=paper_slca"]).model_dump()
    grpo = compose_spec(["experiment=paper_grpo"]).model_dump()
    differing = {k for k in slca if slca[k] != grpo[k]}
    assert differing == {"experiment", "description", "estimator"}
    assert grpo["estimator"]["name"] == "grpo"


def test_paper_hyperparameters_match_reference() -> None:
    spec = compose_spec(["experiment=paper_slca"])
    rl = spec.train.rl
    assert (rl.lr, rl.prompts_per_step, rl.n, rl.mini_batch_prompts) == (1e-6, 128, 16, 32)
    assert (rl.use_kl_loss, rl.kl_coef, rl.kl_type, rl.entropy_coeff) == (True, 0.001, "low_var_kl", 0.0)
    assert (rl.max_prompt_length, rl.max_response_length, rl.epochs) == (24576, 8192, 5)
    assert (spec.reward.w_format, spec.reward.w_name, spec.reward.w_key, spec.reward.w_value, spec.reward.w_parallel) == (0.10, 0.25, 0.15, 0.20, 0.30)
    assert spec.reward.no_call_penalty == -0.5 and spec.reward.judge.name == "llm"
    assert (spec.backend.nnodes, spec.backend.n_gpus_per_node) == (4, 8)


@pytest.mark.parametrize(
    ("variant", "temperature", "n", "batch", "prompt_len"),
    [("single_turn", 0.7, 8, 128, 2048), ("multi_turn", 1.0, 16, 256, 4096)],
)
def test_efficiency_experiments(variant: str, temperature: float, n: int, batch: int, prompt_len: int) -> None:
    spec = compose_spec([f"experiment=efficient_grpo_{variant}"])
    rl = spec.train.rl
    assert (rl.temperature, rl.n, rl.prompts_per_step, rl.max_prompt_length) == (temperature, n, batch, prompt_len)
    assert (rl.lr, rl.use_kl_loss, rl.entropy_coeff, rl.clip_low, rl.clip_high) == (1e-6, False, 0.0, 0.2, 0.28)
    assert spec.filter.name == "pre_rollout" and spec.filter.k == 1
    # the overlay leaves m null, which composition resolves to the paper's n/2: 4 of 8, 8 of 16
    assert spec.downsample.name == "max_variance" and spec.downsample.m == n // 2
    assert spec.reward.name == "exact_match"


def test_overrides_reach_nested_fields() -> None:
    spec = compose_spec(["estimator=grpo", "train.rl.lr=3e-6", "reward.judge.timeout_s=5", "run.stages=[data,sft]"])
    assert spec.estimator.name == "grpo"
    assert spec.train.rl.lr == 3e-6 and spec.reward.judge.timeout_s == 5.0
    assert spec.run.stages == ["data", "sft"]


BAD_OVERRIDES = [
    (["estimator=nope"], "config error at estimator: unknown option 'nope'; options: dr_grpo, grpo, rloo, slca_grpo, toolpo"),
    (["experiment=nope"], "config error at experiment: unknown option 'nope'"),
    (["estimator.nope=1"], "config error at estimator.nope: unknown key; allowed keys under estimator:"),
    (["+estimator.nope=1"], "config error at estimator.nope: unknown key; allowed keys here:"),
    (["estimator=grpo", "estimator.w_process=2"], "config error at estimator.w_process: unknown key"),
    (["train.rl.lr=fast"], "config error at train.rl.lr: Input should be a valid number"),
    (["filter.k=0"], "config error at filter.k: Input should be greater than or equal to 1"),
    (["train.rl.loss_agg_mode=sum"], "config error at train.rl.loss_agg_mode: Input should be 'token-mean'"),
    (["reward.judge.name=gpt"], "config error at reward.judge.name: Input should be 'grounding', 'llm' or 'none'"),
    (["backbone.hidden_size=12.5"], "config error at backbone.hidden_size: Input should be a valid integer"),
    (["run.seed"], "config error in override 'run.seed': not KEY=VALUE syntax"),
    (["train..rl.lr=1"], "config error in override 'train..rl.lr=1': not KEY=VALUE syntax"),
]


@pytest.mark.parametrize(("overrides", "message"), BAD_OVERRIDES, ids=[" ".join(o) for o, _ in BAD_OVERRIDES])
def test_bad_override_names_path_and_allowed(overrides: list[str], message: str) -> None:
    with pytest.raises(SpecError) as info:
        compose_spec(overrides)
    text = str(info.value)
    assert text.startswith(message), text
    assert "\n" not in text


MISSPELT = [
    ("trian.rl.lr=1", "config error at trian.rl.lr: unknown key 'trian' (did you mean train.rl.lr?); allowed keys under <root>: backbone,"),
    ("train.rll.lr=1", "config error at train.rll.lr: unknown key 'rll' (did you mean train.rl.lr?); allowed keys under train: curate, rl, sft"),
    ("train.rl.lrr=1", "config error at train.rl.lrr: unknown key (did you mean train.rl.lr?); allowed keys under train.rl: clip_high,"),
    ("traim.rl.lrr=1", "config error at traim.rl.lrr: unknown key 'traim' (did you mean train.rl.lr?)"),
    ("train.RL.lr=1", "config error at train.RL.lr: unknown key 'RL' (did you mean train.rl.lr?)"),
    ("rl.lr=1", "config error at rl.lr: unknown key 'rl' (did you mean train.rl.lr?); allowed keys under <root>: backbone,"),
    ("lr=1", "config error at lr: unknown key (did you mean train.rl.lr or train.sft.lr?); allowed keys under <root>: backbone,"),
    ("estimatr=grpo", "config error at estimatr: unknown key (did you mean estimator?); allowed keys under <root>: backbone,"),
    ("xyz.rl.lr=1", "config error at xyz.rl.lr: unknown key 'xyz'; allowed keys under <root>: backbone,"),
    ("run.seed.x=1", "config error at run.seed.x: run.seed holds a value, not keys"),
]


@pytest.mark.parametrize("source", ["conf/", "a saved spec"])
@pytest.mark.parametrize(("override", "message"), MISSPELT, ids=[o for o, _ in MISSPELT])
def test_a_misspelt_key_is_answered_with_the_closest_real_path_never_with_a_plus(override: str, message: str, source: str, tmp_path: Path) -> None:
    from slca.config.io import load_spec, write_spec

    with pytest.raises(SpecError) as info:
        if source == "conf/":
            compose_spec([override])
        else:
            load_spec(write_spec(compose_spec([]), tmp_path / "spec.yaml"), [override])
    text = str(info.value)
    assert text.startswith(message), text
    assert "+" not in text and "\n" not in text


@pytest.mark.parametrize(("override", "message"), [
    ("+trian.rl.lr=1", "config error at trian: unknown key (did you mean train?); allowed keys here: experiment,"),
    ("+estimator.w_proces=1", "config error at estimator.w_proces: unknown key (did you mean estimator.w_process?); allowed keys here: name,"),
])
def test_a_misspelt_new_key_is_answered_with_the_closest_field(override: str, message: str) -> None:
    with pytest.raises(SpecError) as info:
        compose_spec([override])
    assert str(info.value).startswith(message), str(info.value)


def test_unknown_key_in_a_file_is_rejected(tmp_path: Path) -> None:
    data = compose_dict([])
    data["train"]["rl"]["learning_rate"] = 1.0
    from slca.config.compose import validate_spec

    with pytest.raises(SpecError, match=r"^config error at train\.rl\.learning_rate: unknown key; allowed keys here: epochs, max_steps"):
        validate_spec(data)


def test_spec_schema_documents_every_field() -> None:
    """Each field of each model has a one-line description (the typed-config rule)."""
    models = list(every_model(Spec))
    for cls in models:
        for name, info in cls.model_fields.items():
            assert info.description and "\n" not in info.description, f"{cls.__name__}.{name} lacks a one-line description"
    assert len(models) > 20
