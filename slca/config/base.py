"""Base class for every typed config model: unknown keys are errors, assignments are validated,
floats are finite, and cross-field rules name the config path they break."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, model_validator

from slca.config.plug_point_names import SYSTEM_PROMPT_NAMES


class SlcaModel(BaseModel):
    """A config node. Each field carries a type, a default, a range and a one-line `description`."""

    # allow_inf_nan=False: an inf temperature or a nan coefficient is refused at composition, not at step 2.
    model_config = ConfigDict(extra="forbid", validate_assignment=True, use_attribute_docstrings=False, allow_inf_nan=False)
    # Old spelling -> field's name now: an old key in a YAML file or saved spec is refused naming the new one.
    renamed_fields: ClassVar[dict[str, str]] = {}

    @model_validator(mode="before")
    @classmethod
    def _refuse_renamed(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for old, new in cls.renamed_fields.items():
                if old in data:
                    raise RenamedField(old, new)
        return data


class RuleViolation(ValueError):
    """A cross-field rule broken inside a model validator.

    `path` is dotted and relative to the model that raises it; composition prefixes the model's own
    location, so the user reads e.g. "config error at downsample.m: 32 exceeds train.rl.n=4".
    """

    def __init__(self, path: str, message: str) -> None:
        super().__init__(message)
        self.path = path
        self.message = message


class RenamedField(RuleViolation):
    """A field given by its old spelling; `new` is its name now (composition prefixes the model's location)."""

    def __init__(self, old: str, new: str) -> None:
        super().__init__(old, f"renamed to {new}")
        self.new = new


def plain_name(value: str | None, what: str) -> str | None:
    """A name used as a path component: no separators, no '..', not empty (runs/<name>/ stays under runs/)."""
    if value is None:
        return value
    if value.strip() in ("", ".") or "/" in value or "\\" in value or ".." in value or "\0" in value:
        raise RuleViolation("", f"{what} {value!r} must be a plain name (no '/', '\\' or '..')")
    return value


def system_prompt_choice(value: str) -> str:
    """A registered system prompt name, or a readable UTF-8 text file (checked now, not at RL start)."""
    from pathlib import Path

    if value in SYSTEM_PROMPT_NAMES:
        return value
    path = Path(value)
    if not path.is_file():
        raise RuleViolation("", f"{value!r} is neither a registered system prompt ({', '.join(sorted(SYSTEM_PROMPT_NAMES))}) nor a file")
    try:
        path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RuleViolation("", f"system prompt file {value} is not readable UTF-8 text ({exc.__class__.__name__})") from None
    return value
