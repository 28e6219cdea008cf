"""The learning regression check (docs/method.md#learning-regression-check) on the shrunken learning task
(`experiment=learning_check`): 20 real RL steps on a fixed pool of 8 prompts, once as configured and
once with the estimator's advantages sign-flipped, both from one shared SFT. RL must keep the sampled
reward of the SFT policy (no drop beyond the measured seed spread) and must end far above its
sign-flipped twin: an update that stops learning leaves the two runs alike, an inverted one swaps them.

Select these alone with `-m learning`.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pytest
import torch

import slca.backends.local.rl as local_rl
from slca.config.compose import compose_spec
from slca.pipeline import prepare_run_dir, run_pipeline
from slca.report.series import metric_series, window_lift
from slca.tracking.tracker import Tracker

pytestmark = [pytest.mark.slow, pytest.mark.learning]

STEPS, HEAD, TAIL = 20, 3, 5  # steps 1-3 sample (nearly) the SFT policy, steps 16-20 the trained one
# Measured on this task in this test's way (docs/method.md#learning-regression-check), seeds 0-2: healthy
# lifts -0.058, +0.041, -0.019 (mean -0.012, std 0.050), sign-flipped twins -0.355, -0.342, -0.290, gaps
# between them 0.27-0.38 (with 8 rollouts per prompt, twice the time: lifts -0.049 to +0.054, gaps 0.25-0.37).
MAX_DROP = 0.15  # about 3 std of the healthy spread below its mean
MIN_GAP = 0.12  # under half the smallest healthy gap


class Lifts(NamedTuple):
    rl: float
    twin: float  # the same RL with the advantages' sign flipped


def learning_check(lifts: Lifts) -> list[str]:
    """What fails in `lifts` (empty when RL passes the check)."""
    failures = []
    if lifts.rl < -MAX_DROP:
        failures.append(f"RL lowered the sampled reward by {-lifts.rl:.3f} (> {MAX_DROP})")
    if lifts.rl - lifts.twin < MIN_GAP:
        failures.append(f"RL ends only {lifts.rl - lifts.twin:+.3f} above its sign-flipped twin (< {MIN_GAP})")
    return failures


def run(run_dir: Path, cache: Path, *overrides: str) -> Path:
    """`slca run experiment=learning_check` in this process, so a test can swap one piece of it."""
    spec, run_dir = prepare_run_dir(compose_spec(["experiment=learning_check", f"run.dir={run_dir}", f"data.cache_dir={cache}", *overrides]))
    with Tracker(run_dir) as tracker:
        outcomes = run_pipeline(spec, run_dir, tracker, echo=lambda _: None)
    assert all(o.status in ("done", "skipped") for o in outcomes), outcomes
    return run_dir


def rl_lift(sft_run: Path, run_dir: Path) -> float:
    """RL from a copy of `sft_run`'s finished data and SFT stages; the lift of its sampled reward."""
    run_dir.mkdir(parents=True)
    for stage in ("data", "sft"):
        shutil.copytree(sft_run / stage, run_dir / stage)
    run(run_dir, sft_run.parent / "cache")
    records = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    assert not any(r.get("stage") == "sft" for r in records)  # the SFT stage was reused, not retrained
    series = metric_series(records, "reward/norm_mean")
    assert series is not None and series.x == tuple(range(1, STEPS + 1))
    return window_lift(series, head=HEAD, tail=TAIL)


def sign_flipped(get_estimator):
    def lookup(name: str):
        estimator = get_estimator(name)

        def flipped(*args, **kwargs):
            advantages, returns = estimator(*args, **kwargs)
            return -advantages, -returns

        return flipped

    return lookup


@pytest.fixture(scope="module")
def lifts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lifts]:
    threads = torch.get_num_threads()  # the spec pins 1; other tests of this process pin their own count
    work = tmp_path_factory.mktemp("learning")
    sft_run = run(work / "sft", work / "cache", "run.stages=[data,sft]")
    rl = rl_lift(sft_run, work / "rl")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(local_rl, "get_estimator", sign_flipped(local_rl.get_estimator))
        twin = rl_lift(sft_run, work / "rl_sign_flipped")
    print(f"learning check: reward/norm_mean lift {rl:+.3f}, sign-flipped twin {twin:+.3f}")
    yield Lifts(rl, twin)
    torch.set_num_threads(threads)


def test_rl_keeps_the_sft_policys_reward_and_ends_far_above_its_sign_flipped_twin(lifts: Lifts) -> None:
    assert learning_check(lifts) == []


def test_the_check_fails_for_a_run_whose_advantages_were_sign_flipped(lifts: Lifts) -> None:
    # The flipped run in the role of RL (and the real one as its twin): what a sign bug in the
    # estimator or the loss would produce. Both conditions must catch it.
    failures = learning_check(Lifts(rl=lifts.twin, twin=lifts.rl))
    assert len(failures) == 2, failures
