"""slca's verl plugin: imported by `import verl` in every process of a verl run (entry point group
`verl.plugins`, and `VERL_USE_EXTERNAL_MODULES` in the launch command).

It registers, into verl 0.9.1's own registries: the CPU platform, the `slca_hf` transformers
rollout, slca's estimators, the `slca` trainer, and the `slca_tool_agent` agent loop with its
`slca_hermes` tool parser (the wildcard simulator tool is named in the run's tool config). The
platform goes first: modules that import verl's trainer or engines resolve the platform when
imported.
"""

from __future__ import annotations

import importlib

from slca.backends.verl.compose import CPU_ROLLOUT
from slca.backends.verl.version import require_verl


def _hf_replica() -> type:
    from slca.backends.verl.rollout import HFReplica

    return HFReplica


def register_all() -> None:
    """Register every slca extension into verl (idempotent); refuses any verl but 0.9.1."""
    require_verl()
    from slca.backends.verl import platform

    platform.register()

    from verl.workers.rollout import base as rollout_base
    from verl.workers.rollout.replica import RolloutReplicaRegistry

    # By name, as verl's own entries are: a Ray worker unpickling a rollout class imports
    # slca.backends.verl.rollout, whose `import verl` runs this plugin while it is half-imported.
    rollout_base._ROLLOUT_REGISTRY[(CPU_ROLLOUT, "async")] = "slca.backends.verl.rollout.HFServerAdapter"
    RolloutReplicaRegistry.register(CPU_ROLLOUT, _hf_replica)

    from slca.backends.verl.estimators import register_into_verl

    register_into_verl()

    # Registered on import: the `slca` trainer, the tool agent loop and its tool parser.
    for module in ("slca.backends.verl.trainer", "slca.backends.verl.agent_loop"):
        importlib.import_module(module)


register_all()
