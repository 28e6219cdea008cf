"""`eval.benchmark=acebench` end to end: ACEBench entries rolled out by slca's loop with a real generator,
scored per category, through the one evaluation path (slca.evaluation.run.evaluate_model)."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from slca.config.benchmarks import ACEBENCH_CATEGORIES
from slca.config.compose import compose_spec
from slca.config.errors import SpecError
from slca.evaluation.acebench import Entry, load_category
from slca.evaluation.acebench.gold import gold_calls, reference_answer, render
from slca.evaluation.benchmarks import BenchmarkInputs, get_benchmark
from slca.evaluation.generators import build_generator
from slca.evaluation.run import eval_rollout_config, evaluate_model
from slca.rollout import get_generator
from tests.conftest import serve_scripted
from tests.evaluation.tiny_policy import save_tiny_policy

SINGLE_TURN = f"eval.categories=[{','.join(ACEBENCH_CATEGORIES)}]"  # the agent ones: test_acebench_agent_eval.py
LIMIT = 2  # entries per category for the scripted endpoint: the multi-turn ones are then one conversation of two turns
TINY_LIMIT = 1


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    """A tiny real Qwen3 model whose byte-level tokenizer was trained on ACEBench's own prompts."""
    from transformers import AutoTokenizer

    corpus = [json.dumps(e.row()["prompt"]) for name in ACEBENCH_CATEGORIES for e in load_category(name, limit=1)]
    out = save_tiny_policy(tmp_path_factory.mktemp("acebench_policy"), corpus, vocab_size=1024)
    return out, AutoTokenizer.from_pretrained(out)


def _spec(limit: int, *overrides: str) -> Any:
    return compose_spec(["eval.benchmark=acebench", f"eval.limit={limit}", "eval.rollout.max_prompt_length=60000", *overrides])


def test_the_chosen_categories_and_limit_are_what_the_card_counts() -> None:
    def data(*overrides: str) -> Any:
        spec = _spec(3, *overrides)
        inputs = BenchmarkInputs(eval_cfg=spec.eval, tokenizer=None, rollout_cfg=eval_rollout_config(spec.eval), seeds=(0,),
                                 split_path=None, reward_cfg=None, simulator_cfg=None)
        return get_benchmark("acebench").data(inputs)

    two = data("eval.categories=[special_irrelevant,normal_multi_turn_user_adjust]")
    assert (two.rows, two.rows_evaluated) == (50 + 123, 6)
    every = data(SINGLE_TURN)
    assert (every.rows, every.rows_evaluated) == (973, 45) and every.sha256 != two.sha256
    # Every category: the agent ones too, agent_multi_turn counted but not evaluated without a user simulator.
    whole = data()
    assert (whole.rows, whole.rows_evaluated) == (973 + 30 + 20, 45 + 3) and whole.sha256 != every.sha256
    with pytest.raises(SpecError, match=r"eval\.categories\.0: unknown acebench category 'agent_multi'"):
        compose_spec(["eval.benchmark=acebench", "eval.categories=[agent_multi]"])


def _server_answering(answer: Callable[[Entry], str]) -> Callable[[dict], tuple[int, bytes, float]]:
    """A completions endpoint that finds the entry of each prompt (its system turn and question) and answers for it."""
    entries = [(e.row()["prompt"][0]["content"], e) for name in ACEBENCH_CATEGORIES for e in load_category(name, limit=LIMIT)]

    def reply(body: dict) -> tuple[int, bytes, float]:
        prompt = body["prompt"]
        # A multi-turn transcript holds the earlier turns' transcripts: the longest one found is this prompt's.
        entry = max((e for system, e in entries if system in prompt and e.question in prompt), key=lambda e: len(e.question))
        text = answer(entry) + "<|im_end|>"
        return 200, json.dumps({"choices": [{"text": text, "finish_reason": "stop"}]}).encode(), 0.0

    return reply


def _evaluate_against(answer: Callable[[Entry], str], tiny: tuple[Path, Any]) -> dict[str, float]:
    model_dir, tokenizer = tiny
    with serve_scripted(_server_answering(answer)) as server:
        spec = _spec(LIMIT, SINGLE_TURN, "eval.generator=openai", f"eval.endpoint.base_url={server.url}", "eval.endpoint.model=acebench-gold",
                     "eval.endpoint.max_concurrency=4", "eval.endpoint.max_retries=0", "eval.system_prompts=[acebench_default]",
                     "eval.rollout.max_response_length=4096")
        gen = build_generator(spec.eval, str(model_dir), tokenizer, "cpu")
        result = evaluate_model(spec, label="scripted", model_dir=str(model_dir), generator=gen, tokenizer=tokenizer,
                                split_path=None, device="cpu", progress=False)
    assert len(server.requests) == LIMIT * len(ACEBENCH_CATEGORIES)
    assert result.card.data.rows == 973 and result.card.data.rows_evaluated == LIMIT * len(ACEBENCH_CATEGORIES)
    (cell,) = result.cells
    return cell.per_seed[0]


@pytest.mark.slow  # the tiny policy's tokenizer is trained in the fixture
def test_an_endpoint_answering_with_the_gold_scores_one_except_where_acebenchs_rules_fail_its_own_gold(tiny: tuple[Path, Any]) -> None:
    scores = _evaluate_against(reference_answer, tiny)
    # normal_atom_object_deep_0's gold has a list of strings with spaces inside an object, which ACEBench's
    # whitespace deletion and text comparison fail (tests/evaluation/test_acebench_checker.py); every other
    # first-two gold answer passes.
    expected = {name: 1.0 for name in ACEBENCH_CATEGORIES} | {"normal_atom_object_deep": 0.5}
    assert {k: scores[k] for k in ACEBENCH_CATEGORIES} == expected
    assert scores["normal"] == pytest.approx(11.5 / 12) and scores["special"] == 1.0 and scores["parseable"] == 1.0
    assert scores["summary"] == pytest.approx((0.578 * 11.5 / 12 + 0.2676) / (0.578 + 0.2676))
    assert scores["rows"] == LIMIT * len(ACEBENCH_CATEGORIES) and scores["skipped_rows"] == 0


@pytest.mark.slow  # the tiny policy's tokenizer is trained in the fixture
def test_an_endpoint_dropping_the_last_gold_call_scores_zero_in_every_normal_category(tiny: tuple[Path, Any]) -> None:
    def drop_last(entry: Entry) -> str:
        if entry.category.startswith("special_"):
            return render([(entry.functions[0]["name"], {})])  # a call where the problem should be pointed out
        return render(gold_calls(entry.truth)[:-1])

    scores = _evaluate_against(drop_last, tiny)
    assert all(scores[name] == 0.0 for name in ACEBENCH_CATEGORIES), scores
    assert scores["summary"] == 0.0 and not math.isnan(scores["parseable"])


@pytest.mark.slow
def test_the_untrained_tiny_backbone_is_scored_per_category_under_acebenchs_prompt_and_another(tiny: tuple[Path, Any]) -> None:
    import torch
    from transformers import AutoModelForCausalLM

    model_dir, tokenizer = tiny
    model = AutoModelForCausalLM.from_pretrained(model_dir, local_files_only=True).eval()
    hf = get_generator("hf")(model, pad_token_id=tokenizer.pad_token_id)
    spec = _spec(TINY_LIMIT, SINGLE_TURN, "eval.system_prompts=[acebench_default,stronger]", "eval.rollout.max_response_length=16")
    torch.manual_seed(0)
    result = evaluate_model(spec, label="tiny", model_dir=str(model_dir), generator=hf, tokenizer=tokenizer,
                            split_path=None, device="cpu", progress=False)
    assert result.headline == ("summary", "normal", "special", "agent", *ACEBENCH_CATEGORIES, "agent_multi_turn",
                               "agent_multi_turn_process", "agent_multi_step", "agent_multi_step_process", "parseable")
    assert [c.cell.system_prompt for c in result.cells] == ["acebench_default", "stronger"]
    for cell in result.cells:
        (seed,) = cell.per_seed
        print(cell.cell.label, {k: round(seed[k], 3) for k in result.headline})
        assert seed["rows"] == TINY_LIMIT * len(ACEBENCH_CATEGORIES) and seed["skipped_rows"] == 0
        for name in ACEBENCH_CATEGORIES:
            assert seed[name] in (0.0, 1.0)  # one greedy sample of one entry (one turn of one conversation)
    # The two prompts are the levels of one factor: the sensitivity table has its effect.
    ((factor, level, reference),) = [(e.factor, e.level, e.reference) for e in result.effects]
    assert (factor, level, reference) == ("system_prompt", "stronger", "acebench_default")
