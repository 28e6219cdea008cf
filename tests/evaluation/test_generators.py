"""Evaluation samples the saved policy with the generator `eval.generator` names, through the registry."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from slca.config.compose import compose_spec
from slca.config.errors import SpecError
from slca.evaluation.generators import BUILDERS, build_generator
from slca.rollout.generators import GENERATORS, HFGenerator, OpenAICompletionsGenerator, VLLMGenerator
from tests.evaluation.tiny_policy import save_tiny_policy

CORPUS = ["<|im_start|>user\nWhat is the weather in Paris?<|im_end|>\n<|im_start|>assistant\nSunny.<|im_end|>\n"] * 10


@pytest.fixture(scope="module")
def saved_policy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny real Qwen3 model and tokenizer saved the way the sft and rl stages save theirs."""
    return save_tiny_policy(tmp_path_factory.mktemp("policy"), CORPUS)


def test_every_registered_generator_has_an_evaluation_builder() -> None:
    assert list(BUILDERS) == list(GENERATORS) == ["hf", "openai", "vllm"]


def test_an_unregistered_generator_is_refused_at_composition_listing_the_registered_ones() -> None:
    with pytest.raises(SpecError, match=r"^config error at eval\.generator: unknown generator 'tgi'; registered: hf, openai, vllm$"):
        compose_spec(["eval.generator=tgi"])


def test_the_configured_generator_is_the_one_built(saved_policy: Path) -> None:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(saved_policy, local_files_only=True)
    hf = build_generator(compose_spec([]).eval, str(saved_policy), tokenizer, "cpu")
    assert isinstance(hf, HFGenerator) and hf.pad_token_id == tokenizer.pad_token_id
    assert hf.model.config.hidden_size == 32  # the saved policy itself, loaded from its directory

    cfg = compose_spec(["eval.generator=openai", "eval.endpoint.base_url=http://127.0.0.1:9/v1/", "eval.endpoint.max_retries=5"]).eval
    endpoint = build_generator(cfg, str(saved_policy), tokenizer, "cpu")
    assert isinstance(endpoint, OpenAICompletionsGenerator)
    assert endpoint.url == "http://127.0.0.1:9/v1/completions" and endpoint.model == str(saved_policy)
    named = build_generator(compose_spec(["eval.generator=openai", "eval.endpoint.model=served"]).eval, str(saved_policy), tokenizer, "cpu")
    assert named.model == "served"

    vllm = build_generator(compose_spec(["eval.generator=vllm"]).eval, str(saved_policy), tokenizer, "cpu")
    assert isinstance(vllm, VLLMGenerator)  # the engine itself is built on first use (GPU machines)


def test_success_in_evaluation_is_the_rewards_own_success() -> None:
    """One threshold: HierR's `success` key (normalised score >= reward.success_threshold) is what eval reports."""
    from types import SimpleNamespace

    from slca.config.groups.reward import ExactMatchReward, HierRReward, JudgeConfig
    from slca.evaluation.toucan import hierr_config, row_metrics
    from slca.rewards import compute_score_batch

    call = {"name": "get_weather", "arguments": {"city": "Paris"}}
    gold = {"allowed_tools": ["get_weather"], "gold_tool_calls": [[call]], "question_content": "Weather in Paris?"}
    response = f"<tool_call>\n{json.dumps(call)}\n</tool_call>"
    outcomes = set()
    for threshold in (0.3, 0.99):
        cfg = HierRReward(success_threshold=threshold, judge=JudgeConfig(name="none", cache_dir=None))
        (hierr,) = compute_score_batch([""], [response], [gold], reward_config=cfg)
        (exact,) = compute_score_batch([""], [response], [gold], reward_config=ExactMatchReward())
        metrics = row_metrics(hierr, exact, SimpleNamespace(n_tool_rounds=0))
        assert hierr["error_type"] == "" and 0.3 < hierr["weighted_score_norm"] < 0.99
        assert metrics["success"] == float(hierr["weighted_score_norm"] >= threshold)
        outcomes.add(metrics["success"])
    assert outcomes == {0.0, 1.0}
    assert hierr_config(ExactMatchReward()).success_threshold == HierRReward().success_threshold
