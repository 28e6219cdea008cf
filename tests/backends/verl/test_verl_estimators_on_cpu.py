"""slca estimators inside verl's own registry (verl 0.9.1): same advantages through verl's lookup."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import torch

from slca.algos import compute_slca_grpo, get_estimator
from slca.backends.verl.estimators import register_into_verl, segment_advantages, verl_name
from slca.config.groups.estimator import GrpoEstimator, SlcaGrpoEstimator


def batch(seed=0, b=32, t=40, group=4):
    gen = torch.Generator().manual_seed(seed)
    mask = (torch.rand(b, t, generator=gen) > 0.35).float()
    rewards = torch.zeros(b, t)
    total = torch.rand(b, generator=gen)
    rewards[:, -1] = total
    uid = np.array([f"uid-{i // group}" for i in range(b)], dtype=object)
    non_tensor = {
        "reward/tool_call/process_score": np.array([float(x) for x in torch.rand(b, generator=gen)], dtype=object),
        "reward/tool_call/summary_score": np.array([float(x) for x in torch.rand(b, generator=gen)], dtype=object),
        "score": total.numpy().astype(np.float64),
        "reward/tool_call/should_call_but_no_call": np.array([i % 7 == 0 for i in range(b)], dtype=object),
        "reward/tool_call/toolpo_correct_ratio": np.array([float(x) for x in torch.rand(b, generator=gen)], dtype=object),
    }
    return rewards, mask, uid, non_tensor


@pytest.fixture(scope="module")
def core_algos():
    """verl's estimator registry, imported by the worker that runs these tests only (importing verl
    costs seconds; every pytest-xdist worker collects this file)."""
    from verl.trainer.ppo import core_algos

    return core_algos


def verl_call(core_algos, name, rewards, mask, uid, **extra):
    fn = core_algos.get_adv_estimator_fn(name)
    # The keywords verl's compute_advantage passes (ray_trainer.py), plus what the backend adds.
    return fn(token_level_rewards=rewards, response_mask=mask, config=core_algos.AlgoConfig(), index=uid, **extra)


def test_registration_is_idempotent_and_names_are_stable(core_algos):
    names = register_into_verl()
    assert register_into_verl() == names
    assert {"slca_grpo", "toolpo", "dr_grpo", "grpo_slca", "rloo_slca"} <= set(names)
    assert verl_name("grpo") == "grpo_slca" and verl_name("slca_grpo") == "slca_grpo"
    # verl's built-in estimators are left alone.
    assert core_algos.get_adv_estimator_fn("grpo") is core_algos.compute_grpo_outcome_advantage
    assert core_algos.get_adv_estimator_fn("slca_grpo").__wrapped__ is get_estimator("slca_grpo")


def test_slca_grpo_through_verl_matches_direct_call(core_algos):
    register_into_verl()
    rewards, mask, uid, non_tensor = batch()
    adv, ret = verl_call(core_algos, "slca_grpo", rewards, mask, uid, non_tensor_batch=non_tensor)
    seg = {
        "process_score": torch.tensor(non_tensor["reward/tool_call/process_score"].astype(np.float32)),
        "summary_score": torch.tensor(non_tensor["reward/tool_call/summary_score"].astype(np.float32)),
        "score": torch.tensor(non_tensor["score"], dtype=torch.float32),
        "should_call_but_no_call": torch.tensor(non_tensor["reward/tool_call/should_call_but_no_call"].astype(np.float32)),
    }
    direct = compute_slca_grpo(rewards, mask, list(uid), segment_rewards=seg)
    assert direct.advantages.abs().sum() > 0 and direct.penalty.any()
    assert torch.equal(adv, direct.advantages) and torch.equal(ret, direct.returns)
    _, _, extras = segment_advantages(SlcaGrpoEstimator(), rewards, mask, uid, non_tensor)
    assert torch.equal(extras["adv_process"], direct.adv_process)


def test_the_trainers_own_config_reaches_the_estimator_and_nothing_is_kept_between_calls(core_algos):
    rewards, mask, uid, non_tensor = batch(seed=1)
    config = SlcaGrpoEstimator(w_process=2.0, w_summary=0.5)
    adv, _, _ = segment_advantages(config, rewards, mask, uid, non_tensor)
    ours, _ = get_estimator("slca_grpo")(rewards, mask, uid, segment_rewards={k.split("/")[-1]: v for k, v in non_tensor.items()}, config=config)
    assert torch.equal(adv, ours)
    # A later call through verl's registry uses the default config, not the one above.
    register_into_verl()
    default, _ = verl_call(core_algos, "slca_grpo", rewards, mask, uid, non_tensor_batch=non_tensor)
    assert torch.equal(default, segment_advantages(SlcaGrpoEstimator(), rewards, mask, uid, non_tensor)[0])
    assert not torch.equal(default, adv)


@pytest.mark.parametrize("name", ["grpo", "dr_grpo", "rloo", "toolpo"])
def test_other_estimators_through_verl(core_algos, name):
    register_into_verl()
    rewards, mask, uid, non_tensor = batch(seed=2)
    adv, _ = verl_call(core_algos, verl_name(name), rewards, mask, uid, non_tensor_batch=non_tensor, reward_baselines=torch.zeros(32))
    seg = {"toolpo_correct_ratio": non_tensor["reward/tool_call/toolpo_correct_ratio"]}
    ours, _ = get_estimator(name)(rewards, mask, uid, segment_rewards=seg)
    assert ours.abs().sum() > 0 and torch.equal(adv, ours)


def test_grpo_reference_fallback_equals_verls_own_grpo(core_algos):
    rewards, mask, uid, _ = batch(seed=3)
    uid[-1] = "a-singleton-group"
    theirs, _ = core_algos.compute_grpo_outcome_advantage(rewards, mask, uid)
    ours, _ = get_estimator("grpo")(rewards, mask, uid, config=GrpoEstimator(singleton_fallback="reference"))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), atol=2e-6)


def test_import_slca_does_not_import_verl():
    code = "import sys, slca, slca.algos; slca.algos.get_estimator('slca_grpo'); print('verl' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_the_rollouts_last_turn_flags_in_a_verl_batch_reach_final_tool_turn_process():
    rewards, mask, uid, non_tensor = batch(seed=4)
    flags = np.array([int(i % 3 == 0) for i in range(len(uid))], dtype=object)  # as slca's tool agent loop writes them
    columns = {**non_tensor, "last_run_is_tool_call": flags}
    process, _, _ = segment_advantages(SlcaGrpoEstimator(final_tool_turn="process"), rewards, mask, uid, columns)
    seg = {k.split("/")[-1]: v for k, v in columns.items()}
    direct = compute_slca_grpo(rewards, mask, list(uid), segment_rewards=seg, config=SlcaGrpoEstimator(final_tool_turn="process"),
                               token_level_scores=rewards)
    assert torch.equal(process, direct.advantages)
    assert not direct.summary_present[0] and direct.process_present[0]  # row 0's last turn is a call: tool segment only
    reference, _, _ = segment_advantages(SlcaGrpoEstimator(), rewards, mask, uid, columns)
    assert not torch.equal(process, reference)


@pytest.mark.parametrize(("config", "token_frac"), [(GrpoEstimator(), 0.6), (SlcaGrpoEstimator(), 0.0)], ids=["grpo", "slca_grpo"])
def test_verls_step_metrics_carry_the_misattribution_counted_by_hand(config, token_frac):
    from slca.backends.verl.trainer import segment_metrics

    # Row 0: tool tokens 1-2, summary 5-7; row 1: tool 0-1, summary 6-8. Process [1.0, 0.0] (sides +, -),
    # summary [0.2, 0.6] (sides -, +): both rows disagree. GRPO on totals [1.2, 0.6] pushes row 0 up and
    # row 1 down, so both rows' 3 summary tokens go against their side: 6 of 10; SLCA-GRPO none.
    mask = torch.tensor([[0, 1, 1, 0, 0, 1, 1, 1, 0, 0], [1, 1, 0, 0, 0, 0, 1, 1, 1, 0]], dtype=torch.float32)
    scores = torch.zeros_like(mask)
    scores[0, 7], scores[1, 8] = 1.2, 0.6
    uids = ["u", "u"]
    columns = {"reward/tool_call/process_score": np.array([1.0, 0.0], dtype=object),
               "reward/tool_call/summary_score": np.array([0.2, 0.6], dtype=object), "score": np.array([1.2, 0.6], dtype=object),
               "last_run_is_tool_call": np.array([0, 0], dtype=object)}
    advantages, _, extras = segment_advantages(config, scores, mask, uids, columns)
    metrics = segment_metrics(advantages, mask, extras, uids, columns)
    assert metrics["credit/misattributed_token_frac"] == pytest.approx(token_frac)
    assert metrics["credit/disagreeing_rollouts"] == 2
