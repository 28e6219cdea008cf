"""The shared name → object registry behind every plug point."""

from __future__ import annotations

import pytest

from slca.registry import Registry


def test_register_get_and_mapping_reads():
    reg: Registry[int] = Registry("widget")
    assert reg.register("b")(2) == 2
    reg.register("a")(1)
    assert reg.get("a") == 1 and reg["b"] == 2
    assert "a" in reg and "c" not in reg and len(reg) == 2
    assert list(reg) == reg.names() == ["a", "b"] and sorted(reg) == ["a", "b"]
    assert reg.items() == [("a", 1), ("b", 2)]


def test_duplicates_refused_and_unknown_names_listed():
    reg: Registry[str] = Registry("widget")
    reg.register("x")("first")
    with pytest.raises(ValueError, match="widget 'x' is already registered"):
        reg.register("x")("second")
    assert reg["x"] == "first"
    with pytest.raises(KeyError, match=r"unknown widget 'y'; known: \['x'\]"):
        reg.get("y")
    with pytest.raises(KeyError, match="unknown widget 'y'"):
        reg["y"]


def test_module_registries_share_the_class():
    from slca.algos.downsample import DOWNSAMPLERS
    from slca.algos.registry import ESTIMATORS, list_estimators
    from slca.pipeline import _STAGES
    from slca.rewards import REWARDS
    from slca.rewards.judges import JUDGES
    from slca.rollout.generators.base import GENERATORS
    from slca.sim import SIMULATORS
    from slca.toolcall.prompts import PROMPTS

    assert "slca_grpo" in list_estimators()  # estimators load on first lookup
    for reg in (DOWNSAMPLERS, ESTIMATORS, _STAGES, REWARDS, JUDGES, GENERATORS, SIMULATORS, PROMPTS):
        assert isinstance(reg, Registry) and len(reg) > 0
    assert {"data", "sft", "rl", "eval"} <= set(_STAGES)
