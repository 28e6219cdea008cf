"""Spec -> verl config: verl's own packaged ppo_trainer config composed with what the spec implies,
checked by verl's own dataclasses and validation; `slca run --dry-run` writes it and prints the launch."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
import yaml

from slca.backends.verl.compose import NO_DUAL_CLIP, VerlInputs, check_verl_config, compose_verl_config
from slca.backends.verl.version import VerlUnavailable, require_verl
from slca.config.compose import compose_spec
from slca.config.errors import SpecError
from tests.badinput import assert_refused, run_cli, snapshot

SMOKE = ["experiment=verl_smoke"]


def inputs(tmp_path: Path) -> VerlInputs:
    run_dir = tmp_path / "run"
    return VerlInputs("/models/policy", "/data/rl.parquet", "/data/eval.parquet", run_dir, run_dir / "spec.yaml")


@pytest.mark.parametrize("experiment", ["paper_slca", "efficient_grpo_multi_turn"])
def test_reference_experiments_compose_into_verls_own_config_dataclasses(experiment, tmp_path):
    spec = compose_spec([f"experiment={experiment}"])
    cfg = compose_verl_config(spec, inputs(tmp_path))
    check_verl_config(cfg)  # verl's dataclasses and validate_config accept it
    rl, backend = spec.train.rl, spec.backend
    actor = cfg.actor_rollout_ref.actor
    # Down-sampling m of n rescales verl's mini-batch (counted in prompts x n rows) to hold the same prompts.
    kept = rl.n if spec.downsample.name == "none" else spec.downsample.m
    assert cfg.data.train_batch_size == rl.prompts_per_step and actor.ppo_mini_batch_size * rl.n == rl.mini_batch_prompts * kept
    assert cfg.actor_rollout_ref.rollout.n == rl.n and cfg.actor_rollout_ref.rollout.name == "vllm"
    assert (actor.clip_ratio_low, actor.clip_ratio_high) == (rl.clip_low, rl.clip_high)
    assert actor.clip_ratio_c == (NO_DUAL_CLIP if rl.dual_clip is None else rl.dual_clip)
    assert (actor.use_kl_loss, actor.kl_loss_coef, actor.kl_loss_type) == (rl.use_kl_loss, rl.kl_coef, rl.kl_type)
    assert actor.optim.lr == rl.lr and cfg.trainer.total_epochs == rl.epochs
    assert (cfg.trainer.nnodes, cfg.trainer.n_gpus_per_node) == (backend.nnodes, backend.n_gpus_per_node)
    assert Path(cfg.trainer.default_local_dir) == tmp_path / "run" / "rl" / "checkpoints"
    assert cfg.algorithm.adv_estimator == {"slca_grpo": "slca_grpo", "grpo": "grpo_slca"}[spec.estimator.name]
    assert cfg.trainer.v1.trainer_mode == "slca" and cfg.slca.spec_path == str(tmp_path / "run" / "spec.yaml")
    assert Path(cfg.reward.custom_reward_function.path).is_file()
    # Multi-turn tools (verl's MultiTurnConfig dataclass took them above): slca's agent loop, parser and caps.
    multi_turn = cfg.actor_rollout_ref.rollout.multi_turn
    assert (multi_turn.enable, multi_turn.format, cfg.actor_rollout_ref.rollout.agent.default_agent_loop) == (True, "slca_hermes", "slca_tool_agent")
    assert (multi_turn.max_user_turns, multi_turn.max_parallel_calls) == (rl.max_tool_rounds, rl.max_parallel_calls)
    assert Path(multi_turn.tool_config_path) == tmp_path / "run" / "rl" / "verl_tools.yaml"


def test_paper_slca_is_the_reference_run_on_four_nodes_of_eight_gpus(tmp_path):
    cfg = compose_verl_config(compose_spec(["experiment=paper_slca"]), inputs(tmp_path))
    assert cfg.trainer.nnodes * cfg.trainer.n_gpus_per_node == 32
    assert cfg.actor_rollout_ref.rollout.n == 16 and cfg.data.train_batch_size == 128
    # verl's metrics reach W&B through the run's tracker (one run per spec), not verl's own W&B logger.
    assert list(cfg.trainer.logger) == ["console", "file"]


def test_cpu_device_selects_slcas_platform_rollout_and_gloo_friendly_settings(tmp_path):
    cfg = compose_verl_config(compose_spec(SMOKE), inputs(tmp_path))
    check_verl_config(cfg)
    assert cfg.trainer.device == "cpu" and cfg.actor_rollout_ref.rollout.name == "slca_hf"
    assert cfg.actor_rollout_ref.actor.strategy == "fsdp2"
    assert cfg.actor_rollout_ref.model.override_config.attn_implementation == "sdpa"
    assert cfg.ray_kwargs.ray_init.num_gpus == 1


def test_backend_overrides_are_applied_last_and_plus_adds_a_key(tmp_path):
    spec = compose_spec([*SMOKE, "backend.overrides=['trainer.critic_warmup=2','+trainer.note=x','actor_rollout_ref.rollout.n=2']"])
    cfg = compose_verl_config(spec, inputs(tmp_path))
    assert cfg.trainer.critic_warmup == 2 and cfg.trainer.note == "x"
    assert cfg.actor_rollout_ref.rollout.n == 2  # the escape hatch wins over the spec's value


@pytest.mark.parametrize("override", ["trainer.totl_epochs=3", "actor_rollout_ref.actor.clip_ration_low=0.1", "nosuch.section.key=1"])
def test_a_misspelled_verl_key_fails_at_composition_naming_it(override, tmp_path):
    spec = compose_spec([*SMOKE, f"backend.overrides=['{override}']"])
    with pytest.raises(SpecError) as err:
        compose_verl_config(spec, inputs(tmp_path))
    message = str(err.value)
    assert "\n" not in message and "backend.overrides" in message and override.split("=")[0] in message


def test_verl_refusing_a_config_is_one_line_naming_verl(tmp_path):
    # A loss aggregation verl does not know, through backend.overrides: verl's own validation says so.
    spec = compose_spec([*SMOKE, "backend.overrides=['actor_rollout_ref.actor.loss_agg_mode=seq-bogus']"])
    with pytest.raises(SpecError) as err:
        check_verl_config(compose_verl_config(spec, inputs(tmp_path)))
    assert str(err.value).startswith("verl config") and "\n" not in str(err.value)


@pytest.mark.parametrize(
    ("overrides", "path", "mentions"),
    [
        # verl_smoke: 4 prompts x 4 rollouts a step and a mini-batch, on one rank. Each of these made verl 0.9.1
        # fail at its first log-prob or update ("data size must be divisible by ... micro_batch_size_per_gpu").
        (["backend.log_prob_micro_batch_size_per_gpu=32"], "backend.log_prob_micro_batch_size_per_gpu", "16 rollouts of a step"),
        (["backend.ppo_micro_batch_size_per_gpu=3"], "backend.ppo_micro_batch_size_per_gpu", "16 rollouts of a PPO mini-batch"),
        (["backend.n_gpus_per_node=3"], "train.rl.prompts_per_step", "over verl's 3 ranks"),
        (["train.rl.mini_batch_prompts=1"], "backend.ppo_micro_batch_size_per_gpu", "4 rollouts of a PPO mini-batch"),
    ],
)
def test_micro_batches_that_do_not_divide_a_ranks_rollouts_are_refused_at_composition(overrides, path, mentions):
    with pytest.raises(SpecError) as err:
        compose_spec([*SMOKE, *overrides])
    assert str(err.value).startswith(f"config error at {path}:") and mentions in str(err.value) and "\n" not in str(err.value)


def test_the_shipped_verl_experiments_have_whole_micro_batches():
    for experiment in ("paper_slca", "paper_grpo", "efficient_grpo_single_turn", "efficient_grpo_multi_turn", "verl_smoke"):
        spec = compose_spec([f"experiment={experiment}"])
        rl, backend = spec.train.rl, spec.backend
        kept = spec.downsample.m if spec.downsample.name != "none" else rl.n
        ranks = backend.nnodes * backend.n_gpus_per_node
        assert (rl.prompts_per_step * kept // ranks) % backend.log_prob_micro_batch_size_per_gpu == 0, experiment
        assert (rl.mini_batch_prompts * kept // ranks) % backend.ppo_micro_batch_size_per_gpu == 0, experiment


def test_dry_run_writes_the_composed_config_into_the_run_dir_and_prints_the_launch(tmp_path, capsys):
    run_dir = tmp_path / "run"
    result = run_cli(["run", *SMOKE, f"run.dir={run_dir}", "--dry-run"], capsys)
    assert result.code == 0, result.err
    saved = run_dir / "rl" / "verl_config.yaml"
    cfg = yaml.safe_load(saved.read_text())
    assert Path(cfg["data"]["train_files"]).is_file() and Path(cfg["data"]["val_files"]).is_file()
    assert cfg["actor_rollout_ref"]["model"]["path"] == str((run_dir / "sft" / "model").resolve())
    assert (run_dir / "spec.yaml").is_file() and not (run_dir / "rl" / "checkpoints").exists()
    tools = yaml.safe_load((run_dir / "rl" / "verl_tools.yaml").read_text())["tools"]
    assert cfg["actor_rollout_ref"]["rollout"]["multi_turn"]["tool_config_path"] == str(run_dir.resolve() / "rl" / "verl_tools.yaml")
    assert [t["class_name"] for t in tools] == ["slca.backends.verl.tools.SimulatorTool"] and tools[0]["config"]["simulator"]["name"] == "schema"
    command = result.out.strip().splitlines()[-1]
    words = shlex.split(command)
    assert words[words.index("-m") + 1] == "verl.trainer.main_ppo"
    assert words[words.index("--config-path") + 1] == str(saved.parent) and words[words.index("--config-name") + 1] == "verl_config"
    assert "VERL_PLATFORM=cpu" in words and "VERL_USE_EXTERNAL_MODULES=slca.backends.verl.plugin" in words


@pytest.mark.parametrize(
    ("argv", "mentions"),
    [
        ([*SMOKE, "backend.overrides=['trainer.totl_epochs=3']"], ["backend.overrides", "trainer.totl_epochs"]),
    ],
)
def test_dry_run_refusals_are_one_line_and_leave_the_run_dir_untouched(argv, mentions, tmp_path, capsys):
    run_dir = tmp_path / "run"
    before = snapshot([run_dir])
    result = run_cli(["run", *argv, f"run.dir={run_dir}", "--dry-run"], capsys)
    assert_refused(result, *mentions)
    assert snapshot([run_dir]) == before


def test_the_verl_backend_refuses_any_verl_but_0_9_1_in_one_line(monkeypatch):
    require_verl()  # the installed one is the pinned release
    with pytest.raises(VerlUnavailable, match=r"needs verl==0\.9\.1; found verl 0\.8\.5"):
        require_verl("0.8.5")
    monkeypatch.setattr("slca.backends.verl.version.installed_verl", lambda: None)
    with pytest.raises(VerlUnavailable) as err:
        require_verl()
    assert "not installed" in str(err.value) and "\n" not in str(err.value)
