"""Every `slca data` command refuses bad input the same way: non-zero exit, exactly one stderr line
naming the file / row / field / option, no traceback, and nothing on disk changed (no output
replaced, none half-written, no temporary left behind).

Each case builds its bad input in a fresh workspace, runs the real CLI in-process, and compares a
hash snapshot of the whole workspace before and after.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from slca.data.io import read_rows, write_rows
from tests.badinput import assert_refused, run_cli, snapshot


@dataclass(frozen=True)
class Case:
    argv: list[str]  # "{w}" is the workspace folder
    mentions: tuple[str, ...]  # each must appear in the one stderr line ("{w}" expanded too)
    setup: Callable[[Path], None] = lambda w: None


def _bytes(name: str, data: bytes) -> Callable[[Path], None]:
    return lambda w: (w / name).write_bytes(data)


def _text(name: str, text: str) -> Callable[[Path], None]:
    return lambda w: (w / name).write_text(text, encoding="utf-8")


def _all(*steps: Callable[[Path], None]) -> Callable[[Path], None]:
    def run(w: Path) -> None:
        for s in steps:
            s(w)
    return run


def _truncated_parquet(w: Path) -> None:
    data = (w / "sft.parquet").read_bytes()
    (w / "trunc.parquet").write_bytes(data[: len(data) // 2])


def _garbled_parquet(w: Path) -> None:
    # valid magic bytes and footer, garbage pages: the reader fails inside the data
    data = bytearray((w / "sft.parquet").read_bytes())
    for k in range(8, len(data) // 2):
        data[k] = (data[k] * 31 + 7) % 256
    (w / "garbled.parquet").write_bytes(bytes(data))


def _row_with(field: str, value: object) -> Callable[[Path], None]:
    def run(w: Path) -> None:
        rows = list(read_rows(w / "sft.jsonl"))
        rows[3] = {**rows[3], field: value}
        write_rows(w / "badrow.jsonl", iter(rows))
    return run


def _unreadable(name: str) -> Callable[[Path], None]:
    """`name` beside the workspace (its snapshot could not read it either): a link to /proc/self/mem,
    which opens but fails every read with EIO."""
    return lambda w: (w.parent / name).symlink_to("/proc/self/mem")


def _no_row_parquet(w: Path) -> None:
    import pyarrow.parquet as pq

    pq.write_table(pq.read_table(w / "sft.parquet").slice(0, 0), w / "norows.parquet")


def _prepared(w: Path) -> None:
    from slca.cli import main

    assert main(["data", "prepare", str(w / "sft.jsonl"), "--out", str(w / "prep"), "--eval-size", "5"]) == 0


def _synthed(w: Path) -> None:
    (w / "syn").mkdir()
    (w / "syn" / "notes.txt").write_text("mine")


PARQUET_MISSING_FOOTER = b"PAR1" + b"\x00" * 64
CASES: dict[str, Case] = {
    # --- convert: outputs that would destroy data -------------------------------------------
    "convert X X": Case(["convert", "{w}/sft.jsonl", "{w}/sft.jsonl"], ("{w}/sft.jsonl", "input")),
    "convert onto a symlink to the input": Case(
        ["convert", "{w}/sft.jsonl", "{w}/link.jsonl"], ("link.jsonl", "input"),
        lambda w: os.symlink(w / "sft.jsonl", w / "link.jsonl")),
    "convert onto a hard link of the input": Case(
        ["convert", "{w}/sft.jsonl", "{w}/hard.jsonl"], ("hard.jsonl", "input"),
        lambda w: os.link(w / "sft.jsonl", w / "hard.jsonl")),
    "convert through a dotted path to the input": Case(
        ["convert", "{w}/sft.jsonl", "{w}/sub/../sft.jsonl"], ("sft.jsonl", "input"),
        lambda w: (w / "sub").mkdir()),
    "convert output named dataset_info.json": Case(
        ["convert", "{w}/sft.jsonl", "{w}/lf/dataset_info.json"], ("dataset_info.json",)),
    "convert whose rejects file would be the input": Case(
        ["convert", "{w}/a.rejects.jsonl", "{w}/a.jsonl", "--on-error", "skip"], ("a.rejects.jsonl", "input"),
        lambda w: shutil.copy(w / "sft.jsonl", w / "a.rejects.jsonl")),
    "convert output is its own rejects file": Case(
        ["convert", "{w}/sft.jsonl", "{w}/o.rejects.jsonl", "--on-error", "skip"], ("o.rejects.jsonl", "same file")),
    "convert .json with text after the array": Case(["convert", "{w}/tail.json", "{w}/o.jsonl"], ("tail.json", "after"),
                                                    _text("tail.json", '[{"a": 1}] trailing')),
    "convert .json with an unterminated string": Case(["convert", "{w}/str.json", "{w}/o.jsonl"], ("str.json",),
                                                      _text("str.json", '[{"a": "never closed}]')),
    "stats on a directory": Case(["stats", "{w}/dir.parquet", "--split", "sft"], ("dir.parquet", "not a file"),
                                 lambda w: (w / "dir.parquet").mkdir()),
    "synth --out under a file": Case(["synth", "--out", "{w}/afile/s", "--n-sft", "5"], ("afile", "not a directory"),
                                     _text("afile", "x")),
    "convert output is an existing directory": Case(
        ["convert", "{w}/sft.jsonl", "{w}/adir.jsonl"], ("adir.jsonl", "directory"),
        lambda w: (w / "adir.jsonl").mkdir()),
    # --- convert: unreadable inputs -----------------------------------------------------------
    "convert empty parquet": Case(["convert", "{w}/empty.parquet", "{w}/o.jsonl"], ("empty.parquet",),
                                  _bytes("empty.parquet", b"")),
    "convert truncated parquet": Case(["convert", "{w}/trunc.parquet", "{w}/o.jsonl"], ("trunc.parquet",),
                                      _truncated_parquet),
    "convert garbled parquet": Case(["convert", "{w}/garbled.parquet", "{w}/o.jsonl"], ("garbled.parquet",),
                                    _garbled_parquet),
    "convert parquet without a footer": Case(["convert", "{w}/nofoot.parquet", "{w}/o.jsonl"], ("nofoot.parquet",),
                                             _bytes("nofoot.parquet", PARQUET_MISSING_FOOTER)),
    "convert text named .parquet": Case(["convert", "{w}/text.parquet", "{w}/o.jsonl"], ("text.parquet",),
                                        _text("text.parquet", "hello\n")),
    "convert empty .json": Case(["convert", "{w}/empty.json", "{w}/o.jsonl"], ("empty.json", "empty"),
                                _bytes("empty.json", b"")),
    "convert whitespace .json": Case(["convert", "{w}/ws.json", "{w}/o.jsonl"], ("ws.json", "empty"),
                                     _text("ws.json", " \n\n ")),
    "convert .json that is an object": Case(["convert", "{w}/obj.json", "{w}/o.jsonl"], ("obj.json", "array"),
                                            _text("obj.json", '{"conversations": []}')),
    "convert truncated .json array": Case(["convert", "{w}/cut.json", "{w}/o.jsonl"], ("cut.json",),
                                          _text("cut.json", '[{"a": 1}, {"b": ')),
    "convert binary .json": Case(["convert", "{w}/bin.json", "{w}/o.jsonl"], ("bin.json",),
                                 _bytes("bin.json", b"\xff\xfe\x00garbage")),
    "convert unknown input suffix": Case(["convert", "{w}/data.csv", "{w}/o.jsonl"], ("data.csv", "unknown file type"),
                                         _text("data.csv", "a,b\n")),
    "convert unknown output suffix": Case(["convert", "{w}/sft.jsonl", "{w}/o.txt"], ("o.txt", "unknown file type")),
    "convert missing input": Case(["convert", "{w}/nope.parquet", "{w}/o.jsonl"], ("nope.parquet", "no such file")),
    "convert input is a directory": Case(["convert", "{w}/d.parquet", "{w}/o.jsonl"], ("d.parquet", "not a file"),
                                         lambda w: (w / "d.parquet").mkdir()),
    "convert output under a file": Case(["convert", "{w}/sft.jsonl", "{w}/afile/o.jsonl"], ("afile", "not a directory"),
                                        _text("afile", "x")),
    "convert output in an unwritable place": Case(["convert", "{w}/sft.jsonl", "/proc/slca-no/o.jsonl"],
                                                  ("/proc/slca-no/o.jsonl",)),
    "convert next to a corrupt dataset_info.json": Case(
        ["convert", "{w}/sft.jsonl", "{w}/lf/o.jsonl"], ("dataset_info.json",),
        _all(lambda w: (w / "lf").mkdir(), _text("lf/dataset_info.json", '{"a": {"file_name": '))),
    "convert next to a dataset_info.json that is a list": Case(
        ["convert", "{w}/sft.jsonl", "{w}/lf/o.jsonl"], ("dataset_info.json", "JSON object"),
        _all(lambda w: (w / "lf").mkdir(), _text("lf/dataset_info.json", "[1, 2]"))),
    "convert next to a non-UTF-8 dataset_info.json": Case(
        ["convert", "{w}/sft.jsonl", "{w}/lf/o.jsonl"], ("dataset_info.json",),
        _all(lambda w: (w / "lf").mkdir(), _bytes("lf/dataset_info.json", b'{"a": "\xff"}'))),
    "convert fail mode, uuid is a number": Case(["convert", "{w}/badrow.jsonl", "{w}/o.jsonl"],
                                                ("badrow.jsonl", "row 3", "uuid"), _row_with("uuid", 123)),
    "convert fail mode, conversations missing": Case(["convert", "{w}/badrow.jsonl", "{w}/o.jsonl"],
                                                     ("badrow.jsonl", "row 3", "conversations"),
                                                     _row_with("conversations", None)),
    # --- validate -----------------------------------------------------------------------------
    "validate --out is the input": Case(["validate", "{w}/sft.jsonl", "--split", "sft", "--out", "{w}/sft.jsonl"],
                                        ("sft.jsonl", "input")),
    "validate --out dataset_info.json": Case(["validate", "{w}/sft.jsonl", "--split", "sft", "--out",
                                              "{w}/dataset_info.json"], ("dataset_info.json",)),
    "validate --out unknown suffix": Case(["validate", "{w}/sft.jsonl", "--split", "sft", "--out", "{w}/v.csv"],
                                          ("v.csv",)),
    "validate empty parquet": Case(["validate", "{w}/empty.parquet", "--split", "rl"], ("empty.parquet",),
                                   _bytes("empty.parquet", b"")),
    "validate garbled parquet": Case(["validate", "{w}/garbled.parquet", "--split", "sft"], ("garbled.parquet",),
                                     _garbled_parquet),
    "validate missing file": Case(["validate", "{w}/gone.jsonl", "--split", "sft"], ("gone.jsonl", "no such file")),
    "validate unknown suffix": Case(["validate", "{w}/x.yaml", "--split", "sft"], ("x.yaml",), _text("x.yaml", "a: 1")),
    "validate fail mode with a bad row": Case(["validate", "{w}/badrow.jsonl", "--split", "sft"],
                                              ("badrow.jsonl", "row 3", "uuid"), _row_with("uuid", 123)),
    "validate skip mode, rejects file would be the input": Case(
        ["validate", "{w}/v.rejects.jsonl", "--split", "sft", "--on-error", "skip", "--out", "{w}/v.jsonl"],
        ("v.rejects.jsonl", "input"), lambda w: shutil.copy(w / "sft.jsonl", w / "v.rejects.jsonl")),
    "validate --split rl on sft rows": Case(["validate", "{w}/sft.jsonl", "--split", "rl"], ("sft.jsonl", "row 0")),
    # --- prepare ------------------------------------------------------------------------------
    "prepare --eval-size negative": Case(["prepare", "{w}/sft.jsonl", "--out", "{w}/p", "--eval-size", "-5"],
                                         ("--eval-size", "-5")),
    "prepare --rl-fraction 2": Case(["prepare", "{w}/sft.jsonl", "--out", "{w}/p", "--rl-fraction", "2"],
                                    ("--rl-fraction", "2")),
    "prepare --rl-fraction -1": Case(["prepare", "{w}/sft.jsonl", "--out", "{w}/p", "--rl-fraction", "-1"],
                                     ("--rl-fraction", "-1")),
    "prepare --rl-fraction nan": Case(["prepare", "{w}/sft.jsonl", "--out", "{w}/p", "--rl-fraction", "nan"],
                                      ("--rl-fraction", "nan")),
    "prepare --rl-fraction inf": Case(["prepare", "{w}/sft.jsonl", "--out", "{w}/p", "--rl-fraction", "inf"],
                                      ("--rl-fraction", "inf")),
    "prepare default --eval-size on a small input": Case(["prepare", "{w}/sft.jsonl", "--out", "{w}/p"],
                                                         ("--eval-size 4000", "unique valid trajectories")),
    "prepare --eval-size one over the input": Case(["prepare", "{w}/sft.jsonl", "--out", "{w}/p", "--eval-size", "41"],
                                                   ("--eval-size 41", "unique valid trajectories")),
    "prepare --out is a file": Case(["prepare", "{w}/sft.jsonl", "--out", "{w}/afile", "--eval-size", "5"],
                                    ("afile", "not a directory"), _text("afile", "x")),
    "prepare --out holds other files": Case(["prepare", "{w}/sft.jsonl", "--out", "{w}/mine", "--eval-size", "5"],
                                            ("mine", "notes.txt"),
                                            _all(lambda w: (w / "mine").mkdir(), _text("mine/notes.txt", "keep me"))),
    "prepare --out is the working directory": Case(["prepare", "{w}/sft.jsonl", "--out", "{w}", "--eval-size", "5"],
                                                   ("{w}",)),
    "prepare input inside --out": Case(["prepare", "{w}/prep/sft.parquet", "--out", "{w}/prep", "--eval-size", "5"],
                                       ("prep", "contains the input"),
                                       _all(_prepared, lambda w: shutil.copy(w / "sft.parquet", w / "prep/sft.parquet"))),
    "prepare garbled input over an earlier output": Case(
        ["prepare", "{w}/garbled.parquet", "--out", "{w}/prep", "--eval-size", "5"], ("garbled.parquet",),
        _all(_prepared, _garbled_parquet)),
    "prepare fail mode with a bad row over an earlier output": Case(
        ["prepare", "{w}/badrow.jsonl", "--out", "{w}/prep", "--eval-size", "5"], ("badrow.jsonl", "row 3", "uuid"),
        _all(_prepared, _row_with("uuid", 123))),
    "prepare empty .json": Case(["prepare", "{w}/e.json", "--out", "{w}/p", "--eval-size", "0"], ("e.json", "empty"),
                                _bytes("e.json", b"")),
    "prepare bad row into a new nested --out": Case(
        ["prepare", "{w}/badrow.jsonl", "--out", "{w}/new/deeper/p", "--eval-size", "5"], ("badrow.jsonl", "row 3"),
        _row_with("uuid", 123)),
    "convert bad row into a new nested folder": Case(
        ["convert", "{w}/badrow.jsonl", "{w}/new/deeper/o.jsonl"], ("badrow.jsonl", "row 3"), _row_with("uuid", 7)),
    "validate bad row with --out in a new nested folder": Case(
        ["validate", "{w}/badrow.jsonl", "--split", "sft", "--out", "{w}/new/deeper/v.jsonl"], ("badrow.jsonl", "row 3"),
        _row_with("uuid", 7)),
    "prepare missing input": Case(["prepare", "{w}/none.jsonl", "--out", "{w}/p", "--eval-size", "0"],
                                  ("none.jsonl", "no such file")),
    "prepare --out in an unwritable place": Case(["prepare", "{w}/sft.jsonl", "--out", "/proc/slca-no/p",
                                                  "--eval-size", "5"], ("/proc/slca-no",)),
    # --- stats --------------------------------------------------------------------------------
    "stats empty parquet": Case(["stats", "{w}/empty.parquet", "--split", "sft"], ("empty.parquet",),
                                _bytes("empty.parquet", b"")),
    "stats truncated parquet": Case(["stats", "{w}/trunc.parquet", "--split", "sft"], ("trunc.parquet",),
                                    _truncated_parquet),
    "stats garbled parquet": Case(["stats", "{w}/garbled.parquet", "--split", "sft"], ("garbled.parquet",),
                                  _garbled_parquet),
    "stats empty .json": Case(["stats", "{w}/e.json", "--split", "rl"], ("e.json",), _bytes("e.json", b"")),
    "stats unknown suffix": Case(["stats", "{w}/s.tsv", "--split", "rl"], ("s.tsv",), _text("s.tsv", "x")),
    "stats missing file": Case(["stats", "{w}/no.parquet", "--split", "rl"], ("no.parquet", "no such file")),
    # --- inputs without a row: refused, nothing written or registered ----------------------------
    "validate empty .jsonl": Case(["validate", "{w}/e.jsonl", "--split", "rl"], ("e.jsonl", "empty input"),
                                  _bytes("e.jsonl", b"")),
    "validate blank-line .jsonl with --out": Case(["validate", "{w}/b.jsonl", "--split", "sft", "--out", "{w}/v/o.jsonl"],
                                                  ("b.jsonl", "empty input"), _text("b.jsonl", "\n \n\n")),
    "validate [] .json in skip mode": Case(["validate", "{w}/a.json", "--split", "sft", "--on-error", "skip"],
                                           ("a.json", "empty input"), _text("a.json", "[]")),
    "validate parquet without rows": Case(["validate", "{w}/norows.parquet", "--split", "sft"],
                                          ("norows.parquet", "empty input"), _no_row_parquet),
    "convert empty .jsonl": Case(["convert", "{w}/e.jsonl", "{w}/lf/o.jsonl"], ("e.jsonl", "empty input"),
                                 _bytes("e.jsonl", b"")),
    "convert empty .jsonl beside a registry": Case(
        ["convert", "{w}/e.jsonl", "{w}/lf/o.jsonl", "--on-error", "skip"], ("e.jsonl", "empty input"),
        _all(_bytes("e.jsonl", b""), lambda w: (w / "lf").mkdir(), _text("lf/dataset_info.json", '{"other": {}}'))),
    "convert parquet without rows": Case(["convert", "{w}/norows.parquet", "{w}/o.jsonl"],
                                         ("norows.parquet", "empty input"), _no_row_parquet),
    "prepare empty .jsonl": Case(["prepare", "{w}/e.jsonl", "--out", "{w}/p", "--eval-size", "0"],
                                 ("e.jsonl", "empty input"), _bytes("e.jsonl", b"")),
    "prepare [] .json over an earlier output": Case(["prepare", "{w}/a.json", "--out", "{w}/prep", "--eval-size", "0"],
                                                    ("a.json", "empty input"), _all(_prepared, _text("a.json", "[]"))),
    "stats empty .jsonl": Case(["stats", "{w}/e.jsonl", "--split", "sft"], ("e.jsonl", "empty input"),
                               _bytes("e.jsonl", b"")),
    "stats parquet without rows": Case(["stats", "{w}/norows.parquet", "--split", "sft"],
                                       ("norows.parquet", "empty input"), _no_row_parquet),
    # --- an input that opens but cannot be read (EIO) ------------------------------------------
    "validate an unreadable .jsonl": Case(["validate", "{w}/../mem.jsonl", "--split", "sft"],
                                          ("mem.jsonl", "cannot read", "Input/output error"), _unreadable("mem.jsonl")),
    "validate an unreadable .json": Case(["validate", "{w}/../mem.json", "--split", "sft"],
                                         ("mem.json", "cannot read", "Input/output error"), _unreadable("mem.json")),
    "convert an unreadable .jsonl": Case(["convert", "{w}/../mem.jsonl", "{w}/lf/o.jsonl"],
                                         ("mem.jsonl", "cannot read", "Input/output error"), _unreadable("mem.jsonl")),
    "prepare an unreadable .jsonl": Case(["prepare", "{w}/../mem.jsonl", "--out", "{w}/p", "--eval-size", "0"],
                                         ("mem.jsonl", "cannot read", "Input/output error"), _unreadable("mem.jsonl")),
    "stats an unreadable .jsonl": Case(["stats", "{w}/../mem.jsonl", "--split", "sft"],
                                       ("mem.jsonl", "cannot read", "Input/output error"), _unreadable("mem.jsonl")),
    # --- synth --------------------------------------------------------------------------------
    "synth --n-tools beyond the catalogue": Case(["synth", "--out", "{w}/s", "--n-tools", "10000"],
                                                 ("--n-tools", "at most 29", "10000")),
    "synth --n-sft beyond 64 bits": Case(["synth", "--out", "{w}/s", "--n-sft", "99999999999999999999"],
                                         ("--n-sft", "at most 1,000,000", "99999999999999999999")),
    "synth --n-rl one over the cap": Case(["synth", "--out", "{w}/s", "--n-rl", "1000001"], ("--n-rl", "1,000,000")),
    "synth --n-eval one over the cap": Case(["synth", "--out", "{w}/s", "--n-eval", "1000001"], ("--n-eval", "1,000,000")),
    "synth --n-sft negative": Case(["synth", "--out", "{w}/s", "--n-sft", "-5"], ("--n-sft",)),
    "synth --n-tools zero": Case(["synth", "--out", "{w}/s", "--n-tools", "0"], ("--n-tools",)),
    "synth --out is a file": Case(["synth", "--out", "{w}/afile", "--n-sft", "5"], ("afile",), _text("afile", "x")),
    "synth --out holds other files": Case(["synth", "--out", "{w}/syn", "--n-sft", "5"], ("syn", "notes.txt"), _synthed),
    "synth --out in an unwritable place": Case(["synth", "--out", "/proc/slca-no/s", "--n-sft", "5"], ("/proc/slca-no",)),
}


@pytest.fixture(scope="module")
def base_files(tmp_path_factory, synth_set) -> Path:
    """A small valid SFT set as parquet and JSONL, copied into every case's workspace."""
    d = tmp_path_factory.mktemp("badinput_base")
    rows = list(read_rows(synth_set.sft_full))[:40]
    write_rows(d / "sft.jsonl", iter(rows))
    write_rows(d / "sft.parquet", iter(rows))
    return d


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_input_is_refused_with_one_line_and_nothing_changes(name, base_files, tmp_path, capsys):
    case = CASES[name]
    w = tmp_path / "w"
    shutil.copytree(base_files, w)
    case.setup(w)
    before, paths = snapshot([w]), sorted(w.rglob("*"))
    result = run_cli(["data", *[a.replace("{w}", str(w)) for a in case.argv]], capsys)
    assert_refused(result, *[m.replace("{w}", str(w)) for m in case.mentions])
    assert snapshot([w]) == before
    assert sorted(w.rglob("*")) == paths  # not even an empty folder or a temporary is left behind


def test_the_table_covers_every_data_command():
    commands = {c.argv[0] for c in CASES.values()}
    assert commands == {"validate", "convert", "prepare", "stats", "synth"}
    assert len(CASES) >= 60


def test_an_unexpected_error_is_one_line_naming_a_saved_traceback(base_files, tmp_path, capsys, monkeypatch):
    import slca.data.stats as stats

    def broken(rows, split):
        raise ZeroDivisionError("a bug, not bad input")

    monkeypatch.setattr(stats, "collect", broken)
    monkeypatch.chdir(tmp_path)  # the safety net's log folder is relative to the working directory
    result = run_cli(["data", "stats", str(base_files / "sft.jsonl"), "--split", "sft"], capsys)
    assert_refused(result, "ZeroDivisionError", "a bug, not bad input", "traceback in")
    log = Path(result.err.split("traceback in ")[1].split(";")[0])
    text = log.read_text()
    assert "Traceback" in text and "ZeroDivisionError" in text and "broken" in text
    debug = run_cli(["data", "stats", str(base_files / "sft.jsonl"), "--split", "sft", "--debug"], capsys)
    assert debug.code != 0 and "Traceback" in debug.err and "broken" in debug.err


def test_a_good_convert_still_registers_beside_an_existing_registry(base_files, tmp_path, capsys):
    (tmp_path / "lf").mkdir()
    (tmp_path / "lf" / "dataset_info.json").write_text(json.dumps({"other": {"file_name": "x.jsonl"}}))
    result = run_cli(["data", "convert", str(base_files / "sft.jsonl"), str(tmp_path / "lf" / "o.jsonl")], capsys)
    assert result.code == 0 and result.err == ""
    info = json.loads((tmp_path / "lf" / "dataset_info.json").read_text())
    assert set(info) == {"other", "o"} and info["o"]["file_name"] == "o.jsonl"
