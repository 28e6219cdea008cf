"""Spec files: the resolved `spec.yaml` of a run, experiment overlays, and validation of either."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

import yaml

from slca.config.compose import CONF_DIR, compose_spec, validate_spec
from slca.config.errors import SpecError
from slca.config.spec import Spec

OVERLAY_HEADER = "# @package _global_"


def dump_spec(spec: Spec) -> str:
    """The spec as YAML with every value resolved: re-running it needs nothing else."""
    return yaml.safe_dump(spec.model_dump(mode="json"), sort_keys=False, allow_unicode=True, width=120)


def write_spec(spec: Spec, path: str | Path) -> Path:
    """Write `spec.yaml` atomically."""
    from slca.fileio import atomic_write_text

    return atomic_write_text(path, dump_spec(spec))


def is_overlay(path: Path) -> bool:
    """An experiment overlay (composed on top of conf/) rather than a fully resolved spec."""
    text = path.read_text(encoding="utf-8")
    return text.lstrip().startswith(OVERLAY_HEADER) or _read_yaml(path).get("defaults") is not None


def load_spec(path: str | Path, overrides: list[str] | tuple[str, ...] = ()) -> Spec:
    """Load a saved spec (or compose an experiment overlay file) and apply dotted `overrides`."""
    path = Path(path)
    if not path.is_file():
        raise SpecError(f"config error: spec file not found: {path}")
    if is_overlay(path):
        return compose_overlay(path, overrides)
    data = _read_yaml(path)
    if overrides:
        data = _apply_dotted(data, overrides)
    return validate_spec(data)


def compose_overlay(path: Path, overrides: list[str] | tuple[str, ...] = ()) -> Spec:
    """Compose a user's experiment overlay file as if it were conf/experiment/<its name>.yaml."""
    with tempfile.TemporaryDirectory(prefix="slca-conf-") as tmp:
        conf = Path(tmp) / "conf"
        shutil.copytree(CONF_DIR, conf)
        shutil.copyfile(path, conf / "experiment" / path.name)
        return compose_spec([f"experiment={path.stem}", *overrides], conf_dir=conf)


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise SpecError(f"config error: {path} is not valid YAML: {str(exc).splitlines()[0]}") from None
    if not isinstance(data, dict):
        raise SpecError(f"config error: {path} must hold a mapping at the top level")
    return data


def _apply_dotted(data: dict[str, Any], overrides: list[str] | tuple[str, ...]) -> dict[str, Any]:
    """Apply overrides to a resolved spec: `group=option` swaps a whole group for conf/<group>/<option>.yaml,
    `a.b.c=value` (YAML-typed value) sets an existing key."""
    from slca.config.compose import options
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
        node = data
        *parents, leaf = key.split(".")
        for part in parents:
            if not isinstance(node.get(part), dict):
                raise SpecError(f"config error at {key}: no such node {part!r} in the spec")
            node = node[part]
        if leaf not in node:
            raise SpecError(f"config error at {key}: unknown key; allowed keys under {'.'.join(parents) or '<root>'}: {', '.join(node)}")
        node[leaf] = yaml.safe_load(raw) if raw else None
    return data
