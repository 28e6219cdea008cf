"""How a composed verl config is launched: `python -m verl.trainer.main_ppo` on the saved config.

The environment variables set here are verl's own interface (which plugin module to load in every
Ray process, which platform to pick, where its file logger writes), not slca settings: every value
follows from the spec.
"""

from __future__ import annotations

import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from slca.config.spec import Spec

CONFIG_NAME = "verl_config"
PLUGIN_MODULE = "slca.backends.verl.plugin"


@dataclass(frozen=True)
class Launch:
    """One verl trainer invocation: argv, the environment it adds, and where verl's metrics land."""

    argv: list[str]
    env: dict[str, str]
    metrics_file: Path

    def shell(self) -> str:
        """The exact command line a user can paste."""
        env = " ".join(f"{k}={shlex.quote(v)}" for k, v in self.env.items())
        return f"{env} {shlex.join(self.argv)}"


def verl_launch(spec: Spec, stage_dir: Path, python: str = sys.executable) -> Launch:
    """The launch of the config saved as `stage_dir/verl_config.yaml`."""
    stage_dir = stage_dir.resolve()
    metrics = stage_dir / "verl_metrics.jsonl"
    env = {
        # Loaded by `import verl` in every process, so slca's plugins exist wherever verl looks them up.
        "VERL_USE_EXTERNAL_MODULES": PLUGIN_MODULE,
        "VERL_FILE_LOGGER_PATH": str(metrics),
        "RAY_USAGE_STATS_ENABLED": "0",
    }
    if spec.backend.device == "cpu":
        env.update(
            {
                "VERL_PLATFORM": "cpu",
                # verl registers its FSDP engine for cuda/npu only; the CPU platform reuses the cuda entry.
                "VERL_ENGINE_DEVICE": "cuda",
                # Every verl process is its own worker; more threads per process only contend.
                "OMP_NUM_THREADS": "1",
            }
        )
    argv = [python, "-m", "verl.trainer.main_ppo", "--config-path", str(stage_dir), "--config-name", CONFIG_NAME]
    return Launch(argv, env, metrics)
