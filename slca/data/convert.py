"""SFT rows (ShareGPT + hermes) → the sharegpt files LLaMA-Factory reads, streamed row by row.

Two layouts (registry `LAYOUTS`):
* `llamafactory` — loads in LLaMA-Factory 0.9.5's sharegpt converter without a dropped row. The
  dataset's system text, less its tools block (the `tools` column holds the tools and LLaMA-Factory's
  template renders them), is the first message, role `system`, as slca's local SFT and the RL
  prompts keep it. Then roles user / function_call / observation / assistant alternate (user-side
  at even positions, assistant-side at odd). Every `<tool_call>` block of a gpt turn is parsed (not only the first)
  and all calls of one turn go into one function_call message as a JSON list, which LLaMA-Factory
  renders back as one `<tool_call>` per call; all `<tool_response>` blocks of a turn go into one
  observation joined the way LLaMA-Factory's own OpenAI converter joins them. Consecutive turns of
  the same side are merged; prose that shares a side with tool calls cannot be represented and is
  dropped — each drop is counted in the report, never silent.
* `reference` — the reference materialiser's layout (docs/method.md#sft-materialisation), byte-for-byte, for comparison
  with the published preview: first block per turn only, calls as Python reprs, roles
  tool_call / tool_response, `messages`/`tools` as JSON strings, other input columns kept.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from slca.data import fastjson, hermes
from slca.data.dialogue import Dialogue
from slca.registry import Registry
from slca.toolcall.prompts import split_system_tools

LF_TAGS = {
    "role_tag": "role",
    "content_tag": "content",
    "user_tag": "user",
    "assistant_tag": "assistant",
    "observation_tag": "observation",
    "function_tag": "function_call",
    "system_tag": "system",
}
REFERENCE_TAGS = {**LF_TAGS, "observation_tag": "tool_response", "function_tag": "tool_call"}
_OBS_JOIN = "\n</tool_response>\n<tool_response>\n"  # LLaMA-Factory's join for several tool outputs


@dataclass
class ConvertReport:
    """Counts of one conversion; rows_in == rows_out + rows_rejected."""

    layout: str
    rows_in: int = 0
    rows_out: int = 0
    rows_rejected: int = 0
    calls: int = 0
    parallel_turns: int = 0
    dropped_texts: int = 0  # prose that shares a side with tool calls/outputs (llamafactory layout)
    merged_turns: int = 0  # consecutive same-side turns merged into one message
    errors_by_field: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


LAYOUTS: Registry[Callable[[dict[str, Any], Dialogue | None, ConvertReport], dict[str, Any]]] = Registry("layout")


def register_layout(name: str) -> Callable:
    """Decorator adding an output layout under `name`; duplicates raise."""
    return LAYOUTS.register(name)


@register_layout("llamafactory")
def to_llamafactory(row: dict[str, Any], d: Dialogue, rep: ConvertReport) -> dict[str, Any]:
    """One validated SFT row → {"messages": [...], "tools": "<JSON list>"} (alternating roles)."""
    # One pass: consecutive turns of the same side (user/tool vs assistant) form one group.
    groups: list[tuple[bool, list[Any], list[str], list[str]]] = []  # (assistant side, calls, texts, responses)
    for t in d.turns:
        side = t.role == "assistant"
        if groups and groups[-1][0] is side:
            rep.merged_turns += 1
            g = groups[-1]
        else:
            g = (side, [], [], [])
            groups.append(g)
        if t.calls:
            g[1].extend(t.calls)
        if t.responses:
            g[3].extend(t.responses)
        if t.text or t.role == "user":
            g[2].append(t.text)
    system, _ = split_system_tools(d.system)
    msgs: list[dict[str, str]] = [{"role": "system", "content": system}] if system else []
    for side, calls, texts, resps in groups:
        if side and calls:
            rep.calls += len(calls)
            if len(calls) > 1:
                rep.parallel_turns += 1
            rep.dropped_texts += len(texts)
            msgs.append({"role": "function_call", "content": fastjson.dumps_compact(calls[0] if len(calls) == 1 else calls)})
        elif side:
            msgs.append({"role": "assistant", "content": "\n\n".join(texts)})
        elif resps:
            rep.dropped_texts += len(texts)
            msgs.append({"role": "observation", "content": _OBS_JOIN.join(resps)})
        else:
            msgs.append({"role": "user", "content": "\n\n".join(texts)})
    return {"messages": msgs, "tools": d.tools_json}


def _ref_response(value: str) -> str:
    inner = value.split(hermes.RESP_OPEN, 1)[1].split(hermes.RESP_CLOSE, 1)[0]
    # the wrapper's own newlines are not part of the output (docs/method.md#sft-materialisation, "trimmed")
    if inner.startswith("\n"):
        inner = inner[1:]
    if inner.endswith("\n"):
        inner = inner[:-1]
    return inner


@register_layout("reference")
def to_reference(row: dict[str, Any], d: Dialogue | None, rep: ConvertReport) -> dict[str, Any]:
    """The reference materialiser's row (docs/method.md#sft-materialisation); works from the raw turns."""
    conv = row["conversations"]
    tools = hermes.tools_from_system(conv[0]["value"])
    msgs = []
    for t in conv[1:]:
        v = t["value"]
        if t["from"] == "human":
            if hermes.RESP_OPEN in v:
                msgs.append({"role": "tool_response", "content": _ref_response(v)})
            else:
                msgs.append({"role": "user", "content": v})
        elif t["from"] == "gpt":
            if hermes.CALL_OPEN in v:
                first = v.split(hermes.CALL_OPEN, 1)[1].split(hermes.CALL_CLOSE, 1)[0]
                calls = hermes.parse_call_block(first)
                rep.calls += len(calls)
                for c in calls:
                    content = str({"name": c["name"], "arguments": json.dumps(c["arguments"], ensure_ascii=False)})
                    msgs.append({"role": "tool_call", "content": content})
            else:
                msgs.append({"role": "assistant", "content": v})
    out = {k: v for k, v in row.items() if k != "conversations"}
    out["tools"] = json.dumps(tools, ensure_ascii=False)
    out["messages"] = json.dumps(msgs, ensure_ascii=False)
    return out


def convert_rows(rows: Iterator[dict[str, Any]], layout: str = "llamafactory", *, on_error: str = "fail",
                 report: ConvertReport | None = None,
                 on_reject: Callable[[int, list[Any], Any], None] | None = None) -> Iterator[dict[str, Any]]:
    """Validate and convert a stream of SFT rows; bad rows raise (`fail`) or are skipped (`skip`).

    Validity is the `sft` schema's (slca.data.schemas.check_row), as in `slca data validate`.
    """
    from slca.data.schemas import RowError, check_row, reject_row

    if layout not in LAYOUTS:
        raise ValueError(f"unknown layout {layout!r}; expected one of {sorted(LAYOUTS)}")
    fn = LAYOUTS[layout]
    rep = report if report is not None else ConvertReport(layout)
    for row in rows:
        idx = rep.rows_in
        rep.rows_in += 1
        d, row_errs = check_row(row, "sft", idx)
        if not row_errs and d is None:  # the materialised messages/tools layout is already converted
            row_errs = [RowError(idx, "conversations", "missing column (convert reads ShareGPT + hermes rows)")]
        if not row_errs:
            try:
                out = fn(row, d, rep)
            except (hermes.MarkupError, KeyError, IndexError) as exc:
                row_errs = [RowError(idx, "conversations", f"cannot convert: {exc}")]
        if row_errs:
            rep.rows_rejected += 1
            reject_row(idx, row_errs, row, counts=rep.errors_by_field, on_error=on_error, on_reject=on_reject)
            continue
        rep.rows_out += 1
        yield out


def dataset_info_entry(file_name: str, layout: str = "llamafactory") -> dict[str, Any]:
    """The LLaMA-Factory dataset_info.json entry for a converted file."""
    return {
        "file_name": file_name,
        "formatting": "sharegpt",
        "columns": {"messages": "messages", "tools": "tools"},
        "tags": dict(LF_TAGS if layout == "llamafactory" else REFERENCE_TAGS),
    }


def read_dataset_info(directory: str | os.PathLike[str]) -> dict[str, Any]:
    """The registry `directory/dataset_info.json` ({} when absent); DataInputError when it is unusable.

    Read before anything is written, so a corrupt registry stops the command with nothing published.
    """
    from slca.data.errors import DataInputError, one_line, os_error

    path = Path(directory) / "dataset_info.json"
    if not path.exists():
        return {}
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise os_error(exc, path) from None
    except (ValueError, RecursionError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise DataInputError(one_line(f"{path}: not a readable dataset registry: {exc}")) from None
    if not isinstance(info, dict):
        raise DataInputError(f"{path}: not a dataset registry (expected a JSON object, got {type(info).__name__})")
    return info


def update_dataset_info(directory: str | os.PathLike[str], name: str, entry: dict[str, Any],
                        info: dict[str, Any] | None = None) -> Path:
    """Add or replace `name` in `directory/dataset_info.json` (`info`: the registry already read),
    written atomically."""
    from slca.fileio import atomic_write_text

    path = Path(directory) / "dataset_info.json"
    info = dict(read_dataset_info(directory) if info is None else info)
    info[name] = entry
    atomic_write_text(path, json.dumps(info, indent=2, ensure_ascii=False) + "\n")
    return path


def _finite(value: Any) -> Any:
    """`value` with NaN/Infinity written as the strings "NaN"/"Infinity"/"-Infinity", so the rejects
    file stays strict JSON that every reader (slca's included) can load."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def _reject_line(rec: dict[str, Any]) -> bytes:
    """One rejects-file record; rows that cannot be encoded as they are (lone surrogates, deep
    nesting) are kept escaped or, failing that, as their index only; NaN/Infinity as strings."""
    try:
        return (json.dumps(rec, ensure_ascii=False, default=str, allow_nan=False) + "\n").encode("utf-8")
    except (UnicodeEncodeError, RecursionError, ValueError, TypeError):
        pass
    try:
        rec = {**rec, "row": _finite(rec["row"])}
        return (json.dumps(rec, ensure_ascii=False, default=str, allow_nan=False) + "\n").encode("utf-8")
    except (UnicodeEncodeError, RecursionError, ValueError, TypeError):
        pass
    try:
        return (json.dumps(rec, ensure_ascii=True, default=str, allow_nan=False) + "\n").encode("ascii")
    except (RecursionError, ValueError, TypeError):
        rec = {**rec, "row": None, "row_unavailable": "too deeply nested to store; see the input at this index"}
        return (json.dumps(rec, ensure_ascii=True, default=str) + "\n").encode("ascii")


class RejectsWriter:
    """Appends rejected rows ({index, errors, row}) to a JSONL file, published atomically on close."""

    def __init__(self, path: str | os.PathLike[str]):
        from slca.data.errors import os_error
        from slca.fileio import AtomicTarget, make_parents, remove_made

        self.path = Path(path)
        self._made: list[Path] = []
        try:
            self._made = make_parents(self.path)
            self._target = AtomicTarget(self.path, fsync=False)  # streamed like RowWriter's outputs
        except OSError as exc:
            remove_made(self._made)
            raise os_error(exc, self.path) from None
        try:
            self._fh = open(self._target.tmp, "wb")
        except BaseException:
            self._target.discard()
            remove_made(self._made)
            raise
        self.n = 0

    def __call__(self, index: int, errors: list[Any], row: Any) -> None:
        rec = {"index": index, "errors": [{"field": e.field, "reason": e.reason} for e in errors],
               "row": str(row) if getattr(row, "bad_json", False) else row}
        self._fh.write(_reject_line(rec))
        self.n += 1

    def close(self, *, keep: bool = True) -> None:
        from slca.fileio import remove_made

        self._fh.close()
        if keep:
            self._target.commit()
        else:
            self._target.discard()
            remove_made(self._made)

    def __enter__(self) -> RejectsWriter:
        return self

    def __exit__(self, exc_type: Any, *_: Any) -> None:
        self.close(keep=exc_type is None)


def rejects_path(output: str | os.PathLike[str]) -> Path:
    p = Path(output)
    return p.with_name(p.name.split(".")[0] + ".rejects.jsonl")


def convert_file(input_path: str | os.PathLike[str], output_path: str | os.PathLike[str], *,
                 layout: str = "llamafactory", on_error: str = "fail", dataset_name: str | None = None,
                 batch_size: int = 512) -> ConvertReport:
    """Convert an SFT file (parquet/jsonl) to `output_path` (.jsonl streams; .json writes an array),
    register it in the output folder's dataset_info.json, and write `<stem>.rejects.jsonl` in skip mode.

    Every path is checked first (no output may be the input, the registry or another output) and
    the registry is read before anything is written; the outputs are published at the end. An
    input without rows is refused (DataInputError): nothing is written or registered.
    """
    from slca.data.io import read_rows, write_rows
    from slca.data.outputs import check_paths

    out = Path(output_path)
    rej_path = rejects_path(out) if on_error == "skip" else None
    check_paths([input_path], {"output": out, "rejects file": rej_path})
    info = read_dataset_info(out.parent)
    rep = ConvertReport(layout)
    rejects = RejectsWriter(rej_path) if rej_path is not None else None
    try:
        rows = convert_rows(read_rows(input_path, batch_size=batch_size, allow_empty=False), layout, on_error=on_error,
                            report=rep, on_reject=rejects)
        # the reference layout reproduces the reference writer's json.dumps spacing byte for byte
        write_rows(out, rows, batch_size=batch_size, json_style="stdlib" if layout == "reference" else "compact")
    except BaseException:
        if rejects is not None:
            rejects.close(keep=False)
        raise
    if rejects is not None:
        rejects.close(keep=True)
    name = dataset_name or out.name.split(".")[0]
    update_dataset_info(out.parent, name, dataset_info_entry(out.name, layout), info)
    return rep
