"""The `openai` completions generator against a real HTTP server on 127.0.0.1 with scripted replies."""

from __future__ import annotations

import json

import pytest

import slca.rollout.loop as loop
from slca.config.http import HttpEndpoint
from slca.rollout import EndpointError, OpenAICompletionsGenerator, RolloutConfig, get_generator, run_rollouts
from tests.conftest import serve_scripted
from tests.rollout.conftest import make_row


def completion(text: str, finish: str = "stop", stop_reason=None) -> bytes:
    choice = {"index": 0, "text": text, "finish_reason": finish}
    if stop_reason is not None:
        choice["stop_reason"] = stop_reason
    return json.dumps({"choices": [choice]}).encode()


@pytest.fixture
def server():
    """A scripted completions endpoint; unscripted calls echo the prompt and stop at the length cap."""
    with serve_scripted(lambda body: (200, completion("echo " + body["prompt"], finish="length"), 0.01)) as ep:
        yield ep


def make(server, tokenizer, vllm_extras=True, **knobs):
    knobs.setdefault("max_concurrency", 1)  # scripted replies are consumed in prompt order
    return get_generator("openai")(endpoint=HttpEndpoint(base_url=server.url, **knobs), model="m", tokenizer=tokenizer, vllm_extras=vllm_extras)


def test_text_in_ids_out_with_stop_tokens_restored(server, tokenizer):
    close = tokenizer.convert_tokens_to_ids("</tool_call>")
    im_end = tokenizer.convert_tokens_to_ids("<|im_end|>")
    server.script = [
        (200, completion('<tool_call>\n{"a": 1}\n', stop_reason="</tool_call>"), 0.0),  # stop string left out
        (200, completion("Done.<|im_end|>"), 0.0),  # server kept it (include_stop_str_in_output)
        (200, completion("Bye."), 0.0),  # stop with no reason: the model's EOS
        (200, completion("cut", finish="length"), 0.0),
    ]
    prompts = [tokenizer.encode(t, add_special_tokens=False) for t in ("<|im_start|>user\nA", "B", "C", "D")]
    gen = make(server, tokenizer)
    outs = gen.generate(prompts, max_new_tokens=[50, 50, 50, 3], temperature=0.5, top_p=0.9,
                        stop_token_ids={close, im_end}, seed=10)
    enc = lambda s: tokenizer.encode(s, add_special_tokens=False)  # noqa: E731
    assert outs[0].token_ids == enc('<tool_call>\n{"a": 1}\n') + [close] and outs[0].finish_reason == "stop"
    assert outs[1].token_ids == enc("Done.") + [im_end]
    assert outs[2].token_ids == enc("Bye.") + [im_end]
    assert outs[3].finish_reason == "length" and outs[3].token_ids == enc("cut")[:3]
    bodies = [r["body"] for r in server.requests]
    assert server.requests[0]["path"] == "/v1/completions"
    assert bodies[0]["prompt"] == "<|im_start|>user\nA" and bodies[0]["model"] == "m"
    assert sorted(bodies[0]["stop"]) == ["</tool_call>", "<|im_end|>"]
    assert [b["max_tokens"] for b in bodies] == [50, 50, 50, 3]
    assert [b["seed"] for b in bodies] == [10, 11, 12, 13]
    assert bodies[0]["temperature"] == 0.5 and bodies[0]["top_p"] == 0.9
    assert bodies[0]["include_stop_str_in_output"] is True and bodies[0]["skip_special_tokens"] is False


def test_zero_budget_makes_no_request_and_strict_mode(server, tokenizer):
    gen = make(server, tokenizer, vllm_extras=False)
    outs = gen.generate([[5], [6]], max_new_tokens=[0, 4], temperature=0, top_p=1, stop_token_ids=set(), seed=0)
    assert outs[0].token_ids == [] and outs[0].finish_reason == "length"
    assert len(server.requests) == 1 and "include_stop_str_in_output" not in server.requests[0]["body"]
    assert "stop" not in server.requests[0]["body"]


def test_api_key_from_named_env_var(server, tokenizer, monkeypatch):
    monkeypatch.setenv("SLCA_TEST_KEY", "sekret")
    make(server, tokenizer, api_key_env="SLCA_TEST_KEY").generate(
        [[5]], max_new_tokens=2, temperature=0, top_p=1, stop_token_ids=set(), seed=0)
    assert server.requests[0]["headers"]["Authorization"] == "Bearer sekret"


def test_retries_on_5xx_then_succeeds(server, tokenizer):
    server.script = [(503, b"{}", 0.0), (500, b"{}", 0.0), (200, completion("ok", finish="length"), 0.0)]
    out = make(server, tokenizer, max_retries=2, retry_backoff_s=0.0).generate(
        [[5]], max_new_tokens=5, temperature=0, top_p=1, stop_token_ids=set(), seed=0)
    assert out[0].token_ids == tokenizer.encode("ok", add_special_tokens=False) and len(server.requests) == 3


def test_client_error_is_not_retried(server, tokenizer):
    server.script = [(400, b'{"error": "bad"}', 0.0)]
    with pytest.raises(EndpointError, match="HTTP 400"):
        make(server, tokenizer, max_retries=3, retry_backoff_s=0.0).generate(
            [[5]], max_new_tokens=5, temperature=0, top_p=1, stop_token_ids=set(), seed=0)
    assert len(server.requests) == 1


def test_timeouts_exhaust_retries(server, tokenizer):
    server.script = [(200, completion("late"), 0.6), (200, completion("late"), 0.6)]
    gen = make(server, tokenizer, timeout_s=0.2, max_retries=1, retry_backoff_s=0.0)
    with pytest.raises(EndpointError, match="2 attempts"):
        gen.generate([[5]], max_new_tokens=5, temperature=0, top_p=1, stop_token_ids=set(), seed=0)
    assert len(server.requests) == 2


def test_concurrent_requests_keep_prompt_order(server, tokenizer):
    gen = make(server, tokenizer, max_concurrency=4)
    prompts = [tokenizer.encode(f"p{i}", add_special_tokens=False) for i in range(6)]
    outs = gen.generate(prompts, max_new_tokens=30, temperature=0, top_p=1, stop_token_ids=set(), seed=0)
    assert [tokenizer.decode(o.token_ids) for o in outs] == [f"echo p{i}" for i in range(6)]
    assert sorted(r["body"]["seed"] for r in server.requests) == list(range(6))
    assert isinstance(gen, OpenAICompletionsGenerator)


def test_a_first_round_sent_in_parts_samples_each_prompt_as_the_round_sent_whole(tokenizer, schema_sim, monkeypatch):
    # Each reply names its question and seed, so a prompt seeded or paired differently in parts reads differently.
    def reply(body):
        question = body["prompt"].rsplit("<|im_start|>user\n", 1)[-1].split("<|im_end|>", 1)[0]
        return 200, completion(f"{question[:3]} seed {body['seed']}<|im_end|>"), 0.0

    rows = [make_row(f"q{i}" + (" long" * 2000 if i == 4 else "")) for i in range(8)]
    cfg = RolloutConfig(max_prompt_length=1024, max_response_length=64, max_assistant_turns=2, max_tool_rounds=1,
                        max_parallel_calls=4, temperature=1.0, top_p=1.0)
    monkeypatch.setattr(loop, "PART_ROWS", 3)
    with serve_scripted(reply) as endpoint:
        whole_gen = make(endpoint, tokenizer, max_concurrency=4)
        whole_gen.independent_prompts = False  # the loop sends its first round in one call
        whole = run_rollouts(rows, n=2, generator=whole_gen, simulator=schema_sim, tokenizer=tokenizer, cfg=cfg, seed=5)
        # No simulator (every reply ends its turn): two parts are in flight at a time.
        parts = run_rollouts(rows, n=2, generator=make(endpoint, tokenizer, max_concurrency=4), simulator=None,
                             tokenizer=tokenizer, cfg=cfg, seed=5)
    answers = [(t.row_index, t.sample_index, tokenizer.decode(t.response_ids)) for t in parts]
    assert answers == [(t.row_index, t.sample_index, tokenizer.decode(t.response_ids)) for t in whole]
    first = loop.round_seed(5, 0)
    expected = [(i, s) for i in (0, 1, 2, 3, 5, 6, 7) for s in (0, 1)]
    assert answers == [(i, s, f"q{i} seed {first + k}<|im_end|>") for k, (i, s) in enumerate(expected)]
    assert parts.stats.overlong_rows == whole.stats.overlong_rows == [4]
    assert parts.stats.longest_prompt == whole.stats.longest_prompt > 1024
    assert (whole.stats.generator_calls, parts.stats.generator_calls) == (1, 3)  # rows 0-2, 3-5 (4 overlong), 6-7


@pytest.mark.parametrize("with_simulator", [True, False])
def test_a_part_the_endpoint_refuses_fails_the_rollout_and_no_later_part_is_sent(tokenizer, schema_sim, monkeypatch,
                                                                                 with_simulator):
    rows = [make_row(f"q{i}") for i in range(8)]
    cfg = RolloutConfig(max_prompt_length=1024, max_response_length=64, max_assistant_turns=2, max_tool_rounds=1,
                        max_parallel_calls=4, temperature=1.0, top_p=1.0)
    monkeypatch.setattr(loop, "PART_ROWS", 2)
    with serve_scripted(lambda body: (400, b'{"error": "no"}', 0.0)) as endpoint:
        with pytest.raises(EndpointError, match="HTTP 400"):
            run_rollouts(rows, n=1, generator=make(endpoint, tokenizer, max_concurrency=4),
                         simulator=schema_sim if with_simulator else None, tokenizer=tokenizer, cfg=cfg, seed=0)
        asked = sorted(r["body"]["prompt"].rsplit("<|im_start|>user\n", 1)[-1][:2] for r in endpoint.requests)
    # The first part's two prompts, each refused once (a 4xx is not retried); without a simulator two parts
    # are in flight, so the second part's too if it left before the first failed. No later part is sent.
    assert asked == ["q0", "q1"] if with_simulator else asked in (["q0", "q1"], ["q0", "q1", "q2", "q3"])


def test_an_evaluation_through_a_text_endpoint_tokenises_only_the_prompts_the_cap_could_bind(tokenizer, schema_sim):
    from slca.rollout import collate
    from slca.rollout.token_bound import token_bound

    def reply(body):
        question = body["prompt"].rsplit("<|im_start|>user\n", 1)[-1].split("<|im_end|>", 1)[0]
        return 200, completion(f"{question[:3]} seed {body['seed']}<|im_end|>"), 0.0

    # Row 2: more bytes than the cap but fewer tokens (a merged word repeated); row 4: over the cap either way.
    rows = [make_row(f"q{i}" + (" weather" * 150 if i == 2 else " 9" * 2000 if i == 4 else "")) for i in range(6)]
    cfg = RolloutConfig(max_prompt_length=1024, max_response_length=64, max_assistant_turns=2, max_tool_rounds=0,
                        max_parallel_calls=4, temperature=1.0, top_p=1.0)
    with serve_scripted(reply) as endpoint:
        def roll(**kwargs):
            return run_rollouts(rows, n=2, generator=make(endpoint, tokenizer, max_concurrency=4), simulator=None,
                                tokenizer=tokenizer, cfg=kwargs.pop("cfg", cfg), seed=5, **kwargs)

        kept, texts_only = roll(), roll(keep_prompt_ids=False)
        tool_rounds = roll(keep_prompt_ids=False, cfg=RolloutConfig(**{**cfg.__dict__, "max_tool_rounds": 1}))
    ids = {t.row_index: t.prompt_ids for t in kept}
    bound = token_bound(tokenizer)
    text = {i: tokenizer.decode(ids[i]) for i in ids}
    assert bound(text[2]) > 1024 >= len(ids[2]) and all(bound(text[i]) <= 1024 for i in (0, 1, 3, 5))
    # The same answers, seeds and skipped row; only the prompts the cap could bind were tokenised.
    answers = [(t.row_index, t.sample_index, tokenizer.decode(t.response_ids)) for t in texts_only]
    assert answers == [(t.row_index, t.sample_index, tokenizer.decode(t.response_ids)) for t in kept]
    assert texts_only.stats.overlong_rows == kept.stats.overlong_rows == [4]
    assert texts_only.stats.longest_prompt == kept.stats.longest_prompt > 1024
    assert {t.row_index: t.prompt_ids for t in texts_only} == {0: None, 1: None, 2: ids[2], 3: None, 5: None}
    # A run with a tool round extends its prompts' ids, and the default keeps them.
    assert all(t.prompt_ids == ids[t.row_index] for t in tool_rounds)
    with pytest.raises(ValueError, match="trajectory 0 has no prompt ids"):
        collate(list(texts_only), tokenizer.pad_token_id)
