"""Value types of the simulators: observations, normalised calls, tool-schema indexes."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

ObservationKind = Literal["ok", "error", "recorded", "synthesised"]


@dataclass(frozen=True)
class Observation:
    """What one tool call returns to the policy.

    `kind` says where the text came from ("ok" = an LLM simulator answered); `truncated` is True
    when the text was cut to the length cap, `n_chars` is the length before cutting.
    """

    text: str
    kind: ObservationKind
    truncated: bool = False
    n_chars: int = 0

    @property
    def is_error(self) -> bool:
        return self.kind == "error"


@dataclass(frozen=True)
class Call:
    """A call after normalisation: `arguments` is a dict, or None with `error` set when undecodable."""

    name: str
    arguments: dict[str, Any] | None
    error: str | None = None


@dataclass(frozen=True)
class ToolSpec:
    """One tool: its name, description, parameter schema and the schema dict as the row gave it."""

    name: str
    description: str
    parameters: dict[str, Any]
    raw: dict[str, Any]


def canonical_json(value: Any) -> str:
    """Sorted-key, compact JSON; the identity used for matching and hashing calls."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)


def decode_arguments(raw: Any) -> tuple[dict[str, Any] | None, str | None]:
    """Arguments as given (dict, JSON string, None) → (dict, None) or (None, reason)."""
    if raw is None or raw == {} or (isinstance(raw, str) and not raw.strip()):
        return {}, None
    if isinstance(raw, Mapping):
        return dict(raw), None
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as exc:
            return None, str(exc)
        if not isinstance(value, dict):
            return None, f"expected a JSON object, got {type(value).__name__}"
        return value, None
    return None, f"expected a JSON object, got {type(raw).__name__}"


def as_call(call: Any) -> Call:
    """Accept a ToolCall-like object (.name/.arguments) or a dict ({name, arguments|parameters})."""
    if isinstance(call, Mapping):
        name = call.get("name")
        raw = call["arguments"] if "arguments" in call else call.get("parameters")
    else:
        name = getattr(call, "name", None)
        raw = getattr(call, "arguments", None)
    name = name if isinstance(name, str) else str(name)
    arguments, error = decode_arguments(raw)
    return Call(name=name, arguments=arguments, error=error)


def tool_spec(schema: Mapping[str, Any]) -> ToolSpec | None:
    """One schema in the OpenAI envelope ({"type":"function","function":{…}}) or bare ({name, …})."""
    inner = schema.get("function") if isinstance(schema.get("function"), Mapping) else schema
    name = inner.get("name")
    if not isinstance(name, str):
        return None
    params = inner.get("parameters")
    return ToolSpec(
        name=name,
        description=str(inner.get("description") or ""),
        parameters=dict(params) if isinstance(params, Mapping) else {},
        raw=dict(schema),
    )


def index_tools(tools: Iterable[Mapping[str, Any]] | str | None) -> dict[str, ToolSpec]:
    """Name → ToolSpec. A JSON string of the list is accepted; entries without a name are skipped."""
    if tools is None:
        return {}
    if isinstance(tools, str):
        try:
            tools = json.loads(tools)
        except json.JSONDecodeError:
            return {}
        if not isinstance(tools, list):
            return {}
    out: dict[str, ToolSpec] = {}
    for schema in tools:
        spec = tool_spec(schema) if isinstance(schema, Mapping) else None
        if spec is not None:
            out[spec.name] = spec  # last definition wins, as in the reference's tools_kwargs dict
    return out


def index_recorded(recorded: Iterable[Mapping[str, Any]] | None) -> dict[tuple[str, str], str]:
    """(name, canonical args) → response text, for recorded gold calls ({name, arguments, response})."""
    out: dict[tuple[str, str], str] = {}
    for entry in recorded or ():
        call = as_call(entry)
        if call.arguments is None or "response" not in entry:
            continue
        response = entry["response"]
        text = response if isinstance(response, str) else json.dumps(response, ensure_ascii=False)
        out.setdefault((call.name, canonical_json(call.arguments)), text)
    return out
