"""Score one multi-turn conversation with BFCL's own state and response checkers (docs/bfcl.md#multi-turn-scoring).

This is BFCL's multi-turn checking procedure with slca's executor in place of BFCL's: the calls the
model made are replayed turn by turn on fresh instances, next to a fresh replay of the ground truth;
after every turn whose ground truth is not empty, BFCL's pure `state_checker` (every public attribute
of every instance equal) and `response_checker` (each gold result among the model's results so far)
decide. A conversation with fewer turns than the ground truth was force-terminated and fails.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from slca.evaluation.bfcl.multi_turn.calls import Call
from slca.evaluation.bfcl.multi_turn.data import MultiTurnEntry
from slca.evaluation.bfcl.multi_turn.environment import Environment

FORCE_TERMINATED = "multi_turn:force_terminated"
EMPTY_TURN = "multi_turn:empty_turn_model_response"
CHECKER_ERROR = "multi_turn:checker_error"

# One conversation's decoded calls: per turn, per step that made calls, the calls.
ModelTurns = Sequence[Sequence[Sequence[Call]]]


@dataclass(frozen=True)
class Verdict:
    """Whether the conversation is correct; else BFCL's error type and the turn it failed on."""

    valid: bool
    error_type: str | None = None
    turn: int | None = None


def check(entry: MultiTurnEntry, model_turns: ModelTurns) -> Verdict:
    """BFCL's verdict on `model_turns` (steps without calls are ignored, as BFCL drops them). Never raises."""
    try:
        return _check(entry, model_turns)
    except Exception as exc:  # e.g. a model-made attribute whose comparison raises: a failed entry, not a crash
        return Verdict(False, f"{CHECKER_ERROR}:{type(exc).__name__}")


def _check(entry: MultiTurnEntry, model_turns: ModelTurns) -> Verdict:
    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import response_checker, state_checker

    if len(model_turns) != len(entry.ground_truth):
        return Verdict(False, FORCE_TERMINATED, len(model_turns))
    model_env, gold_env = Environment.for_entry(entry), Environment.for_entry(entry)
    model_results: list[str] = []  # every turn so far: a call made earlier may serve a later turn
    for turn, gold in enumerate(entry.ground_truth):
        steps = [step for step in model_turns[turn] if step]
        for step in steps:
            model_results.extend(model_env.execute(step))
        gold_results = gold_env.execute(gold)
        if not gold:
            continue  # a turn that cannot be done: nothing to check, but its calls still changed the state
        if not steps:
            return Verdict(False, EMPTY_TURN, turn)
        for result in (state_checker(model_env.instances, gold_env.instances),
                       response_checker(model_results, gold_results, turn)):
            if not result["valid"]:
                return Verdict(False, str(result["error_type"]), turn)
    return Verdict(True)
