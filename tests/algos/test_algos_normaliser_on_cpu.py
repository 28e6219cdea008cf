"""docs/method.md#reference-test-cases cases 12-19 (presence-filtered normaliser) and the baseline estimators."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from slca.algos import get_estimator, register_estimator
from slca.algos.groups import group_ids, group_normalise
from slca.config.groups.estimator import GrpoEstimator, ToolPoEstimator


def normalise(scores, groups, present=None, **kw):
    gid, n = group_ids(groups)
    p = None if present is None else torch.tensor(present)
    return group_normalise(torch.tensor(scores, dtype=torch.float32), gid, n, p, **kw)


def zscore(xs):
    xs = np.asarray(xs, dtype=np.float64)
    return (xs - xs.mean()) / (xs.std(ddof=1) + 1e-6)


def test_case_12_one_group_all_present():
    out = normalise([1.0, 2.0, 3.0, 4.0], ["g"] * 4)
    assert out.dtype == torch.float32
    np.testing.assert_allclose(out.numpy(), zscore([1, 2, 3, 4]), atol=1e-5)


def test_case_13_absent_members_are_zero_and_excluded():
    out = normalise([1.0, 2.0, 3.0, 4.0], ["g"] * 4, [True, True, False, False])
    np.testing.assert_allclose(out[:2].numpy(), zscore([1, 2]), atol=1e-5)
    assert out[2].item() == 0.0 and out[3].item() == 0.0


def test_case_14_singletons_are_exactly_zero():
    assert normalise([5.0, 10.0], ["a", "b"]).tolist() == [0.0, 0.0]


def test_case_15_one_present_member_gives_zero():
    assert normalise([1.0, 2.0, 3.0, 4.0], ["g"] * 4, [False, True, False, False]).tolist() == [0.0] * 4


def test_case_16_nothing_present():
    assert normalise([1.0, 2.0, 3.0], ["g"] * 3, [False] * 3).tolist() == [0.0] * 3


@pytest.mark.parametrize("groups", [[0, 0, 1, 1], ["3f1c9a2e-0b7d", "3f1c9a2e-0b7d", "a9e8-77c1", "a9e8-77c1"]])
def test_cases_17_18_groups_independent(groups):
    out = normalise([1.0, 3.0, 10.0, 20.0], groups)
    np.testing.assert_allclose(out.numpy(), np.concatenate([zscore([1, 3]), zscore([10, 20])]), atol=1e-5)


def test_case_19_mean_only():
    out = normalise([1.0, 2.0, 6.0], ["g"] * 3, norm_by_std=False)
    np.testing.assert_allclose(out.numpy(), [-2.0, -1.0, 3.0], atol=1e-6)


def test_equal_scores_exactly_zero():
    # 0.1 * 3 / 3 != 0.1 in floating point; the guard must still give exact zeros.
    for norm_by_std in (True, False):
        out = normalise([0.1, 0.1, 0.1, 0.7, 0.7], ["a", "a", "a", "b", "b"], norm_by_std=norm_by_std)
        assert out.tolist() == [0.0] * 5


def test_index_forms_agree():
    scores = torch.tensor([1.0, 4.0, 2.0, 8.0, 3.0])
    forms = [[7, 9, 7, 9, 7], np.array([7, 9, 7, 9, 7]), torch.tensor([7, 9, 7, 9, 7]), np.array(["x", "y", "x", "y", "x"], dtype=object)]
    outs = [group_normalise(scores, *group_ids(f)) for f in forms]
    for o in outs[1:]:
        assert torch.equal(o, outs[0])


def _batch():
    mask = torch.ones(6, 5)
    mask[:, 4] = 0
    rewards = torch.zeros(6, 5)
    rewards[:, 3] = torch.tensor([1.0, 0.0, 0.5, 2.0, 2.0, 7.0])
    index = ["a", "a", "a", "b", "b", "c"]
    return rewards, mask, index


def test_grpo_values_and_singleton_rules():
    rewards, mask, index = _batch()
    adv, ret = get_estimator("grpo")(rewards, mask, index)
    assert ret is adv and adv.dtype == torch.float32
    expected = np.concatenate([zscore([1.0, 0.0, 0.5]), [0.0, 0.0, 0.0]])
    np.testing.assert_allclose(adv[:, 0].numpy(), expected, atol=1e-5)
    assert adv[:, 4].abs().sum() == 0
    ref, _ = get_estimator("grpo")(rewards, mask, index, config=GrpoEstimator(singleton_fallback="reference"))
    assert ref[5, 0].item() == pytest.approx(7.0 / (1 + 1e-6))
    mean_only, _ = get_estimator("grpo")(rewards, mask, index, config={"norm_by_std": False})
    np.testing.assert_allclose(mean_only[:3, 0].numpy(), [0.5, -0.5, 0.0], atol=1e-6)


def test_dr_grpo_and_rloo():
    rewards, mask, index = _batch()
    dr, _ = get_estimator("dr_grpo")(rewards, mask, index)
    np.testing.assert_allclose(dr[:, 1].numpy(), [0.5, -0.5, 0.0, 0.0, 0.0, 0.0], atol=1e-6)
    loo, _ = get_estimator("rloo")(rewards, mask, index)
    # x_i - mean(others): 1 - 0.25, 0 - 0.75, 0.5 - 0.5; equal group and singleton -> 0.
    np.testing.assert_allclose(loo[:, 2].numpy(), [0.75, -0.75, 0.0, 0.0, 0.0, 0.0], atol=1e-6)
    assert loo[:, 4].abs().sum() == 0


def test_toolpo_global_plus_tool_term():
    mask = torch.tensor([[1, 1, 0, 1, 1], [1, 1, 0, 1, 1], [0, 0, 0, 1, 1]], dtype=torch.float32)
    rewards = torch.zeros(3, 5)
    rewards[:, 4] = torch.tensor([1.0, 0.0, 0.5])
    index = ["g", "g", "g"]
    seg = {"process_score": torch.tensor([0.9, 0.1, 0.5]), "toolpo_correct_ratio": torch.tensor([0.0, 1.0, 0.3])}
    extras: dict = {}
    adv, _ = get_estimator("toolpo")(rewards, mask, index, segment_rewards=seg, config=ToolPoEstimator(lam=0.5), extras=extras)
    a_global = zscore([1.0, 0.0, 0.5])
    a_tool = 0.5 * zscore([0.0, 1.0])  # row 2 has no process segment: absent from the statistics
    np.testing.assert_allclose(adv[:2, 0].numpy(), a_global[:2] + a_tool, atol=1e-5)
    np.testing.assert_allclose(adv[:, 3].numpy(), a_global, atol=1e-5)
    assert adv[:, 2].abs().sum() == 0
    assert extras["adv_tool"][2].item() == 0.0



def test_toolpo_refuses_rewards_without_the_correct_ratio():
    mask = torch.ones(2, 3)
    with pytest.raises(KeyError, match="toolpo needs the reward column 'toolpo_correct_ratio'"):
        get_estimator("toolpo")(torch.zeros(2, 3), mask, ["g", "g"], segment_rewards={"process_score": torch.tensor([0.9, 0.1])})


def test_registry_refuses_duplicates_and_unknown():
    get_estimator("grpo")
    with pytest.raises(ValueError):
        register_estimator("grpo")(lambda *a, **k: None)
    with pytest.raises(KeyError):
        get_estimator("no_such_estimator")
    with pytest.raises(TypeError):
        get_estimator("grpo")(*_batch(), config=ToolPoEstimator())


def test_pair_constant():
    out = normalise([0.8, 0.4], ["g0", "g0"])
    assert out.tolist() == pytest.approx([1 / math.sqrt(2), -1 / math.sqrt(2)], abs=1e-5)


def test_import_slca_algos_is_light():
    import subprocess
    import sys

    code = "import sys, slca.algos; print(any(m in sys.modules for m in ('torch', 'verl', 'hydra', 'wandb')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
