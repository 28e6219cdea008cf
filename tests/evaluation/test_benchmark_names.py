"""The benchmark names and categories the config layer validates against (slca/config/benchmarks.py)
are those of the evaluation registry, so validating a spec need not import a benchmark."""

from __future__ import annotations

import subprocess
import sys

import pytest

from slca.config.benchmarks import ACEBENCH_AGENT_CATEGORIES, ACEBENCH_CATEGORIES, BENCHMARK_NAMES, benchmark_names
from slca.config.compose import compose_spec
from slca.config.errors import SpecError
from slca.evaluation.benchmarks import BENCHMARKS, get_benchmark


def test_every_benchmark_name_the_config_accepts_is_registered_and_every_registered_one_is_accepted() -> None:
    for name in benchmark_names():
        assert get_benchmark(name) is BENCHMARKS.get(name)
    assert BENCHMARKS.names() == benchmark_names()


def test_the_categories_the_config_accepts_are_those_the_bfcl_benchmarks_evaluate_in_their_order() -> None:
    from slca.evaluation.bfcl.data import CATEGORIES, ORDER
    from slca.evaluation.bfcl.multi_turn.data import CATEGORIES as MULTI_TURN

    categories = {b.name: b.categories for b in BENCHMARK_NAMES}
    assert categories == {"toucan": None, "bfcl": ORDER, "bfcl_multi_turn": MULTI_TURN, "tau2": None, "lm_eval": None,
                          "acebench": ACEBENCH_CATEGORIES + ACEBENCH_AGENT_CATEGORIES}
    assert sorted(CATEGORIES) == sorted(ORDER)


def test_an_unknown_benchmark_is_refused_naming_every_registered_one() -> None:
    with pytest.raises(SpecError, match=r"^config error at eval\.benchmark: unknown benchmark 'nope'; registered: acebench, bfcl, bfcl_multi_turn, lm_eval, tau2, toucan$"):
        compose_spec(["eval.benchmark=nope"])


def test_validating_a_bfcl_spec_with_categories_imports_no_benchmark_module() -> None:
    code = ("import sys; from slca.config.compose import compose_spec; "
            "compose_spec(['eval.benchmark=bfcl_multi_turn', 'eval.categories=[base]']); "
            "print(sorted(m for m in sys.modules if m.startswith('slca.evaluation')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120).stdout
    assert out.strip() == "[]"
