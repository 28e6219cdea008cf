"""`validate_split_file`: the function the pipeline's data stage calls to honour `data.on_error`
on Toucan input, and the one `slca data validate` runs."""

from __future__ import annotations

import copy

import pytest

from slca.data.errors import DataInputError
from slca.data.io import read_rows, write_rows
from slca.data.schemas import DataValidationError
from slca.data.validate import validate_split_file


@pytest.fixture()
def rl_file(synth_set, tmp_path):
    rows = list(read_rows(synth_set.rl))[:10]
    for k in (3, 8):
        rows[k] = copy.deepcopy(rows[k])
        rows[k]["data_source"] = ""
    write_rows(tmp_path / "rl.parquet", iter(rows))
    return tmp_path / "rl.parquet"


def test_skip_writes_rejects_into_the_given_folder_and_the_counts_reconcile(rl_file, tmp_path):
    rep = validate_split_file(rl_file, "rl", "skip", tmp_path / "stage", out=tmp_path / "stage" / "rl.parquet")
    assert (rep.n_in, rep.n_out, rep.n_rejected) == (10, 8, 2) and rep.reconciled
    assert rep.path == str(rl_file) and rep.rejects_path == str(tmp_path / "stage" / "rl.rejects.jsonl")
    assert [r["index"] for r in read_rows(rep.rejects_path)] == [3, 8]
    assert rep.by_field == {"data_source": 2}
    assert sum(1 for _ in read_rows(tmp_path / "stage" / "rl.parquet")) == 8


def test_fail_names_file_count_and_first_bad_row_and_writes_nothing(rl_file, tmp_path):
    seen = []
    with pytest.raises(DataValidationError) as ei:
        validate_split_file(rl_file, "rl", "fail", tmp_path / "stage", out=tmp_path / "stage" / "rl.parquet",
                            on_row_error=seen.append)
    assert str(ei.value).startswith(f"{rl_file}: 2 of 10 rows invalid; first: row 3: data_source:")
    assert ei.value.errors[0].index == 3 and [e.index for e in seen] == [3, 8]
    assert not (tmp_path / "stage").exists()


def test_a_clean_file_passes_in_both_modes(synth_set, tmp_path):
    for mode in ("fail", "skip"):
        rep = validate_split_file(synth_set.eval, "eval", mode, tmp_path / mode)
        assert rep.n_rejected == 0 and rep.n_out == rep.n_in > 0


def test_an_unreadable_file_is_one_line_before_anything_is_written(tmp_path):
    (tmp_path / "rl.parquet").write_bytes(b"PAR1 not really")
    with pytest.raises(DataInputError, match="rl.parquet: not a readable parquet file"):
        validate_split_file(tmp_path / "rl.parquet", "rl", "skip", tmp_path / "stage")
    assert not (tmp_path / "stage").exists()
    with pytest.raises(ValueError, match="on_error"):
        validate_split_file(tmp_path / "rl.parquet", "rl", "ignore")
