"""ACEBench's agent scenarios run without eval or exec (docs/eval.md#acebenchs-agent-categories).

The scenario classes (BaseApi, MessageApi, ReminderApi, FoodPlatform, Travel) are ACEBench's own
code, vendored unchanged under third_party/acebench/model_inference/multi_turn/scenariosen/ and
imported from there (standard library only). A call already read by slca's decoder is dispatched by
name, with its keyword arguments, to the public methods of the classes the entry involves, as
ACEBench's executor dispatches it: a method that several involved classes have (the BaseApi methods
every phone class inherits) runs on each of them in the entry's order, and the answer is the last
one's; the first call that raises ends the message, the calls before it keeping their effects.
ACEBench builds a call string and evaluates it; slca calls the bound method.
"""

from __future__ import annotations

import copy
import importlib.util
import inspect
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from slca.evaluation.acebench.data import ROOT

SCENARIO_DIR = ROOT / "model_inference" / "multi_turn" / "scenariosen"
PACKAGE = "model_inference.multi_turn.scenariosen"
# class name -> module under SCENARIO_DIR (ACEBench's English mapping)
MODULES = {"BaseApi": "phone_platform.base_api", "MessageApi": "phone_platform.message",
           "ReminderApi": "phone_platform.reminder", "FoodPlatform": "phone_platform.food_services",
           "Travel": "travel"}
# The attributes ACEBench's inference records as a class's end state (its SAVED_CLASS).
SAVED = {"BaseApi": ("wifi", "logged_in"), "MessageApi": ("inbox",), "ReminderApi": ("reminder_list",),
         "FoodPlatform": ("users", "logged_in_users", "orders"), "Travel": ("users", "reservations")}
MAX_OBSERVATION_CHARS = 20_000


class ScenarioError(ValueError):
    """An entry names a scenario class ACEBench does not have."""


def _module(relative: str) -> ModuleType:
    # The modules import BaseApi by its absolute name inside ACEBench's tree, so each is loaded under that
    # name and registered where the import system looks for it (base_api first), as an import from
    # ACEBench's root would; nothing else of ACEBench's tree is put on the import path.
    name = f"{PACKAGE}.{relative}"
    if name in sys.modules:
        return sys.modules[name]
    if relative != MODULES["BaseApi"]:
        _module(MODULES["BaseApi"])
    spec = importlib.util.spec_from_file_location(name, SCENARIO_DIR / (relative.replace(".", "/") + ".py"))
    assert spec is not None and spec.loader is not None, name
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def scenario_class(name: str) -> type:
    """ACEBench's scenario class called `name`."""
    if name not in MODULES:
        raise ScenarioError(f"unknown ACEBench scenario class {name!r}; known: {', '.join(MODULES)}")
    return getattr(_module(MODULES[name]), name)


@dataclass(frozen=True)
class Outcome:
    """What one message's calls did: each answer (ACEBench's text form: JSON for a dict), or the error that ended them."""

    answers: tuple[str, ...]
    error: str | None = None

    def observation(self) -> str:
        """The text the agent is shown, capped at MAX_OBSERVATION_CHARS."""
        text = (json.dumps([_parsed(a) for a in self.answers], ensure_ascii=False) if self.error is None
                else f"Error during execution: {self.error}")
        return text if len(text) <= MAX_OBSERVATION_CHARS else text[:MAX_OBSERVATION_CHARS] + "...[truncated]"


def _parsed(answer: str) -> Any:
    # ACEBench shows the agent each answer parsed back from JSON where it is JSON.
    try:
        return json.loads(answer)
    except ValueError:
        return answer


def _answer(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        try:
            return json.dumps(value)
        except (TypeError, ValueError):
            return str(value)
    return str(value)


class Scenario:
    """The involved classes of one agent entry, built from its initial configuration; its state changes with each call."""

    def __init__(self, involved: Sequence[str], initial_config: Mapping[str, Any]) -> None:
        self.instances: dict[str, Any] = {}
        for name in involved:
            instance = scenario_class(name)()
            # As ACEBench loads it: the class's own configuration, then BaseApi's on top (every class).
            instance._load_scenario(copy.deepcopy(dict(initial_config.get(name, {}))), long_context=False)
            instance._load_scenario(copy.deepcopy(dict(initial_config.get("BaseApi", {}))), long_context=False)
            self.instances[name] = instance

    def methods(self, name: str) -> list[Any]:
        """The bound public methods called `name`, one per involved class that has it, in the entry's order."""
        if name.startswith("_"):
            return []
        found = []
        for instance in self.instances.values():
            method = getattr(type(instance), name, None)
            if inspect.isfunction(method):
                found.append(getattr(instance, name))
        return found

    def run(self, calls: Sequence[tuple[str, Mapping[Any, Any]]]) -> Outcome:
        """Run decoded calls in order; the first that fails ends the message."""
        answers = []
        for name, args in calls:
            methods = self.methods(name)
            if not methods:
                return Outcome(tuple(answers), f"name '{name}' is not a function of this scenario")
            if not all(isinstance(k, str) and k.isidentifier() for k in args):
                return Outcome(tuple(answers), f"{name}: argument names must be identifiers")
            try:
                for method in methods:
                    result = method(**args)
            except Exception as exc:  # the scenario's own failure on these arguments, shown to the agent
                return Outcome(tuple(answers), f"{type(exc).__name__}: {exc}"[:2000])
            answers.append(_answer(result))
        return Outcome(tuple(answers))

    def state(self) -> tuple[tuple[str, Any], ...]:
        """Each involved class's recorded attributes, as ACEBench's result file holds them (through JSON: integer
        keys become strings, tuples lists)."""
        records = [(name, {k: v for k, v in vars(instance).items() if k in SAVED[name]})
                   for name, instance in self.instances.items()]
        return tuple((name, json.loads(json.dumps(attrs, ensure_ascii=False, default=str))) for name, attrs in records)
