"""The outputs of one data command are published together or not at all: `prepare` and `synth`
write into a temporary sibling directory that replaces --out at the end, so a failure half-way
leaves the previous outputs exactly as they were (no new eval/sft beside an old rl), and a
success leaves no file of the previous run behind. Also: prepare's options are checked before any
file is read, and an eval size beyond the input is an error naming both numbers."""

from __future__ import annotations

import math

import pytest

import slca.data.prepare as prep
from slca.data.errors import DataInputError
from slca.data.io import read_rows, write_rows
from slca.data.prepare import OWNED_FILES, PrepareOptions, prepare
from tests.badinput import snapshot


@pytest.fixture()
def sft_file(synth_set, tmp_path):
    write_rows(tmp_path / "sft.jsonl", iter(list(read_rows(synth_set.sft_full))[:60]))
    return tmp_path / "sft.jsonl"


def _siblings(path):
    return sorted(p.name for p in path.parent.iterdir() if p.name.startswith(f".{path.name}."))


@pytest.mark.parametrize("fail_after", [0, 1, 7, 30])
def test_a_prepare_failing_half_way_leaves_the_previous_output_intact(sft_file, tmp_path, monkeypatch, fail_after):
    out = tmp_path / "prep"
    prepare(sft_file, out, opts=PrepareOptions(eval_size=5, seed=1), on_error="skip")
    before = snapshot([out])
    real_route, calls = prep.route, []

    def failing_route(*args, **kwargs):
        calls.append(1)
        if len(calls) > fail_after:
            raise OSError(28, "No space left on device")
        return real_route(*args, **kwargs)

    monkeypatch.setattr(prep, "route", failing_route)
    with pytest.raises(OSError):
        prepare(sft_file, out, opts=PrepareOptions(eval_size=9, seed=2))
    assert snapshot([out]) == before
    assert _siblings(out) == []  # no temporary directory left


def test_a_successful_prepare_replaces_the_whole_directory(sft_file, tmp_path):
    out = tmp_path / "prep"
    prepare(sft_file, out, opts=PrepareOptions(eval_size=5), on_error="skip")
    assert (out / "rejects.jsonl").exists()
    funnel = prepare(sft_file, out, opts=PrepareOptions(eval_size=7))  # fail mode writes no rejects file
    assert sorted(p.name for p in out.iterdir()) == sorted(set(OWNED_FILES) - {"rejects.jsonl"})
    assert funnel.eval_trajectories == 7 and sum(1 for _ in read_rows(out / "eval.parquet")) == funnel.eval_rows
    assert _siblings(out) == []


def test_a_failing_synth_leaves_the_previous_set_intact(tmp_path, monkeypatch):
    from slca.config.groups.data import SyntheticData
    import slca.data.synth as synth

    out = tmp_path / "syn"
    synth.synthesize_dir(SyntheticData(seed=1, n_sft=20, n_rl=5, n_eval=5), out)
    before = snapshot([out])

    def broken(cfg, out_dir):
        (out_dir / "sft.parquet").write_bytes(b"half")
        raise OSError(5, "I/O error")

    monkeypatch.setattr(synth, "synthesize", broken)
    with pytest.raises(OSError):
        synth.synthesize_dir(SyntheticData(seed=2, n_sft=20, n_rl=5, n_eval=5), out)
    assert snapshot([out]) == before and _siblings(out) == []


@pytest.mark.parametrize("field, value", [
    ("eval_size", -5), ("eval_size", -1), ("eval_size", 2.5), ("eval_size", True),
    ("rl_fraction", 2), ("rl_fraction", -1), ("rl_fraction", 1.0000001), ("rl_fraction", math.nan),
    ("rl_fraction", math.inf), ("rl_fraction", "0.5"), ("system_style", "fancy"),
])
def test_prepare_options_out_of_range_are_refused_naming_the_option(field, value):
    with pytest.raises(DataInputError) as ei:
        PrepareOptions(**{field: value})
    flag = {"eval_size": "--eval-size", "rl_fraction": "--rl-fraction", "system_style": "--system"}[field]
    assert str(ei.value).startswith(flag) and repr(value) in str(ei.value)


@pytest.mark.parametrize("rl_fraction", [0.0, 1.0, 0.5])
def test_the_ends_of_the_rl_fraction_are_allowed(sft_file, tmp_path, rl_fraction):
    f = prepare(sft_file, tmp_path / "p", opts=PrepareOptions(eval_size=4, rl_fraction=rl_fraction))
    assert f.rl_trajectories == round(rl_fraction * f.train_trajectories)


def test_an_eval_size_beyond_the_input_names_both_numbers_and_writes_nothing(sft_file, tmp_path):
    unique = prepare(sft_file, tmp_path / "ok", opts=PrepareOptions(eval_size=0)).unique
    with pytest.raises(DataInputError) as ei:
        prepare(sft_file, tmp_path / "p", opts=PrepareOptions(eval_size=unique + 1))
    assert f"--eval-size {unique + 1} exceeds the {unique} unique valid trajectories" in str(ei.value)
    assert not (tmp_path / "p").exists() and _siblings(tmp_path / "p") == []
    f = prepare(sft_file, tmp_path / "all", opts=PrepareOptions(eval_size=unique))  # exactly all of it is fine
    assert f.eval_trajectories == unique and f.train_trajectories == 0
