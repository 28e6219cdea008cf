"""The embedded RL loop's logic with controlled rewards: dynamic sampling fills the batch across rounds,
down-sampling keeps m of n, the pre-rollout filter skips solved prompts and stops the loop when nothing is
left, state round-trips, an update moves the policy, and log-probs use the sampling temperature.

Generation is replaced by a scripted rollout function (a test double for the model's sampling only):
rows whose question says "easy" always get the gold call, other rows alternate gold and wrong calls.
Rewards, estimator, filter, down-sampling and the PPO update are the real ones.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
import torch

from slca.backends.local.rl import LocalRlTrainer
from slca.config.compose import compose_spec
from slca.rollout.types import RolloutStats, Trajectory

GOLD = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
WRONG = '<tool_call>\n{"name": "get_time", "arguments": {"city": "Oslo"}}\n</tool_call>'
TOOLS = [{"type": "function", "function": {"name": n, "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}
         for n in ("get_weather", "get_time")]


def make_row(question: str) -> dict:
    return {
        "prompt": [{"role": "user", "content": question}],
        "data_source": "test",
        "tools": json.dumps(TOOLS),
        "reward_model": {"ground_truth": {
            "allowed_tools": ["get_weather", "get_time"],
            "gold_tool_calls": json.dumps([[{"name": "get_weather", "arguments": {"city": "Paris"}}]]),
            "question_content": question,
        }},
        "extra_info": {},
    }


@pytest.fixture(scope="module")
def tiny():
    from slca.models.tiny import init_model, train_tokenizer
    from slca.config.groups.backbone import TinyBackbone

    cfg = TinyBackbone(hidden_size=32, num_layers=1, num_heads=2, num_kv_heads=1, intermediate_size=64, vocab_size=400, seed=0)
    corpus = [f"<|im_start|>user\nweather please<|im_end|>\n<|im_start|>assistant\n{GOLD}<|im_end|>\n{WRONG}"] * 20
    tok = train_tokenizer(corpus, cfg)
    return init_model(cfg, tok), tok


def scripted_rollouts(tokenizer, truncated_in_tool_call=False):
    calls = []

    def rollout(rows, *, n, seed):
        calls.append(len(rows))
        trajectories = []
        for i, row in enumerate(rows):
            question = row["prompt"][0]["content"]
            prompt_ids = tokenizer.encode(question, add_special_tokens=False)
            for s in range(n):
                text = GOLD if "easy" in question or s % 2 == 0 else WRONG
                ids = tokenizer.encode(text + "<|im_end|>", add_special_tokens=False)
                trajectories.append(Trajectory(
                    row_index=i, group_index=i, sample_index=s, prompt_ids=prompt_ids, response_ids=ids,
                    response_mask=[1] * len(ids), token_kinds=[0] * len(ids), solution_text=text, n_assistant_turns=1,
                    last_turn_is_tool_call=truncated_in_tool_call,
                ))
        return SimpleNamespace(trajectories=trajectories, stats=RolloutStats(rows_in=len(rows)))

    rollout.calls = calls
    return rollout


def trainer_for(tiny, tmp_path, rows, *overrides, truncated_in_tool_call=False):
    model, tok = tiny
    judge = [] if "reward=exact_match" in overrides else ["reward.judge.name=none"]  # exact match has no judge
    spec = compose_spec(["experiment=embedded_smoke", "train.rl.n=4", "train.rl.prompts_per_step=2", "train.rl.mini_batch_prompts=2",
                         *judge, *overrides])
    logged = []
    rollout = scripted_rollouts(tok, truncated_in_tool_call)
    trainer = LocalRlTrainer(spec, model, tok, rows, tmp_path, rollout_fn=rollout, device=torch.device("cpu"),
                             log=lambda m, step: logged.append(m))
    return trainer, rollout, logged


def test_dynamic_sampling_fills_the_batch_with_informative_groups(tiny, tmp_path) -> None:
    rows = [make_row("easy one"), make_row("easy two"), make_row("hard one"), make_row("hard two")]
    trainer, rollout, _ = trainer_for(tiny, tmp_path, rows, "filter=dynamic_sampling", "filter.max_generation_rounds=4", "downsample=none")
    metrics = trainer.step()
    assert metrics["dynamic_sampling/kept_groups"] == 2.0 and metrics["dynamic_sampling/filled"] == 1.0
    assert metrics["dynamic_sampling/dropped_groups"] == 2.0  # both easy prompts were generated and dropped
    assert metrics["dynamic_sampling/generations"] == 4.0 * sum(rollout.calls)
    assert metrics["rollouts_kept"] == 8


def test_max_variance_keeps_m_of_n(tiny, tmp_path) -> None:
    rows = [make_row("hard one"), make_row("hard two")]
    trainer, _, _ = trainer_for(tiny, tmp_path, rows, "filter=none", "downsample=max_variance", "downsample.m=2")
    metrics = trainer.step()
    assert metrics["rollouts_kept"] == 4
    assert metrics["groups/informative_frac"] == 1.0


def test_pre_rollout_filter_skips_solved_prompts_then_stops(tiny, tmp_path) -> None:
    rows = [make_row("easy one"), make_row("easy two")]
    # With no judge a gold call scores a normalised 0.5 (process 1, summary 0): that is "correct" here.
    trainer, rollout, logged = trainer_for(
        tiny, tmp_path, rows, "filter=pre_rollout", "filter.k=1", "filter.correct_threshold=0.5", "downsample=none"
    )
    trainer.step()  # epoch 0: both prompts all-correct
    assert not trainer.exhausted
    trainer.step()  # epoch 1: both skipped, no re-admission: nothing left
    assert trainer.exhausted and rollout.calls == [2]
    filter_logs = [m for m in logged if "filter/skipped_frac" in m]
    assert filter_logs[0]["filter/all_correct_frac"] == 1.0
    assert any(m["filter/skipped_frac"] == 1.0 for m in filter_logs)


def test_state_round_trip_and_update_moves_policy(tiny, tmp_path) -> None:
    rows = [make_row("hard one"), make_row("hard two"), make_row("hard three")]
    # GRPO: one-run rollouts are summary-only, and with no judge SLCA's summary reward is constant.
    trainer, _, _ = trainer_for(
        tiny, tmp_path, rows, "estimator=grpo", "filter=pre_rollout", "downsample=none", "train.rl.lr=1e-2", "train.rl.weight_decay=0"
    )
    before = [p.detach().clone() for p in trainer.model.parameters()]
    metrics = trainer.step()
    assert any(not torch.equal(a, b) for a, b in zip(before, trainer.model.parameters()))
    assert metrics["adv/summary_abs_mean"] > 0
    state = json.loads(json.dumps(trainer.state_dict()))
    other, _, _ = trainer_for(tiny, tmp_path / "other", rows, "estimator=grpo", "filter=pre_rollout", "downsample=none")
    other.load_state_dict(state)
    assert other.state_dict() == state


def test_grad_cosine_probe_is_logged_and_leaves_the_update_alone(tiny, tmp_path) -> None:
    import copy

    rows = [make_row("hard one"), make_row("hard two")]
    model, tok = tiny
    probed_model, plain_model = copy.deepcopy(model), copy.deepcopy(model)
    results = []
    for m, flag in ((probed_model, "true"), (plain_model, "false")):
        trainer, _, _ = trainer_for((m, tok), tmp_path / flag, rows, "estimator=grpo", "filter=none", "downsample=none", f"train.rl.grad_cosine={flag}")
        results.append(trainer.step())
    probed, plain = results
    assert -1.0 <= probed["grad_cosine/tool_summary"] <= 1.0 and probed["grad_cosine/summary_norm"] > 0
    assert "grad_cosine/tool_summary" not in plain
    for a, b in zip(probed_model.parameters(), plain_model.parameters()):
        assert torch.equal(a, b)


def test_final_tool_turn_process_trains_a_step_crediting_the_truncated_tool_call_to_the_tool_segment(tiny, tmp_path) -> None:
    import copy

    model, tok = tiny
    rows = [make_row("hard one"), make_row("hard two")]
    steps = {}
    for turn in ("process", "summary"):
        m = copy.deepcopy(model)
        before = [p.detach().clone() for p in m.parameters()]
        trainer, _, _ = trainer_for(
            (m, tok), tmp_path / turn, rows, "estimator=slca_grpo", f"estimator.final_tool_turn={turn}", "filter=none",
            "downsample=none", "train.rl.lr=1e-2", truncated_in_tool_call=True,
        )
        steps[turn] = trainer.step()
        if turn == "process":
            assert any(not torch.equal(a, b) for a, b in zip(before, m.parameters()))
    # Each rollout is one assistant turn that ends in a tool call (truncated). With "process" that
    # turn is the tool segment and there is no summary; with "summary" (the reference) it is the
    # summary, whose reward (no judge) is a constant 0: no advantage.
    process, summary = steps["process"], steps["summary"]
    assert process["adv/tool_abs_mean"] > 0 and process["adv/summary_abs_mean"] != process["adv/summary_abs_mean"]  # NaN: no tokens
    assert summary["adv/summary_abs_mean"] == 0 and summary["adv/tool_abs_mean"] != summary["adv/tool_abs_mean"]


@pytest.mark.parametrize(
    "overrides",
    [
        ["estimator=toolpo", "reward=exact_match", "filter=dynamic_sampling", "downsample=random"],
        ["estimator=toolpo", "filter=pre_rollout", "downsample=max_variance", "downsample.reward=segment_sum"],
        ["estimator=slca_grpo", "filter=none", "downsample=max_variance", "downsample.reward=tool"],
        ["estimator=rloo", "reward=exact_match", "filter=pre_rollout", "downsample=none"],
    ],
    ids=lambda o: "+".join(x.split("=")[1] for x in o),
)
def test_every_filter_downsampler_and_reward_takes_a_real_step_through_the_registries(tiny, tmp_path, overrides) -> None:
    rows = [make_row("hard one"), make_row("hard two")]
    trainer, _, _ = trainer_for(tiny, tmp_path, rows, *overrides, "train.rl.lr=1e-2")
    metrics = trainer.step()
    m = trainer.downsample_cfg.m if hasattr(trainer.downsample_cfg, "m") else 4
    assert metrics["rollouts_kept"] == 2 * m  # n = 4 per prompt, m of them kept
    assert metrics["loss/policy"] == metrics["loss/policy"]  # a finite update ran
    assert metrics["reward/internal_error_rate"] == 0.0


def test_m_above_n_is_refused_when_the_spec_is_composed_not_at_rl_start() -> None:
    from slca.config.errors import SpecError

    with pytest.raises(SpecError, match="downsample.m"):
        compose_spec(["experiment=embedded_smoke", "downsample=max_variance", "downsample.m=32", "train.rl.n=4"])


def test_reward_records_carry_the_normalised_reward_per_reward_type() -> None:
    from slca.config.groups.reward import ExactMatchReward
    from slca.rewards import RewardRecord, compute_score

    gt = make_row("q")["reward_model"]["ground_truth"]
    exact = RewardRecord.from_row(compute_score("test", GOLD, gt, reward_config=ExactMatchReward()))
    hierr_row = compute_score("test", GOLD, gt)
    hierr = RewardRecord.from_row(hierr_row)
    assert exact.normalised == 1.0  # not its HierR diagnostic norm (0.5 without a summary)
    assert hierr.normalised == hierr_row["weighted_score_norm"] == 0.5


def test_policy_logprobs_are_those_of_the_sampling_temperature(tiny) -> None:
    from slca.backends.local.policy import batched_response_logprobs, response_logprobs
    from slca.rollout import collate

    model, tok = tiny
    ids = tok.encode(GOLD + "<|im_end|>", add_special_tokens=False)
    prompt = tok.encode("weather please", add_special_tokens=False)
    traj = Trajectory(row_index=0, group_index=0, sample_index=0, prompt_ids=prompt, response_ids=ids,
                      response_mask=[1] * len(ids), token_kinds=[0] * len(ids), solution_text=GOLD, n_assistant_turns=1)
    batch = collate([traj, traj], pad_id=tok.pad_token_id)
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([prompt + ids])).logits[0, len(prompt) - 1 : -1]
        cold, entropy = response_logprobs(model, batch, temperature=0.5, with_entropy=True)
    expected = torch.log_softmax(logits / 0.5, -1).gather(-1, torch.tensor(ids)[:, None]).squeeze(-1)
    torch.testing.assert_close(cold[0], expected, atol=1e-5, rtol=1e-5)
    plain = batched_response_logprobs(model, batch, 1)
    assert not torch.allclose(plain[0], cold[0])  # the temperature is applied, not ignored
    torch.testing.assert_close(batched_response_logprobs(model, batch, 1, temperature=0.5), cold)
    assert entropy is not None and entropy.shape == cold.shape


OBSERVATION = '\n<|im_start|>user\n<tool_response>\n{"city": "Paris", "sky": "sunny"}\n</tool_response><|im_end|>\n<|im_start|>assistant\n'
OBSERVATION_DECODED = OBSERVATION.replace("<|im_start|>", "").replace("<|im_end|>", "")  # what the reward reads
CITED, UNCITED = "Paris will be sunny today.", "I cannot say anything more."


def two_turn_rollouts(tokenizer):
    """Per prompt: gold call + cited answer, gold call + uncited answer, wrong call + cited answer,
    wrong call + uncited answer (call, observation with mask 0, answer)."""
    plans = [(GOLD, CITED), (GOLD, UNCITED), (WRONG, CITED), (WRONG, UNCITED)]

    def encode(text):
        ids = tokenizer.encode(text, add_special_tokens=False)
        assert ids, text
        return ids

    def rollout(rows, *, n, seed):
        trajectories = []
        for i, row in enumerate(rows):
            prompt_ids = encode(row["prompt"][0]["content"])
            for s, (call, answer) in enumerate(plans[:n]):
                parts = [encode(call + "<|im_end|>"), encode(OBSERVATION), encode(answer + "<|im_end|>")]
                trajectories.append(Trajectory(
                    row_index=i, group_index=i, sample_index=s, prompt_ids=prompt_ids, response_ids=[t for p in parts for t in p],
                    response_mask=[1] * len(parts[0]) + [0] * len(parts[1]) + [1] * len(parts[2]),
                    token_kinds=[0] * sum(map(len, parts)), solution_text=call + OBSERVATION_DECODED + answer, n_assistant_turns=2,
                ))
        return SimpleNamespace(trajectories=trajectories, stats=RolloutStats(rows_in=len(rows)))

    return rollout


@pytest.mark.parametrize("estimator", ["grpo", "slca_grpo"])
def test_every_step_logs_how_many_tokens_the_estimator_pushes_against_their_own_segment(tiny, tmp_path, estimator) -> None:
    model, tok = tiny
    spec = compose_spec(["experiment=embedded_smoke", "train.rl.n=4", "train.rl.prompts_per_step=2", "train.rl.mini_batch_prompts=2",
                         "reward.judge.name=grounding", f"estimator={estimator}", "filter=none", "downsample=none"])
    trainer = LocalRlTrainer(spec, model, tok, [make_row("hard one"), make_row("hard two")], tmp_path, rollout_fn=two_turn_rollouts(tok),
                             device=torch.device("cpu"), log=lambda m, step: None)
    metrics = trainer.step()
    # In each group the gold call scores above the wrong one and the cited answer (the grounding judge
    # finds "paris" and "sunny") above the uncited one: gold+uncited and wrong+cited disagree, 2 per prompt.
    assert metrics["credit/disagreeing_rollouts"] == 4
    if estimator == "slca_grpo":
        assert metrics["credit/misattributed_token_frac"] == 0.0
        return
    # GRPO: the gold+uncited total (1 + 0) is below the group mean, the wrong+cited one (w + 1) above
    # it, so both rollouts' calls are pushed against their side and their answers with it.
    calls = len(tok.encode(GOLD + "<|im_end|>", add_special_tokens=False)) + len(tok.encode(WRONG + "<|im_end|>", add_special_tokens=False))
    answers = len(tok.encode(UNCITED + "<|im_end|>", add_special_tokens=False)) + len(tok.encode(CITED + "<|im_end|>", add_special_tokens=False))
    assert metrics["credit/misattributed_token_frac"] == pytest.approx(calls / (calls + answers))
