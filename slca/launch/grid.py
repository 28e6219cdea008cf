"""Sweep files and multirun overrides → grid points (pure; docs/launch.md#sweep-files).

A sweep file names the sweep, the experiment its runs start from, overrides every run shares, and a
grid `{dotted key: [values]}`; its runs are the grid's cartesian product, in file order (the last
key varies fastest). `slca run -m` builds the same thing from overrides whose value is a comma list.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Union

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from slca.launch.base import SweepError
from slca.safe_yaml import YamlTooLarge, load_yaml

Scalar = Union[bool, int, float, str]
GridValue = Union[Scalar, list[Scalar]]
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


class SweepFile(BaseModel):
    """One shareable sweep: `sweeps/<name>.yaml`."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="Sweep name: the W&B group of its runs and its directory's default name (runs/sweeps/<name>).")
    experiment: str = Field(description="Experiment overlay (conf/experiment/) every run starts from.")
    description: str = Field("", description="One-line purpose of the sweep.")
    overrides: list[str] = Field(default_factory=list, description="Overrides every run shares, applied before the grid's.")
    grid: dict[str, list[GridValue]] = Field(description="Dotted config key (or group) -> the values it takes; runs are the cartesian product.")
    seed_keys: list[str] | None = Field(None, description="Grid keys averaged over in `slca results` (mean ± std); null: run.seed when the grid sweeps it.")

    @field_validator("name", "experiment")
    @classmethod
    def _plain(cls, value: str) -> str:
        if not _NAME.match(value):
            raise ValueError(f"{value!r} must be a plain name (letters, digits, '_', '.', '-')")
        return value

    @field_validator("grid")
    @classmethod
    def _grid(cls, grid: dict[str, list[GridValue]]) -> dict[str, list[GridValue]]:
        if not grid:
            raise ValueError("needs at least one key")
        for key, values in grid.items():
            if not _KEY.match(key):
                raise ValueError(f"key {key!r} is not a dotted config path")
            if not values:
                raise ValueError(f"{key} has no values")
            rendered = [override_value(v) for v in values]
            if len(set(rendered)) != len(rendered):
                raise ValueError(f"{key} lists a value twice")
        return grid


def load_sweep_file(path: Path) -> SweepFile:
    """Read and validate a sweep file; every problem is one SweepError line naming the file and field."""
    try:
        data = load_yaml(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SweepError(f"{path}: sweep file not found") from None
    except OSError as exc:
        raise SweepError(f"{path}: cannot read it: {exc.strerror or type(exc).__name__}") from None
    except UnicodeDecodeError as exc:
        raise SweepError(f"{path}: cannot read it: not UTF-8 text (byte {exc.start})") from None
    except YamlTooLarge as exc:
        raise SweepError(f"{path}: {exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise SweepError(f"{path}: not valid YAML{where}") from None
    if not isinstance(data, dict):
        raise SweepError(f"{path}: a sweep file is a mapping with name, experiment and grid")
    try:
        sweep = SweepFile.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(p) for p in error["loc"]) or "<root>"
        raise SweepError(f"{path}: {field}: {error['msg']}") from None
    if sweep.seed_keys is None:
        sweep.seed_keys = [k for k in ("run.seed",) if k in sweep.grid]
    unknown = set(sweep.seed_keys) - set(sweep.grid)
    if unknown:
        raise SweepError(f"{path}: seed_keys: {sorted(unknown)} not in the grid (keys: {', '.join(sweep.grid)})")
    return sweep


def override_value(value: GridValue) -> str:
    """A grid value as an override's right-hand side (YAML spelling: true, 0.5, [a,b])."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ",".join(override_value(v) for v in value) + "]"
    return str(value)


def points(grid: dict[str, list[GridValue]]) -> list[dict[str, GridValue]]:
    """The grid's cartesian product, in file order, the last key varying fastest."""
    keys = list(grid)
    return [dict(zip(keys, combo)) for combo in itertools.product(*(grid[k] for k in keys))]


def point_key(point: dict[str, GridValue]) -> str:
    """The run's directory name: `key-value` pairs joined by `_` (list items by `+`), other characters
    outside [A-Za-z0-9.+-] as `-`."""
    def text(value: GridValue) -> str:
        return "+".join(override_value(v) for v in value) if isinstance(value, list) else override_value(value)

    parts = [f"{key}-{text(value)}" for key, value in point.items()]
    return re.sub(r"[^A-Za-z0-9.+\-_]", "-", "_".join(parts)) or "run"


def point_overrides(point: dict[str, GridValue]) -> list[str]:
    return [f"{key}={override_value(value)}" for key, value in point.items()]


def split_multirun(overrides: list[str]) -> tuple[list[str], dict[str, list[GridValue]]]:
    """`slca run -m` overrides → (the fixed ones, the grid): `key=a,b` sweeps `key` over a and b.

    A comma inside brackets or quotes belongs to one value (`run.stages=[data,sft]` is not swept)."""
    fixed: list[str] = []
    grid: dict[str, list[GridValue]] = {}
    for override in overrides:
        key, sep, value = override.partition("=")
        values = _top_level_split(value) if sep else [value]
        if len(values) < 2:
            fixed.append(override)
            continue
        if key in grid:
            raise SweepError(f"multirun: {key} is swept twice")
        if any(v == "" for v in values):
            raise SweepError(f"multirun: {override}: an empty value in the list")
        grid[key] = list(dict.fromkeys(values))
    return fixed, grid


def _top_level_split(text: str) -> list[str]:
    parts, depth, quote, current = [], 0, "", []
    for char in text:
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "[{(":
            depth += 1
        elif char in "]})":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append("".join(current))
            current = []
            continue
        current.append(char)
    parts.append("".join(current))
    return parts
