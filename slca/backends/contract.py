"""What a backend is: one registered object that says which stages it runs, how it dry-runs, which
spec rules it adds and which spec fields it honours.

A field set to a non-default value that the chosen backend does not honour is refused at
composition, so no setting is silently ignored. Stage and dry-run functions are named as
"module:function" and imported only when called: composing a spec never imports torch or verl.
Backends register into the config layer's registry (slca.config.backend_registry), which finds each
backend's registering module through the `slca.backends` entry points (pyproject.toml).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from slca.config.backend_registry import BACKENDS, SpecRules, installed_backends

if TYPE_CHECKING:
    from slca.config.spec import Spec
    from slca.runcontext import StageFn

# Spec sections read by code every backend shares (data, rewards, simulators, evaluation, launch,
# tracking, curation, the algorithms' own configs): a backend may honour one as a whole.
SHARED_SECTIONS: tuple[str, ...] = (
    "experiment", "description", "run", "data", "backbone", "estimator", "reward", "downsample",
    "simulator", "backend", "launcher", "logger", "eval", "train.curate",
)
# The fields of the sections trainers read, named one by one: a field added to one of these models
# is honoured by no backend (tests/backends/test_contract.py fails) until it is listed here, and
# each backend that ignores it says so in its `refuses`.
TRAINED_FIELDS: dict[str, tuple[str, ...]] = {
    "train.sft": ("epochs", "batch_size", "micro_batch_size", "lr", "warmup_ratio", "scheduler", "weight_decay",
                  "max_length", "max_rows", "save_every_steps", "grad_clip", "keep_checkpoints"),
    "train.rl": ("epochs", "max_steps", "prompts_per_step", "n", "mini_batch_prompts", "ppo_epochs", "lr", "weight_decay",
                 "grad_clip", "clip_low", "clip_high", "dual_clip", "loss_agg_mode", "use_kl_loss", "kl_coef", "kl_type",
                 "entropy_coeff", "temperature", "top_p", "max_prompt_length", "max_response_length",
                 "max_assistant_turns", "max_tool_rounds", "max_parallel_calls", "system_prompt", "grad_cosine",
                 "save_every_steps", "eval_every_steps"),
    "filter": ("name", "k", "correct_threshold", "skip_all_wrong", "readmit_every", "max_generation_rounds"),
}


def trained(sections: tuple[str, ...], refuses: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The dotted TRAINED_FIELDS paths of `sections`, less those in `refuses`."""
    paths = (f"{section}.{name}" for section in sections for name in TRAINED_FIELDS[section])
    return tuple(path for path in paths if path not in (refuses or {}))


# The pipeline stages a backend provides, with the sections only that stage reads: a backend that
# does not run a stage neither honours nor refuses its sections (a run listing the stage stops there
# as unavailable, so they are never silently ignored).
STAGE_SECTIONS: dict[str, tuple[str, ...]] = {
    "sft": ("train.sft",),
    "rl": ("train.rl", "filter", "estimator", "downsample"),
}


def _import(target: str) -> Any:
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


def covers(entry: str, path: str) -> bool:
    """Whether the dotted `entry` names `path` or a section holding it."""
    return path == entry or path.startswith(entry + ".")


@dataclass(frozen=True)
class Backend:
    """One training engine's contract with the pipeline and the config layer.

    `stages`: stage name -> "module:function" of its `(RunContext) -> dict` stage function.
    `honours`: dotted spec paths it takes into account: SHARED_SECTIONS entries (covering their
    fields) and single fields, usually `trained(...)`.
    `refuses`: dotted path -> why it ignores that field; a non-default value there is refused.
    `rules`: its cross-field checks, `(spec) -> None` raising `RuleViolation`.
    `dry_run`: "module:function" `(spec, open_run_dir, argv) -> int` for a backend launched as a whole;
    `dry_run_stages`: stages that honour `RunContext.dry_run` when the pipeline runs them instead.
    A backend with neither launches nothing of its own: its dry run writes the run directory and
    prints the slca command that runs it.
    """

    name: str
    stages: Mapping[str, str]
    honours: tuple[str, ...]
    refuses: Mapping[str, str] = field(default_factory=dict)
    rules: Callable[[Spec], None] | None = None
    dry_run: str | None = None
    dry_run_stages: tuple[str, ...] = ()

    def stage(self, stage: str) -> StageFn:
        """The stage function, imported now (StageUnavailable when this backend does not run it)."""
        from slca.runcontext import StageUnavailable

        if stage not in self.stages:
            raise StageUnavailable(f"stage '{stage}' is not supported by backend '{self.name}' (it runs: {', '.join(self.stages) or 'nothing'})")
        return _import(self.stages[stage])  # type: ignore[no-any-return]

    def dry_run_fn(self) -> Callable[..., int] | None:
        return _import(self.dry_run) if self.dry_run else None

    def honours_path(self, path: str) -> bool:
        return any(covers(entry, path) for entry in self.honours)

    def outside_its_stages(self, path: str) -> bool:
        """Whether `path` is read only by a stage this backend does not run."""
        return any(covers(section, path) for stage, sections in STAGE_SECTIONS.items() if stage not in self.stages for section in sections)

    def check(self, spec: Spec, others: Sequence[SpecRules]) -> None:
        """Its refusals (`others` say who honours a refused field), then its own rules."""
        from slca.config.base import RuleViolation

        for path, why in self.refuses.items():
            value = _non_default(spec, path)
            if value is not _DEFAULT:
                honoured_by = ", ".join(b.name for b in others if b.honours_path(path)) or "no backend"
                raise RuleViolation(path, f"set to {value!r} but backend={self.name} does not honour it (honoured by: {honoured_by}); {why}")
        if self.rules is not None:
            self.rules(spec)


_DEFAULT = object()


def _non_default(spec: Spec, path: str) -> Any:
    """The value at `path` when it differs from its model's default; _DEFAULT when equal or when the
    chosen option of a union has no such field."""
    *parents, leaf = path.split(".")
    node: Any = spec
    for key in parents:
        node = getattr(node, key, None)
    info = type(node).model_fields.get(leaf) if node is not None and hasattr(type(node), "model_fields") else None
    if info is None:
        return _DEFAULT
    value = getattr(node, leaf)
    return _DEFAULT if value == info.get_default(call_default_factory=True) else value


def register_backend(backend: Backend) -> Backend:
    """Add `backend` to the registry under its name; a second registration of a name is an error."""
    BACKENDS.register(backend.name)(backend)
    return backend


def _as_backend(entry: SpecRules) -> Backend:
    # The config layer's registry is typed by what composition needs; the pipeline needs the whole contract.
    if not isinstance(entry, Backend):
        raise TypeError(f"backend {entry.name!r} is registered as a {type(entry).__name__}, not a slca.backends.contract.Backend")
    return entry


def all_backends() -> list[Backend]:
    """Every installed backend (see slca.config.backend_registry)."""
    return [_as_backend(entry) for entry in installed_backends()]


def get_backend(name: str) -> Backend:
    """The registered backend called `name` (KeyError listing the known ones)."""
    installed_backends()
    return _as_backend(BACKENDS.get(name))
