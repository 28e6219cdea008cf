"""The names `eval.benchmark` may take and the categories `eval.categories` may name for each: a
leaf of the config layer, so validating a spec imports no benchmark (slca/evaluation/benchmarks.py
holds the registry; tests/evaluation/test_benchmark_names.py checks that the two agree)."""

from __future__ import annotations

from dataclasses import dataclass

from slca.registry import Registry

# BFCL's single-turn categories in its reporting order (Java and JavaScript "simple" are left out).
BFCL_CATEGORIES: tuple[str, ...] = (
    "simple", "multiple", "parallel", "parallel_multiple", "irrelevance", "live_simple", "live_multiple",
    "live_parallel", "live_parallel_multiple", "live_irrelevance", "live_relevance",
)
BFCL_MULTI_TURN_CATEGORIES: tuple[str, ...] = ("base", "miss_func", "miss_param", "long_context")
# ACEBench's English normal and special categories in its own reporting order, then its agent ones.
ACEBENCH_CATEGORIES: tuple[str, ...] = (
    "normal_single_turn_single_function", "normal_single_turn_parallel_function", "normal_multi_turn_user_adjust",
    "normal_multi_turn_user_switch", "normal_similar_api", "normal_preference", "normal_atom_bool", "normal_atom_enum",
    "normal_atom_number", "normal_atom_list", "normal_atom_object_deep", "normal_atom_object_short",
    "special_incomplete", "special_error_param", "special_irrelevant",
)
ACEBENCH_AGENT_CATEGORIES: tuple[str, ...] = ("agent_multi_turn", "agent_multi_step")


@dataclass(frozen=True)
class BenchmarkName:
    """A benchmark option: its name and the categories it can be limited to (None: it has none)."""

    name: str
    categories: tuple[str, ...] | None = None


BENCHMARK_NAMES: tuple[BenchmarkName, ...] = (
    BenchmarkName("toucan"),
    BenchmarkName("bfcl", BFCL_CATEGORIES),
    BenchmarkName("bfcl_multi_turn", BFCL_MULTI_TURN_CATEGORIES),
    BenchmarkName("tau2"),
    BenchmarkName("lm_eval"),
    BenchmarkName("acebench", ACEBENCH_CATEGORIES + ACEBENCH_AGENT_CATEGORIES),
)


# Every benchmark option: those slca ships, and any a plug-in registers from its own module
# (`BENCHMARK_OPTIONS.register("name")(BenchmarkName("name"))`) before a spec is validated.
BENCHMARK_OPTIONS: Registry[BenchmarkName] = Registry("benchmark option")
for _shipped in BENCHMARK_NAMES:
    BENCHMARK_OPTIONS.register(_shipped.name)(_shipped)


def benchmark_names() -> list[str]:
    """Every benchmark option, sorted."""
    return BENCHMARK_OPTIONS.names()


def benchmark_categories(name: str) -> tuple[str, ...] | None:
    """The categories benchmark `name` can be limited to, or None when it has none (KeyError when unknown)."""
    if name not in BENCHMARK_OPTIONS:
        raise KeyError(f"unknown benchmark {name!r}; known: {', '.join(benchmark_names())}")
    return BENCHMARK_OPTIONS.get(name).categories
