"""A renamed config field's old spelling is refused in one line naming the new one, wherever it is written."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from slca.config.compose import compose_dict, compose_spec, validate_spec
from slca.config.errors import SpecError
from slca.config.io import load_spec, write_spec

LINE = "config error at eval.templates: renamed to eval.constructions"


def _refusal(action) -> str:
    with pytest.raises(SpecError) as info:
        action()
    return str(info.value)


@pytest.mark.parametrize("override", ["eval.templates=[native,context]", "+eval.templates=[native,context]"])
def test_an_override_spelt_the_old_way_names_the_new_field(override: str) -> None:
    assert _refusal(lambda: compose_spec([override])) == LINE


def test_an_override_of_a_saved_spec_spelt_the_old_way_names_the_new_field(tmp_path: Path) -> None:
    saved = write_spec(compose_spec([]), tmp_path / "spec.yaml")
    assert _refusal(lambda: load_spec(saved, ["eval.templates=[context]"])) == LINE


def test_a_spec_saved_before_the_rename_names_the_new_field(tmp_path: Path) -> None:
    data = compose_dict([])
    data["eval"]["templates"] = data["eval"].pop("constructions")
    old = tmp_path / "spec.yaml"
    old.write_text(yaml.safe_dump(data), encoding="utf-8")
    assert _refusal(lambda: load_spec(old)) == LINE
    assert _refusal(lambda: validate_spec(data)) == LINE


def test_an_experiment_overlay_spelt_the_old_way_names_the_new_field(tmp_path: Path) -> None:
    overlay = tmp_path / "mine.yaml"
    overlay.write_text("# @package _global_\ndefaults:\n  - embedded_smoke\neval:\n  templates: [context]\n", encoding="utf-8")
    assert _refusal(lambda: load_spec(overlay)).startswith(LINE)


def test_the_new_spelling_sets_the_protocol_grid() -> None:
    spec = compose_spec(["eval.constructions=[context,native]"])
    assert spec.eval.constructions == ["context", "native"]


def test_the_curate_section_spelt_the_old_way_names_train_curate(tmp_path: Path) -> None:
    assert _refusal(lambda: compose_spec(["train.filter.rollouts=2"])) == "config error at train.filter.rollouts: renamed to train.curate.rollouts"
    data = compose_dict([])
    data["train"]["filter"] = data["train"].pop("curate")
    assert _refusal(lambda: validate_spec(data)) == "config error at train.filter: renamed to train.curate"


def test_a_stage_list_naming_the_old_filter_stage_names_curate(tmp_path: Path) -> None:
    assert _refusal(lambda: compose_spec(["run.stages=[data,filter,rl]"])) == "config error at run.stages.1: stage filter renamed to curate"
    saved = write_spec(compose_spec([]), tmp_path / "spec.yaml")
    assert _refusal(lambda: load_spec(saved, ["run.stages=[data,sft,filter]"])) == "config error at run.stages.2: stage filter renamed to curate"


def test_the_category_subset_spelt_the_old_bfcl_way_names_eval_categories() -> None:
    # The field chooses ACEBench's categories too, so its BFCL-only name went.
    assert _refusal(lambda: compose_spec(["eval.bfcl_categories=[simple]"])) == "config error at eval.bfcl_categories: renamed to eval.categories"
    assert compose_spec(["eval.benchmark=bfcl", "eval.categories=[simple]"]).eval.categories == ["simple"]
