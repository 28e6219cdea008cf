"""The safe executor: fresh BFCL environment instances per rollout, called through a table of bound
public methods (docs/bfcl.md#the-safe-executor).

BFCL's own executor rewrites each call string and hands it to `eval`, and caches instances in
module globals keyed by model name; slca does neither. An `Environment` builds each involved class
afresh (`cls()`, then `_load_scenario(deepcopy(initial_config[cls]), long_context=...)` for the
stateful ones, as BFCL does), maps every public method name to its bound method (a later class
wins a clash, as in BFCL), and runs parsed calls (slca.evaluation.bfcl.multi_turn.calls) by table
lookup only. Every failure (unknown name, bad arguments, an exception inside the method, a result
too large to write) comes back as an observation string; nothing raises.

A few methods can be driven into a computation that never ends by literal arguments alone
(`power(2, 10**4000)`, a precision of 10**9 digits); GUARDS refuses those before the call.
"""

from __future__ import annotations

import copy
import decimal
import importlib
import inspect
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from slca.evaluation.bfcl.multi_turn.calls import Call
from slca.evaluation.bfcl.multi_turn.data import CLASSES
from slca.registry import Registry

ERROR_PREFIX = "Error during execution: "  # BFCL's wording, so error observations read the same
MAX_RESULT_BITS = 1 << 20  # an integer power above this many bits is refused (it could not be written anyway)
MAX_PRECISION = 10_000  # digits an arbitrary-precision method may be asked for

# name "Class.method" -> guard(bound arguments) returning a refusal reason or None.
GUARDS: Registry[Callable[[Mapping[str, Any]], str | None]] = Registry("BFCL call guard")


def _plain_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@GUARDS.register("MathAPI.power")
def _power(args: Mapping[str, Any]) -> str | None:
    base, exponent = args.get("base"), args.get("exponent")
    # Only int ** positive int builds an unbounded integer; float and complex powers overflow at once.
    # The result has at least exponent x (bit_length(base) - 1) bits; integer arithmetic only (no float overflow).
    if _plain_int(base) and _plain_int(exponent) and exponent > 0 and abs(base) > 1:
        if exponent * (abs(base).bit_length() - 1) > MAX_RESULT_BITS:
            return f"the result would exceed {MAX_RESULT_BITS} bits"
    return None


def _precision(args: Mapping[str, Any]) -> str | None:
    precision = args.get("precision")
    if isinstance(precision, (int, float)) and not isinstance(precision, bool) and abs(precision) > MAX_PRECISION:
        return f"precision above {MAX_PRECISION} digits is refused"
    return None


GUARDS.register("MathAPI.logarithm")(_precision)
GUARDS.register("MathAPI.square_root")(_precision)


def environment_class(name: str) -> type:
    """One of the eight multi-turn classes, imported from bfcl-eval's package by its module path."""
    module = importlib.import_module(f"bfcl_eval.eval_checker.multi_turn_eval.func_source_code.{CLASSES[name][0]}")
    return getattr(module, name)


def _public_methods(instance: Any) -> tuple[str, ...]:
    """Names of the public bound methods of an instance (BFCL's rule)."""
    return tuple(n for n, _ in inspect.getmembers(instance, predicate=inspect.ismethod) if not n.startswith("_"))


def format_result(result: Any) -> str:
    """BFCL's observation text: a string as is, a dict as JSON when it can be, anything else str()."""
    if type(result) is str:
        return result
    if type(result) is dict:
        try:
            return json.dumps(result)
        except (TypeError, ValueError, RecursionError):
            return str(result)
    return str(result)


class _Precision:
    """Restores decimal's and mpmath's global precision after a call (two MathAPI methods set them)."""

    def __enter__(self) -> None:
        self._decimal = decimal.localcontext()
        self._decimal.__enter__()
        mp = sys.modules.get("mpmath")
        self._mp_prec = mp.mp.prec if mp is not None else None

    def __exit__(self, *exc: Any) -> None:
        mp = sys.modules.get("mpmath")
        if mp is not None and self._mp_prec is not None:
            mp.mp.prec = self._mp_prec
        self._decimal.__exit__(*exc)


class Environment:
    """Fresh instances of one entry's classes and the dispatch table over their public methods."""

    def __init__(self, classes: Sequence[str], initial_config: Mapping[str, Any], *, long_context: bool) -> None:
        from bfcl_eval.constants.executable_backend_config import STATELESS_CLASSES

        self.instances: dict[str, Any] = {}
        self.table: dict[str, tuple[str, Callable[..., Any]]] = {}
        for name in classes:
            instance = environment_class(name)()
            if name not in STATELESS_CLASSES:
                instance._load_scenario(copy.deepcopy(dict(initial_config.get(name, {}))), long_context=long_context)
            self.instances[name] = instance
            for method_name in _public_methods(instance):
                self.table[method_name] = (name, getattr(instance, method_name))

    @classmethod
    def for_entry(cls, entry: Any) -> Environment:
        """A fresh environment for a MultiTurnEntry."""
        return cls(entry.involved_classes, entry.initial_config, long_context=entry.long_context)

    def run(self, call: Call) -> str:
        """Execute one call; its observation, or an error observation. Never raises."""
        found = self.table.get(call.name)
        if found is None:
            return f"{ERROR_PREFIX}name '{call.name}' is not defined"
        owner, method = found
        guard = GUARDS.get(f"{owner}.{call.name}") if f"{owner}.{call.name}" in GUARDS else None
        try:
            if guard is not None:
                bound = _bind(method, call)
                reason = guard(bound) if bound is not None else None
                if reason is not None:
                    return f"{ERROR_PREFIX}{call.name}: {reason}"
            with _Precision():
                return format_result(method(*call.args, **dict(call.kwargs)))
        except Exception as exc:  # the method's own failure is the observation the model sees
            try:
                return f"{ERROR_PREFIX}{exc}"
            except Exception:  # an exception whose str() fails (e.g. an int past the digit limit)
                return f"{ERROR_PREFIX}{type(exc).__name__}"

    def execute(self, calls: Sequence[Call]) -> list[str]:
        """One observation per call, in order."""
        return [self.run(c) for c in calls]


def _bind(method: Callable[..., Any], call: Call) -> dict[str, Any] | None:
    try:
        return dict(inspect.signature(method).bind(*call.args, **dict(call.kwargs)).arguments)
    except TypeError:
        return None  # the call itself will fail with Python's own message
