"""The efficiency methods inside verl, without a verl run: the spec -> verl keys, the refusal of a
mini-batch verl cannot split, slca's replay buffer keeping the same rollouts as the local trainer's
down-sampler, and the pre-rollout gate deciding as the local trainer's filter does (and resuming)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from slca.algos.downsample import downsample_from_config
from slca.algos.filters import PreRolloutFilter
from slca.backends.verl.compose import VerlInputs, check_verl_config, compose_verl_config
from slca.backends.verl.prefilter import STATE_FILE, FilterExhausted, PromptGate
from slca.config.compose import compose_spec
from slca.config.groups.downsample import MaxVarianceDownsample, RandomDownsample
from slca.rewards.record import RewardBatch, RewardRecord
from tests.badinput import assert_refused, run_cli, snapshot

SMOKE = ["experiment=verl_smoke"]


def inputs(tmp_path: Path) -> VerlInputs:
    run_dir = tmp_path / "run"
    return VerlInputs("/models/policy", "/data/rl.parquet", "/data/eval.parquet", run_dir, run_dir / "spec.yaml")


# ------------------------------------------------------------------------------------ composition
def test_the_efficiency_smoke_composes_into_a_config_verl_accepts_with_slcas_buffer_and_a_rescaled_mini_batch(tmp_path):
    spec = compose_spec(["experiment=verl_efficiency_smoke"])
    cfg = compose_verl_config(spec, inputs(tmp_path))
    check_verl_config(cfg)
    sampler = cfg.trainer.v1.sampler
    assert (sampler.custom_sampler.path, sampler.custom_sampler.name) == ("pkg://slca.backends.verl.sampler", "SlcaReplayBuffer")
    assert sampler.sampler_kwargs.spec_path == str(tmp_path / "run" / "spec.yaml")
    # 4 prompts per mini-batch x 2 kept of n=4: verl's mini-batch of 2 "prompts" is 2 x 4 = 8 rows.
    assert cfg.actor_rollout_ref.actor.ppo_mini_batch_size == 2 and cfg.actor_rollout_ref.rollout.n == 4
    assert cfg.data.gen_batch_size == 1  # the filter gates prompts one at a time
    assert cfg.algorithm.filter_groups.enable is False


def test_dynamic_sampling_maps_to_verls_filter_groups_on_the_score_and_rides_along_with_down_sampling(tmp_path):
    alone = compose_verl_config(compose_spec([*SMOKE, "filter=dynamic_sampling"]), inputs(tmp_path))
    check_verl_config(alone)
    assert alone.algorithm.filter_groups.enable is True and alone.algorithm.filter_groups.metric == "reward"
    assert alone.trainer.v1.sampler.custom_sampler.path is None  # verl's own buffer does it
    both = compose_verl_config(compose_spec([*SMOKE, "filter=dynamic_sampling", "downsample=max_variance"]), inputs(tmp_path))
    check_verl_config(both)
    assert both.trainer.v1.sampler.custom_sampler.name == "SlcaReplayBuffer"
    assert both.trainer.v1.sampler.sampler_kwargs.filter_groups_metric == "reward"


def test_no_filter_and_no_down_sampling_leave_verls_own_buffer_and_mini_batch(tmp_path):
    cfg = compose_verl_config(compose_spec(SMOKE), inputs(tmp_path))
    assert cfg.trainer.v1.sampler.custom_sampler.path is None and "spec_path" not in cfg.trainer.v1.sampler.sampler_kwargs
    assert cfg.actor_rollout_ref.actor.ppo_mini_batch_size == 4 and cfg.data.gen_batch_size is None


@pytest.mark.parametrize(
    "overrides, path",
    [
        (["downsample.m=3", "train.rl.mini_batch_prompts=2"], "downsample.m"),  # 2 x 3 = 6 rows, n = 4
        (["train.rl.mini_batch_prompts=1"], "train.rl.mini_batch_prompts"),  # 1 x 2 = 2 rows, n = 4
    ],
)
def test_a_down_sampled_mini_batch_verl_cannot_split_is_refused_at_composition_naming_the_path(overrides, path, tmp_path, capsys):
    run_dir = tmp_path / "run"
    before = snapshot([run_dir])
    argv = ["run", *SMOKE, "downsample=max_variance", *overrides, f"run.dir={run_dir}", "--dry-run"]
    assert_refused(run_cli(argv, capsys), path, "multiple of 4")
    assert snapshot([run_dir]) == before


# ------------------------------------------------------------------------------------ down-sampling
def _reward_row(rng: random.Random) -> dict:
    """A HierR-shaped reward row with values drawn from a small set, so groups have ties and zero variance."""
    process, summary = rng.choice([0.0, 0.25, 0.5, 1.0]), rng.choice([0.0, 1.0])
    return {"score": process + summary, "process_score": process, "summary_score": summary, "weighted_score_norm": (process + summary) / 2}


CONFIGS = [
    MaxVarianceDownsample(m=2, reward="total"),
    MaxVarianceDownsample(m=2, reward="segment_sum"),
    MaxVarianceDownsample(m=3, reward="segment_sum"),
    MaxVarianceDownsample(m=4, reward="tool"),
    MaxVarianceDownsample(m=2, reward="summary"),
    RandomDownsample(m=2, seed=3),
]


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c.name}-{getattr(c, 'reward', 'score')}-m{c.m}")
def test_the_same_rollouts_keep_the_same_indices_in_the_local_trainer_and_in_verls_replay_buffer(config):
    from slca.backends.verl.sampler import keep_rollouts

    rng = random.Random(7)
    cases = 0
    for trial in range(60):
        n = rng.choice([4, 6, 8])
        groups = rng.randint(1, 5)
        rows = [[_reward_row(rng) for _ in range(n)] for _ in range(groups)]
        # The local trainer: records in generation order (prompt-major), prompt ids as the index.
        records = [RewardRecord.from_row(row) for group in rows for row in group]
        index = [g for g in range(groups) for _ in range(n)]
        local = downsample_from_config(config, RewardBatch.from_records(records), index).tolist()
        expected = {(index[i], i % n) for i in local}
        # verl: trajectories under `{uid}_{session}_{output}` keys, in TransferQueue's own order
        # (groups keep their order for the seeded random control, sessions are shuffled).
        uids = [f"u{trial}x{g:02d}" for g in range(groups)]
        order = [(g, s) for g in range(groups) for s in rng.sample(range(n), n)]
        if config.name != "random":
            rng.shuffle(order)
        keys = [f"{uids[g]}_{s}_0" for g, s in order]
        extra_fields = [{"reward_extra_info": rows[g][s]} for g, s in order]
        from slca.backends.verl.trainer import reward_columns

        rewards = RewardBatch.from_columns(reward_columns(extra_fields), len(keys))
        kept_rows, stats = keep_rollouts(config, keys, rewards)
        got = {(uids.index(keys[r].split("_")[0]), int(keys[r].split("_")[1])) for r in kept_rows}
        assert got == expected, (trial, keys)
        assert stats["slca/downsample/rollouts_kept"] == len(expected) == groups * min(config.m, n)
        assert stats["slca/downsample/min_kept_per_group"] == stats["slca/downsample/max_kept_per_group"] == min(config.m, n)
        cases += 1
    assert cases == 60


def test_a_rollout_stored_as_several_outputs_is_kept_or_dropped_whole():
    from slca.backends.verl.sampler import keep_rollouts

    keys = ["a_0_0", "a_0_1", "a_1_0", "a_2_0", "a_2_1", "a_3_0"]
    scores = {"a_0": 1.0, "a_1": 0.5, "a_2": 0.0, "a_3": 0.5}
    rows = [{"score": scores[k.rsplit("_", 1)[0]], "process_score": 0.0, "summary_score": 0.0} for k in keys]
    from slca.backends.verl.trainer import reward_columns

    rewards = RewardBatch.from_columns(reward_columns([{"reward_extra_info": r} for r in rows]), len(keys))
    kept, stats = keep_rollouts(MaxVarianceDownsample(m=2, reward="total"), keys, rewards)
    # The max-variance pair is the 1.0 and the 0.0 rollout, each with both of its outputs.
    assert [keys[r] for r in kept] == ["a_0_0", "a_0_1", "a_2_0", "a_2_1"]
    assert stats["slca/downsample/rollouts"] == 4 and stats["slca/downsample/rollouts_kept"] == 2


# ------------------------------------------------------------------------------------ pre-rollout filter
def _local_epochs(flt: PreRolloutFilter, orders: list[list[int]], correct: set[int], n: int) -> list[list[int]]:
    """The local trainer's use of the filter: admit a whole epoch's order, roll out, end the epoch."""
    out = []
    for order in orders:
        admitted = flt.admit(order)
        out.append(admitted)
        for pid in admitted:
            flt.observe([pid] * n, [1.0 if pid in correct else 0.25] * n)
        flt.end_epoch()
    return out


def test_the_gate_skips_and_readmits_exactly_the_prompts_the_local_trainers_filter_does_and_resumes_mid_epoch(tmp_path):
    size, n, correct = 10, 4, {0, 3, 4, 7}
    rng = random.Random(1)
    orders = [rng.sample(range(size), size) for _ in range(6)]
    expected = _local_epochs(PreRolloutFilter(k=1, readmit_every=2), orders, correct, n)

    def run_gate(gate: PromptGate, prompts: list[int]) -> list[int]:
        """Steps of one prompt: each admitted prompt is rolled out (observed) before the next is asked about."""
        admitted = []
        for pid in prompts:
            if gate.admit(pid):
                admitted.append(pid)
                gate.observe([pid] * n, [1.0 if pid in correct else 0.25] * n)
        return admitted

    flat = [pid for order in orders for pid in order]
    gate = PromptGate(PreRolloutFilter(k=1, readmit_every=2), size)
    first = run_gate(gate, flat[:27])  # stop mid-epoch 2, as a checkpoint would
    metrics = gate.take_metrics()
    gate.save(tmp_path)
    resumed = PromptGate(PreRolloutFilter(k=1, readmit_every=2), size)
    resumed.load(tmp_path)
    rest = run_gate(resumed, flat[27:])
    assert first + rest == [pid for epoch in expected for pid in epoch]
    # Epoch 1 skips the 4 all-correct prompts, epoch 2 keeps skipping those among its first 7.
    held_in_2 = len(set(orders[2][:7]) & correct)
    assert metrics["slca/prefilter/skipped"] == 4 + held_in_2 and metrics["slca/prefilter/admitted"] == 27 - 4 - held_in_2
    assert metrics["slca/prefilter/epoch"] == 2 and metrics["slca/prefilter/epoch_skipped"] == 4
    assert metrics["slca/prefilter/readmitted"] == 0
    assert json.loads((tmp_path / STATE_FILE).read_text())["position"] == 7
    resumed.admit(orders[0][0])  # the first prompt of epoch 6 closes epoch 5
    assert resumed.filter.epoch == 6
    # Skipped for R=2 epochs, back in epoch 3, skipped in 4 and 5, back in 6.
    assert [m["skipped"] for m in resumed.filter.metrics_log] == [0, 4, 4, 0, 4, 4]
    later = resumed.take_metrics()
    assert later["slca/prefilter/readmitted"] == 4 + (orders[0][0] in correct)


def test_a_filter_that_skips_every_prompt_and_never_readmits_stops_with_one_line():
    gate = PromptGate(PreRolloutFilter(k=1), 3)
    for pid in range(3):
        assert gate.admit(pid)
        gate.observe([pid, pid], [1.0, 1.0])
    with pytest.raises(FilterExhausted) as info:
        for _ in range(10):
            gate.admit(0)
    message = str(info.value)
    assert "\n" not in message and "filter.readmit_every=None" in message and "3 RL prompts" in message


def test_a_checkpoint_without_filter_state_or_for_another_split_is_refused_naming_the_file(tmp_path):
    gate = PromptGate(PreRolloutFilter(k=1), 5)
    with pytest.raises(ValueError, match=str(tmp_path / STATE_FILE)):
        gate.load(tmp_path)
    PromptGate(PreRolloutFilter(k=1), 6).save(tmp_path)
    with pytest.raises(ValueError, match="saved for 6 RL prompts, this run has 5"):
        gate.load(tmp_path)
    (tmp_path / STATE_FILE).write_text("{not json")
    with pytest.raises(ValueError, match="cannot restore"):
        gate.load(tmp_path)


@pytest.mark.parametrize(
    "overrides, dapo",
    [(["experiment=verl_efficiency_smoke"], None), ([*SMOKE, "filter=dynamic_sampling", "downsample=max_variance"], "reward")],
)
def test_verls_own_builder_loads_slcas_buffer_from_the_composed_config_with_the_spec_and_dapo_settings(overrides, dapo, tmp_path):
    from types import SimpleNamespace

    from verl.trainer.ppo.v1.trainer_base import PPOTrainer

    from slca.backends.verl.sampler import SlcaReplayBuffer
    from slca.config.io import write_spec

    spec = compose_spec(overrides)
    write_spec(spec, tmp_path / "run" / "spec.yaml")
    cfg = compose_verl_config(spec, inputs(tmp_path))
    refills: list[int] = []
    trainer = SimpleNamespace(config=cfg, trainer_mode="slca", _add_prompts_to_generate=refills.append)
    buffer = PPOTrainer._build_replay_buffer(trainer)  # verl's own method, on the composed config
    assert isinstance(buffer, SlcaReplayBuffer)
    assert buffer.downsample.name == "max_variance" and buffer.downsample.m == 2
    assert buffer.filter_groups_metric == dapo
    if dapo:  # as verl sets up its own buffer for DAPO: single-prompt refills, one batch in flight
        assert (buffer.gen_batch_size, buffer.train_batch_size, buffer.max_inflight_gen_batches) == (1, 4, 1)
        buffer.refill_fn(3)
        assert refills == [3]
    assert buffer.take_observations() == []
