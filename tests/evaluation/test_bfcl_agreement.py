"""slca's BFCL checker agrees with BFCL's own AST checker on the shipped gold answers and on
perturbed answers (docs/bfcl.md#checking-the-checker).

BFCL's checker is its own code, run unchanged (loaded without its vendor SDKs by
tests/evaluation/bfcl_reference.py). BFCL's decoder is not used (it evaluates parts of model output);
both checkers get the calls slca's parser reads from the text, which for these rendered literals are
the calls BFCL's decoder would return. benchmarks/bfcl_checker_agreement.py measures the same on a
real model's outputs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from slca.evaluation.bfcl import CATEGORIES, Entry, check, decode, load_category
from slca.evaluation.bfcl.checker import SCHEMA_TYPES, schemas_by_name
from slca.evaluation.bfcl.gold import gold_calls, render_hermes, render_pythonic
from slca.toolcall.types import ToolCall
from tests.evaluation.bfcl_reference import load_bfcl_ast_checker

TARGET = 0.99


@pytest.fixture(scope="module")
def bfcl_ast_checker() -> Callable[..., dict[str, Any]]:
    """BFCL's own `ast_checker`, Python language, for a prompting model."""
    return load_bfcl_ast_checker()


# ----------------------------------------------------------------------------- perturbations


def _params(entry: Entry, name: str) -> dict[str, Any]:
    schema = schemas_by_name(entry.functions).get(name, {})
    return (schema.get("parameters") or {}).get("properties") or {}


def _required(entry: Entry, name: str) -> list[str]:
    schema = schemas_by_name(entry.functions).get(name, {})
    return list((schema.get("parameters") or {}).get("required") or [])


def _with_arg(calls: list[ToolCall], i: int, key: str, value: Any) -> list[ToolCall]:
    out = list(calls)
    out[i] = ToolCall(calls[i].name, {**calls[i].arguments, key: value})
    return out


def _without_arg(calls: list[ToolCall], i: int, key: str) -> list[ToolCall]:
    out = list(calls)
    out[i] = ToolCall(calls[i].name, {k: v for k, v in calls[i].arguments.items() if k != key})
    return out


def _typed_args(entry: Entry, calls: list[ToolCall], type_name: str) -> Iterator[tuple[int, str, Any]]:
    for i, c in enumerate(calls):
        props = _params(entry, c.name)
        for k, v in c.arguments.items():
            if isinstance(props.get(k), dict) and props[k].get("type") == type_name:
                yield i, k, v


def _wrong(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 7
    if isinstance(value, str):
        return value + " extra"
    if isinstance(value, list):
        return [*value, value[0]] if value else ["extra"]
    if isinstance(value, dict):
        return {**value, "unexpected_key": "x"}
    return "x"


def perturbations(entry: Entry) -> Iterator[tuple[str, list[ToolCall] | str]]:
    """(label, calls or raw text) variants of the gold answer, each a mistake or a harmless rewrite."""
    gold = gold_calls(entry.possible_answer)
    yield "gold", gold
    first = gold[0]
    if first.arguments:
        key = next(iter(first.arguments))
        yield "wrong_value", _with_arg(gold, 0, key, _wrong(first.arguments[key]))
        yield "number_as_string", _with_arg(gold, 0, key, str(first.arguments[key]))
    for key in _required(entry, first.name):
        if key in first.arguments:
            yield "missing_required", _without_arg(gold, 0, key)
            break
    yield "extra_arg", _with_arg(gold, 0, "unexpected_arg", "x")
    yield "wrong_function", [ToolCall(first.name + "_v2", first.arguments), *gold[1:]]
    yield "extra_call", [*gold, gold[0]]
    if len(gold) > 1:
        yield "swapped_order", list(reversed(gold))
        yield "missing_call", gold[:-1]
    for i, k, v in _typed_args(entry, gold, "float"):
        if isinstance(v, float) and v.is_integer():
            yield "int_for_float", _with_arg(gold, i, k, int(v))
            break
    for i, k, v in _typed_args(entry, gold, "integer"):
        if type(v) is int:
            yield "float_for_int", _with_arg(gold, i, k, float(v))
            yield "bool_for_int", _with_arg(gold, i, k, True)
            break
    for i, k, v in _typed_args(entry, gold, "string"):
        if isinstance(v, str) and v:
            yield "string_case_and_spacing", _with_arg(gold, i, k, " " + v.upper().replace(" ", "  ") + ".")
            break
    for i, k, v in _typed_args(entry, gold, "array"):
        if isinstance(v, list) and len(v) > 1:
            yield "list_reordered", _with_arg(gold, i, k, list(reversed(v)))
            break
    for i, k, v in _typed_args(entry, gold, "dict"):
        if isinstance(v, dict):
            yield "dict_extra_key", _with_arg(gold, i, k, {**v, "unexpected_key": "x"})
            break
    (gname, gparams), = entry.possible_answer[0].items()
    for k, allowed in gparams.items():
        alts = [a for a in allowed if not (type(a) is str and a == "")]
        if len(alts) > 1:
            yield "second_alternative", _with_arg(gold, 0, k, gold_calls([{gname: {k: alts[1:]}}])[0].arguments[k])
            break
    for k, allowed in gparams.items():
        if "" in allowed and k in first.arguments:
            yield "optional_dropped", _without_arg(gold, 0, k)
            break
    for k, allowed in gparams.items():
        if "" in allowed and k not in first.arguments:
            kind = (_params(entry, gname).get(k) or {}).get("type")
            if kind == "string":
                yield "optional_as_empty_string", _with_arg(gold, 0, k, "")
            elif kind == "array":
                yield "optional_as_empty_list", _with_arg(gold, 0, k, [])
    for i, k, v in _typed_args(entry, gold, "array"):
        items = (_params(entry, gold[i].name)[k].get("items") or {}).get("type")
        if items == "float" and isinstance(v, list) and v and all(isinstance(x, float) and x.is_integer() for x in v):
            yield "int_items_for_float_items", _with_arg(gold, i, k, [int(x) for x in v])
            break
    for i, k, v in _typed_args(entry, gold, "any"):
        yield "any_typed_as_number", _with_arg(gold, i, k, 1)
        break
    yield "empty_output", ""
    yield "prose", "I would call a function here, but I will not."


def _agreement(entries: list[Entry], bfcl: Callable[..., dict[str, Any]]) -> tuple[Counter, list[str]]:
    counts: Counter = Counter()
    disagreements = []
    for entry in entries:
        for label, variant in perturbations(entry):
            if isinstance(variant, str):
                # Text with no call (empty, prose): BFCL scores it invalid before its checker.
                texts, theirs = [variant], False
            else:
                texts = [render_pythonic(variant), render_hermes(variant)]
                theirs = bool(variant) and bfcl(entry, variant)["valid"]
            for fmt, text in zip(("pythonic", "hermes"), texts):
                ours, kind = check(entry.functions, text, entry.possible_answer, entry.category)
                counts[(label, ours == theirs)] += 1
                if ours != theirs:
                    disagreements.append(f"{entry.id} {label} {fmt}: slca={ours} ({kind}) bfcl={theirs} :: {text[:160]}")
    return counts, disagreements


def test_slca_checker_agrees_with_bfcls_on_gold_and_perturbed_answers_in_every_ast_category(
    bfcl_ast_checker: Callable[..., dict[str, Any]],
) -> None:
    entries = [e for name in CATEGORIES.names() if CATEGORIES.get(name).has_answers for e in load_category(name)]
    counts, disagreements = _agreement(entries, bfcl_ast_checker)
    total = sum(counts.values())
    agree = sum(n for (_, same), n in counts.items() if same)
    by_label = Counter()
    for (label, _), n in counts.items():
        by_label[label] += n
    print(f"\nBFCL checker agreement: {agree}/{total} = {agree / total:.4%} over {len(entries)} entries")
    for label in sorted(by_label):
        print(f"  {label:24s} {counts[(label, True)]:5d}/{by_label[label]:5d}")
    for line in disagreements:
        print("  disagree:", line)
    assert len(entries) == 2351  # every AST entry of the shipped files (see test_bfcl_data for the oracle)
    assert total > 20 * len(entries)  # every entry met many variants
    assert agree / total >= TARGET


def test_rendered_answers_read_back_as_exactly_the_calls_they_render() -> None:
    # What lets the agreement test hand BFCL's checker the calls themselves.
    for name in CATEGORIES.names():
        if CATEGORIES.get(name).has_answers:
            for entry in load_category(name, limit=40):
                for label, variant in perturbations(entry):
                    if not isinstance(variant, str):
                        for text in (render_pythonic(variant), render_hermes(variant)):
                            assert decode(text).calls == tuple(variant), (entry.id, label)


def test_the_gold_answers_score_valid_except_where_gold_and_schema_contradict_each_other(
    bfcl_ast_checker: Callable[..., dict[str, Any]],
) -> None:
    invalid = []
    for name in CATEGORIES.names():
        if not CATEGORIES.get(name).has_answers:
            continue
        for entry in load_category(name):
            calls = gold_calls(entry.possible_answer)
            ok, kind = check(entry.functions, render_pythonic(calls), entry.possible_answer, name)
            if not ok:
                invalid.append(entry.id)
                # Each is a data error BFCL's checker rejects as well (e.g. a required parameter the gold omits).
                assert not bfcl_ast_checker(entry, calls)["valid"], entry.id
    assert len(invalid) <= 10, invalid


def test_every_schema_type_bfcl_uses_is_a_type_slca_checks() -> None:
    seen = set()

    def walk(schema: Any) -> None:
        if isinstance(schema, dict):
            if isinstance(schema.get("type"), str):
                seen.add(schema["type"])
            for sub in (schema.get("properties") or {}).values():
                walk(sub)
            walk(schema.get("items"))

    for name in CATEGORIES.names():
        for entry in load_category(name):
            for f in entry.functions:
                walk(f["parameters"])
    assert seen - {"any"} <= set(SCHEMA_TYPES), seen
