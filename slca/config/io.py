"""Spec files: the resolved `spec.yaml` of a run, experiment overlays, and validation of either."""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel

from slca.config.compose import CONF_DIR, compose_spec, validate_spec
from slca.config.errors import SpecError
from slca.config.spec import Spec
from slca.safe_yaml import YamlTooLarge, load_yaml

OVERLAY_HEADER = "# @package _global_"


def dump_spec(spec: Spec) -> str:
    """The spec as YAML with every value resolved: re-running it needs nothing else."""
    return yaml.safe_dump(spec.model_dump(mode="json"), sort_keys=False, allow_unicode=True, width=120)


def write_spec(spec: Spec, path: str | Path) -> Path:
    """Write `spec.yaml` atomically."""
    from slca.fileio import atomic_write_text

    return atomic_write_text(path, dump_spec(spec))


def is_overlay(path: Path, data: dict[str, Any]) -> bool:
    """An experiment overlay (composed on top of conf/) rather than a fully resolved spec (`data`: the file's YAML)."""
    return _read_text(path).lstrip().startswith(OVERLAY_HEADER) or data.get("defaults") is not None


def load_spec(path: str | Path, overrides: list[str] | tuple[str, ...] = ()) -> Spec:
    """Load a saved spec (or compose an experiment overlay file) and apply dotted `overrides`.

    A saved spec must be complete: a missing key is an error, never a silent group default (the
    experiment that produced the spec may have set it). Overlays compose on top of conf/ as usual.
    """
    path = Path(path)
    if not path.is_file():
        raise SpecError(f"config error: spec file not found: {path}")
    data = _read_yaml(path)  # one line for unreadable, non-UTF-8, invalid or non-mapping files
    if is_overlay(path, data):
        return compose_overlay(path, overrides)
    if missing := missing_key(data):
        raise SpecError(f"config error at {missing}: missing from the saved spec {path} (a saved spec lists every key; regenerate it with `slca run --cfg job`)")
    if overrides:
        data = _apply_dotted(data, overrides)
    return validate_spec(data)


def missing_key(data: Any, model: type[BaseModel] = Spec, prefix: str = "") -> str | None:
    """Dotted path of the first field of `model` (recursively, unions resolved by tag) absent from `data`."""
    from slca.config.compose import _field_model

    if not isinstance(data, dict):
        return None  # a wrong type is validation's error, with its own message
    for name in model.model_fields:
        path = f"{prefix}{name}"
        if name not in data:
            if any(new == name and old in data for old, new in getattr(model, "renamed_fields", {}).items()):
                continue  # spelt the old way: validation names the new spelling
            return path
        value = data[name]
        tag = model.model_fields[name].discriminator
        if isinstance(value, dict) and isinstance(tag, str) and tag not in value:
            return f"{path}.{tag}"  # the option's own name: without it no group default could even be chosen
        sub = _field_model(model, name, value) if isinstance(value, dict) else None
        if sub is not None and (found := missing_key(value, sub, f"{path}.")):
            return found
    return None


def compose_overlay(path: Path, overrides: list[str] | tuple[str, ...] = ()) -> Spec:
    """Compose a user's experiment overlay file on top of conf/.

    The copy gets a name no built-in experiment has, so an overlay named like one (or listing its own
    name in `defaults`) includes the built-in, never itself. The name is a digest of the file's, so
    any legal file name (`exp=1`, `exp,2`, `exp(1)`, `a..b`, non-ASCII letters) makes a plain Hydra
    option; messages show the file's own name again.
    """
    with tempfile.TemporaryDirectory(prefix="slca-conf-") as tmp:
        conf = Path(tmp) / "conf"
        shutil.copytree(CONF_DIR, conf)
        name = f"user-overlay-{hashlib.sha256(os.fsencode(path.stem)).hexdigest()[:16]}"
        shutil.copyfile(path, conf / "experiment" / f"{name}.yaml")
        try:
            return compose_spec([f"experiment={name}", *overrides], conf_dir=conf)
        except SpecError as exc:
            raise SpecError(f"{str(exc).replace(name, path.stem)} (in {path})") from None


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise SpecError(f"config error: {path} is not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise SpecError(f"config error: cannot read {path}: {exc.strerror or exc}") from None


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        data = load_yaml(_read_text(path))
    except YamlTooLarge as exc:
        raise SpecError(f"config error: {path} {exc}") from None
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        at = f" (line {where.line + 1}, column {where.column + 1})" if where is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise SpecError(f"config error: {path} is not valid YAML{at}: {problem}") from None
    except RecursionError:
        raise SpecError(f"config error: {path} nests too deeply to be a spec") from None
    if not isinstance(data, dict):
        raise SpecError(f"config error: {path} must hold a mapping at the top level, not {type(data).__name__}")
    return data


def _apply_dotted(data: dict[str, Any], overrides: list[str] | tuple[str, ...]) -> dict[str, Any]:
    """Apply overrides to a resolved spec: `group=option` swaps a whole group for conf/<group>/<option>.yaml,
    `a.b.c=value` (YAML-typed value) sets an existing key."""
    from slca.config.compose import options, renamed_key_error, unknown_key_error
    from slca.config.spec import GROUPS

    for item in overrides:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise SpecError(f"config error in override {item!r}: not KEY=VALUE syntax")
        if key in GROUPS:
            if raw not in options(key):
                raise SpecError(f"config error at {key}: unknown option '{raw}'; options: {', '.join(options(key))}")
            data[key] = _read_yaml(CONF_DIR / key / f"{raw}.yaml")
            continue
        if key.lstrip("+~") != key:
            raise SpecError(f"config error in override {item!r}: a saved spec is complete; set existing keys without '+' or '~'")
        if (unknown := renamed_key_error(key, data) or unknown_key_error(key, data)) is not None:
            raise SpecError(unknown)
        node = data
        *parents, leaf = key.split(".")
        for part in parents:
            node = node[part]
        try:
            node[leaf] = load_yaml(raw) if raw else None
        except yaml.YAMLError as exc:
            raise SpecError(f"config error at {key}: value {raw!r} is not valid YAML ({getattr(exc, 'problem', None) or 'syntax error'})") from None
    return data
