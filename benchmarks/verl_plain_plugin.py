"""The plain-verl side of benchmarks/verl_overhead.py, loaded into every verl process by name
(`VERL_USE_EXTERNAL_MODULES`, after slca's plugin): verl's own synchronous trainer under the
trainer mode `plain_cpu`, changed only where the CPU platform needs it (gloo-only workers, as
slca's trainer does), so the plain run pays nothing of slca's trainer hooks."""

from __future__ import annotations

from typing import Any

from verl.trainer.ppo.v1.trainer_base import register_trainer
from verl.trainer.ppo.v1.trainer_sync import PPOTrainerSync

from slca.backends.verl.trainer import gloo_workers_on_cpu

TRAINER_MODE = "plain_cpu"


@register_trainer(TRAINER_MODE)
class PlainCpuTrainer(PPOTrainerSync):
    """verl's PPOTrainerSync with its training workers on gloo."""

    def _init_resource_pool_mgr(self) -> Any:
        result = super()._init_resource_pool_mgr()
        gloo_workers_on_cpu(self)
        return result
