"""BFCL single-turn entries from the files the `bfcl-eval` package ships (docs/bfcl.md#categories).

Each category is one JSON-lines file of questions and function lists under `bfcl_eval/data/`
and, except the (ir)relevance ones, one file of possible answers under `data/possible_answer/`.
The package is located without importing it (importing parts of it creates folders in the
working directory). BFCL writes schemas in its own dialect (`"type": "dict"`, `"float"`,
`"tuple"`, `"any"`); the prompt gets them as JSON Schema tools, the checker keeps BFCL's own.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from slca.evaluation.entry_lines import read_entry_lines
from slca.registry import Registry

PACKAGE = "bfcl-eval"
PINNED = "2026.3.23"
FILE_PREFIX = "BFCL_v4_"


class BfclDataError(ValueError):
    """The BFCL data cannot be read; str(exc) is one line naming the file, row and field."""


@dataclass(frozen=True)
class Category:
    """A single-turn category: its file stem and the rule of slca.evaluation.bfcl.checker.CHECKS it uses."""

    name: str
    file_stem: str
    rule: str
    has_answers: bool


CATEGORIES: Registry[Category] = Registry("BFCL category")


# (name, file stem, checker rule, has a possible-answer file), in BFCL's reporting order. Java and
# JavaScript "simple" files need their own type rules and are left out.
_TABLE = (
    ("simple", "simple_python", "single", True),
    ("multiple", "multiple", "single", True),
    ("parallel", "parallel", "parallel", True),
    ("parallel_multiple", "parallel_multiple", "parallel", True),
    ("irrelevance", "irrelevance", "irrelevance", False),
    ("live_simple", "live_simple", "single", True),
    ("live_multiple", "live_multiple", "single", True),
    ("live_parallel", "live_parallel", "parallel", True),
    ("live_parallel_multiple", "live_parallel_multiple", "parallel", True),
    ("live_irrelevance", "live_irrelevance", "irrelevance", False),
    ("live_relevance", "live_relevance", "relevance", False),
)
ORDER: tuple[str, ...] = tuple(row[0] for row in _TABLE)
for _name, _stem, _rule, _answers in _TABLE:
    CATEGORIES.register(_name)(Category(_name, _stem, _rule, _answers))


@dataclass(frozen=True)
class Entry:
    """One BFCL question: its chat messages, BFCL's function list, and the possible answers (None
    for the (ir)relevance categories)."""

    id: str
    category: str
    messages: tuple[dict[str, str], ...]
    functions: tuple[dict[str, Any], ...]
    possible_answer: tuple[dict[str, Any], ...] | None

    @property
    def tools(self) -> list[dict[str, Any]]:
        """The functions as OpenAI-style JSON Schema tools, as slca's prompts and templates take them."""
        return [to_tool(f) for f in self.functions]

    def row(self) -> dict[str, Any]:
        """A verl-native RL row for slca's rollout loop (`prompt`, `tools`, `extra_info`)."""
        return {
            "data_source": f"bfcl/{self.category}",
            "prompt": [dict(m) for m in self.messages],
            "tools": self.tools,
            "extra_info": {"bfcl_id": self.id, "category": self.category},
        }


def data_dir() -> Path:
    """`bfcl_eval/data` of the installed package, or one line saying how to install it."""
    spec = importlib.util.find_spec("bfcl_eval")
    if spec is None or not spec.submodule_search_locations:
        raise BfclDataError(f"{PACKAGE} is not installed: pip install --no-deps {PACKAGE}=={PINNED}")
    return Path(next(iter(spec.submodule_search_locations))) / "data"


# BFCL's schema type names → JSON Schema; "any" becomes no type at all.
_JSON_TYPES = {"dict": "object", "float": "number", "tuple": "array", "any": None}


def to_json_schema(schema: Any) -> Any:
    """A BFCL parameter schema in JSON Schema terms, recursively (a new object; the input is unchanged)."""
    if isinstance(schema, list):
        return [to_json_schema(s) for s in schema]
    if not isinstance(schema, Mapping):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "type" and isinstance(value, str) and value in _JSON_TYPES:
            if _JSON_TYPES[value] is not None:
                out[key] = _JSON_TYPES[value]
        elif key == "properties" and isinstance(value, Mapping):
            out[key] = {k: to_json_schema(v) for k, v in value.items()}
        elif key in ("items", "additionalProperties"):
            out[key] = to_json_schema(value)
        else:
            out[key] = value
    return out


def to_tool(function: Mapping[str, Any]) -> dict[str, Any]:
    """One BFCL function as an OpenAI-style tool {"type": "function", "function": {...}}."""
    fn = {k: v for k, v in function.items() if k != "parameters"}
    fn["parameters"] = to_json_schema(function.get("parameters", {}))
    return {"type": "function", "function": fn}


def _read_lines(path: Path) -> list[tuple[int, dict[str, Any]]]:
    return read_entry_lines(path, BfclDataError)


def _messages(where: str, question: Any) -> tuple[dict[str, str], ...]:
    # Single-turn entries hold one turn: a list of {role, content} messages.
    if not isinstance(question, list) or len(question) != 1 or not isinstance(question[0], list) or not question[0]:
        raise BfclDataError(f"{where}: question: expected one turn (a list holding one non-empty list of messages)")
    msgs = []
    for i, m in enumerate(question[0]):
        if not isinstance(m, Mapping) or not isinstance(m.get("role"), str) or not isinstance(m.get("content"), str):
            raise BfclDataError(f"{where}: question[0][{i}]: expected {{role: str, content: str}}")
        msgs.append({"role": m["role"], "content": m["content"]})
    return tuple(msgs)


def _functions(where: str, functions: Any) -> tuple[dict[str, Any], ...]:
    # Some irrelevance entries offer no function at all.
    if not isinstance(functions, list):
        raise BfclDataError(f"{where}: function: expected a list of function schemas")
    for i, f in enumerate(functions):
        params = f.get("parameters") if isinstance(f, Mapping) else None
        if not isinstance(f, Mapping) or not isinstance(f.get("name"), str) or not isinstance(params, Mapping) \
                or not isinstance(params.get("properties", {}), Mapping):
            raise BfclDataError(f"{where}: function[{i}]: expected {{name: str, parameters: {{properties: {{...}}}}}}")
    return tuple(dict(f) for f in functions)


def _answers(where: str, truth: Any) -> tuple[dict[str, Any], ...]:
    if not isinstance(truth, list) or not truth:
        raise BfclDataError(f"{where}: ground_truth: expected a non-empty list")
    for i, g in enumerate(truth):
        if not isinstance(g, Mapping) or len(g) != 1 or not isinstance(next(iter(g.values())), Mapping):
            raise BfclDataError(f"{where}: ground_truth[{i}]: expected {{function name: {{param: [answers]}}}}")
    return tuple(dict(g) for g in truth)


def load_category(name: str, *, root: Path | None = None, limit: int | None = None) -> list[Entry]:
    """The entries of one category (the first `limit` when given), checked and paired with their answers.

    root: a folder laid out like `bfcl_eval/data` (default: the installed package's).
    """
    try:
        cat = CATEGORIES.get(name)
    except KeyError as exc:
        raise BfclDataError(exc.args[0]) from None
    root = data_dir() if root is None else Path(root)
    qpath = root / f"{FILE_PREFIX}{cat.file_stem}.json"
    rows = _read_lines(qpath)
    if limit is not None:
        rows = rows[:limit]
    answers: dict[str, tuple[int, dict[str, Any]]] = {}
    apath = root / "possible_answer" / f"{FILE_PREFIX}{cat.file_stem}.json"
    if cat.has_answers:
        answers = {obj["id"]: (n, obj) for n, obj in _read_lines(apath)}
    entries = []
    for n, obj in rows:
        where = f"{qpath}:{n}"
        truth = None
        if cat.has_answers:
            if obj["id"] not in answers:
                raise BfclDataError(f"{where}: id: {obj['id']!r} has no possible answer in {apath}")
            an, ans = answers[obj["id"]]
            truth = _answers(f"{apath}:{an}", ans.get("ground_truth"))
        entries.append(Entry(obj["id"], name, _messages(where, obj.get("question")),
                             _functions(where, obj.get("function")), truth))
    return entries
