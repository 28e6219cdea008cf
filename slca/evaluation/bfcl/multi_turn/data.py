"""BFCL multi-turn entries from the files `bfcl-eval` ships (docs/bfcl.md#multi-turn).

A category is one JSON-lines file of conversations (`question`: one list of user messages per turn,
`initial_config`, `involved_classes`, and in `miss_func` the functions held out until a later, empty
turn) plus one file of ground truth under `possible_answer/` (one list of call strings per turn).
The tools an entry offers are the documented functions of its classes, read from
`multi_turn_func_doc/` and converted to JSON Schema tools. A malformed row is skipped, counted and
reported with its file, line and field; a missing or unreadable file stops the load in one line.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from slca.config.benchmarks import BFCL_MULTI_TURN_CATEGORIES
from slca.evaluation.bfcl.data import FILE_PREFIX, BfclDataError, data_dir, to_tool
from slca.evaluation.bfcl.multi_turn.calls import Call, parse_source

# BFCL's category names (file `BFCL_v4_multi_turn_<name>.json`), in its reporting order.
CATEGORIES: tuple[str, ...] = BFCL_MULTI_TURN_CATEGORIES
FILE_STEM = "multi_turn_"

# The eight in-memory environment classes of the multi-turn categories, with their module and doc file.
# Any other class BFCL knows (web search, memory) reaches the network or disk and is refused.
CLASSES: dict[str, tuple[str, str]] = {
    "GorillaFileSystem": ("gorilla_file_system", "gorilla_file_system.json"),
    "MathAPI": ("math_api", "math_api.json"),
    "MessageAPI": ("message_api", "message_api.json"),
    "TwitterAPI": ("posting_api", "posting_api.json"),
    "TicketAPI": ("ticket_api", "ticket_api.json"),
    "TradingBot": ("trading_bot", "trading_bot.json"),
    "TravelAPI": ("travel_booking", "travel_booking.json"),
    "VehicleControlAPI": ("vehicle_control", "vehicle_control.json"),
}
FUNC_DOC_DIR = "multi_turn_func_doc"


@dataclass(frozen=True)
class MultiTurnEntry:
    """One BFCL multi-turn conversation.

    turns: per turn, its user messages (empty for the turn on which held-out functions arrive);
    functions: BFCL's docs of the functions offered from the start; held_out: turn index -> the
    docs that arrive on that turn; ground_truth: per turn, the gold calls (parsed).
    """

    id: str
    category: str
    turns: tuple[tuple[dict[str, str], ...], ...]
    initial_config: Mapping[str, Any]
    involved_classes: tuple[str, ...]
    functions: tuple[dict[str, Any], ...]
    held_out: Mapping[int, tuple[dict[str, Any], ...]]
    ground_truth: tuple[tuple[Call, ...], ...]

    @property
    def long_context(self) -> bool:
        """BFCL loads the long-context scenario variant for this category (its checker's rule)."""
        return "long_context" in self.category

    @property
    def tools(self) -> list[dict[str, Any]]:
        return [to_tool(f) for f in self.functions]

    def held_out_tools(self, turn: int) -> list[dict[str, Any]]:
        return [to_tool(f) for f in self.held_out.get(turn, ())]


@dataclass(frozen=True)
class BadRow:
    """A row that was skipped: where it is, which field, why."""

    path: str
    line: int
    field: str
    reason: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.field}: {self.reason}"


@dataclass
class Loaded:
    """The usable entries of one category and the rows skipped."""

    entries: list[MultiTurnEntry]
    bad: list[BadRow]


class _Bad(Exception):
    def __init__(self, field_name: str, reason: str) -> None:
        super().__init__(reason)
        self.field = field_name
        self.reason = reason


class _BadAnswer(_Bad):
    """A fault in the possible-answer row (reported with that file's line)."""


def category_files(name: str, root: Path) -> tuple[Path, Path]:
    """(questions, possible answers) of a category under `root` (a folder laid out like `bfcl_eval/data`)."""
    stem = f"{FILE_PREFIX}{FILE_STEM}{name}.json"
    return root / stem, root / "possible_answer" / stem


def _lines(path: Path) -> list[tuple[int, str]]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise BfclDataError(f"{path}: cannot read: {exc.strerror or type(exc).__name__}") from None
    except UnicodeDecodeError:
        raise BfclDataError(f"{path}: not UTF-8 text") from None
    return [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip()]


def _object(line: str) -> dict[str, Any]:
    try:
        obj = json.loads(line)
    except ValueError as exc:
        raise _Bad("(line)", f"invalid JSON ({' '.join(str(exc).split())})") from None
    if not isinstance(obj, dict):
        raise _Bad("(line)", "expected a JSON object")
    if not isinstance(obj.get("id"), str) or not obj["id"]:
        raise _Bad("id", "expected a non-empty string")
    return obj


def load_function_docs(root: Path, classes: Sequence[str] = tuple(CLASSES)) -> dict[str, tuple[dict[str, Any], ...]]:
    """Class name -> BFCL's docs of its functions. A malformed doc file stops the load (every entry needs it)."""
    docs = {}
    for cls in classes:
        path = root / FUNC_DOC_DIR / CLASSES[cls][1]
        out = []
        for n, line in _lines(path):
            try:
                doc = json.loads(line)
            except ValueError as exc:
                raise BfclDataError(f"{path}:{n}: invalid JSON ({' '.join(str(exc).split())})") from None
            params = doc.get("parameters") if isinstance(doc, dict) else None
            if not isinstance(doc, dict) or not isinstance(doc.get("name"), str) or not isinstance(params, Mapping):
                raise BfclDataError(f"{path}:{n}: expected {{name: str, parameters: {{...}}}}")
            out.append(doc)
        docs[cls] = tuple(out)
    return docs


def _turns(question: Any) -> tuple[tuple[dict[str, str], ...], ...]:
    if not isinstance(question, list) or not question:
        raise _Bad("question", "expected a non-empty list of turns")
    turns = []
    for t, turn in enumerate(question):
        if not isinstance(turn, list):
            raise _Bad(f"question[{t}]", "expected a list of messages")
        msgs = []
        for i, m in enumerate(turn):
            if not isinstance(m, Mapping) or m.get("role") not in ("user", "system") or not isinstance(m.get("content"), str):
                raise _Bad(f"question[{t}][{i}]", "expected {role: user|system, content: str}")
            msgs.append({"role": m["role"], "content": m["content"]})
        turns.append(tuple(msgs))
    return tuple(turns)


def _ground_truth(obj: Any, n_turns: int) -> tuple[tuple[Call, ...], ...]:
    truth = obj.get("ground_truth") if isinstance(obj, dict) else None
    if not isinstance(truth, list) or len(truth) != n_turns:
        raise _BadAnswer("ground_truth", f"expected a list of {n_turns} turns (one per question turn)")
    calls = []
    for t, turn in enumerate(truth):
        if not isinstance(turn, list) or not all(isinstance(s, str) for s in turn):
            raise _BadAnswer(f"ground_truth[{t}]", "expected a list of call strings")
        parsed = []
        for k, source in enumerate(turn):
            got = parse_source(source)
            if not got.ok or len(got.calls) != 1:
                raise _BadAnswer(f"ground_truth[{t}][{k}]", f"not one literal call ({got.error or 'several calls'})")
            parsed.append(got.calls[0])
        calls.append(tuple(parsed))
    return tuple(calls)


def _entry(obj: dict[str, Any], truth: Any, category: str, docs: Mapping[str, tuple[dict[str, Any], ...]]) -> MultiTurnEntry:
    turns = _turns(obj.get("question"))
    classes = obj.get("involved_classes")
    if not isinstance(classes, list) or not classes or not all(isinstance(c, str) for c in classes):
        raise _Bad("involved_classes", "expected a non-empty list of class names")
    unknown = [c for c in classes if c not in CLASSES]
    if unknown:
        raise _Bad("involved_classes", f"unknown class {unknown[0]!r}; known: {', '.join(CLASSES)}")
    config = obj.get("initial_config", {})
    if not isinstance(config, Mapping) or not all(isinstance(v, Mapping) for v in config.values()):
        raise _Bad("initial_config", "expected {class name: {...}}")
    functions = [d for c in classes for d in docs[c]]
    held_out: dict[int, tuple[dict[str, Any], ...]] = {}
    missed = obj.get("missed_function", {})
    if not isinstance(missed, Mapping):
        raise _Bad("missed_function", "expected {turn index: [function names]}")
    for key, names in missed.items():
        turn = int(key) if isinstance(key, str) and key.isdigit() else -1
        if not 0 < turn < len(turns) or turns[turn]:
            raise _Bad(f"missed_function.{key}", "expected the index of a later turn that has no user message")
        if not isinstance(names, list) or not names:
            raise _Bad(f"missed_function.{key}", "expected a non-empty list of function names")
        docs_out = []
        for name in names:
            found = next((i for i, d in enumerate(functions) if d["name"] == name), None)
            if found is None:
                raise _Bad(f"missed_function.{key}", f"{name!r} is not a function of {', '.join(classes)}")
            docs_out.append(functions.pop(found))  # held out: offered only from that turn on
        held_out[turn] = tuple(docs_out)
    empty = [t for t, msgs in enumerate(turns) if not msgs and t not in held_out]
    if empty:
        raise _Bad(f"question[{empty[0]}]", "a turn without user message must be one on which held-out functions arrive")
    gold = _ground_truth(truth, len(turns))
    return MultiTurnEntry(obj["id"], category, turns, config, tuple(classes), tuple(functions), held_out, gold)


def load_category(name: str, *, root: Path | None = None, limit: int | None = None,
                  docs: Mapping[str, tuple[dict[str, Any], ...]] | None = None) -> Loaded:
    """The first `limit` rows (all when None) of one category: usable entries, and skipped rows with reasons.

    root: a folder laid out like `bfcl_eval/data` (default: the installed package's).
    """
    if name not in CATEGORIES:
        raise BfclDataError(f"unknown BFCL multi-turn category {name!r}; known: {', '.join(CATEGORIES)}")
    root = data_dir() if root is None else Path(root)
    docs = load_function_docs(root) if docs is None else docs
    qpath, apath = category_files(name, root)
    rows = _lines(qpath)
    if limit is not None:
        rows = rows[:limit]
    answers: dict[str, tuple[int, dict[str, Any]]] = {}
    for n, line in _lines(apath):
        try:
            obj = _object(line)
        except _Bad:
            continue  # reported with the question row that then lacks its answer
        answers.setdefault(obj["id"], (n, obj))
    loaded = Loaded([], [])
    for n, line in rows:
        answer_line = 0
        try:
            obj = _object(line)
            if obj["id"] not in answers:
                raise _Bad("id", f"{obj['id']!r} has no ground truth in {apath.name}")
            answer_line, answer = answers[obj["id"]]
            loaded.entries.append(_entry(obj, answer, name, docs))
        except _BadAnswer as bad:
            loaded.bad.append(BadRow(str(apath), answer_line, bad.field, bad.reason))
        except _Bad as bad:
            loaded.bad.append(BadRow(str(qpath), n, bad.field, bad.reason))
    return loaded
