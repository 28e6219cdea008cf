"""lm-evaluation-harness as the `lm_eval` benchmark of `slca eval` (docs/eval.md#table-5-general-capabilities).

slca.evaluation.lmeval.run registers the benchmark; .driver runs the harness in a subprocess (never
imported here), so its offline settings, registries and logging stay out of slca's process; tasks/
holds the task slca ships (a 10-question multiple-choice task over a local file, scored by the
harness itself), indexed beside the harness's own.
"""

from __future__ import annotations

from slca.evaluation.lmeval.run import LmEvalBenchmark  # registers "lm_eval" in slca.evaluation.benchmarks.BENCHMARKS

__all__ = ["LmEvalBenchmark"]
