"""What each pipeline stage hands to the stages after it: one typed record per stage, and the one
function that writes a stage's record (`<run_dir>/<stage>/result.json`) and the one that reads it.

On disk a record is one flat JSON object: the record's fields, the entries of its spread field (the
stage's own numbers, which differ by backend: losses, counts, headline metrics) beside them, and
the fingerprint of the spec that produced it and the invocation that wrote it. That is the layout
slca wrote before these types, so an older run directory still resumes. Paths are recorded as
`RunContext.relative` makes them (inside the run directory: relative to it).

A leaf module: the pipeline, backends, curation and evaluation all import it.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, ClassVar, Mapping, Union

from pydantic import TypeAdapter, ValidationError

from slca.fileio import atomic_write_json

RESULT_NAME = "result.json"
# Keys of the record's envelope: which spec produced it, which invocation of provenance.json wrote it.
ENVELOPE = ("fingerprint", "invocation")


@dataclass(frozen=True)
class DataResult:
    """The split files later stages read; `validation` holds each Toucan split's row counts (empty for the synthetic set)."""

    stage: ClassVar[str] = "data"
    outputs: ClassVar[tuple[str, ...]] = ("sft", "rl", "eval")  # fields naming files later stages read
    spread: ClassVar[str | None] = None  # the mapping field written flat beside the others

    sft: str
    rl: str
    eval: str
    validation: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def split(self, name: str) -> str:
        """The recorded file of split `name` (sft, rl or eval)."""
        return {"sft": self.sft, "rl": self.rl, "eval": self.eval}[name]


@dataclass(frozen=True)
class _PolicyResult:
    """A trained policy's model directory, and the backend's own numbers (steps, losses, wall time)."""

    stage: ClassVar[str]
    outputs: ClassVar[tuple[str, ...]] = ("model_dir",)
    spread: ClassVar[str | None] = "details"

    model_dir: str
    details: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class SftResult(_PolicyResult):
    """The SFT policy (its backend's numbers: steps, losses, rows trained)."""

    stage: ClassVar[str] = "sft"


@dataclass(frozen=True)
class CurateResult:
    """The kept RL prompts (`rl`, read instead of the data stage's RL split) and curation's funnel."""

    stage: ClassVar[str] = "curate"
    outputs: ClassVar[tuple[str, ...]] = ("rl",)
    spread: ClassVar[str | None] = None

    rl: str
    funnel: str
    rows_in: int
    kept: int
    dropped: Mapping[str, int]
    histogram: Mapping[str, int]
    generator_calls: int
    seconds: float


@dataclass(frozen=True)
class RlResult(_PolicyResult):
    """The RL policy (its backend's numbers: steps, wall time, checkpoint)."""

    stage: ClassVar[str] = "rl"


@dataclass(frozen=True)
class EvalResult:
    """Where the evaluation's results and table are, and each policy's headline metrics
    ("<label>/<metric>" -> the first protocol cell's mean; null where it was not measured)."""

    stage: ClassVar[str] = "eval"
    outputs: ClassVar[tuple[str, ...]] = ()
    spread: ClassVar[str | None] = "headline"

    results: str
    table: str
    headline: Mapping[str, Union[float, None]] = field(default_factory=dict)


StageResult = Union[DataResult, SftResult, CurateResult, RlResult, EvalResult]
RESULT_TYPES: dict[str, type[StageResult]] = {cls.stage: cls for cls in (DataResult, SftResult, CurateResult, RlResult, EvalResult)}
_ADAPTERS = {stage: TypeAdapter(cls) for stage, cls in RESULT_TYPES.items()}


@dataclass(frozen=True)
class StageRecord:
    """A finished stage's result with the fingerprint of the spec that produced it (None in a file
    without one) and the invocation that wrote it."""

    result: StageResult
    fingerprint: str | None
    invocation: int | None


@dataclass
class StageResults:
    """The results of this run's earlier stages, as the stages after them read them."""

    data: DataResult | None = None
    sft: SftResult | None = None
    curate: CurateResult | None = None
    rl: RlResult | None = None
    eval: EvalResult | None = None

    def add(self, result: StageResult) -> None:
        setattr(self, result.stage, result)

    def has(self, stage: str) -> bool:
        return getattr(self, stage) is not None


class ResultFileError(ValueError):
    """A result.json that is unreadable or not the record of its stage; `str()` is one line naming the file."""


def result_path(run_dir: Path, stage: str) -> Path:
    return run_dir / stage / RESULT_NAME


def write_result(run_dir: Path, record: StageRecord) -> Path:
    """Write `record` as its stage's result.json in `run_dir` (atomically)."""
    result = record.result
    flat = asdict(result)
    if result.spread is not None:
        spread = flat.pop(result.spread)
        clash = sorted(set(spread) & (set(flat) | set(ENVELOPE)))
        if clash:  # a backend's number named like a field would be read back as that field
            raise ValueError(f"{result.stage} result: {result.spread} key(s) {clash} collide with the record's own keys")
        flat.update(spread)
    flat.update(fingerprint=record.fingerprint, invocation=record.invocation)
    return atomic_write_json(result_path(run_dir, result.stage), flat)


def read_result(run_dir: Path, stage: str) -> StageRecord | None:
    """The record in `run_dir`'s result.json of `stage`; None when there is none; ResultFileError
    naming the file when it is unreadable or does not hold that stage's record."""
    path = result_path(run_dir, stage)
    if not path.exists():
        return None
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ResultFileError(f"{path} is unreadable ({first_line(exc)})") from None
    if not isinstance(raw, dict):
        raise ResultFileError(f"{path} does not hold a stage result (a JSON object)")
    cls = RESULT_TYPES[stage]
    names = {f.name for f in fields(cls)}
    body = {key: value for key, value in raw.items() if key in names and key != cls.spread}
    if cls.spread is not None:
        body[cls.spread] = {key: value for key, value in raw.items() if key not in names and key not in ENVELOPE}
    try:
        result = _ADAPTERS[stage].validate_python(body)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"]) or "<record>"
        raise ResultFileError(f"{path} does not hold the {stage} stage's result ({where}: {error['msg']})") from None
    fingerprint, invocation = raw.get("fingerprint"), raw.get("invocation")
    return StageRecord(result, None if fingerprint is None else str(fingerprint), invocation if isinstance(invocation, int) else None)


def trained_policies(run_dir: Path) -> StageResults:
    """The sft and rl records a run directory holds (each None where that stage has not finished);
    ResultFileError naming the file when one is unreadable."""
    results = StageResults()
    for stage in ("sft", "rl"):
        record = read_result(run_dir, stage)
        if record is not None:
            results.add(record.result)
    return results


def first_line(exc: BaseException) -> str:
    """An exception as one line: its type and the first line of its message."""
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0] if text else 'no detail'}"
