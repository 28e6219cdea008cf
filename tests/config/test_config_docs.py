"""docs/config.md is generated from the typed config models and conf/, and a stale page fails here."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import typing
from pathlib import Path
from typing import Annotated, Any, Callable, Literal, NewType, Optional

import annotated_types
import pytest
from pydantic import BaseModel, ConfigDict, Field

from slca.config import docs
from slca.config.compose import CONF_DIR, options
from slca.config.spec import GROUPS, Spec
from tests.badinput import assert_refused, run_cli, snapshot

ROOT = Path(__file__).resolve().parents[2]


def sections(text: str) -> dict[str, str]:
    """Heading line -> the text up to the next heading."""
    parts = re.split(r"^(#{1,6} .*)$", text, flags=re.M)
    return {parts[i].strip(): parts[i + 1] for i in range(1, len(parts), 2)}


def row(section: str, field: str) -> list[str]:
    """The cells of the table row for `field` in a section (fails when the row is missing)."""
    for line in section.splitlines():
        if line.startswith(f"| `{field}` |"):
            return [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
    raise AssertionError(f"no row for {field!r}")


def candidate_models(annotation: Any) -> list[type[BaseModel]]:
    """Oracle: the models a Spec field can hold, found by walking typing args (independently of docs.models_in)."""
    found = []
    for arg in (annotation, *typing.get_args(annotation), *[a for x in typing.get_args(annotation) for a in typing.get_args(x)]):
        if isinstance(arg, type) and issubclass(arg, BaseModel) and arg not in found:
            found.append(arg)
    return found


def test_the_committed_config_reference_is_what_the_generator_writes_now() -> None:
    committed = ROOT / "docs" / "config.md"
    assert committed.is_file(), "docs/config.md is missing: run `slca config docs --write`"
    assert committed.read_text(encoding="utf-8") == docs.render(), "docs/config.md is stale: run `slca config docs --write`"


def test_every_field_of_every_model_has_a_row_under_its_model() -> None:
    page = sections(docs.render())
    checked = 0
    stack: list[tuple[type[BaseModel], str]] = []
    for name, field in Spec.model_fields.items():
        stack += [(m, name) for m in candidate_models(field.annotation)]
    while stack:
        model, path = stack.pop()
        heads = [h for h in page if model.__name__ in h and f"`{path}" in h]
        assert heads, f"no section for {path} {model.__name__}"
        for field_name, info in model.model_fields.items():
            cells = row(page[heads[0]], field_name)
            assert cells[4] == docs._cell(info.description or ""), f"{path}.{field_name}: description differs"
            checked += 1
            stack += [(m, f"{path}.{field_name}") for m in candidate_models(info.annotation)]
    assert checked > 150


def test_every_bound_and_choice_of_a_real_field_shows_in_its_range() -> None:
    page = sections(docs.render())
    for group in GROUPS:
        for model in candidate_models(Spec.model_fields[group].annotation):
            head = next(h for h in page if model.__name__ in h and f"`{group}`" in h)
            for name, info in model.model_fields.items():
                range_cell = row(page[head], name)[2]
                for item in info.metadata:
                    for attr, symbol in (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<")):
                        if getattr(item, attr, None) is not None:
                            assert f"{symbol} {getattr(item, attr)}" in range_cell.replace("&lt;", "<"), (group, name)
                if typing.get_origin(info.annotation) is Literal:
                    for choice in typing.get_args(info.annotation):
                        assert f"`{choice}`" in range_cell, (group, name, choice)


class Toy(BaseModel):
    """A toy model with one field of each shape."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    rate: float = Field(0.5, gt=0, le=1, description="Open below, closed above.")
    share: float = Field(0.0, ge=0, lt=1, allow_inf_nan=False, description="Closed below, open above, finite.")
    mode: Literal["a", "b"] = Field("a", description="Two choices.")
    modes: list[Literal["x", "y"]] = Field(default_factory=lambda: ["x"], description="Each item a choice.")
    cap: Optional[int] = Field(None, ge=3, description="Optional with a bound.")
    need: str = Field(..., description="Required | with a pipe and a <tag>.")


def test_ranges_types_and_defaults_come_from_the_field_constraints() -> None:
    table = "\n".join(docs.field_table(Toy, "toy"))
    assert row(table, "rate")[1:4] == ["float", "> 0; <= 1", "`0.5`"]
    assert row(table, "share")[1:4] == ["float", ">= 0; < 1; finite", "`0.0`"]
    assert row(table, "mode")[1:4] == ["str", "one of `a`, `b`", "`a`"]
    assert row(table, "modes")[1:4] == ["list[str]", "each one of `x`, `y`", "`[x]`"]
    assert row(table, "cap")[1:4] == ["int or null", ">= 3", "`null`"]
    assert row(table, "need")[3:] == ["required", "Required \\| with a pipe and a &lt;tag>."]


class Strict(BaseModel):
    model_config = ConfigDict(allow_inf_nan=False)

    lr: float = Field(1e-3, gt=0, description="A float in a model that refuses inf and nan.")
    cap: Optional[float] = Field(None, description="An optional float, finite when set.")
    steps: int = Field(1, ge=1, description="Not a float: no finiteness note.")


def test_a_model_that_refuses_inf_and_nan_marks_its_float_fields_finite() -> None:
    table = "\n".join(docs.field_table(Strict, "strict"))
    assert row(table, "lr")[2] == "> 0; finite"
    assert row(table, "cap")[2] == "finite"
    assert row(table, "steps")[2] == ">= 1"


class Opaque:
    """A type pydantic accepts only as an arbitrary type."""


UserId = NewType("UserId", int)


class Odd(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    hook: Optional[Callable[[int], str]] = Field(None, description="A callable.")
    blob: Opaque = Field(default_factory=Opaque, description="An arbitrary class.")
    nested: dict[str, list[tuple[int, ...]]] = Field(default_factory=dict, description="Deep containers.")
    positive: Annotated[list[Annotated[float, annotated_types.Gt(0)]], annotated_types.MinLen(1)] = Field(
        default_factory=lambda: [1.0], description="Constraints inside the annotation."
    )
    user: UserId = Field(UserId(1), description="A NewType.")
    where: Path = Field(Path("."), description="A path.")
    anything: Any = Field(None, description="Any value.")


def test_unknown_annotation_shapes_fall_back_to_a_readable_type() -> None:
    table = "\n".join(docs.field_table(Odd, "odd"))
    assert "Callable" in row(table, "hook")[1] and row(table, "hook")[1].endswith("or null")
    assert row(table, "blob")[1] == "Opaque"
    assert row(table, "nested")[1] == "dict[str, list[tuple[int, ...]]]"
    assert row(table, "positive")[1] == "list[float]"
    assert set(row(table, "positive")[2].split("; ")) == {"> 0", "length >= 1"}
    assert "UserId" in row(table, "user")[1]
    assert row(table, "where")[1] == "Path"
    assert row(table, "anything")[1] == "any"
    assert "typing." not in table


def test_broken_option_files_are_listed_not_fatal(tmp_path: Path) -> None:
    conf = tmp_path / "conf"
    shutil.copytree(CONF_DIR, conf)
    (conf / "estimator" / "broken.yaml").write_text("name: [unclosed\n", encoding="utf-8")
    (conf / "estimator" / "listy.yaml").write_text("- a\n- b\n", encoding="utf-8")
    (conf / "estimator" / "alien.yaml").write_text("name: no_such_estimator\n", encoding="utf-8")
    (conf / "filter" / "latin1.yaml").write_bytes(b"name: caf\xe9\n")
    page = docs.render(conf)
    assert "| `estimator=broken` | - | - | (unreadable (ParserError)) |" in page
    assert "| `estimator=listy` | - | - | (not a mapping) |" in page
    assert "| `estimator=alien` | - | - | (selects no known model) |" in page
    assert "`filter=latin1`" in page and "unreadable (UnicodeDecodeError)" in page


def test_every_option_file_and_experiment_is_listed_under_its_group() -> None:
    page = sections(docs.render())
    for group in GROUPS:
        body = page[f"## `{group}`"]
        for option in options(group):
            assert f"| `{group}={option}` |" in body, (group, option)
    for experiment in options("experiment"):
        assert f"| `{experiment}` |" in page["## Experiments"]


def test_an_option_file_shows_only_values_that_differ_from_its_model_defaults(tmp_path: Path) -> None:
    conf = tmp_path / "conf"
    shutil.copytree(CONF_DIR, conf)
    (conf / "reward" / "picky.yaml").write_text("name: hierr\nw_format: 0.1\nw_name: 0.5\nw_process: 1\njudge:\n  name: llm\n  temperature: 0\n", encoding="utf-8")
    line = next(l for l in docs.render(conf).splitlines() if l.startswith("| `reward=picky` |"))
    assert line.endswith("| `w_name=0.5`, `judge.name=llm` |")


def test_rendering_is_deterministic_and_independent_of_the_working_directory(tmp_path: Path) -> None:
    first = docs.render()
    cwd = os.getcwd()
    try:
        os.chdir(tmp_path)
        assert docs.render() == first
    finally:
        os.chdir(cwd)


def test_the_module_entry_point_prints_the_same_reference() -> None:
    done = subprocess.run([sys.executable, "-m", "slca.config.docs"], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == docs.render()


def test_config_docs_prints_the_reference_and_write_replaces_the_page(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    printed = run_cli(["config", "docs"], capsys)
    assert printed.code == 0 and printed.out == docs.render() and printed.err == ""
    target = tmp_path / "docs" / "config.md"
    monkeypatch.setattr(docs, "DOCS_PATH", target)
    written = run_cli(["config", "docs", "--write"], capsys)
    assert written.code == 0 and str(target) in written.out
    assert target.read_text(encoding="utf-8") == printed.out
    assert sorted(p.name for p in target.parent.iterdir()) == ["config.md"]  # no temporary left behind


def test_config_docs_write_into_an_impossible_place_is_one_line_and_changes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "docs"
    blocker.write_text("a file where the docs folder should be\n", encoding="utf-8")
    target = blocker / "config.md"
    monkeypatch.setattr(docs, "DOCS_PATH", target)
    before = snapshot([tmp_path])
    result = run_cli(["config", "docs", "--write"], capsys)
    assert_refused(result, str(target))
    assert snapshot([tmp_path]) == before
