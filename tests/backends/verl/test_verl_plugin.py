"""slca's verl plugin: what verl finds in a process that loads it, the CPU rollout's sampler, and
the advantages slca's verl trainer computes from verl's reward extras."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from slca.algos import get_estimator
from slca.backends.verl.estimators import segment_advantages
from slca.config.groups.estimator import GrpoEstimator, SlcaGrpoEstimator
from slca.rewards import RewardBatch, RewardRecord, compute_score

PROBE = """
import json
from verl.utils.device import get_device_name, get_nccl_backend, get_torch_device, get_device_id
from verl.trainer.ppo.v1 import get_trainer_cls
from verl.workers.rollout.base import get_rollout_class
from verl.workers.rollout.replica import get_rollout_replica_class
from verl.trainer.ppo import core_algos
from slca.algos import get_estimator
module = get_torch_device()
module.synchronize(); module.empty_cache()
print(json.dumps({
    "device": get_device_name(), "backend": get_nccl_backend(), "device_id": get_device_id(),
    "free_total": list(module.mem_get_info()), "rng": int(module.get_rng_state().numel()),
    "trainer": get_trainer_cls("slca").__name__, "rollout": get_rollout_class("slca_hf").__name__,
    "replica": get_rollout_replica_class("slca_hf").__name__,
    "slca_grpo_is_ours": core_algos.get_adv_estimator_fn("slca_grpo").__wrapped__ is get_estimator("slca_grpo"),
}))
"""


@pytest.mark.slow  # a fresh process imports real verl (~14 s)
@pytest.mark.verl
def test_a_process_that_loads_the_plugin_finds_slcas_cpu_platform_rollout_trainer_and_estimators():
    env = {**os.environ, "VERL_USE_EXTERNAL_MODULES": "slca.backends.verl.plugin", "VERL_PLATFORM": "cpu", "VERL_USE_EXTERNAL_PLUGINS": "none"}
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    found = json.loads(out.stdout.strip().splitlines()[-1])
    assert (found["device"], found["backend"], found["device_id"]) == ("cpu", "gloo", "cpu")
    assert 0 < found["free_total"][0] <= found["free_total"][1] and found["rng"] > 0
    assert (found["trainer"], found["rollout"], found["replica"]) == ("SlcaTrainer", "HFServerAdapter", "HFReplica")
    assert found["slca_grpo_is_ours"]


def test_without_verl_platform_cpu_a_machine_never_falls_onto_the_cpu_platform():
    from slca.backends.verl.platform import CpuPlatform

    assert CpuPlatform().is_platform_available(use_smi_check=True) is False


def _reward_rows(seed: int, count: int) -> list[dict]:
    """Real HierR rows: the same gold call, answered right, half right, wrong or not at all."""
    gold = json.dumps([{"name": "weather-get_alerts", "arguments": {"city": "Oslo", "severity": "severe"}}])
    ground_truth = {"gold_tool_calls": gold, "allowed_tools": ["weather-get_alerts", "calendar-list_events"], "question_content": "Any severe alerts in Oslo?"}
    answers = [
        '<tool_call>\n{"name": "weather-get_alerts", "arguments": {"city": "Oslo", "severity": "severe"}}\n</tool_call>',
        '<tool_call>\n{"name": "weather-get_alerts", "arguments": {"city": "Bergen"}}\n</tool_call>',
        '<tool_call>\n{"name": "calendar-list_events", "arguments": {"date": "2024-01-01"}}\n</tool_call>',
        "There are no alerts.",
        "<tool_call>{not json",
    ]
    rng = np.random.default_rng(seed)
    return [compute_score("synthetic_toolcall", answers[int(i)], ground_truth, {}) for i in rng.integers(0, len(answers), count)]


@pytest.mark.parametrize("estimator", [SlcaGrpoEstimator(), SlcaGrpoEstimator(w_process=2.0, w_summary=0.5), GrpoEstimator()], ids=lambda e: e.name)
def test_advantages_inside_slcas_verl_trainer_equal_the_local_trainers_on_the_same_rewards_and_masks(estimator):
    from slca.backends.verl.trainer import reward_columns

    prompts, n, width = 6, 4, 24
    count = prompts * n
    rows = _reward_rows(seed=3, count=count)
    gen = torch.Generator().manual_seed(3)
    lengths = torch.randint(4, width + 1, (count,), generator=gen)
    mask = (torch.arange(width)[None, :] < lengths[:, None]).float()
    mask[:, 2] = 0.0  # an observation span inside every response: two policy runs, tool then summary
    last = (mask.cumsum(-1) * mask).argmax(-1)
    # What verl stores: rm_scores at the last response token, extra_fields per rollout, uid strings.
    rm_scores = torch.zeros(count, width)
    rm_scores[torch.arange(count), last] = torch.tensor([r["score"] for r in rows])
    extra_fields = [{"reward_extra_info": dict(r)} for r in rows]
    uids = [f"prompt-{i // n}" for i in range(count)]
    ours, _, _ = segment_advantages(estimator, rm_scores, mask, uids, reward_columns(extra_fields))
    # The local trainer's call (slca/backends/local/rl.py): records -> RewardBatch, int prompt ids.
    records = RewardBatch.from_records([RewardRecord.from_row(r) for r in rows])
    local, _ = get_estimator(estimator.name)(rm_scores, mask, [i // n for i in range(count)], segment_rewards=records, config=estimator)
    assert local.abs().sum() > 0
    assert torch.equal(ours, local)
