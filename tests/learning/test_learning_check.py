"""The learning regression check (docs/method.md#learning-regression-check) on the shrunken learning task
(`experiment=learning_check`): 20 real RL steps on a fixed pool of 8 prompts, once as configured and
once with the estimator's advantages sign-flipped, both from one shared SFT. RL must lift the sampled
reward above the SFT policy's (by a bound under the measured seed spread) and must end far above its
sign-flipped twin: an update that stops learning leaves the reward where it was and the two runs alike,
an inverted one swaps them.
On the same RL run's batches, SLCA-GRPO with final_tool_turn=process and GRPO run beside the configured
estimator, and the former must misattribute far fewer tokens than GRPO (docs/method.md#credit-misattribution).

Select these alone with `-m learning`.
"""

from __future__ import annotations

import json
import math
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pytest
import torch

import slca.backends.local.rl as local_rl
from slca.algos import measure_misattribution
from slca.config.compose import compose_spec
from slca.pipeline import prepare_run_dir, run_pipeline
from slca.report.series import metric_series, window_lift
from slca.tracking.tracker import Tracker

pytestmark = [pytest.mark.slow, pytest.mark.learning]

STEPS, HEAD, TAIL = 20, 3, 5  # steps 1-3 sample (nearly) the SFT policy, steps 16-20 the trained one
# Measured on this task (benchmarks/learning_check.py, docs/method.md#learning-regression-check), seeds 0-4:
# lifts +0.079, +0.064, +0.045, +0.061, +0.148 (seeds 0-2: mean +0.063, std 0.014, mean - 3 std +0.021;
# seed 4 lifts far more, which widens the std but not the lower tail); sign-flipped twins of seeds 0-2
# -0.050, -0.095, -0.046, gaps 0.129, 0.159, 0.091. Sampling at temperature 1.0 with 4 rollouts gave no
# reliable lift (-0.058, +0.041, -0.019) and the check held RL to a drop bound and a twin gap only.
MIN_LIFT = 0.02  # mean - 3 std of seeds 0-2, under half the smallest lift: a run that does not learn stays near 0
MIN_GAP = 0.04  # under half the smallest healthy gap
# Misattributed token fractions on the healthy run's batches, seed 0: 18 of 20 steps have disagreeing
# rollouts; on average GRPO 0.603, SLCA-GRPO 0.035 (reference final-turn rule), 0.000 with final_tool_turn=process.
MIN_STEPS_COMPARED = 8
MIN_GRPO_MISATTRIBUTION = 0.2  # the batches do disagree: GRPO misattributes one segment of each such rollout
MAX_MISATTRIBUTION_SHARE = 0.25


class Lifts(NamedTuple):
    rl: float
    twin: float  # the same RL with the advantages' sign flipped
    # per RL step of `rl`: the misattributed token fraction of the configured estimator (SLCA-GRPO, the
    # reference final-turn rule), of SLCA-GRPO with final_tool_turn=process and of GRPO, on that step's batch
    credit: tuple[tuple[float, float, float], ...] = ()


def learning_check(lifts: Lifts) -> list[str]:
    """What fails in `lifts` (empty when RL passes the check)."""
    failures = []
    if lifts.rl < MIN_LIFT:
        failures.append(f"RL lifted the sampled reward by only {lifts.rl:+.3f} (< {MIN_LIFT})")
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


def misattribution_beside_grpo(get_estimator, record: list[tuple[float, float, float]]):
    """Estimator lookup whose estimator also runs, on each batch it gets, SLCA-GRPO with
    final_tool_turn=process and GRPO, and records the three estimators' misattributed token fractions;
    the configured advantages are returned unchanged."""
    def lookup(name: str):
        estimator, slca, grpo = get_estimator(name), get_estimator("slca_grpo"), get_estimator("grpo")

        def recorded(token_rewards, response_mask, index, *, segment_rewards, config, **kwargs):
            advantages, returns = estimator(token_rewards, response_mask, index, segment_rewards=segment_rewards, config=config, **kwargs)
            process_rule = config.model_copy(update={"final_tool_turn": "process"})
            fixed, _ = slca(token_rewards, response_mask, index, segment_rewards=segment_rewards, config=process_rule, **kwargs)
            baseline, _ = grpo(token_rewards, response_mask, index)
            r = segment_rewards
            record.append(tuple(
                float(measure_misattribution(a, response_mask, index, r.process, r.summary, r.last_turn_is_tool_call).token_frac)
                for a in (advantages, fixed, baseline)))
            return advantages, returns

        return recorded

    return lookup


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
    credit: list[tuple[float, float, float]] = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(local_rl, "get_estimator", misattribution_beside_grpo(local_rl.get_estimator, credit))
        rl = rl_lift(sft_run, work / "rl")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(local_rl, "get_estimator", sign_flipped(local_rl.get_estimator))
        twin = rl_lift(sft_run, work / "rl_sign_flipped")
    print(f"learning check: reward/norm_mean lift {rl:+.3f}, sign-flipped twin {twin:+.3f}; misattributed token "
          f"fraction per step (configured, final_tool_turn=process, grpo): {[tuple(round(x, 3) for x in c) for c in credit]}")
    yield Lifts(rl, twin, tuple(credit))
    torch.set_num_threads(threads)


def test_rl_lifts_the_sft_policys_sampled_reward_and_ends_far_above_its_sign_flipped_twin(lifts: Lifts) -> None:
    assert learning_check(lifts) == []


def test_slca_grpo_misattributes_far_fewer_tokens_than_grpo_on_the_same_batches(lifts: Lifts) -> None:
    # Steps where no rollout's segments disagree have no fraction (NaN for every estimator alike).
    compared = [c for c in lifts.credit if not any(math.isnan(x) for x in c)]
    assert len(lifts.credit) == STEPS and len(compared) >= MIN_STEPS_COMPARED, lifts.credit
    reference, process_rule, grpo = (sum(x) / len(compared) for x in zip(*compared))
    print(f"mean misattributed token fraction over {len(compared)} steps: slca_grpo {reference:.3f}, "
          f"with final_tool_turn=process {process_rule:.3f}, grpo {grpo:.3f}")
    # The reference final-turn rule is not held to it: sampled at temperature 1.0 a third of this weak
    # SFT's rollouts end on a cut-off or unparsable call, whose call tokens it credits with the summary
    # advantage (docs/method.md#credit-misattribution, rule 3): it measured 0.443 against GRPO's 0.430.
    assert grpo > MIN_GRPO_MISATTRIBUTION and process_rule < MAX_MISATTRIBUTION_SHARE * grpo, (process_rule, grpo)


def test_the_check_fails_for_a_run_whose_advantages_were_sign_flipped(lifts: Lifts) -> None:
    # The flipped run in the role of RL (and the real one as its twin): what a sign bug in the
    # estimator or the loss would produce. Both conditions must catch it.
    failures = learning_check(Lifts(rl=lifts.twin, twin=lifts.rl))
    assert len(failures) == 2, failures
