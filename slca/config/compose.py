"""Compose a spec with Hydra (conf/<group>/<option>.yaml + overrides), then validate it with pydantic.

Hydra and OmegaConf are imported here and in no core module; every failure becomes a `SpecError`
whose message names the config path and what is allowed.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from slca.config.base import RenamedField, RuleViolation, SlcaModel
from slca.config.errors import SpecError
from slca.config.spec import GROUPS, Spec

CONF_DIR = Path(__file__).resolve().parents[2] / "conf"
PRIMARY = "config"


def options(group: str, conf_dir: Path = CONF_DIR) -> list[str]:
    """Option names available for a config group (the YAML files in conf/<group>/)."""
    return sorted(p.stem for p in (conf_dir / group).glob("*.yaml"))


def compose_dict(overrides: list[str] | tuple[str, ...] = (), conf_dir: Path = CONF_DIR) -> dict[str, Any]:
    """Hydra composition of the primary config with `overrides`, resolved to plain containers."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from hydra.errors import HydraException
    from omegaconf import OmegaConf
    from omegaconf.errors import OmegaConfBaseException

    _refuse_path_options(overrides)
    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=str(conf_dir), version_base="1.3"):
            cfg = compose(config_name=PRIMARY, overrides=list(overrides))
        return OmegaConf.to_container(cfg, resolve=True, throw_on_missing=True)  # type: ignore[return-value]
    except (HydraException, OmegaConfBaseException) as exc:
        raise SpecError(_explain_hydra_error(exc, list(overrides), conf_dir)) from None
    except ValueError as exc:
        # Hydra raises plain ValueError for a malformed defaults list (e.g. `defaults: 3`).
        raise SpecError(f"config error: {_first_line(str(exc))}") from None
    except RecursionError:
        raise SpecError("config error at experiment: the defaults lists include each other in a cycle (an overlay that includes itself?)") from None
    finally:
        GlobalHydra.instance().clear()


def _refuse_path_options(overrides: list[str] | tuple[str, ...]) -> None:
    """`group=option` names a YAML file in conf/<group>/: a path in it would load YAML from elsewhere."""
    for item in overrides:
        key, sep, value = item.lstrip("+~").partition("=")
        if sep and (key in GROUPS or key == "experiment") and not value.strip():
            raise SpecError(f"config error at {key}: an option name is needed; options: {', '.join(options(key))}")
        if sep and (key in GROUPS or key == "experiment") and ("/" in value or "\\" in value or ".." in value):
            raise SpecError(f"config error at {key}: option {value!r} must be a plain name from conf/{key}/ (no '/', '\\' or '..')")


def compose_spec(overrides: list[str] | tuple[str, ...] = (), conf_dir: Path = CONF_DIR) -> Spec:
    """Compose and validate: the typed, fully resolved spec for `overrides`."""
    from slca.config.groups.launcher import drop_other_launchers_fields

    data = compose_dict(overrides, conf_dir)
    if isinstance(data, dict) and "launcher" in data:
        data["launcher"] = drop_other_launchers_fields(data["launcher"])
    return validate_spec(data)


def validate_spec(data: dict[str, Any]) -> Spec:
    """Validate a resolved spec dict; the first error becomes a one-line `SpecError`."""
    try:
        return Spec.model_validate(data)
    except ValidationError as exc:
        raise SpecError(_explain_validation_error(exc, data)) from None


def _explain_validation_error(exc: ValidationError, data: dict[str, Any]) -> str:
    err = exc.errors()[0]
    path, node_model = _user_path(err["loc"], data)
    kind = err["type"]
    rule = err.get("ctx", {}).get("error")
    if isinstance(rule, RuleViolation):
        # A cross-field rule: its path is relative to the model that raised it.
        full = ".".join(p for p in (path if path != "<root>" else "", rule.path) if p) or "<root>"
        if isinstance(rule, RenamedField):
            return f"config error at {full}: renamed to {'.'.join(filter(None, (full.rpartition('.')[0], rule.new)))}"
        return f"config error at {full}: {rule.message}"
    if kind == "extra_forbidden":
        _, holder = _user_path(err["loc"][:-1], data)  # the model the key was given to, even when its value is a mapping
        fields = list(holder.model_fields) if holder else []
        parent, _, leaf = path.rpartition(".")
        close = _closest(leaf, fields)
        hint = f" (did you mean {'.'.join(filter(None, (parent, close)))}?)" if close else ""
        return f"config error at {path}: unknown key{hint}; allowed keys here: {', '.join(fields) or '?'}"
    if kind == "union_tag_invalid" or kind == "union_tag_not_found":
        group = path.split(".")[0]
        return f"config error at {path}: {err['msg']}; options for {group}: {', '.join(options(group))}"
    if kind == "missing":
        return f"config error at {path}: required value is missing"
    got = err.get("input")
    got_text = f" (got {got!r})" if not isinstance(got, (dict, list)) else ""
    return f"config error at {path}: {err['msg']}{got_text}"


def _user_path(loc: tuple[Any, ...], data: Any) -> tuple[str, type[BaseModel] | None]:
    """Turn a pydantic error location into the dotted path the user wrote.

    Discriminated unions insert the tag value into `loc`; those items are not keys of the input, so
    they are skipped. Also returns the model class of the node that holds the erroneous key.
    """
    parts: list[str] = []
    node: Any = data
    model: type[BaseModel] | None = Spec
    for item in loc:
        if isinstance(node, dict) and item in node:
            parts.append(str(item))
            node = node[item]
            if isinstance(node, dict):
                model = _field_model(model, str(item), node)
        elif isinstance(node, list) and isinstance(item, int) and item < len(node):
            parts.append(str(item))
            node = node[item]
        elif isinstance(node, dict):
            if item not in node and isinstance(item, str) and parts and item == node.get("name", node.get("kind")):
                continue  # a discriminated-union tag, not a key
            parts.append(str(item))
            break
    return ".".join(parts) or "<root>", model


def _field_model(parent: type[BaseModel] | None, field: str, value: dict[str, Any]) -> type[BaseModel] | None:
    """The pydantic model class that validates `parent.field` for this `value` (unions resolved by tag)."""
    import typing

    if parent is None or field not in parent.model_fields:
        return None
    annotation = parent.model_fields[field].annotation
    candidates: list[Any] = []
    stack = [annotation]
    while stack:
        current = stack.pop()
        args = typing.get_args(current)
        if isinstance(current, type) and issubclass(current, BaseModel):
            candidates.append(current)
        stack.extend(args)
    for cls in candidates:
        for tag in ("name", "kind"):
            tag_field = cls.model_fields.get(tag)
            if tag_field is not None and value.get(tag) in typing.get_args(tag_field.annotation):
                return cls
    return candidates[0] if len(candidates) == 1 else None


_COULD_NOT_OVERRIDE = re.compile(r"Could not override '([^']+)'")
_MISSING_OPTION = re.compile(r"Could not find '([^'/]+)/([^']+)'")
_APPEND_EXISTING = re.compile(r"Could not append to config\. An item is already at '([^']+)'")


def _explain_hydra_error(exc: Exception, overrides: list[str], conf_dir: Path) -> str:
    text = str(exc)
    if m := _MISSING_OPTION.search(text):
        group, option = m.groups()
        if group in GROUPS or group == "experiment":
            return f"config error at {group}: unknown option '{option}'; options: {', '.join(options(group, conf_dir))}"
    if m := _COULD_NOT_OVERRIDE.search(text):
        key = m.group(1)
        # Hydra's own advice, "To append to your config use +key=value", is wrong for a misspelt key.
        tree = _composed_without(key, overrides, conf_dir)
        line = renamed_key_error(key, tree) or unknown_key_error(key, tree)
        return line or f"config error at {key}: {_first_line(text.split(chr(10), 1)[-1])}"
    if m := _APPEND_EXISTING.search(text):
        return f"config error at {m.group(1)}: key already exists; drop the leading '+'"
    if any(what in text for what in ("Error parsing override", "mismatched input", "no viable alternative", "LexerNoViableAlt")):
        bad = next((o for o in overrides if o in text), None)
        return f"config error in override {bad!r}: not KEY=VALUE syntax" if bad else f"config error: {_first_line(text)}"
    return f"config error: {_first_line(text)}"


def _composed_without(failing: str, overrides: list[str], conf_dir: Path) -> dict[str, Any] | None:
    """The composition with the other overrides applied; None if that fails too."""
    rest = [o for o in overrides if not o.lstrip("+~").startswith(failing + "=")]
    try:
        return compose_dict(rest, conf_dir)
    except SpecError:
        return None


def renamed_key_error(key: str, tree: dict[str, Any] | None) -> str | None:
    """The one line for a dotted override `key` that spells a renamed field the old way
    (`eval.templates`: renamed to eval.constructions); None when no part of it is an old spelling."""
    parts = key.split(".")
    model: type[BaseModel] | None = Spec
    node: Any = tree
    for i, part in enumerate(parts):
        new = model.renamed_fields.get(part) if model is not None and issubclass(model, SlcaModel) else None
        if new is not None:
            return f"config error at {key}: renamed to {'.'.join([*parts[:i], new, *parts[i + 1:]])}"
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
        model = _field_model(model, part, node) if isinstance(node, dict) else None
    return None


def _closest(word: str, candidates: list[str]) -> str | None:
    """The candidate spelt most like `word`, case aside, if any is close (difflib's ratio >= 0.6)."""
    import difflib

    by_lower = {c.lower(): c for c in candidates}
    close = difflib.get_close_matches(word.lower(), list(by_lower), n=1)
    return by_lower[close[0]] if close else None


def _paths_ending(tree: dict[str, Any], key: str) -> list[str]:
    """Dotted paths of `tree` that end with `.key` (`rl.lr` → train.rl.lr): a key typed without its parents."""
    found, stack = [], [("", tree)]
    while stack:
        prefix, node = stack.pop()
        for name, value in node.items():
            path = f"{prefix}{name}"
            if path.endswith(f".{key}"):
                found.append(path)
            if isinstance(value, dict):
                stack.append((f"{path}.", value))
    return sorted(found)


def unknown_key_error(key: str, tree: dict[str, Any] | None) -> str | None:
    """The one line for a dotted override `key` that is not a path of `tree` (None when it is): the
    first unknown part, the real path when every unknown part has a close spelling (`trian.rl.lr`:
    did you mean train.rl.lr?), and the keys allowed there; or the value the path runs below."""
    if tree is None:
        return None
    parts = key.split(".")
    node, fixed, first = tree, [], None
    for i, part in enumerate(parts):
        if not isinstance(node, dict):
            if first is None:
                return f"config error at {key}: {'.'.join(parts[:i])} holds a value, not keys"
            fixed = None
            break
        chosen = part if part in node else _closest(part, [str(k) for k in node])
        if part not in node and first is None:
            first = (i, sorted(str(k) for k in node))
        if chosen is None:
            fixed = None
            break
        fixed.append(chosen)
        node = node[chosen]
    if first is None:
        return None
    at, allowed = first
    what = "unknown key" if at == len(parts) - 1 else f"unknown key '{parts[at]}'"
    meant = ['.'.join(fixed)] if fixed else _paths_ending(tree, key) if at == 0 else []
    hint = f" (did you mean {' or '.join(meant)}?)" if 0 < len(meant) <= 3 else ""
    return f"config error at {key}: {what}{hint}; allowed keys under {'.'.join(parts[:at]) or '<root>'}: {', '.join(allowed)}"


def _first_line(text: str) -> str:
    """The first non-empty line; a line that ends in ':' is joined with the one that explains it."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return "unknown error"
    if lines[0].endswith(":") and len(lines) > 1:
        return f"{lines[0]} {lines[1]}"
    return lines[0]
