"""Terminal tables fit the terminal's width and name every column they leave out, with the file that has it;
progress bars draw only on a terminal."""

from __future__ import annotations

import pytest

from slca.terminal import print_table, progress_bar

HEADER = ["factor: level − reference", *(f"metric_{i}" for i in range(9))]
ROWS = [["construction: context − native", *(f"{i / 100:+.3f} ± 0.0{i}" for i in range(9))],
        ["seed: std within a cell", *(f"{i / 100:.3f}" for i in range(9))]]


def _shown(out: str) -> set[str]:
    return {name for name in HEADER if name in out.split("\n(left out to fit")[0]}


@pytest.mark.parametrize("columns", [60, 80, 100])
def test_a_table_too_wide_keeps_what_fits_and_names_the_rest_with_the_file(columns: int, monkeypatch, capsys) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    dropped = print_table("sensitivity: rl", HEADER, ROWS, lead=1, full="runs/x/eval/table.md")
    out = capsys.readouterr().out
    table, _, note = out.partition("\n(left out to fit")
    assert max(len(line) for line in table.splitlines()) <= columns
    assert dropped and dropped == HEADER[len(HEADER) - len(dropped):]  # the last columns go, in order
    assert _shown(out) == set(HEADER) - set(dropped)
    assert note.strip() == f"{columns} columns: {', '.join(dropped)}; runs/x/eval/table.md has every column)"
    assert "0.0" in table and "\n" not in note.strip()  # values print whole, one line per note


def test_a_wide_terminal_shows_every_column_and_no_note(monkeypatch, capsys) -> None:
    monkeypatch.setenv("COLUMNS", "300")
    assert print_table("sensitivity: rl", HEADER, ROWS, lead=1, full="table.md") == []
    out = capsys.readouterr().out
    assert _shown(out) == set(HEADER) and "left out" not in out
    assert max(len(line) for line in out.splitlines()) <= 300


def test_the_leading_columns_stay_however_narrow_the_terminal(monkeypatch, capsys) -> None:
    monkeypatch.setenv("COLUMNS", "20")
    dropped = print_table("t", HEADER, ROWS, lead=1, full="table.md")
    assert dropped == HEADER[1:]
    assert "left out to fit 20 columns: metric_0," in capsys.readouterr().out


@pytest.mark.parametrize("transient", [True, False])
def test_a_progress_bar_on_piped_output_prints_nothing_at_all(transient: bool, capsys) -> None:
    from rich.progress import Progress

    with Progress(transient=True) as plain:  # rich's own bar, the control: a finished transient bar leaves an empty line
        plain.add_task("x", total=2)
    assert capsys.readouterr().out == "\n"
    with progress_bar(transient=transient) as bar:
        task = bar.add_task("rl", total=3)
        for _ in range(3):
            bar.advance(task)
    print("after")
    assert capsys.readouterr().out == "after\n"
