"""RL derivation (`slca data prepare`): validated trajectories → eval cut, SFT/RL partition and the
multi-turn RL decomposition, with a funnel report of counts per stage (docs/method.md#toucan-conversion).

Stages: raw → valid (schema checks) → unique (content hash of the user turns, first occurrence
kept) → eval (carved first) + train (minus trajectories that repeat any eval user turn) → SFT + RL
trajectories → RL rows (one per user turn: the
prompt up to that turn, gold calls per assistant step with arguments). Membership of each stage is
decided by ranking sha256(seed, stage, content key), so the result does not depend on input order
and a trajectory can never be in both eval and train.

Decomposition follows the v2 converter's split_turns mode: turn i spans from the i-th user turn to
the next; each assistant turn with calls in the span is one gold step; turns without calls become
`irrelevant` rows. The prompt keeps the source's raw turns (assistant calls as `<tool_call>`
blocks, tool outputs as user `<tool_response>` turns), as in the published RL rows.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from slca.data import hermes
from slca.data.dialogue import Dialogue, dialogue_key, parse_conversations
from slca.data.errors import DataInputError

SystemStyle = Literal["source", "reference", "none"]


@dataclass(frozen=True)
class PrepareOptions:
    """Knobs of the derivation; defaults reproduce the published funnel's proportions."""

    seed: int = 0
    eval_size: int = 4000  # trajectories carved for eval before anything else
    rl_fraction: float = 3 / 7  # of the train trajectories (31,818 of 74,241 in the published split)
    include_irrelevant: bool = True  # keep user turns that need no call, as subset "irrelevant"
    system_style: SystemStyle = "source"  # RL prompt system turn: the source's, the reference's, or none
    data_source: str = "toucan_toolcall"
    keep_original: bool = True  # store the source trajectory (JSON) in extra_info.original_row

    def __post_init__(self) -> None:
        # checked before any file is read, so a typo never costs a pass over a large input
        if isinstance(self.eval_size, bool) or not isinstance(self.eval_size, int) or self.eval_size < 0:
            raise DataInputError(f"--eval-size must be a whole number >= 0, got {self.eval_size!r}")
        if not isinstance(self.rl_fraction, (int, float)) or not math.isfinite(self.rl_fraction) \
                or not 0.0 <= self.rl_fraction <= 1.0:
            raise DataInputError(f"--rl-fraction must be between 0 and 1, got {self.rl_fraction!r}")
        if self.system_style not in ("source", "reference", "none"):
            raise DataInputError(f"--system must be source, reference or none, got {self.system_style!r}")


def rank_key(seed: int, stage: str, key: str) -> str:
    return hashlib.sha256(f"{seed}\x00{stage}\x00{key}".encode()).hexdigest()


def _system(d: Dialogue, style: SystemStyle) -> list[dict[str, str]]:
    if style == "none":
        return []
    text = d.system if style == "source" else hermes.reference_system(d.tools)
    return [{"role": "system", "content": text}]


def _pair_responses(calls: list[dict[str, Any]], responses: list[str]) -> list[dict[str, Any]]:
    # positional pairing, as in hermes: the k-th <tool_response> answers the k-th call
    return [{"name": c["name"], "arguments": c["arguments"], "response": r} for c, r in zip(calls, responses)]


def decompose(row: dict[str, Any], d: Dialogue, *, source_key: str, split: str,
              opts: PrepareOptions = PrepareOptions()) -> list[dict[str, Any]]:
    """One trajectory → its RL rows (one per user turn), in the stored RL layout (schemas.py)."""
    conv = row["conversations"]
    tools_json = json.dumps([hermes.envelope(t) for t in d.tools], ensure_ascii=False)
    names = d.tool_names
    system = _system(d, opts.system_style)
    original = json.dumps(row, ensure_ascii=False, default=str) if opts.keep_original else ""
    user_pos = [k for k, t in enumerate(d.turns) if t.role == "user"]
    rows = []
    for turn_i, start in enumerate(user_pos):
        end = user_pos[turn_i + 1] if turn_i + 1 < len(user_pos) else len(d.turns)
        steps: list[list[dict[str, Any]]] = []
        recorded: list[dict[str, Any]] = []
        for k in range(start + 1, end):
            t = d.turns[k]
            if t.role == "assistant" and t.calls:
                steps.append([{"name": c["name"], "arguments": c["arguments"]} for c in t.calls])
                # the tool turns directly after this step answer it
                direct: list[str] = []
                for u in d.turns[k + 1 : end]:
                    if u.role != "tool":
                        break
                    direct.extend(u.responses)
                recorded.extend(_pair_responses(t.calls, direct))
        if not steps and not opts.include_irrelevant:
            continue
        prompt = list(system)
        for t in d.turns[: start + 1]:
            src = conv[t.index]
            prompt.append({"role": "assistant" if src["from"] == "gpt" else "user", "content": src["value"]})
        rows.append({
            "prompt": prompt,
            "data_source": opts.data_source,
            "tools": tools_json,
            "reward_model": {
                "style": "rule",
                "ground_truth": {
                    "allowed_tools": names,
                    "gold_tool_calls": json.dumps(steps, ensure_ascii=False),
                    "question_content": d.turns[start].text,
                    "subset_name": "tool_call" if steps else "irrelevant",
                    "tool_schemas": tools_json,
                },
            },
            "extra_info": {
                "need_tools_kwargs": False,
                "original_turn_index": turn_i,
                "index": 0,  # set by the writer: position within the split
                "source_key": source_key,
                "split": split,
                "gold_responses": json.dumps(recorded, ensure_ascii=False),
                "original_row": original,
            },
        })
    return rows


@dataclass
class Funnel:
    """Counts per stage; every stage reconciles with the one before it (see `check`)."""

    raw: int = 0
    rejected: int = 0
    valid: int = 0
    duplicates: int = 0
    unique: int = 0
    eval_trajectories: int = 0
    eval_overlap: int = 0  # train trajectories dropped: one of their user turns is an eval user turn
    train_trajectories: int = 0
    sft_trajectories: int = 0
    rl_trajectories: int = 0
    eval_rows: int = 0
    rl_rows: int = 0
    rl_rows_tool_call: int = 0
    rl_rows_irrelevant: int = 0
    sft_full_rows: int = 0
    rejected_by_field: dict[str, int] = field(default_factory=dict)

    def check(self) -> None:
        """Raise ValueError when a stage does not add up (a bug, never a data problem)."""
        rules = [
            (self.raw, self.valid + self.rejected, "raw != valid + rejected"),
            (self.valid, self.unique + self.duplicates, "valid != unique + duplicates"),
            (self.unique, self.eval_trajectories + self.eval_overlap + self.train_trajectories,
             "unique != eval + overlap + train"),
            (self.train_trajectories, self.sft_trajectories + self.rl_trajectories, "train != sft + rl"),
            (self.rl_rows, self.rl_rows_tool_call + self.rl_rows_irrelevant, "rl rows != tool_call + irrelevant"),
        ]
        bad = [msg for a, b, msg in rules if a != b]
        if bad:
            raise ValueError(f"funnel does not reconcile: {bad}: {self.as_dict()}")

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def table(self) -> str:
        lines = [f"{k:>22}  {v:>9,}" for k, v in self.__dict__.items() if isinstance(v, int)]
        return "\n".join(lines)


OUTPUTS = ("eval", "sft", "sft_full", "rl")
# everything `prepare` writes into --out, which it replaces as a whole
OWNED_FILES = (*(f"{name}.parquet" for name in OUTPUTS), "funnel.json", "rejects.jsonl")


def turn_keys(d: Dialogue) -> tuple[bytes, ...]:
    """Short hashes of each user turn, to find training trajectories that repeat an eval question."""
    return tuple(hashlib.sha256(t.text.strip().encode()).digest()[:16] for t in d.turns if t.role == "user")


def _scan(path: str | os.PathLike[str], funnel: Funnel, on_error: str, rejects: Any,
          batch_size: int) -> tuple[dict[int, str], dict[int, tuple[bytes, ...]]]:
    """Pass 1: validate every row; return {row index: content key} for the first occurrence of
    each key, and the user-turn hashes of those rows."""
    from slca.data.io import read_rows
    from slca.data.schemas import RowError, check_row, reject_row

    seen: dict[str, int] = {}
    keep: dict[int, str] = {}
    turns: dict[int, tuple[bytes, ...]] = {}
    for idx, row in enumerate(read_rows(path, batch_size=batch_size, allow_empty=False)):
        funnel.raw += 1
        d, errs = check_row(row, "sft", idx)
        if not errs and d is None:
            errs = [RowError(idx, "conversations", "missing column (trajectories must be ShareGPT + hermes)")]
        if errs:
            funnel.rejected += 1
            reject_row(idx, errs, row, counts=funnel.rejected_by_field, on_error=on_error, on_reject=rejects)
            continue
        funnel.valid += 1
        key = dialogue_key(d)
        if key in seen:
            funnel.duplicates += 1
            continue
        seen[key] = idx
        keep[idx] = key
        turns[idx] = turn_keys(d)
    funnel.unique = len(keep)
    return keep, turns


def carve_eval(keys: Iterable[str], *, seed: int, eval_size: int) -> set[str]:
    """The `eval_size` content keys with the lowest eval rank (order-independent).

    An eval size larger than the input is an error, not a silent clamp: the eval set defines
    the benchmark, and shrinking it quietly would change every number reported on it.
    """
    keys = sorted(set(keys))
    if eval_size > len(keys):
        raise DataInputError(f"--eval-size {eval_size} exceeds the {len(keys)} unique valid trajectories; "
                             f"pass --eval-size {len(keys)} or less")
    return set(sorted(keys, key=lambda k: rank_key(seed, "eval", k))[:eval_size])


def partition(train: Iterable[str], *, seed: int, rl_fraction: float) -> dict[str, str]:
    """Train key → "rl" | "sft": RL = the round(rl_fraction · n) lowest RL ranks (order-independent)."""
    by_rl = sorted(set(train), key=lambda k: rank_key(seed, "rl", k))
    n_rl = round(rl_fraction * len(by_rl))
    return {k: ("rl" if i < n_rl else "sft") for i, k in enumerate(by_rl)}


def prepare(input_path: str | os.PathLike[str], out_dir: str | os.PathLike[str], *,
            opts: PrepareOptions = PrepareOptions(), on_error: str = "fail",
            batch_size: int = 512) -> Funnel:
    """Run the derivation on a trajectory file; writes eval/sft/sft_full/rl parquet files and
    funnel.json into `out_dir` (plus rejects.jsonl in skip mode). Two streaming passes.

    All outputs are written into a temporary sibling directory that replaces `out_dir` at the end
    (slca.fileio.atomic_directory): a failure leaves the previous `out_dir` exactly as it was.
    """
    from slca.data.outputs import check_out_dir
    from slca.fileio import make_parents, remove_made
    from slca.fileio import atomic_directory, atomic_write_text

    check_out_dir(out_dir, [input_path], OWNED_FILES)
    made = make_parents(out_dir)
    try:
        with atomic_directory(out_dir) as out:
            funnel = _prepare_into(input_path, out, opts, on_error, batch_size)
            atomic_write_text(out / "funnel.json", json.dumps(funnel.as_dict(), indent=2) + "\n")
    except BaseException:
        remove_made(made)
        raise
    return funnel


def _prepare_into(input_path: str | os.PathLike[str], out: Path, opts: PrepareOptions, on_error: str,
                  batch_size: int) -> Funnel:
    from slca.data.convert import RejectsWriter
    from slca.data.io import RowWriter, read_rows
    from slca.data.schemas import arrow_schema

    funnel = Funnel()
    rejects = RejectsWriter(out / "rejects.jsonl") if on_error == "skip" else None
    writers: dict[str, Any] = {}
    try:
        keep, turns = _scan(input_path, funnel, on_error, rejects, batch_size)
        eval_keys = carve_eval(keep.values(), seed=opts.seed, eval_size=opts.eval_size)
        eval_turns = {h for i, k in keep.items() if k in eval_keys for h in turns[i]}
        train = [k for i, k in keep.items() if k not in eval_keys and eval_turns.isdisjoint(turns[i])]
        funnel.eval_overlap = len(keep) - len(eval_keys) - len(train)
        split_of = {k: "eval" for k in eval_keys} | partition(train, seed=opts.seed, rl_fraction=opts.rl_fraction)
        writers = {name: RowWriter(out / f"{name}.parquet", arrow_schema("sft" if name.startswith("sft") else name),
                                   batch_size=batch_size) for name in OUTPUTS}
        for idx, row in enumerate(read_rows(input_path, batch_size=batch_size)):
            key = keep.get(idx)
            if key is None:
                continue
            split = split_of.get(key)
            if split is None:  # repeats an eval user turn; counted in eval_overlap
                continue
            d, _ = parse_conversations(row["conversations"])
            route(row, d, key, split, writers, funnel, opts)
        for w in writers.values():
            w.close()
    except BaseException:
        for w in writers.values():
            w.abort()
        if rejects is not None:
            rejects.close(keep=False)
        raise
    if rejects is not None:
        rejects.close(keep=True)
    funnel.check()
    return funnel


def sft_row(row: dict[str, Any]) -> dict[str, Any]:
    """An SFT row restricted to the stored SFT columns (string extras kept when present)."""
    return {k: row.get(k) for k in ("uuid", "subset_name", "question", "target_tools", "conversations")}


def route(row: dict[str, Any], d: Dialogue, key: str, split: str, writers: dict[str, Any], funnel: Funnel,
          opts: PrepareOptions, *, max_rows: int | None = None) -> int:
    """Send one trajectory to its outputs; returns the number of RL/eval rows written."""
    if split == "eval":
        funnel.eval_trajectories += 1
        n = _write_rl(writers["eval"], decompose(row, d, source_key=key, split="eval", opts=opts), max_rows)
        funnel.eval_rows += n
        return n
    funnel.train_trajectories += 1
    writers["sft_full"].write(sft_row(row))
    funnel.sft_full_rows += 1
    if split == "sft":
        funnel.sft_trajectories += 1
        writers["sft"].write(sft_row(row))
        return 0
    funnel.rl_trajectories += 1
    rows = decompose(row, d, source_key=key, split="rl", opts=opts)
    n = _write_rl(writers["rl"], rows, max_rows)
    for r in rows[:n]:
        if r["reward_model"]["ground_truth"]["subset_name"] == "tool_call":
            funnel.rl_rows_tool_call += 1
        else:
            funnel.rl_rows_irrelevant += 1
    funnel.rl_rows += n
    return n


def _write_rl(writer: Any, rows: list[dict[str, Any]], max_rows: int | None) -> int:
    if max_rows is not None:
        rows = rows[: max(0, max_rows)]
    for r in rows:
        r["extra_info"]["index"] = writer.n
        writer.write(r)
    return len(rows)
