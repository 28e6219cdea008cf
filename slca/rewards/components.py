"""The HierR process components that compare predicted calls with gold calls (docs/method.md#process-components).

Pure functions over duck-typed calls (anything with `.name` and `.arguments`); each returns a
value in [0, 1].
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from slca.toolcall.types import canonical_json

_BOOL_WORDS = {"true": True, "false": False, "1": True, "0": False}
_SCALARS = frozenset((str, int, float, bool))


def name_f1(pred_names: Sequence[str], gold_counts: Mapping[str, int], n_gold: int) -> float:
    """Multiset F1 over names: 2·Σ min(c_pred, c_gold) / (|pred| + |gold|) (docs/method.md#process-components item 2).

    Both empty → 1.0; exactly one empty → 0.0.
    """
    n_pred = len(pred_names)
    if n_pred == 0 or n_gold == 0:
        return 1.0 if n_pred == n_gold else 0.0
    seen: dict[str, int] = {}
    common = 0
    for n in pred_names:
        k = seen.get(n, 0)
        if k < gold_counts.get(n, 0):
            common += 1
        seen[n] = k + 1
    return 2.0 * common / (n_pred + n_gold)


def _as_float(x: Any) -> float | None:
    if isinstance(x, (dict, list)):
        return None
    try:
        return float(x)
    except (TypeError, ValueError, OverflowError):
        return None


def loose_equal(a: Any, b: Any) -> bool:
    """Loose value equality of docs/method.md#process-components items 3/4, tried in order.

    None/None → True, one None → False; equal `str(x).strip().lower()` → True; both numbers (or
    numeric strings) within 1e-9 → True; both boolean words {true,false,1,0} → compare as
    booleans; both lists/dicts → equal sorted-key JSON; else False.
    """
    if a is None or b is None:
        return a is None and b is None
    if a == b and type(a) is type(b) and isinstance(a, (str, int, float)):
        # Fast path for the common identical-scalar case (same result as the string rule).
        if not isinstance(a, float) or a == a:
            return True
    try:
        sa = str(a).strip().lower()
        sb = str(b).strip().lower()
    except (RecursionError, ValueError):  # deep nesting, or ints past the str-conversion limit
        return False
    if sa == sb:
        return True
    fa = _as_float(a)
    if fa is not None:
        fb = _as_float(b)
        if fb is not None and abs(fa - fb) < 1e-9:
            return True
    ba = _BOOL_WORDS.get(sa)
    if ba is not None:
        bb = _BOOL_WORDS.get(sb)
        if bb is not None:
            return ba == bb
    if isinstance(a, (list, dict)) and isinstance(b, (list, dict)):
        return canonical_json(a) == canonical_json(b)
    return False


ArgSpec = tuple  # (name, arguments, items, scalar_only): a gold call prepared for matching


def arg_specs(gold_with_args: Sequence[Any]) -> tuple[ArgSpec, ...]:
    """Per gold call: (name, arguments, argument items, all values scalar), computed once per gold."""
    return tuple(
        (g.name, g.arguments, tuple(g.arguments.items()), all(type(v) in _SCALARS for v in g.arguments.values()))
        for g in gold_with_args
    )


_MISSING = object()


def key_value_scores(pred: Sequence[Any], gold_with_args: Sequence[Any], specs: Sequence[ArgSpec] | None = None) -> tuple[float, float]:
    """Greedy key (Jaccard) and value (loose match) scores (docs/method.md#process-components items 3/4).

    `gold_with_args` holds only the gold calls whose arguments are a non-empty dict. Each gold
    call, in order, takes the unused same-name prediction with the largest key_j + value_j
    (strictly above the running best, which starts at 0, so ties keep the earlier one); the
    prediction is consumed only when that best is > 0. Returns the means over the gold calls.
    `specs` = `arg_specs(gold_with_args)`, if the caller has it cached.
    """
    if not gold_with_args:
        return 1.0, 1.0
    if not pred:
        return 0.0, 0.0
    if specs is None:
        specs = arg_specs(gold_with_args)
    by_name: dict[str, list[int]] = {}
    for j, p in enumerate(pred):
        if p.arguments:  # K_p empty → key 0 and value 0: never beats the running best of 0
            by_name.setdefault(p.name, []).append(j)
    used = [False] * len(pred)
    key_sum = 0.0
    value_sum = 0.0
    for name, g_args, g_items, scalar_only in specs:
        cands = by_name.get(name)
        if not cands:
            continue
        n_gk = len(g_items)
        best = 0.0
        best_k = 0.0
        best_v = 0.0
        best_j = -1
        for j in cands:
            if used[j]:
                continue
            p_args = pred[j].arguments
            if scalar_only and p_args == g_args:
                # identical arguments with scalar values: key 1, value 1, the maximum
                best, best_k, best_v, best_j = 2.0, 1.0, 1.0, j
                break
            n_common = 0
            hits = 0
            for key, b in g_items:
                a = p_args.get(key, _MISSING)
                if a is _MISSING:
                    continue
                n_common += 1
                # identical scalars are loosely equal; skip the general rule for them
                if (a == b and type(a) is type(b) and type(a) in _SCALARS) or loose_equal(a, b):
                    hits += 1
            if not n_common:
                continue  # key 0, value 0
            k_j = n_common / (len(p_args) + n_gk - n_common)
            v_j = hits / n_gk
            if k_j + v_j > best:
                best = k_j + v_j
                best_k = k_j
                best_v = v_j
                best_j = j
                if best >= 2.0:
                    break  # the maximum: no later candidate can be strictly better
        if best_j >= 0:
            used[best_j] = True
        key_sum += best_k
        value_sum += best_v
    n = len(specs)
    return key_sum / n, value_sum / n


def _same_types(a: Any, b: Any) -> bool:
    """For a == b: True when every value has the same type as its counterpart, all the way down."""
    ta = type(a)
    if ta is not type(b):
        return False
    if ta is dict:
        for k, v in a.items():
            w = b[k]
            tv = type(v)
            if tv is not type(w) or ((tv is dict or tv is list) and not _same_types(v, w)):
                return False
    elif ta is list:
        for v, w in zip(a, b):
            tv = type(v)
            if tv is not type(w) or ((tv is dict or tv is list) and not _same_types(v, w)):
                return False
    return True


def strict_equal(a: Any, b: Any) -> bool:
    """Equal values of equal types all the way down (1, 1.0 and True differ; NaN equals nothing)."""
    try:
        return bool(a == b) and _same_types(a, b)
    except RecursionError:
        return False


def strict_keys(gold_flat: Sequence[Any], names_only: bool) -> tuple[tuple[str, dict[str, Any] | None, bool], ...]:
    """Per flat gold call: (name, arguments or None to compare names only, all argument values
    are str), computed once per gold for `strict_correct_ratio`. Bare-name gold compares names
    only (docs/method.md#reference-quirks Q1); otherwise a call without arguments must be matched
    by one without arguments."""
    out = []
    for g in gold_flat:
        args = None if names_only else (g.arguments or {})
        out.append((g.name, args, args is not None and all(type(v) is str for v in args.values())))
    return tuple(out)


def strict_correct_ratio(pred: Sequence[Any], gold_keys: Sequence[tuple[str, dict[str, Any] | None, bool]]) -> float:
    """ToolPO's tool signal (docs/method.md#baseline-estimators): strict-correct calls matched
    greedily one-to-one, divided by the number of gold calls.

    `gold_keys`: `strict_keys(gold.flat, gold.names_only)`. Each gold
    call, in order, takes the first unused prediction with the same name and `strict_equal`
    arguments. No gold calls: 1.0 when nothing is predicted, else 0.0 (as name F1).
    """
    n_gold = len(gold_keys)
    if n_gold == 0 or not pred:
        return 1.0 if n_gold == len(pred) else 0.0
    used = [False] * len(pred)
    hits = 0
    try:
        for name, args, all_str in gold_keys:
            for j, p in enumerate(pred):
                if used[j] or p.name != name:
                    continue
                if args is not None:
                    pa = p.arguments
                    # strict_equal, inlined (hot path); a str equals only a str, so all-str
                    # arguments need no type walk
                    if not (pa == args and (all_str or _same_types(pa, args))):
                        continue
                used[j] = True
                hits += 1
                break
    except RecursionError:  # arguments nested past the interpreter's limit: no strict match
        pass
    return hits / n_gold


def parallel_score(first_pred_step_count: int, first_gold_step_count: int) -> float:
    """1.0 if the first predicted step (the valid blocks of the first valid block's turn: one block
    holding a list, or one block per call) has as many calls as the first gold step
    (docs/method.md#process-components item 5); a missing block or missing gold counts as 0 calls, so 0 == 0 gives 1.0."""
    return 1.0 if first_pred_step_count == first_gold_step_count else 0.0
