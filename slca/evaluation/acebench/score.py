"""Score one model output on one ACEBench entry, and a batch of them per category (docs/eval.md#table-3-acebench).

Special entries are scored as ACEBench scores them, by phrases in the output text (thinking blocks
dropped first): an incomplete request must be answered with "Missing necessary parameters" naming
the function and every missing parameter, a wrong value with "There is incorrect value" and every
wrong value, an out-of-scope request with "the limitations of the function". The gold lists are
matched as ACEBench writes them, stray spaces included.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from slca.config.benchmarks import ACEBENCH_AGENT_CATEGORIES
from slca.evaluation.acebench.checker import normal_check
from slca.evaluation.acebench.data import MULTI_TURN, NORMAL, SPECIAL, Entry
from slca.evaluation.acebench.decode import decode
from slca.evaluation.harness import nan_mean
from slca.toolcall import strip_thinking

PARSE_PREFIX = "parse:"
MISSING = "Missing necessary parameters"
INCORRECT = "There is incorrect value"
LIMITATIONS = "the limitations of the function"
# ACEBench's Summary weights (its evaluation_helper); each group is the unweighted mean of its categories'
# accuracies (the agent ones' end to end, not process).
GROUP_WEIGHTS = {"normal": 0.578, "special": 0.2676, "agent": 0.1545}


def special_check(category: str, text: str, truth: Any) -> str | None:
    """Why `text` does not answer a special entry (None when it does)."""
    if category == "special_irrelevant":
        return None if LIMITATIONS in text else "error_detection"
    phrase = MISSING if category == "special_incomplete" else INCORRECT
    for name, values in truth.items():
        if phrase not in text:
            return "error_detection"
        if category == "special_incomplete" and name not in text:
            return "error_correction"
        if any(value not in text for value in values):
            return "error_correction"
    return None


def check(entry: Entry, text: object) -> tuple[bool, str | None]:
    """Whether `text` answers `entry`, and if not, why (`parse:<kind>` when a normal output could not
    be read). Never raises on model output; ACEBench's own checker raises on a few gold shapes, where
    this returns `checker:<exception>`."""
    if entry.category in SPECIAL:
        err = special_check(entry.category, strip_thinking(text) if isinstance(text, str) else "", entry.truth)
        return err is None, err
    decoded = decode(text)
    if not decoded.ok:
        return False, PARSE_PREFIX + str(decoded.error)
    try:
        err = normal_check(entry.functions, decoded.calls, entry.truth, entry.category)
    except (KeyError, TypeError) as exc:
        err = f"checker:{type(exc).__name__}"
    return err is None, err


def category_accuracy(entries: Sequence[Entry], verdicts: dict[int, list[bool]]) -> dict[str, float]:
    """Per-category accuracy from each entry index's verdicts (one per sample): the fraction of
    correct samples, except in the multi-turn categories, where, as ACEBench reports them, a
    conversation counts only when every one of its turns is correct (sample k of each turn taken
    together). A category with no verdict reads NaN."""
    out: dict[str, float] = {}
    for name in (*NORMAL, *SPECIAL):
        indices = [i for i, e in enumerate(entries) if e.category == name and i in verdicts]
        if name not in MULTI_TURN:
            out[name] = nan_mean([float(v) for i in indices for v in verdicts[i]])
            continue
        conversations: dict[str, list[list[bool]]] = defaultdict(list)
        for i in indices:
            conversations[entries[i].conversation].append(verdicts[i])
        out[name] = nan_mean([float(all(turn[k] for turn in turns))
                              for turns in conversations.values() for k in range(min(len(t) for t in turns))])
    return out


def summary(accuracy: dict[str, float]) -> dict[str, float]:
    """ACEBench's group means (unweighted over the group's categories that were evaluated; an agent
    category's accuracy is its end-to-end one) and its Summary weights over the groups evaluated,
    renormalised (NaN when none was)."""
    groups = {"normal": nan_mean([accuracy[c] for c in NORMAL]), "special": nan_mean([accuracy[c] for c in SPECIAL]),
              "agent": nan_mean([accuracy.get(c, float("nan")) for c in ACEBENCH_AGENT_CATEGORIES])}
    present = {g: v for g, v in groups.items() if v == v}
    total = sum(GROUP_WEIGHTS[g] for g in present)
    overall = sum(GROUP_WEIGHTS[g] * v for g, v in present.items()) / total if present else float("nan")
    return {"summary": overall, **groups}
