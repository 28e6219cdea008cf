"""Stage results are typed records, written and read by one pair of functions (slca.stage_results),
in the flat result.json layout slca wrote before them, so an older run directory still resumes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from slca.config.groups.run import STAGE_ORDER
from slca.pipeline import STAGE_DECLS, WITHOUT_STAGE
from slca.stage_results import (
    RESULT_TYPES,
    CurateResult,
    DataResult,
    EvalResult,
    ResultFileError,
    RlResult,
    SftResult,
    StageRecord,
    read_result,
    write_result,
)

EXAMPLES = [
    DataResult(sft="data/sft.parquet", rl="/abs/rl.parquet", eval="eval.parquet",
               validation={"rl": {"split": "rl", "rows_in": 3, "rows_out": 2, "rows_rejected": 1, "errors_by_field": {"tools": 1}}}),
    SftResult(model_dir="sft/model", details={"steps": 3, "final_loss": 0.25, "resumed": False, "template": None}),
    CurateResult(rl="curate/split/rl.parquet", funnel="curate/split/funnel.json", rows_in=4, kept=3, dropped={"all_correct": 1},
                 histogram={"0/2": 1, "1/2": 2, "2/2": 1}, generator_calls=2, seconds=1.5),
    RlResult(model_dir="rl/model", details={"steps_logged": [1, 2], "wall_s": 3.0}),
    EvalResult(results="eval/results.json", table="eval/table.md", headline={"rl/success": 0.5, "rl/judge": None}),
]


@pytest.mark.parametrize("result", EXAMPLES, ids=lambda r: r.stage)
def test_each_stage_result_written_reads_back_as_the_same_record(result, tmp_path: Path) -> None:
    record = StageRecord(result, "0123456789abcdef", 2)
    write_result(tmp_path, record)
    assert read_result(tmp_path, result.stage) == record


def test_a_record_is_written_flat_with_the_stages_own_numbers_beside_its_fields(tmp_path: Path) -> None:
    write_result(tmp_path, StageRecord(EXAMPLES[1], "f", 1))
    assert json.loads((tmp_path / "sft" / "result.json").read_text()) == {
        "model_dir": "sft/model", "steps": 3, "final_loss": 0.25, "resumed": False, "template": None, "fingerprint": "f", "invocation": 1}


def test_result_files_written_before_the_typed_records_read_back(tmp_path: Path) -> None:
    # What the untyped pipeline wrote: the synthetic data stage also listed the cache's root, manifest
    # and full SFT split, and a result lacked `invocation` when written by a test's hand.
    old = {
        "data": {"root": "/c", "sft": "/c/sft.parquet", "sft_full": "/c/sft_full.parquet", "rl": "/c/rl.parquet",
                 "eval": "/c/eval.parquet", "manifest": "/c/manifest.json", "fingerprint": "a", "invocation": 1},
        "sft": {"model_dir": "sft/model", "fingerprint": "b", "steps": 1},
        "eval": {"results": "eval/results.json", "table": "eval/table.md", "sft/success": 0.75, "fingerprint": "c", "invocation": 3},
    }
    for stage, content in old.items():
        (tmp_path / stage).mkdir()
        (tmp_path / stage / "result.json").write_text(json.dumps(content))
    assert read_result(tmp_path, "data") == StageRecord(DataResult("/c/sft.parquet", "/c/rl.parquet", "/c/eval.parquet"), "a", 1)
    assert read_result(tmp_path, "sft") == StageRecord(SftResult("sft/model", {"steps": 1}), "b", None)
    assert read_result(tmp_path, "eval") == StageRecord(EvalResult("eval/results.json", "eval/table.md", {"sft/success": 0.75}), "c", 3)
    assert read_result(tmp_path, "rl") is None


@pytest.mark.parametrize(("stage", "content", "says"), [
    ("sft", {"steps": 1, "fingerprint": "x"}, "model_dir: Field required"),
    ("data", {"sft": "a", "rl": 3, "eval": "c"}, "rl: Input should be a valid string"),
    ("curate", {"rl": "r", "funnel": "f", "rows_in": "many", "kept": 1, "dropped": {}, "histogram": {}, "generator_calls": 0, "seconds": 0},
     "rows_in: Input should be a valid integer"),
    ("eval", [1, 2], "does not hold a stage result (a JSON object)"),
])
def test_a_result_json_that_is_not_its_stages_record_is_one_line_naming_the_file(stage, content, says, tmp_path: Path) -> None:
    path = tmp_path / stage / "result.json"
    path.parent.mkdir()
    path.write_text(json.dumps(content))
    with pytest.raises(ResultFileError) as caught:
        read_result(tmp_path, stage)
    message = str(caught.value)
    assert message.startswith(str(path)) and says in message and "\n" not in message


def test_a_backends_number_named_like_a_field_of_the_record_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"\[.fingerprint.\] collide"):
        write_result(tmp_path, StageRecord(RlResult("rl/model", {"fingerprint": "mine"}), "f", 1))
    assert not (tmp_path / "rl" / "result.json").exists()


def test_every_stage_is_declared_in_run_order_with_its_record_and_needs_only_earlier_stages_it_can_do_without() -> None:
    assert tuple(STAGE_DECLS) == STAGE_ORDER and tuple(RESULT_TYPES) == STAGE_ORDER
    for stage, decl in STAGE_DECLS.items():
        for need in decl.needs:
            assert STAGE_ORDER.index(need) < STAGE_ORDER.index(stage), (stage, need)
            assert need in WITHOUT_STAGE, (stage, need)
