"""The protocol card: what every evaluation number was computed under (docs/eval.md#protocol-card).

A card is built before anything is sampled and travels with the numbers (`EvalResult`): model
(path and weights hash), data (path and content hash), every factor, decoding, rollout caps,
seeds, scoring, software (slca version, git commit, the code snapshot a launched job ran) and compute (CPU model, torch threads).
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from slca.evaluation.benchmarks import DataRef, Scoring

WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".gguf")


def weights_sha256(model_dir: str | Path) -> str | None:
    """sha256 over the weight files of a model directory (name and bytes, sorted by name); None when it has none
    (a model only an endpoint serves)."""
    root = Path(model_dir)
    files = sorted(p for p in root.glob("*") if p.is_file() and p.suffix in WEIGHT_SUFFIXES) if root.is_dir() else []
    if not files:
        return None
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.name.encode("utf-8") + b"\0")
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True)
class ModelRef:
    label: str
    path: str
    weights_sha256: str | None
    generator: str
    endpoint: str | None  # base URL and served name of the `openai` generator
    served_model: str | None


@dataclass(frozen=True)
class Factors:
    constructions: tuple[str, ...]
    thinking: tuple[str, ...]
    system_prompts: tuple[str, ...]


@dataclass(frozen=True)
class Seeds:
    used: tuple[int, ...]
    requested: tuple[int, ...]
    note: str | None


@dataclass(frozen=True)
class Decoding:
    temperature: float
    top_p: float
    max_tokens: int | None
    n: int


@dataclass(frozen=True)
class RolloutCaps:
    max_prompt_length: int
    max_response_length: int
    max_assistant_turns: int
    max_tool_rounds: int
    max_parallel_calls: int


@dataclass(frozen=True)
class Software:
    slca_version: str
    git_commit: str | None
    git_dirty: bool | None
    code_snapshot: str | None  # digest of the frozen code a launched job ran (slca/config/codebase.py); None: the checkout itself
    packages: dict[str, str]


@dataclass(frozen=True)
class Compute:
    cpu_model: str
    torch_threads: int | None
    device: str
    gpu: str | None


@dataclass(frozen=True)
class ProtocolCard:
    eval_name: str
    experiment: str
    description: str  # the experiment's own one-line purpose, so a table read alone says what was run
    backbone: str  # the backbone option the spec names (the evaluated weights are `model`)
    created_utc: str
    model: ModelRef
    data: DataRef
    factors: Factors
    seeds: Seeds
    decoding: Decoding
    rollout_caps: RolloutCaps
    scoring: Scoring
    software: Software
    compute: Compute

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def software_state() -> Software:
    from slca import __version__
    from slca.config.codebase import code_state
    from slca.config.provenance import package_versions

    code = code_state()
    return Software(__version__, code["git"]["commit"], code["git"]["dirty"], code["snapshot"], package_versions())


def compute_state(device: Any) -> Compute:
    import torch

    from slca.config.provenance import cpu_model

    kind = str(device)
    gpu = torch.cuda.get_device_name(0) if kind.startswith("cuda") and torch.cuda.is_available() else None
    return Compute(cpu_model(), torch.get_num_threads(), kind, gpu)


def build_card(*, spec: Any, model: ModelRef, data: DataRef, scoring: Scoring, seeds: tuple[int, ...], seed_note: str | None, device: Any) -> ProtocolCard:
    """The card of one evaluated model under `spec.eval` (see the module docstring)."""
    ev = spec.eval
    caps = ev.rollout
    return ProtocolCard(
        eval_name=ev.name,
        experiment=spec.experiment,
        description=spec.description,
        backbone=spec.backbone.name,
        created_utc=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        model=model,
        data=data,
        factors=Factors(tuple(ev.constructions), tuple(ev.thinking), tuple(ev.system_prompts)),
        seeds=Seeds(tuple(seeds), tuple(ev.seeds), seed_note),
        decoding=Decoding(ev.temperature, ev.top_p, ev.max_tokens, ev.n),
        rollout_caps=RolloutCaps(caps.max_prompt_length, caps.max_response_length, caps.max_assistant_turns,
                                 caps.max_tool_rounds, caps.max_parallel_calls),
        scoring=scoring,
        software=software_state(),
        compute=compute_state(device),
    )
