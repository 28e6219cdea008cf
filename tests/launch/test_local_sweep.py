"""A sweep on this machine (launcher=local): runs one after another in subprocesses; run again, it
skips what finished and resubmits what failed, which then resumes and finishes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from tests.badinput import run_cli
from tests.launch.conftest import TOY


@pytest.mark.slow
def test_a_local_sweep_runs_each_run_then_skips_the_finished_one_and_resubmits_the_failed_one(
    caches: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from slca.config.compose import compose_spec
    from slca.data.synth import ensure_synthetic

    monkeypatch.chdir(tmp_path)
    splits = ensure_synthetic(compose_spec([*TOY, *caches]).data).as_dict()
    late = tmp_path / "late-sft.parquet"  # does not exist yet: the second run fails at its data stage
    train = [o for o in TOY if o.startswith(("train.", "eval."))]
    sweep_file = tmp_path / "two.yaml"
    sweep_file.write_text(yaml.safe_dump({
        "name": "two", "experiment": "embedded_demo",
        "overrides": ["data=toucan", f"data.rl_path={splits['rl']}", f"data.eval_path={splits['eval']}", *train, caches[1], "logger=none"],
        "grid": {"data.sft_path": [str(splits["sft"]), str(late)]},
    }))
    sweep = tmp_path / "sweep"
    first = run_cli(["sweep", str(sweep_file), "--dir", str(sweep)], capsys)
    assert first.code == 0, first.err
    manifest = json.loads((sweep / "manifest.json").read_text())
    ok_key, late_key = (k for k in manifest["runs"])
    assert manifest["launcher"] == "local" and all(r["job_id"].startswith("local:") for r in manifest["runs"].values())
    assert first.out.index(f"{ok_key}: started") < first.out.index(f"{ok_key}: finished") < first.out.index(f"{late_key}: started"), \
        "one run after another"
    result = run_cli(["results", str(sweep)], capsys)
    table = (sweep / "results.md").read_text()
    late_log = manifest["runs"][late_key]["log"]
    assert f"| {late_key} | failed | slca: data.sft_path (data.on_error=fail): " not in table
    assert f"| {late_key} | failed |" in table and "file not found" in table and str(late) in table and late_log in table
    assert "file not found" in Path(late_log).read_text()

    shutil.copy(splits["sft"], late)
    second = run_cli(["sweep", str(sweep_file), "--dir", str(sweep)], capsys)
    assert second.code == 0, second.err
    assert f"{ok_key}: finished, skipped" in second.out and f"{late_key}: failed" in second.out and "resubmitting" in second.out
    entry = json.loads((sweep / "manifest.json").read_text())["runs"][late_key]
    assert len(entry["submissions"]) == 2
    assert json.loads((Path(entry["run_dir"]) / "job.json").read_text())["attempt"] == 2
    history = json.loads((Path(entry["run_dir"]) / "provenance.json").read_text())["history"]
    assert len(history) == 4, "prepared and run, twice"
    # The sweep prepared each run from the checkout; each job ran the code frozen at its submission.
    digests = [s["code"] for s in entry["submissions"]]
    assert [h["code"]["snapshot"] for h in history] == [None, digests[0], None, digests[1]]
    assert {p.name for p in (sweep / "code").iterdir()} == {d[:16] for d in digests}
    result = run_cli(["results", str(sweep)], capsys)
    assert result.code == 0 and "runs without results" not in result.out
    third = run_cli(["sweep", str(sweep_file), "--dir", str(sweep)], capsys)
    assert "nothing to submit" in third.out
