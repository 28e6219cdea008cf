"""Which policy rolls the prompts out: `--policy` / `train.curate.policy` turned into a generator.

MODEL is an OpenAI-compatible endpoint URL (served with the `openai` generator, settings from
`eval.endpoint`, tokenizer from the spec's backbone), `backbone` (the spec's base model), a run
directory (its newest policy: after RL, else after SFT), or a model directory (a checkpoint).
Resolving names the policy (`identity`, part of the outcome cache key) without loading it: a
rerun served from the cache never loads a model.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from slca.config.spec import Spec
from slca.data.errors import DataInputError
from slca.stage_results import ResultFileError, trained_policies

URL_SCHEMES = ("http://", "https://")


@dataclass
class PolicySource:
    """A resolved policy: `label` for messages, `identity` for cache keys, `load()` -> (generator, tokenizer)."""

    label: str
    identity: str
    load: Callable[[], tuple[Any, Any]]


def _device(spec: Spec) -> Any:
    from slca.device import select_device

    return select_device(getattr(spec.backend, "device", "auto"), getattr(spec.backend, "num_threads", None))


def _dir_identity(model_dir: Path) -> str:
    """A checkpoint's name for cache keys: its path and the size and mtime of every file in it
    (hashing weights would cost as much as a small rollout batch on large models)."""
    files = sorted((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in model_dir.iterdir() if p.is_file())
    return json.dumps([str(model_dir.resolve()), files])


def _hf_loader(spec: Spec, model_dir: str) -> Callable[[], tuple[Any, Any]]:
    def load() -> tuple[Any, Any]:
        from transformers import AutoTokenizer
        from transformers.utils import logging as hf_logging

        from slca.evaluation.generators import build_generator

        hf_logging.disable_progress_bar()
        tokenizer = AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
        cfg = spec.eval.model_copy(update={"generator": "hf"})
        return build_generator(cfg, model_dir, tokenizer, _device(spec)), tokenizer

    return load


def model_dir_source(spec: Spec, model_dir: str | Path, label: str) -> PolicySource:
    """A checkpoint directory (or a hub id the backbone names) as a policy."""
    path = Path(model_dir)
    identity = _dir_identity(path) if path.is_dir() else json.dumps(["hub", str(model_dir)])
    return PolicySource(label, identity, _hf_loader(spec, str(model_dir)))


def endpoint_source(spec: Spec, url: str, backbone_dir: Callable[[], str]) -> PolicySource:
    """An OpenAI-compatible completions endpoint; text is tokenised with the spec's backbone tokenizer."""
    endpoint = spec.eval.endpoint.model_copy(update={"base_url": url})

    def load() -> tuple[Any, Any]:
        from transformers import AutoTokenizer

        from slca.evaluation.generators import build_generator

        tokenizer_dir = backbone_dir()
        tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir, local_files_only=True)
        cfg = spec.eval.model_copy(update={"generator": "openai", "endpoint": endpoint})
        return build_generator(cfg, tokenizer_dir, tokenizer, _device(spec)), tokenizer

    identity = json.dumps(["endpoint", url, endpoint.model, spec.backbone.model_dump(mode="json")], sort_keys=True)
    return PolicySource(url, identity, load)


def newest_policy_of_run(run_dir: Path) -> Path:
    """The model directory of a run's newest trained policy (RL, else SFT)."""
    try:
        recorded = trained_policies(run_dir)
    except ResultFileError as exc:
        raise DataInputError(f"--policy {run_dir}: {exc}") from None
    for stage, result in (("rl", recorded.rl), ("sft", recorded.sft)):
        if result is not None:
            path = run_dir / result.model_dir  # an absolute model_dir stays itself
            if not (path / "config.json").is_file():
                raise DataInputError(f"--policy {run_dir}: the {stage} stage's model {path} is gone")
            return path
    raise DataInputError(f"--policy {run_dir}: this run has no finished sft or rl stage (no model to roll out)")


def resolve_policy(spec: Spec, value: str, *, backbone_dir: Callable[[], str], latest: Callable[[], str] | None = None) -> PolicySource:
    """The policy `value` names (see the module docstring); `latest` serves the pipeline stage's
    `latest` (this run's newest policy). A name that is none of these is one line naming --policy."""
    if value.startswith(URL_SCHEMES):
        return endpoint_source(spec, value, backbone_dir)
    if value == "backbone":
        return model_dir_source(spec, backbone_dir(), "backbone")
    if value == "latest":
        if latest is None:
            raise DataInputError("--policy latest names a run's own newest policy and only applies to the curate stage; pass a run or model directory")
        return model_dir_source(spec, latest(), "latest")
    path = Path(value)
    if not path.exists():
        raise DataInputError(f"--policy {value}: no such run or model directory (or use backbone, or an http(s):// endpoint)")
    if (path / "spec.yaml").is_file():
        return model_dir_source(spec, newest_policy_of_run(path), str(path))
    if (path / "config.json").is_file():
        return model_dir_source(spec, path, str(path))
    raise DataInputError(f"--policy {value}: neither a run directory (spec.yaml) nor a model directory (config.json)")
