"""τ²-bench (retail, telecom) as the `tau2` benchmark of `slca eval` (docs/tau2.md).

slca.evaluation.tau2.run registers the benchmark; .server serves the policy as an OpenAI-compatible
endpoint; .job builds the driver's jobs and computes pass^k; .driver runs inside τ²'s own Python
3.12 environment and is never imported here.
"""

from __future__ import annotations

from slca.evaluation.tau2.run import Tau2Benchmark, Tau2Error  # registers "tau2" in slca.evaluation.benchmarks.BENCHMARKS

__all__ = ["Tau2Benchmark", "Tau2Error"]
