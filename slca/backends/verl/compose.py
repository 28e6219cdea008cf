"""Spec -> verl config: verl's own packaged `ppo_trainer` config, composed with Hydra and the
override strings the spec implies, then the user's `backend.overrides`.

Composition happens here, in slca's process, so an unknown or misspelled verl key fails before
anything launches, with one line naming the key. The result is written into the run directory and
handed to `python -m verl.trainer.main_ppo` as its primary config (see `launch.py`).
"""

from __future__ import annotations

import contextlib
import io
import logging
import re
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from slca.backends.verl.efficiency import efficiency_settings
from slca.config.errors import SpecError
from slca.config.spec import Spec

# Name of slca's transformers rollout in verl's rollout registries (plugin.py registers it).
CPU_ROLLOUT = "slca_hf"
# Name of slca's trainer in verl's v1 trainer registry (plugin.py registers it).
TRAINER_MODE = "slca"
# verl's built-in `grpo`/`rloo` keep their names; slca's versions live under these (plugin.py).
VERL_BUILTIN_CLASHES = {"grpo": "grpo_slca", "rloo": "rloo_slca"}
# `dual_clip: null` means no dual clip; verl always applies one, so its bound is put out of reach.
NO_DUAL_CLIP = 1.0e9
# slca's tool agent loop and tool parser in verl's registries (agent_loop.py registers them), the
# one wildcard tool every call is routed to (tools.py), and the tool config file in `rl/`.
AGENT_LOOP = "slca_tool_agent"
TOOL_PARSER = "slca_hermes"
WILDCARD_TOOL = "slca_tool"
TOOL_CONFIG_NAME = "verl_tools.yaml"
# Logical CPUs Ray offers per node on backend.device=cpu: every verl worker, agent loop and storage
# unit is an actor asking for one, far more than a test machine's cores (they mostly wait).
CPU_RAY_CPUS = 16


@dataclass(frozen=True)
class VerlInputs:
    """What the spec alone does not say: where this run's files are."""

    model_path: str
    train_file: str
    val_file: str
    run_dir: Path
    spec_path: Path
    # The Ray cluster verl's ray.init joins (SLURM/verl_ray_job.sbatch exports RAY_ADDRESS); None: verl starts its own.
    ray_address: str | None = None

    @property
    def checkpoint_dir(self) -> Path:
        return self.run_dir / "rl" / "checkpoints"

    @property
    def tool_config_path(self) -> Path:
        return self.run_dir / "rl" / TOOL_CONFIG_NAME


def verl_estimator_name(name: str) -> str:
    """The name under which slca estimator `name` lives in verl's registry."""
    return VERL_BUILTIN_CLASHES.get(name, name)


def _value(value: Any) -> str:
    """A Python value as a Hydra override value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_value(v) for v in value) + "]"
    if isinstance(value, str):
        # Quoted, so paths with '=' or ',' and names like 'token-mean' stay one string.
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    return repr(value)


def spec_overrides(spec: Spec, inputs: VerlInputs) -> list[str]:
    """The verl override strings the spec implies (docs/method.md#reference-hyperparameters)."""
    rl, backend = spec.train.rl, spec.backend
    cpu = backend.device == "cpu"
    reward_file = Path(__file__).with_name("reward.py").resolve()
    # verl's `file` logger feeds the run's tracker (metrics.jsonl and the spec's one W&B run).
    loggers = ["console", "file"]
    settings: dict[str, Any] = {
        "data.train_files": inputs.train_file,
        "data.val_files": inputs.val_file,
        "data.train_batch_size": rl.prompts_per_step,
        "data.max_prompt_length": rl.max_prompt_length,
        "data.max_response_length": rl.max_response_length,
        "data.seed": spec.run.seed,
        "actor_rollout_ref.model.path": inputs.model_path,
        "actor_rollout_ref.actor.optim.lr": rl.lr,
        "actor_rollout_ref.actor.optim.weight_decay": rl.weight_decay,
        "actor_rollout_ref.actor.ppo_mini_batch_size": rl.mini_batch_prompts,
        "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu": backend.ppo_micro_batch_size_per_gpu,
        "actor_rollout_ref.actor.ppo_epochs": rl.ppo_epochs,
        "actor_rollout_ref.actor.grad_clip": rl.grad_clip,
        "actor_rollout_ref.actor.clip_ratio_low": rl.clip_low,
        "actor_rollout_ref.actor.clip_ratio_high": rl.clip_high,
        "actor_rollout_ref.actor.clip_ratio_c": NO_DUAL_CLIP if rl.dual_clip is None else rl.dual_clip,
        "actor_rollout_ref.actor.loss_agg_mode": rl.loss_agg_mode,
        "actor_rollout_ref.actor.use_kl_loss": rl.use_kl_loss,
        "actor_rollout_ref.actor.kl_loss_coef": rl.kl_coef,
        "actor_rollout_ref.actor.kl_loss_type": rl.kl_type,
        "actor_rollout_ref.actor.entropy_coeff": rl.entropy_coeff,
        "actor_rollout_ref.rollout.name": CPU_ROLLOUT if cpu else backend.rollout_engine,
        "actor_rollout_ref.rollout.n": rl.n,
        "actor_rollout_ref.rollout.temperature": rl.temperature,
        "actor_rollout_ref.rollout.top_p": rl.top_p,
        "actor_rollout_ref.rollout.gpu_memory_utilization": backend.gpu_memory_utilization,
        "actor_rollout_ref.rollout.max_num_seqs": backend.max_num_seqs,
        "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu": backend.log_prob_micro_batch_size_per_gpu,
        "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu": backend.log_prob_micro_batch_size_per_gpu,
        "actor_rollout_ref.rollout.agent.num_workers": backend.agent_num_workers,
        "algorithm.adv_estimator": verl_estimator_name(spec.estimator.name),
        "algorithm.use_kl_in_reward": False,
        "reward.custom_reward_function.path": str(reward_file),
        "reward.custom_reward_function.name": "compute_score",
        "+reward.custom_reward_function.reward_kwargs.spec_path": str(inputs.spec_path),
        "trainer.total_epochs": rl.epochs,
        "trainer.total_training_steps": rl.max_steps,
        "trainer.nnodes": backend.nnodes,
        "trainer.n_gpus_per_node": backend.n_gpus_per_node,
        "trainer.save_freq": backend.save_freq,
        "trainer.test_freq": backend.test_freq,
        "trainer.val_before_train": backend.val_before_train,
        "trainer.default_local_dir": str(inputs.checkpoint_dir),
        "trainer.resume_mode": "auto",
        "trainer.project_name": spec.logger.project if spec.logger.name == "wandb" else "slca",
        "trainer.experiment_name": inputs.run_dir.name,
        "trainer.logger": loggers,
        "trainer.v1.trainer_mode": TRAINER_MODE,
        "+slca.spec_path": str(inputs.spec_path),
    }
    # The filter and down-sampler (efficiency.py; it overrides the mini-batch size when m of n are kept).
    settings.update(efficiency_settings(spec, inputs.spec_path))
    settings.update(_multi_turn_settings(spec, inputs))
    if cpu:
        settings.update(_cpu_settings(backend, joins_cluster=inputs.ray_address is not None))
    return [f"{key}={_value(value)}" for key, value in settings.items()]


def _multi_turn_settings(spec: Spec, inputs: VerlInputs) -> dict[str, Any]:
    """Every rollout runs slca's tool agent loop against the wildcard simulator tool, with the caps
    of `train.rl` (docs/method.md#tool-simulators "Termination rules")."""
    rl = spec.train.rl
    prefix = "actor_rollout_ref.rollout.multi_turn."
    return {
        "actor_rollout_ref.rollout.agent.default_agent_loop": AGENT_LOOP,
        prefix + "enable": True,
        prefix + "tool_config_path": str(inputs.tool_config_path),
        prefix + "format": TOOL_PARSER,
        # verl reads 0 tool rounds as "no cap"; k tool rounds allow k + 1 assistant turns, which binds the same.
        prefix + "max_assistant_turns": min(rl.max_assistant_turns, rl.max_tool_rounds + 1),
        prefix + "max_user_turns": rl.max_tool_rounds,
        prefix + "max_parallel_calls": rl.max_parallel_calls,
        # The simulator cuts observations itself (middle, in characters); verl's cap is the same one.
        prefix + "max_tool_response_length": spec.simulator.max_response_chars,
        prefix + "tool_response_truncate_side": "middle",
    }


def tool_config(spec: Spec) -> dict[str, Any]:
    """verl's tool config (`multi_turn.tool_config_path`) of `spec`: one native tool, the wildcard
    that answers every call with the spec's simulator; its schema is a placeholder that never
    reaches a prompt (the row's own schemas do)."""
    schema = {"type": "object", "properties": {}, "required": []}
    return {
        "tools": [
            {
                "class_name": "slca.backends.verl.tools.SimulatorTool",
                "config": {"type": "native", "simulator": spec.simulator.model_dump(mode="json")},
                "tool_schema": {
                    "type": "function",
                    "function": {"name": WILDCARD_TOOL, "description": f"Every tool call, answered by the {spec.simulator.name} simulator.", "parameters": schema},
                },
            }
        ]
    }


def _cpu_settings(backend: Any, joins_cluster: bool) -> dict[str, Any]:
    """What verl needs to train on CPU cores: slca's CPU platform (gloo), logical GPUs for Ray's
    resource pools, FSDP2 (FSDP1 refuses CPU parameters), sdpa attention, float32, one storage unit.
    A Ray cluster verl joins advertises the logical GPUs and CPUs itself (ray.init refuses them then)."""
    settings = {
        "trainer.device": "cpu",
        "actor_rollout_ref.actor.strategy": "fsdp2",
        "actor_rollout_ref.ref.strategy": "fsdp2",
        "actor_rollout_ref.actor.use_torch_compile": False,
        "actor_rollout_ref.model.use_remove_padding": False,
        "actor_rollout_ref.model.enable_gradient_checkpointing": False,
        "+actor_rollout_ref.model.override_config.attn_implementation": "sdpa",
        # Actor and reference in float32, as the transformers rollout: verl's default bf16 autocast
        # puts up to 0.05 between their token probabilities at temperature 0.5 (the tiny SFT model).
        "+actor_rollout_ref.actor.fsdp_config.mixed_precision.param_dtype": "fp32",
        "+actor_rollout_ref.ref.fsdp_config.mixed_precision.param_dtype": "fp32",
        "actor_rollout_ref.rollout.tensor_model_parallel_size": 1,
        "data.dataloader_num_workers": 0,
        "reward.num_workers": 1,
        "transfer_queue.backend.SimpleStorage.num_data_storage_units": 1,
        "+ray_kwargs.ray_init.include_dashboard": False,
    }
    if not joins_cluster:
        settings.update({"+ray_kwargs.ray_init.num_gpus": backend.nnodes * backend.n_gpus_per_node, "+ray_kwargs.ray_init.num_cpus": CPU_RAY_CPUS})
    return settings


@contextlib.contextmanager
def verl_import_chatter_muted() -> Iterator[None]:
    """verl's first import names each optional engine it lacks and the accelerator it falls back to
    (ten lines on a CPU machine); in the driver, which only composes and checks verl's config, none of
    it concerns the user. The verl processes of a run keep theirs, in its verl.log."""
    # verl's modules set their loggers' levels as they are imported, so the warnings are held back at
    # logging's process-wide threshold, for the length of the block only.
    previous = logging.root.manager.disable
    logging.disable(logging.WARNING)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=r".* engine is not available", category=UserWarning)
            yield
    finally:
        logging.disable(previous)


def verl_config_dir() -> Path:
    """verl's packaged trainer config folder (installed verl, never a copy)."""
    import verl.trainer

    return Path(verl.trainer.__file__).parent / "config"


_KEY_IN_MESSAGE = re.compile(r"Could not (?:override|append to) '([^']+)'|Key '([^']+)' (?:is not in struct|not in)")


def compose_verl_config(spec: Spec, inputs: VerlInputs) -> Any:
    """verl's `ppo_trainer` config with the spec's overrides and then `backend.overrides` applied
    (an OmegaConf DictConfig). A key verl does not have fails here, naming it."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    ours = spec_overrides(spec, inputs)
    theirs = list(spec.backend.overrides)
    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=str(verl_config_dir()), version_base=None):
            try:
                return compose(config_name="ppo_trainer", overrides=ours + theirs)
            except (HydraException, OmegaConfBaseException) as exc:
                raise SpecError(_explain(exc, theirs)) from None
    finally:
        GlobalHydra.instance().clear()


def _explain(exc: Exception, user_overrides: list[str]) -> str:
    text = " ".join(str(exc).split())
    match = _KEY_IN_MESSAGE.search(text)
    key = next((g for g in match.groups() if g), None) if match else None
    mine = key is not None and any(o.lstrip("+~").split("=", 1)[0] == key for o in user_overrides)
    if key is not None:
        where = "backend.overrides" if mine else "verl config composed from the spec"
        return f"{where}: verl 0.9.1's ppo_trainer config has no key '{key}' (prefix it with '+' to add a new key)"
    return f"backend.overrides: verl rejected the overrides: {text[:300]}"


def check_verl_config(cfg: Any) -> None:
    """Load the composed config into verl's own dataclasses and run verl's own validation (what
    `main_ppo` does first), so a config verl would refuse is refused here, in one line."""
    from verl.trainer.ppo.utils import need_critic, need_reference_policy
    from verl.utils.config import omega_conf_to_dataclass, validate_config

    sections = ("actor_rollout_ref.actor", "actor_rollout_ref.rollout", "algorithm")
    for section in sections:
        node = cfg
        for key in section.split("."):
            node = node[key]
        try:
            omega_conf_to_dataclass(node)
        except Exception as exc:  # noqa: BLE001 - verl raises many kinds; all mean "verl refuses this"
            raise SpecError(f"verl config {section}: {_first_line(exc)}") from None
    try:
        # verl prints a success line and warns about the critic it disables: the caller reports instead.
        with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            validate_config(cfg, use_reference_policy=need_reference_policy(cfg), use_critic=need_critic(cfg))
    except Exception as exc:  # noqa: BLE001
        raise SpecError(f"verl config: {_first_line(exc)}") from None


def _first_line(exc: BaseException) -> str:
    """The exception as one line (Hydra's instantiation errors put the cause on a later line)."""
    return (" ".join(str(exc).split()) or type(exc).__name__)[:400]
