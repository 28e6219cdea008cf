"""Bad input to `slca run` / `slca config` (and a few `slca data` cross-checks), as one table.

Every case must be refused with a non-zero exit, exactly one stderr line naming the offending file,
path, field or config path, no traceback, and every watched file byte-for-byte as it was. The
cases run `main` in-process (tests/badinput.py); the run-directory cases start from a copy of a
real finished run and damage one thing each.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from slca.runlock import RunLock
from tests.badinput import assert_refused, run_cli, snapshot
from tests.cli.conftest import SMALL

# setup(tmp, run) -> (argv, watched paths, mentions the one stderr line must hold)
Setup = Callable[[Path, Path], tuple[list[str], list[Path], tuple[str, ...]]]


@dataclass(frozen=True)
class Case:
    name: str
    setup: Setup


def _write(path: Path, data: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    (path.write_bytes if isinstance(data, bytes) else path.write_text)(data)  # type: ignore[operator]
    return path


def _rerun(run: Path, *extra: str) -> list[str]:
    return ["run", "--spec", str(run / "spec.yaml"), f"run.dir={run}", *extra]


def _saved_spec(run: Path, edit: Callable[[dict], None], name: str = "edited.yaml") -> Path:
    data = yaml.safe_load((run / "spec.yaml").read_text())
    edit(data)
    return _write(run.parent / name, yaml.safe_dump(data, sort_keys=False))


# ---------------------------------------------------------------- usage: argparse, one line each
USAGE = [
    Case("no command", lambda t, r: ([], [], ("COMMAND",))),
    Case("unknown command", lambda t, r: (["bogus"], [], ("bogus",))),
    Case("unknown run flag", lambda t, r: (["run", "--nope"], [], ("--nope",))),
    Case("bad --cfg choice", lambda t, r: (["run", "--cfg", "yaml"], [], ("--cfg",))),
    Case("--spec without a value", lambda t, r: (["run", "--spec"], [], ("--spec",))),
    Case("config without action", lambda t, r: (["config"], [], ("ACTION",))),
    Case("unknown config action", lambda t, r: (["config", "frobnicate"], [], ("frobnicate",))),
    Case("config validate without file", lambda t, r: (["config", "validate"], [], ("file",))),
    Case("data without action", lambda t, r: (["data"], [], ("data",))),
    Case("data validate without --split", lambda t, r: (["data", "validate", str(t / "x.parquet")], [], ("--split",))),
]

# ---------------------------------------------------------------- overrides (a few cross-cutting ones)
OVERRIDES = [
    Case("unknown group option", lambda t, r: (["run", "estimator=nope", f"run.dir={t / 'new'}"], [t / "new"], ("estimator", "nope"))),
    Case("unknown key", lambda t, r: (["run", "train.rl.nope=1", f"run.dir={t / 'new'}"], [t / "new"], ("train.rl.nope",))),
    Case("not KEY=VALUE", lambda t, r: (["run", "noequals", f"run.dir={t / 'new'}"], [t / "new"], ("noequals",))),
    Case("experiment outside conf", lambda t, r: (["run", "experiment=../../evil", f"run.dir={t / 'new'}"], [t / "new"], ("experiment",))),
    Case("run name with a path", lambda t, r: (["run", "run.name=../../x"], [t], ("run.name",))),
    Case("stages out of order", lambda t, r: (["run", "run.stages=[eval,data]", f"run.dir={t / 'new'}"], [t / "new"], ("run.stages",))),
    Case("bad override after --debug", lambda t, r: (["--debug", "run", "train.rl.lr=abc", f"run.dir={t / 'new'}"], [t / "new"], ("train.rl.lr",))),
    Case("--debug after the command", lambda t, r: (["run", "train.rl.lr=abc", "--debug", f"run.dir={t / 'new'}"], [t / "new"], ("train.rl.lr",))),
    Case("override on a saved spec: unknown key", lambda t, r: (_rerun(r, "train.rl.nope=1"), [r], ("train.rl.nope",))),
    Case("override on a saved spec: bad value", lambda t, r: (_rerun(r, "run.resume=maybe"), [r], ("run.resume",))),
    Case("override on a saved spec: unknown group option", lambda t, r: (_rerun(r, "logger=tensorboard"), [r], ("logger", "tensorboard"))),
    Case("config validate: bad override", lambda t, r: (["config", "validate", str(r / "spec.yaml"), "estimator=nope"], [r], ("estimator",))),
]


# ---------------------------------------------------------------- spec files, via `run --spec` and `config validate`
def _spec_file_cases() -> list[tuple[str, Callable[[Path, Path], tuple[Path, tuple[str, ...]]]]]:
    overlay = "# @package _global_\n"
    return [
        ("missing file", lambda t, r: (t / "nope.yaml", ("nope.yaml",))),
        ("a directory", lambda t, r: (_dir(t / "adir.yaml"), ("adir.yaml",))),
        ("empty file", lambda t, r: (_write(t / "empty.yaml", ""), ("empty.yaml",))),
        ("YAML syntax error", lambda t, r: (_write(t / "syntax.yaml", "run: [unclosed\n"), ("syntax.yaml",))),
        ("not UTF-8", lambda t, r: (_write(t / "latin.yaml", b"run:\n  name: caf\xe9\n"), ("latin.yaml",))),
        ("top-level list", lambda t, r: (_write(t / "list.yaml", "- a\n- b\n"), ("list.yaml",))),
        ("top-level scalar", lambda t, r: (_write(t / "scalar.yaml", "42\n"), ("scalar.yaml",))),
        ("saved spec: unknown key", lambda t, r: (_saved_spec(r, lambda d: d.update(bogus=1)), ("bogus",))),
        ("saved spec: unknown nested key", lambda t, r: (_saved_spec(r, lambda d: d["train"]["rl"].update(nope=1)), ("train.rl",))),
        ("saved spec: bad value", lambda t, r: (_saved_spec(r, lambda d: d["train"]["rl"].update(lr="abc")), ("train.rl.lr",))),
        ("saved spec: missing key", lambda t, r: (_saved_spec(r, lambda d: d["train"]["rl"].pop("lr")), ("train.rl.lr",))),
        ("saved spec: section not a mapping", lambda t, r: (_saved_spec(r, lambda d: d.update(estimator=5)), ("estimator",))),
        ("saved spec: NaN learning rate", lambda t, r: (_saved_spec(r, lambda d: d["train"]["rl"].update(lr=float("nan"))), ("train.rl.lr",))),
        ("saved spec: stages repeated", lambda t, r: (_saved_spec(r, lambda d: d["run"].update(stages=["data", "data"])), ("run.stages",))),
        ("overlay: YAML syntax error", lambda t, r: (_write(t / "ov_syntax.yaml", overlay + "defaults:\n  - embedded_smoke\n  - [\n"), ("ov_syntax",))),
        ("overlay: a list", lambda t, r: (_write(t / "ov_list.yaml", overlay + "- a\n- b\n"), ("ov_list",))),
        ("overlay: includes itself", lambda t, r: (_write(t / "ov_self.yaml", overlay + "defaults:\n  - ov_self\nexperiment: ov_self\n"), ("ov_self",))),
        ("overlay: unknown key", lambda t, r: (_write(t / "ov_key.yaml", overlay + "defaults:\n  - embedded_smoke\nexperiment: ov_key\nbogus: 1\n"), ("bogus",))),
        ("overlay: bad value", lambda t, r: (_write(t / "ov_val.yaml", overlay + "defaults:\n  - embedded_smoke\nexperiment: ov_val\ntrain:\n  rl:\n    n: -3\n"), ("train.rl.n",))),
    ]


def _dir(path: Path) -> Path:
    path.mkdir(parents=True)
    return path


def _via(command: list[str], make: Callable[[Path, Path], tuple[Path, tuple[str, ...]]]) -> Setup:
    def setup(t: Path, r: Path) -> tuple[list[str], list[Path], tuple[str, ...]]:
        path, mentions = make(t, r)
        argv = ["run", "--spec", str(path), f"run.dir={t / 'new'}"] if command == ["run"] else [*command, str(path)]
        return argv, [t, r], mentions
    return setup


SPEC_FILES: list[Case] = []
for _name, _make in _spec_file_cases():
    SPEC_FILES.append(Case(f"run --spec, {_name}", _via(["run"], _make)))
    SPEC_FILES.append(Case(f"config validate, {_name}", _via(["config", "validate"], _make)))


# ---------------------------------------------------------------- run directories
def _locked(t: Path, r: Path) -> tuple[list[str], list[Path], tuple[str, ...]]:
    return _rerun(r), [r], ("in use", f"pid {os.getpid()}", str(r))


def _damaged_result(content: str | bytes) -> Setup:
    def setup(t: Path, r: Path) -> tuple[list[str], list[Path], tuple[str, ...]]:
        _write(r / "data" / "result.json", content)
        return _rerun(r), [r], (str(r / "data" / "result.json"),)
    return setup


def _damaged_provenance(content: str) -> Setup:
    def setup(t: Path, r: Path) -> tuple[list[str], list[Path], tuple[str, ...]]:
        _write(r / "provenance.json", content)
        return _rerun(r), [r], (str(r / "provenance.json"),)
    return setup


def _sft_finished(r: Path, model_files: dict[str, bytes]) -> list[str]:
    """A recorded, finished SFT stage (its result written as the pipeline writes it) with `model_files`."""
    from slca.config.io import load_spec
    from slca.pipeline import stage_fingerprint

    argv = _rerun(r, "run.stages=[data,sft]")
    spec = load_spec(r / "spec.yaml", [f"run.dir={r}", "run.stages=[data,sft]"])
    for name, data in model_files.items():
        _write(r / "sft" / "model" / name, data)
    _write(r / "sft" / "result.json", json.dumps({"model_dir": "sft/model", "fingerprint": stage_fingerprint(spec, "sft"), "steps": 1}))
    return argv


def _sft_model_gone(t: Path, r: Path) -> tuple[list[str], list[Path], tuple[str, ...]]:
    return _sft_finished(r, {}), [r], (str(r / "sft" / "model"), "gone", str(r / "sft" / "result.json"))


def _sft_model_truncated(t: Path, r: Path) -> tuple[list[str], list[Path], tuple[str, ...]]:
    import torch
    from safetensors.torch import save

    whole = save({"w": torch.arange(64, dtype=torch.float32)})
    return _sft_finished(r, {"model.safetensors": whole[: len(whole) // 2]}), [r], ("model.safetensors", str(r / "sft" / "result.json"))


def _file_as_run_dir(t: Path, r: Path) -> tuple[list[str], list[Path], tuple[str, ...]]:
    target = _write(t / "plain_file", "not a directory\n")
    return ["run", *SMALL, f"run.dir={target}"], [target], ("run.dir", str(target))


def _run_dir_under_file(t: Path, r: Path) -> tuple[list[str], list[Path], tuple[str, ...]]:
    parent = _write(t / "plain_file", "x\n")
    return ["run", *SMALL, f"run.dir={parent / 'run'}"], [parent], ("run.dir", str(parent / "run"))


def _replaced_by_dir(relative: str, mention: str) -> Setup:
    """`relative` in the run directory replaced by a folder (or created as one)."""
    def setup(t: Path, r: Path) -> tuple[list[str], list[Path], tuple[str, ...]]:
        target = r / relative
        if target.is_file():
            target.unlink()
        target.mkdir(parents=True, exist_ok=True)
        return _rerun(r), [r], (str(r / mention),)
    return setup


def _spec_yaml_is_a_folder(t: Path, r: Path) -> tuple[list[str], list[Path], tuple[str, ...]]:
    overrides = _rerun(r)[3:]  # composed from conf/ and pointed at the run, since its spec.yaml is unusable
    (r / "spec.yaml").unlink()
    (r / "spec.yaml").mkdir()
    return ["run", *SMALL, "run.stages=[data]", *overrides], [r], (str(r / "spec.yaml"),)


def _stage_dir_is_a_file(t: Path, r: Path) -> tuple[list[str], list[Path], tuple[str, ...]]:
    _write(r / "sft", "a file where the sft stage folder belongs\n")
    return _rerun(r, "run.stages=[data,sft]"), [r], (str(r / "sft"),)


def _foreign_fingerprint(t: Path, r: Path) -> tuple[list[str], list[Path], tuple[str, ...]]:
    result = json.loads((r / "data" / "result.json").read_text())
    _write(r / "data" / "result.json", json.dumps({**result, "fingerprint": 12345}))
    return _rerun(r), [r], ("stage 'data'", "different spec")


def _sft_config_truncated(t: Path, r: Path) -> tuple[list[str], list[Path], tuple[str, ...]]:
    import torch
    from safetensors.torch import save

    files = {"model.safetensors": save({"w": torch.arange(8, dtype=torch.float32)}), "config.json": b'{"model_type": "ll'}
    return _sft_finished(r, files), [r], ("config.json", str(r / "sft" / "result.json"))


def _interrupted(started: str, *mentions: str) -> Setup:
    """The data stage interrupted (no result.json) after `started` was written into its folder."""
    def setup(t: Path, r: Path) -> tuple[list[str], list[Path], tuple[str, ...]]:
        (r / "data" / "result.json").unlink()
        _write(r / "data" / "started.json", started)
        return _rerun(r), [r], tuple(m.replace("RUN", str(r)) for m in mentions)
    return setup


RUN_DIRS = [
    Case("locked by a live run", _locked),
    Case("result.json is a folder", _replaced_by_dir("data/result.json", "data/result.json")),
    Case("provenance.json is a folder", _replaced_by_dir("provenance.json", "provenance.json")),
    Case("spec.yaml is a folder", _spec_yaml_is_a_folder),
    Case("metrics.jsonl is a folder", _replaced_by_dir("metrics.jsonl", "metrics.jsonl")),
    Case("run.lock is a folder", _replaced_by_dir("run.lock", "")),
    Case("a stage folder is a file", _stage_dir_is_a_file),
    Case("result.json with a foreign fingerprint", _foreign_fingerprint),
    Case("stage interrupted under another spec", _interrupted('{"fingerprint": "0123456789abcdef", "invocation": 1}',
                                                              "stage 'data' in RUN", "started by a different spec")),
    Case("started.json truncated", _interrupted('{"fingerp', "RUN/data/started.json")),
    Case("result.json truncated", _damaged_result('{"sft": "/x", "fingerp')),
    Case("result.json empty", _damaged_result("")),
    Case("result.json a list", _damaged_result("[1, 2]\n")),
    Case("result.json not UTF-8", _damaged_result(b'{"a": "\xff\xfe"}')),
    Case("result.json not the data stage's record", _damaged_result('{"sft": 3, "rl": "rl.parquet", "eval": "eval.parquet"}\n')),
    Case("provenance.json truncated", _damaged_provenance('{"created_utc": "2026')),
    Case("provenance.json a list", _damaged_provenance("[]\n")),
    Case("provenance.json history not a list", _damaged_provenance('{"history": 3}\n')),
    Case("changed spec on a finished stage", lambda t, r: (_rerun(r, "data.n_rl=11"), [r], ("data", "different spec"))),
    Case("spec.yaml in the run dir truncated", lambda t, r: (
        ["run", "--spec", str(_write(r / "spec.yaml", (r / "spec.yaml").read_text()[:200]))], [r], (str(r / "spec.yaml"),))),
    Case("run.dir is a file", _file_as_run_dir),
    Case("run.dir under a file", _run_dir_under_file),
    Case("run.dir on a filesystem that refuses it", lambda t, r: (["run", *SMALL, "run.dir=/proc/slca-run"], [], ("run.dir", "/proc/slca-run"))),
    Case("finished SFT whose model is gone", _sft_model_gone),
    Case("finished SFT whose weights are truncated", _sft_model_truncated),
    Case("finished SFT whose config.json is truncated", _sft_config_truncated),
]


# ---------------------------------------------------------------- Toucan inputs read by the data stage
def _toucan(t: Path, r: Path, damage: Callable[[dict[str, Path]], None], *extra: str) -> list[str]:
    """Toucan-layout files copied from the run's synthetic set (real rows), then damaged."""
    recorded = json.loads((r / "data" / "result.json").read_text())
    files = {}
    for split in ("sft", "rl", "eval"):
        files[split] = t / "toucan" / f"{split}.parquet"
        files[split].parent.mkdir(exist_ok=True)
        files[split].write_bytes(Path(recorded[split]).read_bytes())
    damage(files)
    return ["run", "experiment=embedded_demo", "logger=none", "data=toucan", "run.stages=[data]", f"run.dir={t / 'toucan_run'}", *extra,
            *(f"data.{split}_path={path}" for split, path in files.items())]


def _bad_row(files: dict[str, Path]) -> None:
    table = pq.read_table(files["rl"])
    rows = table.to_pylist()
    rows[3]["data_source"] = ""
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), files["rl"])


def _toucan_case(damage: Callable[[dict[str, Path]], None], mentions: Callable[[Path], tuple[str, ...]], *extra: str) -> Setup:
    def setup(t: Path, r: Path) -> tuple[list[str], list[Path], tuple[str, ...]]:
        return _toucan(t, r, damage, *extra), [t / "toucan"], mentions(t)
    return setup


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _non_utf8_row(files: dict[str, Path]) -> None:
    rows = pq.read_table(files["rl"]).to_pylist()
    lines = [json.dumps(row).encode() for row in rows]
    lines[6] = lines[6].replace(b'"data_source": "', b'"data_source": "\xff', 1)
    files["rl"].unlink()
    files["rl"] = files["rl"].with_suffix(".jsonl")
    files["rl"].write_bytes(b"\n".join(lines) + b"\n")


TOUCAN = [
    Case("Toucan split is a folder", _toucan_case(lambda f: (f["rl"].unlink(), f["rl"].mkdir()), lambda t: ("data.rl_path", "not a file"))),
    Case("Toucan JSONL row not UTF-8, on_error=fail", _toucan_case(_non_utf8_row, lambda t: (str(t / "toucan" / "rl.jsonl"), "row 6"))),
    Case("Toucan split missing", _toucan_case(lambda f: f["sft"].unlink(), lambda t: ("data.sft_path", str(t / "toucan" / "sft.parquet")))),
    Case("Toucan split not parquet", _toucan_case(lambda f: f["rl"].write_text("prompt,data_source\n"), lambda t: ("data.rl_path", str(t / "toucan" / "rl.parquet")))),
    Case("Toucan split truncated", _toucan_case(lambda f: _truncate(f["eval"]), lambda t: ("data.eval_path", str(t / "toucan" / "eval.parquet")))),
    Case("Toucan split empty", _toucan_case(lambda f: f["eval"].write_bytes(b""), lambda t: ("data.eval_path", str(t / "toucan" / "eval.parquet")))),
    Case("Toucan bad row, on_error=fail", _toucan_case(_bad_row, lambda t: (str(t / "toucan" / "rl.parquet"), "row 3", "data_source"))),
]

# ---------------------------------------------------------------- `slca data`: a few cross-cutting ones
DATA = [
    Case("config groups with an extra argument", lambda t, r: (["config", "groups", "extra"], [], ("extra",))),
    Case("data on_error not a choice", lambda t, r: (["run", "data=toucan", "data.on_error=maybe", f"run.dir={t / 'new'}"], [t / "new"], ("data.on_error",))),
    Case("data validate: missing file", lambda t, r: (["data", "validate", str(t / "none.parquet"), "--split", "rl"], [t], ("none.parquet",))),
    Case("data stats: unknown suffix", lambda t, r: (["data", "stats", str(_write(t / "rows.txt", "x\n")), "--split", "rl"], [t], ("rows.txt",))),
    Case("data validate: truncated parquet", lambda t, r: (
        ["data", "validate", str(_write(t / "cut.parquet", Path(json.loads((r / "data" / "result.json").read_text())["rl"]).read_bytes()[:300])), "--split", "rl"],
        [t], ("cut.parquet",))),
]

CASES = USAGE + OVERRIDES + SPEC_FILES + RUN_DIRS + TOUCAN + DATA


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_bad_input_is_refused_with_one_line_and_changes_nothing(
    case: Case, run_copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)  # relative defaults (runs/, .cache/) land in the test's own folder
    argv, watched, mentions = case.setup(work, run_copy)
    before = snapshot(watched)
    if case.setup is _locked:
        with RunLock(run_copy):
            result = run_cli(argv, capsys)
    else:
        result = run_cli(argv, capsys)
    assert_refused(result, *mentions)
    assert snapshot(watched) == before
    assert not list(work.glob(".cache/slca/logs/*.log")), "an expected refusal must not be logged as a crash"


def test_the_table_is_broad() -> None:
    assert len(CASES) >= 60
