"""`slca report` on run directories written by hand: what each section shows, and when it has nothing."""

from __future__ import annotations

import pytest

from slca.report import build_report
from tests.badinput import run_cli
from tests.report.rundirs import colour_present, html_tables, rl_line, write_run

TAB10_BLUE, TAB10_ORANGE = (31, 119, 180), (255, 127, 14)  # the first two runs' colours


def test_the_stability_table_shows_the_share_computed_by_hand(tmp_path) -> None:
    epochs = [  # (prompt, all correct) per epoch, two steps of two prompts each
        [(0, 1), (1, 1), (2, 0), (3, 1)],
        [(0, 1), (1, 0), (2, 1), (3, 1)],
        [(0, 1), (1, 1), (2, 1), (3, 0)],
    ]
    records = [rl_line(2 * e + half + 1, e, outcomes[2 * half : 2 * half + 2]) for e, outcomes in enumerate(epochs) for half in (0, 1)]
    run = write_run(tmp_path / "run", records)
    index = build_report(run)
    assert (index.parent / "stability.png").is_file() and (index.parent / "fractions.png").is_file()
    stability = [t for t in html_tables(index.read_text()) if t[0][:2] == ["run", "k"]][0]
    # k = 1: epoch 0 -> {0,1,3} followed, {0,3} stay; epoch 1 -> {0,2,3} followed, {0,2} stay: 4 of 6.
    # k = 2: epoch 0 -> {0,1,3} followed through epochs 1 and 2, only 0 stays: 1 of 3.
    assert stability[1:] == [["run", "1", "2", "6", "0.667"], ["run", "2", "1", "3", "0.333"]]


def test_a_run_without_metrics_gets_a_page_where_every_section_says_it_has_no_data(tmp_path) -> None:
    run = write_run(tmp_path / "fresh")
    index = build_report(run, tmp_path / "out")
    text = index.read_text()
    assert not list(index.parent.glob("*.png"))
    for anchor in ("reward", "advantages", "credit", "fractions", "stability", "time", "entropy", "eval"):
        section = text.split(f'<section id="{anchor}">', 1)[1].split("</section>", 1)[0]
        assert 'class="nodata"' in section, anchor
    assert "reward/score_mean" in text and "prompts/all_correct" in text  # the page names what it looked for


def test_a_sweep_puts_every_run_on_each_plot_labelled_by_its_path(tmp_path) -> None:
    sweep = tmp_path / "sweep"
    write_run(sweep / "lr" / "1e-6", [rl_line(s, 0, [], reward__score_mean=0.1 * s) for s in range(1, 6)])
    write_run(sweep / "lr" / "1e-5", [rl_line(s, 0, [], reward__score_mean=0.5 - 0.1 * s) for s in range(1, 6)])
    write_run(sweep / "baseline", [rl_line(s, 0, [], reward__score_mean=0.0, entropy__all=1.0) for s in range(1, 4)])
    index = build_report(sweep)
    assert index == sweep / "report" / "index.html"
    runs = html_tables(index.read_text())[0]
    assert [row[0] for row in runs[1:]] == ["baseline", "lr/1e-5", "lr/1e-6"]
    assert [row[7] for row in runs[1:]] == ["3", "5", "5"]  # RL steps
    reward = index.parent / "reward.png"
    assert colour_present(reward, TAB10_BLUE) and colour_present(reward, TAB10_ORANGE)
    assert not colour_present(index.parent / "entropy.png", TAB10_ORANGE)  # only the first run logged entropy


def test_a_rebuilt_report_replaces_the_old_one_as_a_whole(tmp_path) -> None:
    run = write_run(tmp_path / "run", [rl_line(1, 0, [(0, 1)], reward__score_mean=0.5)])
    index = build_report(run)
    (index.parent / "stale.png").write_bytes(b"old")
    (run / "metrics.jsonl").write_text("")
    build_report(run)
    assert not (index.parent / "stale.png").exists() and not (index.parent / "reward.png").exists()
    assert not [p for p in run.iterdir() if p.name.startswith(".")]  # no temporary left beside it


def test_a_torn_last_metrics_line_is_a_write_in_progress_and_is_left_out(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    run = write_run(tmp_path / "run", [rl_line(1, 0, [], reward__score_mean=0.5)])
    with open(run / "metrics.jsonl", "a") as fh:
        fh.write('{"stage": "rl", "step": 2, "reward/sc')
    result = run_cli(["report", str(run)], capsys)
    assert result.code == 0 and result.err == "" and "index.html" in result.out
    assert html_tables((run / "report" / "index.html").read_text())[0][1][7] == "1"


def test_a_sweep_of_slca_sweep_drops_the_runs_folder_every_label_shares(tmp_path) -> None:
    sweep = tmp_path / "sweep"
    for key in ("estimator=grpo,seed=0", "estimator=slca_grpo,seed=0"):
        write_run(sweep / "runs" / key, [])
    (sweep / "logs").mkdir()
    (sweep / "manifest.json").write_text("{}")
    runs = html_tables(build_report(sweep).read_text())[0]
    assert [row[0] for row in runs[1:]] == ["estimator=grpo,seed=0", "estimator=slca_grpo,seed=0"]


def test_a_verl_run_is_plotted_from_the_names_verls_logger_gives(tmp_path) -> None:
    verl_lines = [{"stage": "rl", "step": s, "critic/score/mean": 0.1 * s, "actor/entropy": 2.0 - 0.1 * s, "slca/zero_variance_group_frac": 0.5,
                   "timing_s/gen": 3.0, "timing_s/reward": 0.5, "timing_s/update_actor": 1.5} for s in range(1, 4)]
    index = build_report(write_run(tmp_path / "verl_run", verl_lines))
    text = index.read_text()
    for image in ("reward.png", "fractions.png", "time.png", "entropy.png"):
        assert (index.parent / image).is_file() and f'src="{image}"' in text
    assert html_tables(text)[0][1][7] == "3"  # RL steps
    assert not (index.parent / "advantages.png").exists()  # verl logs no per-segment advantages


def test_a_run_that_logs_credit_misattribution_gets_its_plot(tmp_path) -> None:
    credit = [rl_line(s, 0, [], credit__misattributed_token_frac=0.5 - 0.1 * s, credit__disagreeing_rollouts=6 - s) for s in range(1, 4)]
    index = build_report(write_run(tmp_path / "logged", credit))
    assert (index.parent / "credit.png").is_file() and 'src="credit.png"' in index.read_text()
