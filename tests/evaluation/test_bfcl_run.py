"""`eval.benchmark=bfcl` end to end: BFCL entries rolled out by slca's loop with a real generator,
scored per category, through the one evaluation path (slca.evaluation.run.evaluate_model)."""

from __future__ import annotations

import gc
import json
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from slca.config.compose import compose_spec
from slca.evaluation.bfcl import CATEGORIES, load_category
from slca.evaluation.bfcl.data import ORDER
from slca.evaluation.bfcl.gold import gold_calls, reference_answer, render_pythonic
from slca.evaluation.generators import build_generator
from slca.evaluation.run import evaluate_model, heap_left_out_of_gc
from slca.rollout import get_generator
from slca.toolcall.prompts import get_system_prompt
from tests.badinput import assert_refused, run_cli
from tests.conftest import serve_scripted

LIMIT = 2  # entries per category for the scripted endpoint
TINY_LIMIT = 1  # and for the tiny backbone (long prompts, CPU generation)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    """A tiny real Qwen3 model whose byte-level tokenizer was trained on BFCL's own text."""
    from slca.models.tiny import init_model, train_tokenizer
    from slca.config.groups.backbone import TinyBackbone

    corpus = [json.dumps([e.messages, e.functions]) for name in ORDER for e in load_category(name, limit=5)]
    cfg = TinyBackbone(hidden_size=32, num_layers=1, num_heads=2, num_kv_heads=1, intermediate_size=64, vocab_size=1024)
    tokenizer = train_tokenizer(corpus, cfg)
    out = tmp_path_factory.mktemp("bfcl_policy")
    init_model(cfg, tokenizer).save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out, tokenizer


def _spec(limit: int, *overrides: str) -> Any:
    return compose_spec(["eval.benchmark=bfcl", f"eval.limit={limit}", "eval.rollout.max_prompt_length=60000", *overrides])


def _table(result: Any) -> str:
    lines = []
    for cell in result.cells:
        lines.append(f"{cell.cell.label:28s} " + " ".join(f"{k}={cell.metrics[k].mean:.2f}" for k in result.headline))
    return "\n".join(lines)


def test_the_tiny_backbone_is_scored_per_category_under_every_system_prompt_of_the_grid(tiny: tuple[Path, Any]) -> None:
    import torch

    from transformers import AutoModelForCausalLM

    model_dir, tokenizer = tiny
    model = AutoModelForCausalLM.from_pretrained(model_dir, local_files_only=True).eval()
    hf = get_generator("hf")(model, pad_token_id=tokenizer.pad_token_id)
    spec = _spec(TINY_LIMIT, "eval.system_prompts=[bfcl_default,none]", "eval.rollout.max_response_length=16")
    torch.manual_seed(0)
    result = evaluate_model(spec, label="tiny", model_dir=str(model_dir), generator=hf, tokenizer=tokenizer,
                            split_path=None, device="cpu", progress=False)
    print("\n" + _table(result))
    assert result.headline == ("accuracy", *ORDER, "parseable")
    assert [c.cell.system_prompt for c in result.cells] == ["bfcl_default", "none"]
    for cell in result.cells:
        (seed_means,) = cell.per_seed
        assert seed_means["rows"] == TINY_LIMIT * len(ORDER) and seed_means["skipped_rows"] == 0
        for name in ORDER:
            # TINY_LIMIT entries per category, one greedy sample each: a multiple of 1/TINY_LIMIT.
            assert seed_means[name] * TINY_LIMIT == pytest.approx(round(seed_means[name] * TINY_LIMIT))
        assert seed_means["accuracy"] == pytest.approx(sum(seed_means[n] for n in ORDER) / len(ORDER))
    data = result.card.data
    assert data.rows == 3491 and data.rows_evaluated == TINY_LIMIT * len(ORDER) and len(data.sha256) == 64


def _server_answering(answer: Callable[[Any], str]) -> Callable[[dict], tuple[int, bytes, float]]:
    """A completions endpoint that finds the entry of each prompt and answers for it: its question and
    the system text slca's `bfcl_default` prompt gives its functions identify it exactly."""
    entries = [(get_system_prompt("bfcl_default", e.tools), e) for name in ORDER for e in load_category(name, limit=LIMIT)]

    def reply(body: dict) -> tuple[int, bytes, float]:
        prompt = body["prompt"]
        entry = next(e for system, e in entries if system in prompt and e.messages[-1]["content"] in prompt)
        text = answer(entry) + "<|im_end|>"
        return 200, json.dumps({"choices": [{"text": text, "finish_reason": "stop"}]}).encode(), 0.0

    return reply


def _evaluate_against(server_answer: Callable[[Any], str], tiny: tuple[Path, Any]) -> dict[str, float]:
    model_dir, tokenizer = tiny
    with serve_scripted(_server_answering(server_answer)) as server:
        spec = _spec(LIMIT, "eval.generator=openai", f"eval.endpoint.base_url={server.url}", "eval.endpoint.model=bfcl-gold",
                     "eval.endpoint.max_concurrency=4", "eval.endpoint.max_retries=0", "eval.system_prompts=[bfcl_default]",
                     "eval.rollout.max_response_length=4096")
        gen = build_generator(spec.eval, str(model_dir), tokenizer, "cpu")  # what `slca eval` builds
        result = evaluate_model(spec, label="scripted", model_dir=str(model_dir), generator=gen, tokenizer=tokenizer,
                                split_path=None, device="cpu", progress=False)
    assert len(server.requests) == LIMIT * len(ORDER)
    (cell,) = result.cells
    return cell.per_seed[0]


def test_an_endpoint_answering_with_the_gold_scores_one_in_every_category(tiny: tuple[Path, Any]) -> None:
    frozen = []

    def gold(entry: Any) -> str:
        frozen.append(gc.get_freeze_count())
        return reference_answer(entry.functions, entry.possible_answer, CATEGORIES.get(entry.category).rule)

    assert gc.get_freeze_count() == 0
    scores = _evaluate_against(gold, tiny)
    assert {k: scores[k] for k in ("accuracy", *ORDER, "parseable")} == {k: 1.0 for k in ("accuracy", *ORDER, "parseable")}
    # The heap from before (the model, the tokenizer, the modules) was left out of the collector's scans, and is back.
    assert min(frozen) > 100_000 and gc.get_freeze_count() == 0


def test_a_heap_the_process_froze_itself_stays_frozen_after_an_evaluation() -> None:
    def scanned(obj: object) -> bool:  # gc.get_objects() lists what the collector scans, never a frozen object
        return any(o is obj for o in gc.get_objects())

    before = [0]
    gc.freeze()
    try:
        after = [1]
        with heap_left_out_of_gc():
            assert scanned(after)  # not frozen a second time
        assert not scanned(before)  # and the process's own freeze was not undone
    finally:
        gc.unfreeze()
    assert scanned(before)


def test_an_endpoint_dropping_the_last_gold_call_scores_zero_wherever_a_call_is_wanted(tiny: tuple[Path, Any]) -> None:
    def drop_last(entry: Any) -> str:
        if entry.possible_answer is None:  # (ir)relevance: answer the opposite of what is right
            return "[]" if CATEGORIES.get(entry.category).rule == "relevance" else f"[{entry.functions[0]['name']}()]"
        return render_pythonic(gold_calls(entry.possible_answer)[:-1])

    scores = _evaluate_against(drop_last, tiny)
    assert all(scores[name] == 0.0 for name in ORDER), scores
    assert scores["accuracy"] == 0.0 and not math.isnan(scores["parseable"])


def test_slca_eval_on_bfcl_without_the_package_is_refused_in_one_line_and_writes_no_result(
    tiny: tuple[Path, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    # None in sys.modules is Python's own mark of a package that cannot be imported or found.
    monkeypatch.setitem(sys.modules, "bfcl_eval", None)
    run_dir = tmp_path / "run"
    result = run_cli(["eval", "--model", str(tiny[0]), "experiment=embedded_smoke", "logger=none", "eval.benchmark=bfcl",
                      f"run.dir={run_dir}"], capsys)
    assert_refused(result, "eval.benchmark=bfcl", "bfcl-eval is not installed", "pip install --no-deps bfcl-eval==2026.3.23")
    assert not (run_dir / "eval" / "results.json").exists()
