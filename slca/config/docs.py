"""Generate docs/config.md, the config reference, from the typed models and the option files in conf/.

Every group of the spec gets its options (one per `conf/<group>/*.yaml`, with the values each sets
that differ from its model's defaults) and, for every model an option can select, a table of its
fields: type, allowed range (from the Field constraints and Literal choices), default and the
one-line description. The output depends only on the models and conf/, so a test can compare it
with the committed page; `slca config docs --write` (or `python -m slca.config.docs --write`)
regenerates it.
"""

from __future__ import annotations

import argparse
import re
import sys
import types
import typing
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from slca.config.compose import CONF_DIR
from slca.config.spec import GROUPS, Spec
from slca.safe_yaml import load_yaml

DOCS_PATH = CONF_DIR.parent / "docs" / "config.md"
REGENERATE = "slca config docs --write"
_TAGS = ("name", "kind")  # discriminator fields of the option models


# ---------------------------------------------------------------------------------------------
# Types, ranges and defaults as text


def type_text(annotation: Any) -> str:
    """A readable type for an annotation; shapes this function does not know fall back to their repr."""
    try:
        return _type_text(annotation)
    except Exception:  # a new annotation shape must not break the reference; show it as Python does
        try:
            return _clean(repr(annotation))
        except Exception:
            return type(annotation).__name__


def _type_text(annotation: Any) -> str:
    if annotation is None or annotation is type(None):
        return "null"
    if annotation is Any:
        return "any"
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        return _type_text(args[0])
    if origin is typing.Literal:
        kinds = sorted({_type_text(type(a)) for a in args})
        return " or ".join(kinds)
    if origin is typing.Union or origin is types.UnionType:
        named = [_type_text(a) for a in args if a is not type(None)]
        text = " or ".join(dict.fromkeys(named))
        return f"{text} or null" if type(None) in args else text
    if origin is not None:
        name = getattr(origin, "__name__", None) or _clean(repr(origin))
        if not args:
            return name
        inner = ", ".join("..." if a is Ellipsis else _type_text(a) for a in args)
        return f"{name}[{inner}]"
    if isinstance(annotation, type):
        return annotation.__name__
    return _clean(repr(annotation))


def _clean(text: str) -> str:
    return text.replace("typing.", "").replace("typing_extensions.", "")


def choices(annotation: Any) -> list[Any]:
    """Literal values allowed anywhere inside the annotation (Optional, list[...] and Annotated looked through)."""
    found: list[Any] = []
    stack = [annotation]
    while stack:
        current = stack.pop(0)
        args = typing.get_args(current)
        if typing.get_origin(current) is typing.Literal:
            found.extend(a for a in args if a not in found)
        else:
            stack.extend(a for a in args if a is not Ellipsis)
    return found


_BOUNDS = (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<"))


def _constraint_items(field: FieldInfo) -> list[Any]:
    """Constraint objects on the field itself and on any Annotated layer of its annotation."""
    items = list(field.metadata)
    stack = [field.annotation]
    while stack:
        current = stack.pop(0)
        args = typing.get_args(current)
        if typing.get_origin(current) is typing.Annotated:
            items.extend(args[1:])
            stack.append(args[0])
        else:
            stack.extend(a for a in args if a is not Ellipsis)
    return items


def range_text(field: FieldInfo, finite_floats: bool = False) -> str:
    """Bounds (ge/gt/le/lt, lengths, finiteness) and Literal choices of a field, or '' when unrestricted.

    `finite_floats`: the model refuses inf/nan for every float field (model_config allow_inf_nan=False).
    """
    parts: list[str] = []
    for item in _constraint_items(field):
        for attr, symbol in _BOUNDS:
            value = getattr(item, attr, None)
            if value is not None:
                parts.append(f"{symbol} {value_text(value)}")
        for attr, symbol in (("min_length", "length >="), ("max_length", "length <=")):
            value = getattr(item, attr, None)
            if value is not None:
                parts.append(f"{symbol} {value}")
        if getattr(item, "multiple_of", None) is not None:
            parts.append(f"multiple of {value_text(item.multiple_of)}")
        if getattr(item, "allow_inf_nan", None) is False:
            parts.append("finite")
    if finite_floats and "float" in type_text(field.annotation).split(" or "):
        parts.append("finite")
    allowed = choices(field.annotation)
    if len(allowed) == 1:
        parts.append(f"`{value_text(allowed[0])}`")
    elif allowed:
        each = "each " if _is_collection(field.annotation) else ""
        parts.append(f"{each}one of " + ", ".join(f"`{value_text(c)}`" for c in allowed))
    return "; ".join(dict.fromkeys(parts))


def _is_collection(annotation: Any) -> bool:
    """A list/tuple/set/dict annotation (Optional and Annotated looked through)."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType, typing.Annotated):
        return any(_is_collection(a) for a in typing.get_args(annotation) if a is not type(None))
    return origin in (list, tuple, set, frozenset, dict)


def value_text(value: Any) -> str:
    """A value as it would be written in a YAML override."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, BaseModel):
        return "(fields below)"
    if isinstance(value, str):
        return value if value else "''"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (list, tuple)):
        # A list of models (eval.lm_eval.tasks) is written as its items' mappings, as an option file holds them.
        return "[" + ", ".join(value_text(v.model_dump() if isinstance(v, BaseModel) else v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{value_text(k)}: {value_text(v)}" for k, v in value.items()) + "}"
    return str(value)


def default_text(field: FieldInfo) -> str:
    if field.default_factory is not None:
        try:
            value = field.default_factory()  # type: ignore[call-arg]
        except Exception:  # a factory that needs validated data: say so rather than guess
            return "(computed)"
        return value_text(value)
    if field.default is PydanticUndefined:
        return "required"
    return value_text(field.default)


def _first_doc_line(model: type[BaseModel]) -> str:
    lines = (model.__doc__ or "").strip().splitlines()
    return lines[0].strip() if lines else ""


def _default_cell(field: FieldInfo) -> str:
    text = default_text(field)
    return text if text in ("required", "(computed)", "(fields below)") else f"`{text}`"


_TAG_START = re.compile(r"<(?=[A-Za-z/!?])")  # what a Markdown renderer would take for an HTML tag


def _cell(text: str) -> str:
    """Text safe inside a table cell: pipes escaped, and `<` outside code spans (so `<tool_call>` shows)."""
    pieces = text.replace("|", "\\|").replace("\n", " ").split("`")
    return "`".join(p if i % 2 else _TAG_START.sub("&lt;", p) for i, p in enumerate(pieces))


# ---------------------------------------------------------------------------------------------
# Models and options


def models_in(annotation: Any) -> list[type[BaseModel]]:
    """The config models an annotation can hold (a model, an Optional model, a union of models)."""
    found: list[type[BaseModel]] = []
    stack = [annotation]
    while stack:
        current = stack.pop(0)
        if isinstance(current, type) and issubclass(current, BaseModel):
            found.append(current)
        elif typing.get_origin(current) in (typing.Union, types.UnionType, typing.Annotated, list):
            stack.extend(typing.get_args(current))
    return list(dict.fromkeys(found))


def tag_of(model: type[BaseModel]) -> tuple[str, list[Any]] | None:
    """The discriminator field of an option model and the values it accepts."""
    for tag in _TAGS:
        field = model.model_fields.get(tag)
        if field is not None and typing.get_origin(field.annotation) is typing.Literal:
            return tag, list(typing.get_args(field.annotation))
    return None


def model_for(candidates: list[type[BaseModel]], data: dict[str, Any]) -> type[BaseModel] | None:
    """The candidate model whose discriminator accepts the option file's tag value."""
    if len(candidates) == 1:
        return candidates[0]
    for model in candidates:
        tag = tag_of(model)
        if tag and data.get(tag[0]) in tag[1]:
            return model
    return None


def leading_comment(text: str) -> str:
    """The comment lines above the first key of a YAML file, joined into one line."""
    lines = []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped.startswith("#"):
            break
        body = stripped.lstrip("#").strip()
        if body and not body.startswith("@package"):
            lines.append(body)
    return " ".join(lines)


def read_option(path: Path) -> tuple[dict[str, Any] | None, str, str]:
    """(parsed mapping or None, leading comment, problem) for one option file; never raises."""
    try:
        text = path.read_text(encoding="utf-8")
        data = load_yaml(text)
    except (OSError, UnicodeDecodeError, RecursionError, yaml.YAMLError) as exc:
        return None, "", f"unreadable ({type(exc).__name__})"
    if data is None:
        data = {}
    if not isinstance(data, dict):
        return None, leading_comment(text), "not a mapping"
    return data, leading_comment(text), ""


def _same(value: Any, field: FieldInfo) -> bool:
    """Whether an option file's value equals the field's default (2 and 2.0 alike, lists and tuples alike)."""
    shown = value_text(value)
    default = default_text(field)
    if shown == default:
        return True
    if field.default_factory is None and isinstance(value, (int, float)) and not isinstance(value, bool):
        return isinstance(field.default, (int, float)) and not isinstance(field.default, bool) and value == field.default
    return False


def differing_values(model: type[BaseModel], data: dict[str, Any], prefix: str = "") -> list[str]:
    """`key=value` for every value the option file sets that differs from the model's default."""
    tag = tag_of(model)
    parts = []
    for key, value in data.items():
        field = model.model_fields.get(key)
        if field is None:
            parts.append(f"{prefix}{key}={value_text(value)} (unknown key)")
            continue
        if tag and key == tag[0] and not prefix:
            continue
        nested = models_in(field.annotation)
        if isinstance(value, dict) and len(nested) == 1:
            parts += differing_values(nested[0], value, f"{prefix}{key}.")
            continue
        if not _same(value, field):
            parts.append(f"{prefix}{key}={value_text(value)}")
    return parts


# ---------------------------------------------------------------------------------------------
# Rendering


def field_table(model: type[BaseModel], path: str) -> list[str]:
    rows = ["| field | type | range | default | description |", "|---|---|---|---|---|"]
    finite = model.model_config.get("allow_inf_nan") is False
    for name, field in model.model_fields.items():
        nested = models_in(field.annotation)
        kind = type_text(field.annotation)
        if nested and len(nested) == 1 and not choices(field.annotation):
            kind = f"{kind} (`{path}.{name}` below)"
        rows.append(
            "| `{}` | {} | {} | {} | {} |".format(
                name,
                _cell(kind),
                _cell(range_text(field, finite)),
                _cell(_default_cell(field)),
                _cell(field.description or ""),
            )
        )
    return rows


def model_section(model: type[BaseModel], path: str, heading: str, level: int) -> list[str]:
    """A heading, the model's docstring, its field table, then every nested model below it."""
    out = ["#" * level + " " + heading, ""]
    if doc := _first_doc_line(model):
        out += [_cell(doc), ""]
    out += field_table(model, path) + [""]
    if renamed := getattr(model, "renamed_fields", None):
        out += ["Renamed, the old spelling refused: " + ", ".join(f"`{path}.{old}` is `{path}.{new}`" for old, new in renamed.items()) + ".", ""]
    for name, field in model.model_fields.items():
        nested = models_in(field.annotation)
        if len(nested) == 1 and not choices(field.annotation):
            sub = f"{path}.{name}"
            out += model_section(nested[0], sub, f"`{sub}` ({nested[0].__name__})", min(level + 1, 6))
    return out


def group_section(group: str, field: FieldInfo, conf_dir: Path) -> list[str]:
    candidates = models_in(field.annotation)
    out = ["## " + _section_heading(group, field), "", (field.description or "").strip(), ""]
    option_rows = ["| option | model | about | values set (others are the model's defaults) |", "|---|---|---|---|"]
    for path in sorted((conf_dir / group).glob("*.yaml")):
        data, comment, problem = read_option(path)
        model = model_for(candidates, data) if data is not None else None
        if model is None:
            note = problem or "selects no known model"
            option_rows.append(f"| `{group}={path.stem}` | - | {_cell(comment) or '-'} | ({note}) |")
            continue
        values = ", ".join(f"`{v}`" for v in differing_values(model, data or {})) or "-"
        about = "-" if comment in ("", _first_doc_line(model)) else comment
        option_rows.append(f"| `{group}={path.stem}` | {model.__name__} | {_cell(about)} | {_cell(values)} |")
    out += [f"Options in `conf/{group}/`:", ""] + option_rows + [""]
    for model in candidates:
        tag = tag_of(model)
        label = f"`{group}` {model.__name__}" if tag is None else f"`{group}` {model.__name__} ({tag[0]}: {', '.join(map(str, tag[1]))})"
        out += model_section(model, group, label, 3)
    return out


def experiments_section(conf_dir: Path) -> list[str]:
    out = [
        "## Experiments",
        "",
        "Overlays in `conf/experiment/` (`# @package _global_`), chosen with `experiment=NAME`; each picks "
        "options for some groups and sets values on top of them.",
        "",
        "| experiment | builds on | group options | description |",
        "|---|---|---|---|",
    ]
    for path in sorted((conf_dir / "experiment").glob("*.yaml")):
        data, comment, problem = read_option(path)
        if data is None:
            out.append(f"| `{path.stem}` | - | - | ({problem}) |")
            continue
        parents, picks = [], []
        defaults = data.get("defaults") if isinstance(data.get("defaults"), list) else []
        for entry in defaults:
            if isinstance(entry, str):
                parents.append(f"`{entry}`")
            elif isinstance(entry, dict):
                for key, value in entry.items():
                    group = str(key).replace("override", "").strip().lstrip("/")
                    picks.append(f"`{group}={value_text(value)}`")
        about = data.get("description") if isinstance(data.get("description"), str) and data.get("description") else comment
        out.append(f"| `{path.stem}` | {', '.join(parents) or '-'} | {', '.join(picks) or '-'} | {_cell(str(about))} |")
    return out + [""]


def _node_heading(name: str, model: type[BaseModel]) -> str:
    return f"`{name}` ({model.__name__})"


def _section_heading(name: str, field: FieldInfo) -> str:
    """The level-2 heading the spec-root table links to for a group or node field."""
    models = models_in(field.annotation)
    return f"`{name}`" if name in GROUPS or len(models) != 1 else _node_heading(name, models[0])


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def render(conf_dir: Path = CONF_DIR) -> str:
    """The whole config reference as Markdown; the same models and conf/ give the same bytes."""
    out = [
        "# Config reference",
        "",
        f"Generated from the typed models in `slca/config/` and the option files in `conf/` by `{REGENERATE}`;",
        "do not edit by hand (a test fails when this page is stale).",
        "",
        "A spec has one node per group below. Pick an option with `GROUP=OPTION`, set a field with a dotted",
        "override (`train.rl.lr=1e-6`), or compose an experiment overlay (`experiment=NAME`). Unknown keys are",
        "errors, and every value is checked against the range given here before any stage runs.",
        "",
        "## Spec root",
        "",
        (Spec.__doc__ or "").strip().splitlines()[0],
        "",
        "| key | kind | description |",
        "|---|---|---|",
    ]
    for name, field in Spec.model_fields.items():
        linked = name in GROUPS or bool(models_in(field.annotation))
        kind = "group" if name in GROUPS else ("node" if linked else type_text(field.annotation))
        key = f"[`{name}`](#{_slug(_section_heading(name, field))})" if linked else f"`{name}`"
        out.append(f"| {key} | {kind} | {_cell(field.description or '')} |")
    out.append("")
    out += experiments_section(conf_dir)
    for name, field in Spec.model_fields.items():
        if name in GROUPS:
            out += group_section(name, field, conf_dir)
        elif models_in(field.annotation):
            for model in models_in(field.annotation):
                out += model_section(model, name, _node_heading(name, model), 2)
    while out and out[-1] == "":
        out.pop()
    return "\n".join(out) + "\n"


def write(path: Path = DOCS_PATH, conf_dir: Path = CONF_DIR) -> Path:
    """Write the reference atomically (readers never see half a page)."""
    from slca.fileio import atomic_write_text

    return atomic_write_text(path, render(conf_dir))


def run(write_file: bool) -> int:
    """`slca config docs [--write]`: print the reference, or write it; a write failure is one line."""
    target = DOCS_PATH
    if not write_file:
        sys.stdout.write(render())
        return 0
    try:
        write(target)
    except OSError as exc:
        print(f"slca: cannot write {target}: {exc.strerror or type(exc).__name__}", file=sys.stderr)
        return 1
    print(f"wrote {target}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m slca.config.docs", description="Print or write docs/config.md.")
    parser.add_argument("--write", action="store_true", help=f"write {DOCS_PATH.name} instead of printing it")
    args = parser.parse_args(argv)
    return run(args.write)


if __name__ == "__main__":
    sys.exit(main())
