"""Split schemas and row validation (docs/method.md#data): `sft` (ShareGPT + hermes, or the materialised
`messages`/`tools` layout) and `rl`/`eval` (verl-native rows).

This is the one definition of a valid row: `slca data validate`, `convert`, `prepare` and
`stats` all call `check_row` (or `validate_row`, its errors only). Every row is first walked by
slca.data.guard (depth cap, lone surrogates), so nothing after it can recurse or fail to encode.
`validate_row(row, split)` returns every problem as a RowError(index, field, reason);
`Validator` runs it over a stream, keeps the counts reconciled (rows in = out + rejected) and
either stops at the first bad row (`fail`) or skips it into a rejects list (`skip`).

Stored RL/eval layout (written by slca; readers also accept the published variants):
  prompt            list[{role, content}]        chat up to and including the user turn
  data_source       str
  tools             str                           JSON list of tool schemas (OpenAI envelope)
  reward_model      {style, ground_truth}
    ground_truth    {allowed_tools: list[str], gold_tool_calls: str, question_content: str,
                     subset_name: "tool_call"|"irrelevant", tool_schemas: str}
                    gold_tool_calls is a JSON string of nested steps with arguments:
                    [[{"name", "arguments"}, ...], ...] (the published flat list of names is
                    also accepted when reading; see `gold_steps`).
  extra_info        {need_tools_kwargs: bool, original_turn_index: int, index: int,
                     source_key: str, split: str, gold_responses: str, original_row: str}
                    gold_responses is a JSON list of {name, arguments, response}: the recorded
                    tool output for each gold call, which the schema/replay simulators return
                    when the policy makes the same call. original_row is the source trajectory
                    (JSON) and source_key its content hash (see dialogue.user_key).

Every field is type- and range-checked (docs/method.md#data): counters (`original_turn_index`,
`index`) are whole numbers in [0, 2**63-1] (the int64 columns slca writes), never a bool or a
float; names and texts are non-empty strings; JSON-string fields must decode to the shape above;
call arguments are objects (or their JSON string). extra_info keys are optional (the published
rows carry only need_tools_kwargs and original_turn_index), but a key that is present must be
valid. No value anywhere may be NaN or Infinity (slca.data.guard).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from slca.data import fastjson, guard, hermes
from slca.data.dialogue import Dialogue, parse_conversations
from slca.data.io import CheckedRow
from slca.registry import Registry

Split = Literal["sft", "rl", "eval"]
SPLITS: tuple[str, ...] = ("sft", "rl", "eval")
SUBSETS = ("tool_call", "irrelevant")
INT64_MAX = 2**63 - 1  # counters are stored as int64 (arrow_schema)


@dataclass(frozen=True)
class RowError:
    """One problem with one row: its position in the input, the field path, and why."""

    index: int
    field: str
    reason: str

    def __str__(self) -> str:
        return f"row {self.index}: {self.field}: {self.reason}"


class DataValidationError(ValueError):
    """Raised in `fail` mode; carries the errors of the first bad row (`context` prefixes the message)."""

    def __init__(self, errors: list[RowError], *, context: str = ""):
        self.errors = errors
        text = "; ".join(str(e) for e in errors)
        super().__init__(f"{context}: {text}" if context else text)


# split -> checker(row) -> (the parsed dialogue when the row has one, [(field, reason), ...])
_VALIDATORS: Registry[Callable[[dict[str, Any]], tuple[Dialogue | None, list[tuple[str, str]]]]] = Registry(
    "validator for split")


def register_validator(split: str) -> Callable:
    """Decorator: the checker for one split; duplicate names are refused."""
    return _VALIDATORS.register(split)


def _tname(v: Any) -> str:
    return type(v).__name__


def _sub(fld: str, path: str) -> str:
    """`fld` extended by a path inside its value (`x` + `a.b` -> `x.a.b`, `x` + `[0]` -> `x[0]`)."""
    if not path:
        return fld
    return f"{fld}{path}" if path.startswith("[") else f"{fld}.{path}"


def _check_whole_number(v: Any, fld: str, errs: list[tuple[str, str]]) -> None:
    """A counter: an int (not a bool, not a float such as 3.0 or NaN) in [0, INT64_MAX]."""
    if isinstance(v, bool) or not isinstance(v, int):
        errs.append((fld, f"wrong type: expected a whole number >= 0, got {_tname(v)} {v!r:.40}"))
    elif not 0 <= v <= INT64_MAX:
        shown = str(v) if v.bit_length() <= 200 else f"an integer of about {int(v.bit_length() * 0.30103) + 1} digits"
        errs.append((fld, f"out of range: {shown} (expected 0 to 2**63-1, the int64 column it is stored in)"))


def _check_text(v: Any, fld: str, errs: list[tuple[str, str]]) -> None:
    if not isinstance(v, str) or not v:
        errs.append((fld, f"wrong type: expected a non-empty str, got {_tname(v)} {v!r:.40}"))


def _check_arguments(args: Any, fld: str, errs: list[tuple[str, str]]) -> None:
    """Call arguments: an object, or a JSON string holding one (some sources store them so)."""
    if isinstance(args, str):
        _json_field(args, fld, errs, expect=dict)
    elif not isinstance(args, dict):
        errs.append((fld, f"wrong type: expected object, got {_tname(args)}"))


def _as_list(v: Any) -> Any:
    # pandas/pyarrow readers may hand back numpy arrays for list columns
    return v.tolist() if hasattr(v, "tolist") and not isinstance(v, (str, bytes)) else v


def _json_field(v: Any, fld: str, errs: list[tuple[str, str]], *, expect: type = list) -> Any:
    if isinstance(v, str):
        text = v
        try:
            v = fastjson.loads(text)
        except fastjson.NonFiniteNumber as exc:
            errs.append((_sub(fld, exc.path), exc.reason))
            return None
        except json.JSONDecodeError as exc:
            errs.append((fld, f"bad JSON: {exc.msg} at char {exc.pos}"))
            return None
        bad = guard.decoded_problem(text, v)
        if bad is not None:
            errs.append((f"{fld}{'.' + bad[0] if bad[0] else ''}", bad[1]))
            return None
    v = _as_list(v)
    if not isinstance(v, expect):
        errs.append((fld, f"wrong type: expected {'object' if expect is dict else expect.__name__} (or its JSON string), "
                          f"got {_tname(v)}"))
        return None
    return v


def _tool_names(tools: list[Any], fld: str, errs: list[tuple[str, str]]) -> list[str]:
    names = []
    for k, t in enumerate(tools):
        n = hermes.tool_name(t) if isinstance(t, dict) else None
        if n is None:
            errs.append((f"{fld}[{k}]", "tool schema without a name"))
        else:
            names.append(n)
    return names


_STR_EXTRAS = ("uuid", "subset_name", "question", "target_tools")
_REF_ROLES = {"user", "assistant", "system", "tool_call", "tool_response", "function_call", "observation"}


@register_validator("sft")
def _check_sft(row: dict[str, Any]) -> tuple[Dialogue | None, list[tuple[str, str]]]:
    errs: list[tuple[str, str]] = []
    for k in _STR_EXTRAS:
        if k in row and row[k] is not None and not isinstance(row[k], str):
            errs.append((k, f"wrong type: expected str, got {_tname(row[k])}"))
    if "conversations" in row:
        d, conv_errs = parse_conversations(row["conversations"])
        errs += conv_errs
        return (None if errs else d), errs
    if "messages" not in row:
        return None, errs + [("conversations", "missing column")]
    # the materialised layout of the reference SFT preview (docs/method.md#sft-materialisation)
    msgs = _json_field(row["messages"], "messages", errs)
    if "tools" not in row:
        errs.append(("tools", "missing column"))
    else:
        tools = _json_field(row["tools"], "tools", errs)
        if tools is not None:
            _tool_names(tools, "tools", errs)
    if msgs is not None:
        if not msgs:
            errs.append(("messages", "empty conversation"))
        for i, m in enumerate(msgs):
            if not isinstance(m, dict):
                errs.append((f"messages[{i}]", f"wrong type: expected object, got {_tname(m)}"))
            elif not isinstance(m.get("role"), str) or m["role"] not in _REF_ROLES:
                errs.append((f"messages[{i}].role", f"unknown role {m.get('role')!r}"))
            elif not isinstance(m.get("content"), str):
                errs.append((f"messages[{i}].content", f"wrong type: expected str, got {_tname(m.get('content'))}"))
    return None, errs


def gold_steps(gold: Any) -> tuple[list[list[dict[str, Any]]], str]:
    """Normalise gold_tool_calls (docs/method.md#ground-truth) → (nested steps of {name, arguments?}, "nested"|"flat"|"empty").

    Accepts a list or its JSON string; flat lists become one step; names become {"name": s}.
    Raises ValueError when the value is not decodable.
    """
    if isinstance(gold, str):
        text, gold = gold, fastjson.loads(gold) if gold.strip() else []
        bad = guard.decoded_problem(text, gold)
        if bad is not None:
            raise ValueError(f"{bad[0]}: {bad[1]}" if bad[0] else bad[1])
    gold = _as_list(gold)
    if gold is None:
        return [], "empty"
    if not isinstance(gold, list):
        raise ValueError(f"expected a list, got {_tname(gold)}")
    if not gold:
        return [], "empty"

    def item(x: Any) -> dict[str, Any]:
        if isinstance(x, str):
            return {"name": x}
        if isinstance(x, dict):
            return x
        raise ValueError(f"gold call must be a name or an object, got {_tname(x)}")

    if gold and isinstance(_as_list(gold[0]), list):
        steps = []
        for s in gold:
            s = _as_list(s)
            if not isinstance(s, list):
                raise ValueError(f"mixed nested/flat gold (step of type {_tname(s)})")
            steps.append([item(x) for x in s])
        return [s for s in steps if s], "nested"
    return [[item(x) for x in gold]], "flat"


def _check_chat(prompt: Any, errs: list[tuple[str, str]]) -> None:
    prompt = _as_list(prompt)
    if not isinstance(prompt, list):
        errs.append(("prompt", f"wrong type: expected list, got {_tname(prompt)}"))
        return
    if not prompt:
        errs.append(("prompt", "empty conversation"))
        return
    for i, m in enumerate(prompt):
        if not isinstance(m, dict):
            errs.append((f"prompt[{i}]", f"wrong type: expected object, got {_tname(m)}"))
        elif m.get("role") not in ("system", "user", "assistant", "tool"):
            errs.append((f"prompt[{i}].role", f"unknown role {m.get('role')!r}"))
        elif not isinstance(m.get("content"), str):
            errs.append((f"prompt[{i}].content", f"wrong type: expected str, got {_tname(m.get('content'))}"))
        else:
            try:
                hermes.blocks(m["content"], hermes.CALL_OPEN, hermes.CALL_CLOSE)
                hermes.blocks(m["content"], hermes.RESP_OPEN, hermes.RESP_CLOSE)
            except hermes.MarkupError as exc:
                errs.append((f"prompt[{i}].content", str(exc)))
    if isinstance(prompt[-1], dict) and prompt[-1].get("role") != "user":
        errs.append((f"prompt[{len(prompt) - 1}].role", "last prompt message must be the user turn"))


@register_validator("rl")
def _check_rl(row: dict[str, Any]) -> tuple[None, list[tuple[str, str]]]:
    return None, _rl_errors(row)


def _rl_errors(row: dict[str, Any]) -> list[tuple[str, str]]:
    errs: list[tuple[str, str]] = []
    for col in ("prompt", "data_source", "tools", "reward_model", "extra_info"):
        if col not in row:
            errs.append((col, "missing column"))
    if "prompt" in row:
        _check_chat(row["prompt"], errs)
    if "data_source" in row:
        _check_text(row["data_source"], "data_source", errs)
    tool_names: list[str] | None = None
    if "tools" in row:
        tools = _json_field(row["tools"], "tools", errs)
        if tools is not None:
            tool_names = _tool_names(tools, "tools", errs)
    if "extra_info" in row:
        _check_extra_info(row["extra_info"], errs)
    rm = row.get("reward_model")
    if "reward_model" not in row:
        return errs
    if not isinstance(rm, dict):
        return errs + [("reward_model", f"wrong type: expected object, got {_tname(rm)}")]
    if "style" in rm:
        _check_text(rm["style"], "reward_model.style", errs)
    gt = rm.get("ground_truth")
    f = "reward_model.ground_truth"
    if not isinstance(gt, dict):
        return errs + [(f, "missing" if gt is None else f"wrong type: expected object, got {_tname(gt)}")]
    for k in ("allowed_tools", "gold_tool_calls", "question_content", "subset_name", "tool_schemas"):
        if k not in gt:
            errs.append((f"{f}.{k}", "missing field"))
    allowed = _as_list(gt.get("allowed_tools"))
    if "allowed_tools" in gt:
        if not isinstance(allowed, list) or not all(isinstance(a, str) and a for a in allowed):
            errs.append((f"{f}.allowed_tools", "wrong type: expected a list of non-empty str"))
            allowed = None
        elif not allowed:
            errs.append((f"{f}.allowed_tools", "empty"))
        elif tool_names is not None and set(allowed) - set(tool_names):
            errs.append((f"{f}.allowed_tools", f"names not in `tools`: {sorted(set(allowed) - set(tool_names))[:5]}"))
    if "tool_schemas" in gt:
        schemas = _json_field(gt["tool_schemas"], f"{f}.tool_schemas", errs)
        if schemas is not None:
            _tool_names(schemas, f"{f}.tool_schemas", errs)
    q = gt.get("question_content")
    if "question_content" in gt and (not isinstance(q, str) or not q.strip()):
        errs.append((f"{f}.question_content", "expected a non-empty str"))
    steps = None
    if "gold_tool_calls" in gt:
        gold = _as_list(gt["gold_tool_calls"])
        if not isinstance(gold, (str, list)):  # gold_steps reads None as "no calls": a stored row must say so
            errs.append((f"{f}.gold_tool_calls", f"wrong type: expected a JSON string or list, got {_tname(gold)}"))
        else:
            try:
                steps, _ = gold_steps(gold)
            except fastjson.NonFiniteNumber as exc:
                errs.append((_sub(f"{f}.gold_tool_calls", exc.path), exc.reason))
            except (ValueError, json.JSONDecodeError) as exc:
                errs.append((f"{f}.gold_tool_calls", f"bad gold: {exc}"))
    if steps is not None:
        for si, step in enumerate(steps):
            for ci, c in enumerate(step):
                cf = f"{f}.gold_tool_calls[{si}][{ci}]"
                if not isinstance(c.get("name"), str) or not c["name"]:
                    errs.append((cf, "gold call without a name"))
                elif isinstance(allowed, list) and allowed and c["name"] not in allowed:
                    errs.append((cf, f"unknown tool {c['name']!r} (not in allowed_tools)"))
                args = c.get("arguments", c.get("parameters"))
                if args is not None:
                    _check_arguments(args, cf + ".arguments", errs)
    sub = gt.get("subset_name")
    if "subset_name" in gt:
        if sub not in SUBSETS:
            errs.append((f"{f}.subset_name", f"unknown subset {sub!r:.40} (expected one of {SUBSETS})"))
        elif steps is not None and (sub == "tool_call") != bool(steps):
            errs.append((f"{f}.subset_name", f"{sub!r} disagrees with gold ({len(steps)} steps)"))
    return errs


def _check_extra_info(ei: Any, errs: list[tuple[str, str]]) -> None:
    """extra_info: every key optional (published rows carry two), every present key valid."""
    f = "extra_info"
    if not isinstance(ei, dict):
        errs.append((f, f"wrong type: expected object, got {_tname(ei)}"))
        return
    if "need_tools_kwargs" in ei and not isinstance(ei["need_tools_kwargs"], bool):
        errs.append((f"{f}.need_tools_kwargs", f"wrong type: expected bool, got {_tname(ei['need_tools_kwargs'])}"))
    for k in ("original_turn_index", "index"):
        if k in ei:
            _check_whole_number(ei[k], f"{f}.{k}", errs)
    for k in ("source_key", "split"):
        if k in ei:
            _check_text(ei[k], f"{f}.{k}", errs)
    if "gold_responses" in ei:
        _check_gold_responses(ei["gold_responses"], f"{f}.gold_responses", errs)
    if "original_row" in ei:
        original = ei["original_row"]
        if not isinstance(original, str):
            errs.append((f"{f}.original_row", f"wrong type: expected str, got {_tname(original)}"))
        elif original:  # "" = not kept (`prepare --no-original`)
            _json_field(original, f"{f}.original_row", errs, expect=dict)


def _check_gold_responses(v: Any, fld: str, errs: list[tuple[str, str]]) -> None:
    """A JSON list of {name, arguments, response}, one per recorded gold call."""
    records = _json_field(v, fld, errs)
    for k, rec in enumerate(records or ()):
        rf = f"{fld}[{k}]"
        if not isinstance(rec, dict):
            errs.append((rf, f"wrong type: expected object {{name, arguments, response}}, got {_tname(rec)}"))
            continue
        _check_text(rec.get("name"), f"{rf}.name", errs)
        if "arguments" not in rec:
            errs.append((f"{rf}.arguments", "missing field"))
        else:
            _check_arguments(rec["arguments"], f"{rf}.arguments", errs)
        if "response" not in rec:
            errs.append((f"{rf}.response", "missing field"))


@register_validator("eval")
def _check_eval(row: dict[str, Any]) -> tuple[None, list[tuple[str, str]]]:
    return _check_rl(row)


def check_row(row: Any, split: str, index: int = 0) -> tuple[Dialogue | None, list[RowError]]:
    """(parsed dialogue of a valid ShareGPT row, else None; every problem of the row).

    The single definition of validity shared by validate, convert, prepare and stats.
    """
    if split not in _VALIDATORS:
        raise ValueError(f"unknown split {split!r}; expected one of {sorted(_VALIDATORS)}")
    if not isinstance(row, dict):
        if getattr(row, "bad_json", False):  # an undecodable record (see io.BadRow)
            return None, [RowError(index, getattr(row, "field", "") or "<row>", str(row))]
        return None, [RowError(index, "<row>", f"wrong type: expected object, got {_tname(row)}")]
    bad = None if type(row) is CheckedRow else guard.problem(row)
    if bad is not None:
        return None, [RowError(index, bad[0] or "<row>", bad[1])]
    d, errs = _VALIDATORS[split](row)
    return d, [RowError(index, f, r) for f, r in errs]


def validate_row(row: Any, split: str, index: int = 0) -> list[RowError]:
    """Every problem of one row of `split` (sft | rl | eval); [] when the row is valid."""
    return check_row(row, split, index)[1]


@dataclass
class ValidationReport:
    """Counts of one validation pass; `n_in == n_out + n_rejected` always holds."""

    split: str
    path: str | None = None  # the file validated, when there is one
    rejects_path: str | None = None  # where rejected rows were written (skip mode)
    n_in: int = 0
    n_out: int = 0
    n_rejected: int = 0
    errors: list[RowError] = field(default_factory=list)  # first `max_errors` only
    by_field: dict[str, int] = field(default_factory=dict)

    @property
    def reconciled(self) -> bool:
        return self.n_in == self.n_out + self.n_rejected

    def as_dict(self) -> dict[str, Any]:
        return {
            "split": self.split,
            "rows_in": self.n_in,
            "rows_out": self.n_out,
            "rows_rejected": self.n_rejected,
            "errors_by_field": dict(sorted(self.by_field.items())),
        }


class Validator:
    """Filters a row stream: yields valid rows, counts and records the rest.

    `on_error="fail"` raises DataValidationError at the first bad row; `"skip"` drops it and keeps
    (index, errors, row) in `rejects` when `keep_rejects` (for the rejects file).
    """

    def __init__(self, split: str, on_error: Literal["fail", "skip"] = "fail", *, max_errors: int = 1000,
                 on_reject: Callable[[int, list[RowError], Any], None] | None = None):
        if on_error not in ("fail", "skip"):
            raise ValueError(f"on_error must be 'fail' or 'skip', got {on_error!r}")
        self.split, self.on_error, self.max_errors = split, on_error, max_errors
        self.on_reject = on_reject
        self.report = ValidationReport(split)

    def __call__(self, rows: Iterable[Any]) -> Iterator[dict[str, Any]]:
        rep = self.report
        for row in rows:
            idx = rep.n_in
            rep.n_in += 1
            errs = validate_row(row, self.split, idx)
            if not errs:
                rep.n_out += 1
                yield row
                continue
            rep.n_rejected += 1
            rep.errors.extend(errs[: self.max_errors - len(rep.errors)])
            reject_row(idx, errs, row, counts=rep.by_field, on_error=self.on_error, on_reject=self.on_reject)


def arrow_schema(split: str) -> Any:
    """The pyarrow schema slca writes for `split` (sft: conversations + string extras)."""
    import pyarrow as pa

    if split == "sft":
        return pa.schema([
            ("uuid", pa.string()),
            ("subset_name", pa.string()),
            ("question", pa.string()),
            ("target_tools", pa.string()),
            ("conversations", pa.list_(pa.struct([("from", pa.string()), ("value", pa.string())]))),
        ])
    if split in ("rl", "eval"):
        gt = pa.struct([
            ("allowed_tools", pa.list_(pa.string())),
            ("gold_tool_calls", pa.string()),
            ("question_content", pa.string()),
            ("subset_name", pa.string()),
            ("tool_schemas", pa.string()),
        ])
        extra = pa.struct([
            ("need_tools_kwargs", pa.bool_()),
            ("original_turn_index", pa.int64()),
            ("index", pa.int64()),
            ("source_key", pa.string()),
            ("split", pa.string()),
            ("gold_responses", pa.string()),
            ("original_row", pa.string()),
        ])
        return pa.schema([
            ("prompt", pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())]))),
            ("data_source", pa.string()),
            ("tools", pa.string()),
            ("reward_model", pa.struct([("style", pa.string()), ("ground_truth", gt)])),
            ("extra_info", extra),
        ])
    raise ValueError(f"unknown split {split!r}")


def tally_by_field(counts: dict[str, int], errors: list[RowError]) -> None:
    """Add each error to `counts`, keyed by its top-level field (`messages[3].value` -> `messages`)."""
    for e in errors:
        key = e.field.split("[")[0]
        counts[key] = counts.get(key, 0) + 1


def reject_row(idx: int, errors: list[RowError], row: Any, *, counts: dict[str, int], on_error: str,
               on_reject: Callable[[int, list[RowError], Any], None] | None) -> None:
    """A bad row: count its errors by field, then raise (`on_error="fail"`) or hand it to `on_reject`."""
    tally_by_field(counts, errors)
    if on_error == "fail":
        raise DataValidationError(errors)
    if on_reject is not None:
        on_reject(idx, errors, row)
