"""The run's spec as slca's verl plugins read it.

verl starts slca's trainer, sampler, reward function and agent loop in worker processes of its own
and hands each the path of the run's saved `spec.yaml`; every plugin reads it through `run_spec`, so a
process reads and validates the file once, and every plugin sees the values (derived ones included)
that were validated when the spec was composed.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from slca.config.spec import Spec


@lru_cache(maxsize=4)
def run_spec(spec_path: str) -> Spec:
    """The validated spec saved at `spec_path` (read once per process)."""
    from slca.config.io import load_spec

    return load_spec(spec_path)
