"""The LLaMA-Factory backend's contract: SFT by `llamafactory-cli train`; its dry run writes the
train YAML, DeepSpeed config and converted data, and prints the command."""

from __future__ import annotations

from typing import TYPE_CHECKING

from slca.backends.contract import SHARED_SECTIONS, STAGE_SECTIONS, Backend, register_backend, trained
from slca.config.base import RuleViolation
from slca.models.backbones import template_family

if TYPE_CHECKING:
    from slca.config.spec import Spec


def rules(spec: Spec) -> None:
    """LLaMA-Factory steps see micro_batch_size x GPUs x accumulation conversations, so the batch must
    divide evenly; the tiny backbone is rolled out with the `qwen` layout, so it trains with that."""
    sft, backend = spec.train.sft, spec.backend
    per_pass = sft.micro_batch_size * backend.nproc_per_node
    if sft.batch_size % per_pass:
        raise RuleViolation(
            "train.sft.batch_size",
            f"{sft.batch_size} is not a multiple of train.sft.micro_batch_size x backend.nproc_per_node = {per_pass} (LLaMA-Factory accumulates whole micro-batches)",
        )
    if template_family(spec.backbone) is None and backend.template not in (None, "qwen"):
        raise RuleViolation("backend.template", f"{backend.template!r}: the tiny backbone trains with LLaMA-Factory's `qwen` template (the layout its rollouts render); use null")


BACKEND = register_backend(Backend(
    name="llamafactory",
    stages={"sft": "slca.backends.llamafactory.stages:sft_stage"},
    # Every train.sft field becomes a LLaMA-Factory argument (trainargs.py); it runs no RL stage.
    honours=(*(s for s in SHARED_SECTIONS if s not in STAGE_SECTIONS["rl"]), *trained(("train.sft",))),
    rules=rules,
    dry_run_stages=("sft",),
))
