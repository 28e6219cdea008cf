"""Multi-turn loop logic with a scripted model: masks, tool rounds, caps, counts (docs/method.md#segments-from-mask-topology, docs/method.md#tool-simulators)."""

from __future__ import annotations

import json

import pytest

from slca.rollout import KIND_ENV, KIND_TEXT, KIND_THINKING, KIND_TOOL_CALL, ROLLOUT_FINISH_REASONS, RolloutConfig
from slca.rollout import collate, run_rollouts
from tests.reference import RL_PREVIEW

CALL_PARIS = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
CALL_OSLO = '<tool_call>\n{"name": "get_time", "arguments": {"city": "Oslo"}}\n</tool_call>'
END = "<|im_end|>"  # the policy ends every turn itself, a tool-calling one too
FINAL = "It is sunny." + END
RECORDED = [{"name": "get_weather", "arguments": {"city": "Paris"}, "response": '{"sky": "RECORDED-SUNNY"}'}]


def cfg(**kw):
    base = dict(max_prompt_length=512, max_response_length=400, max_assistant_turns=10, max_tool_rounds=6,
                max_parallel_calls=20, temperature=1.0, top_p=1.0)
    base.update(kw)
    return RolloutConfig(**base)


@pytest.fixture
def roll(scripted):
    def run(tokenizer, sim, rows, script, n=1, **kw):
        gen = scripted(tokenizer, script, ignore_cap=kw.pop("ignore_cap", False))
        batch = run_rollouts(rows, n=n, generator=gen, simulator=sim, tokenizer=tokenizer, cfg=cfg(**kw), seed=0)
        return batch, gen

    return run


def test_tool_round_then_final_masks_and_texts(tokenizer, schema_sim, row_factory, roll):
    row = row_factory("TAG-A weather in Paris?", recorded=RECORDED)
    batch, gen = roll(tokenizer, schema_sim, [row], {"TAG-A": ["Let me check.\n" + CALL_PARIS + END, FINAL]})
    (t,) = batch
    turn1 = tokenizer.encode("Let me check.\n" + CALL_PARIS + END, add_special_tokens=False)
    turn2 = tokenizer.encode(FINAL, add_special_tokens=False)
    kinds = [s.kind for s in t.spans]
    assert kinds == ["tool", "env", "final"]
    env = t.spans[1]
    assert t.response_ids[: len(turn1)] == turn1 and t.response_ids[env.end :] == turn2
    # generated tokens 1, environment tokens 0, nothing else
    assert t.response_mask == [1] * len(turn1) + [0] * (env.end - env.start) + [1] * len(turn2)
    assert len(t.response_mask) == len(t.response_ids)
    # the simulator answered the call with the recorded response, once
    assert schema_sim.answered == [[t.tool_calls[0][0]]] and t.tool_calls[0][0].name == "get_weather"
    assert t.observation_kinds == {"recorded": 1}
    # prompt + response up to the insert is exactly the chat template's rendering of that conversation
    prompt_msgs = list(row["prompt"])
    convo = prompt_msgs + [{"role": "assistant", "content": "Let me check.\n" + CALL_PARIS},
                           {"role": "tool", "content": RECORDED[0]["response"]}]
    expected = tokenizer.apply_chat_template(convo, tools=json.loads(row["tools"]), add_generation_prompt=True,
                                             tokenize=False)
    assert tokenizer.decode(t.prompt_ids + t.response_ids[: env.end], skip_special_tokens=False) == expected
    assert t.finish_reason == "final" and not t.last_turn_is_tool_call
    assert (t.n_assistant_turns, t.n_tool_rounds, t.n_tool_calls, t.n_dropped_calls) == (2, 1, 1, 0)
    assert "<|im_end|>" in t.response_text and "<|im_start|>" in t.response_text
    assert "<|im_end|>" not in t.solution_text and "<|im_start|>" not in t.solution_text
    for tag in ("<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>"):
        assert tag in t.solution_text
    assert "RECORDED-SUNNY" in t.solution_text
    assert [c["batch"] for c in gen.calls] == [1, 1]


def test_parallel_calls_beyond_cap_are_dropped_and_counted(tokenizer, schema_sim, row_factory, roll):
    three = ('<tool_call>\n[{"name": "get_weather", "arguments": {"city": "Paris"}}, '
             '{"name": "get_time", "arguments": {"city": "Oslo"}}, '
             '{"name": "get_weather", "arguments": {"city": "Rome"}}]\n</tool_call>' + END)
    batch, _ = roll(tokenizer, schema_sim, [row_factory("TAG-P")], {"TAG-P": [three, FINAL]}, max_parallel_calls=2)
    (t,) = batch
    assert (t.n_tool_calls, t.n_dropped_calls) == (2, 1)
    assert [c.name for c in schema_sim.answered[0]] == ["get_weather", "get_time"]
    env = next(s for s in t.spans if s.kind == "env")
    insert = tokenizer.decode(t.response_ids[env.start : env.end], skip_special_tokens=False)
    assert insert.count("<tool_response>") == 2
    assert batch.stats.dropped_calls == 1 and batch.stats.tool_calls == 2
    assert batch.stats.as_metrics()["rollout/dropped_calls"] == 1.0


def test_every_finish_reason_in_one_batch(tokenizer, schema_sim, row_factory, roll):
    script = {
        "TAG-FINAL": [FINAL],
        "TAG-LOOP": [CALL_PARIS + END],  # calls forever
        "TAG-BAD": ["<tool_call>\nnot json\n</tool_call>" + END],
        "TAG-LONG": ["word " * 100 + "<|im_end|>"],  # 500 tokens
    }
    rows = [row_factory(tag) for tag in script]
    batch, gen = roll(tokenizer, schema_sim, rows, script, n=2, max_tool_rounds=2, max_response_length=400)
    by_tag = {tag: [t for t in batch if t.row_index == i] for i, tag in enumerate(script)}
    assert {t.finish_reason for t in by_tag["TAG-FINAL"]} == {"final"}
    loop = by_tag["TAG-LOOP"][0]
    assert loop.finish_reason == "max_tool_rounds"
    assert (loop.n_assistant_turns, loop.n_tool_rounds) == (3, 2)
    # cut while the last turn is a tool call: ends at the policy's own <|im_end|>, learnable, flagged for the segment rule
    assert loop.last_turn_is_tool_call and loop.response_mask[-1] == 1
    assert tokenizer.convert_ids_to_tokens(loop.response_ids[-2:]) == ["</tool_call>", END]
    bad = by_tag["TAG-BAD"][0]
    assert bad.finish_reason == "unparsed_call" and bad.n_tool_calls == 0 and bad.last_turn_is_tool_call
    long = by_tag["TAG-LONG"][0]
    assert long.finish_reason == "max_response_length" and long.response_length == 400
    assert long.response_mask == [1] * 400
    # unparsed and capped turns never reach the simulator: 2 rollouts × 2 rounds of the looping row
    assert len(schema_sim.answered) == 4
    s = batch.stats
    assert s.finish_reasons == {"final": 2, "max_tool_rounds": 2, "unparsed_call": 2, "max_response_length": 2}
    assert sum(s.finish_reasons.values()) == s.n_rollouts == 8
    assert s.unparsed_call_turns == 2
    assert s.last_turn_tool_call == 4  # the looping and the unparsed rollouts end on a tool-call turn
    assert s.as_metrics()["rollout/last_turn_tool_call_frac"] == 0.5
    assert sorted(s.tool_rounds) == [0, 0, 0, 0, 0, 0, 2, 2]
    # one batched generator call per round, shrinking as rollouts finish
    assert [c["batch"] for c in gen.calls] == [8, 2, 2]
    assert s.generator_calls == 3
    m = s.as_metrics()
    assert {f"rollout/finish/{r}" for r in ROLLOUT_FINISH_REASONS} <= set(m)


def test_assistant_turn_cap(tokenizer, schema_sim, row_factory, roll):
    batch, _ = roll(tokenizer, schema_sim, [row_factory("TAG-L")], {"TAG-L": [CALL_PARIS + END]}, max_assistant_turns=2)
    (t,) = batch
    assert t.finish_reason == "max_assistant_turns"
    assert (t.n_assistant_turns, t.n_tool_rounds) == (2, 1)


def test_zero_tool_rounds_allowed(tokenizer, schema_sim, row_factory, roll):
    batch, _ = roll(tokenizer, schema_sim, [row_factory("TAG-L")], {"TAG-L": [CALL_PARIS + END]}, max_tool_rounds=0)
    assert batch[0].finish_reason == "max_tool_rounds" and batch[0].n_tool_rounds == 0
    assert schema_sim.answered == []


def test_generation_budget_is_the_remaining_response_length(tokenizer, schema_sim, row_factory, roll):
    batch, gen = roll(tokenizer, schema_sim, [row_factory("TAG-A")], {"TAG-A": [CALL_PARIS + END, FINAL]},
                      max_response_length=300)
    t = batch[0]
    assert gen.calls[0]["caps"] == [300]
    assert gen.calls[1]["caps"] == [300 - t.spans[1].end]


def test_observation_overflow_stops_before_appending(tokenizer, schema_sim, row_factory, roll):
    call = tokenizer.encode(CALL_PARIS + END, add_special_tokens=False)
    # room for the call, not for call + insert
    batch, _ = roll(tokenizer, schema_sim, [row_factory("TAG-A")], {"TAG-A": [CALL_PARIS + END, FINAL]},
                    max_response_length=len(call) + 5)
    (t,) = batch
    assert t.finish_reason == "observation_overflow"
    assert t.response_ids == call and t.response_mask == [1] * len(call)
    assert t.n_tool_calls == 1 and t.n_tool_rounds == 0 and t.last_turn_is_tool_call
    assert [s.kind for s in t.spans] == ["tool"]


def test_response_and_mask_cut_together_when_generator_overshoots(tokenizer, schema_sim, row_factory, roll):
    batch, _ = roll(tokenizer, schema_sim, [row_factory("TAG-A")], {"TAG-A": ["word " * 100 + "<|im_end|>"]},
                    max_response_length=30, ignore_cap=True)
    (t,) = batch
    assert t.response_length == 30 and t.response_mask == [1] * 30
    assert t.finish_reason == "max_response_length"
    assert t.spans[-1].end == 30


def test_overlong_and_bad_rows_reported_and_groups_interleaved(tokenizer, schema_sim, row_factory, roll):
    rows = [row_factory("TAG-A one"), row_factory("TAG-A " + "very long " * 200), {"prompt": []},
            row_factory("TAG-A three")]
    batch, _ = roll(tokenizer, schema_sim, rows, {"TAG-A": [FINAL]}, n=3, max_prompt_length=120)
    s = batch.stats
    assert s.overlong_rows == [1] and s.overlong_prompts == 1
    assert [(i, f) for i, f, _ in s.bad_rows] == [(2, "prompt")]
    assert s.rows_in == 4 == s.rows_rolled_out + s.overlong_prompts + len(s.bad_rows)
    assert [t.row_index for t in batch] == [0, 0, 0, 3, 3, 3]
    assert [t.group_index for t in batch] == [0, 0, 0, 1, 1, 1]
    assert [t.sample_index for t in batch] == [0, 1, 2] * 2
    assert s.as_metrics()["rollout/overlong_prompts"] == 1.0


def test_bad_tools_json_is_a_bad_row(tokenizer, schema_sim, row_factory, roll):
    row = row_factory("TAG-A")
    row["tools"] = "{not json"
    batch, _ = roll(tokenizer, schema_sim, [row], {"TAG-A": [FINAL]})
    assert len(batch) == 0 and batch.stats.bad_rows[0][:2] == (0, "tools")


def test_unknown_tool_gets_error_observation(tokenizer, schema_sim, row_factory, roll):
    call = '<tool_call>\n{"name": "launch_rocket", "arguments": {}}\n</tool_call>' + END
    batch, _ = roll(tokenizer, schema_sim, [row_factory("TAG-A")], {"TAG-A": [call, FINAL]})
    assert batch[0].observation_kinds == {"error": 1} and batch[0].finish_reason == "final"


def test_token_kinds_mark_thinking_calls_and_environment(tokenizer, schema_sim, row_factory, roll):
    think = "<think>\nhmm\n</think>"
    turn1 = think + "\n\n" + CALL_PARIS + END
    batch, _ = roll(tokenizer, schema_sim, [row_factory("TAG-A"), row_factory("TAG-B")],
                    {"TAG-A": [turn1, FINAL], "TAG-B": [FINAL]})
    t = batch[0]
    enc = lambda s: tokenizer.encode(s, add_special_tokens=False)  # noqa: E731
    n_env = t.spans[1].end - t.spans[1].start
    assert t.token_kinds == ([KIND_THINKING] * len(enc(think)) + [KIND_TEXT] * len(enc("\n\n"))
                             + [KIND_TOOL_CALL] * len(enc(CALL_PARIS)) + [KIND_TEXT] * len(enc(END)) + [KIND_ENV] * n_env
                             + [KIND_TEXT] * len(enc(FINAL)))
    out = collate(batch, tokenizer.pad_token_id)
    assert out["token_kinds"][0].tolist() == t.token_kinds
    short = batch[1].response_length
    assert out["token_kinds"][1, short:].eq(-1).all() and out["token_kinds"][1, :short].eq(KIND_TEXT).all()
    assert batch.trajectories == list(batch)


def test_a_response_that_opens_no_region_is_text_throughout_even_with_a_stray_closer():
    from slca.rollout.chat import token_kinds

    markup = {"<think>": 5, "</think>": 6, "<tool_call>": 7, "</tool_call>": 8}
    assert token_kinds([1, 6, 8, 2], [1] * 4, markup) == [KIND_TEXT] * 4
    assert token_kinds([1, 5, 2, 6, 3], [1] * 5, markup) == [KIND_TEXT] + [KIND_THINKING] * 3 + [KIND_TEXT]
    assert token_kinds([1, 7, 8, 2], [1, 1, 1, 0], markup) == [KIND_TEXT, KIND_TOOL_CALL, KIND_TOOL_CALL, KIND_ENV]
    assert token_kinds([1, 2], [1, 0], {}) == [KIND_TEXT, KIND_ENV]


def test_config_from_rl_fields():
    from slca.config.groups.train import RlConfig

    rl = RlConfig(max_prompt_length=100, max_response_length=50, max_assistant_turns=3, max_tool_rounds=2,
                  max_parallel_calls=4, temperature=0.7, top_p=0.9)
    c = RolloutConfig.from_rl(rl, inject_tools=False)
    assert (c.max_prompt_length, c.max_response_length, c.max_assistant_turns, c.max_tool_rounds,
            c.max_parallel_calls, c.temperature, c.top_p, c.inject_tools) == (100, 50, 3, 2, 4, 0.7, 0.9, False)
    with pytest.raises(ValueError, match="max_response_length"):
        RolloutConfig(max_response_length=0)


def test_published_reference_rows_roll_out(tokenizer, schema_sim, roll):
    """The published RL preview rows (no recorded responses) render, call their tools and get answers."""
    rows = [json.loads(line) for line in RL_PREVIEW.read_text(encoding="utf-8").splitlines() if line.strip()]
    script = {}
    for i, r in enumerate(rows):
        r["prompt"][-1]["content"] = f"ROW{i}: " + r["prompt"][-1]["content"]
        name = json.loads(r["tools"])[0]["function"]["name"]
        script[f"ROW{i}:"] = [f'<tool_call>\n{{"name": "{name}", "arguments": {{}}}}\n</tool_call>' + END, FINAL]
    batch, gen = roll(tokenizer, schema_sim, rows, script, n=2, max_prompt_length=20000, max_response_length=4000,
                      inject_tools=False)
    s = batch.stats
    assert s.bad_rows == [] and s.rows_rolled_out == len(rows) and len(batch) == 2 * len(rows)
    assert all(t.n_tool_rounds == 1 and t.finish_reason == "final" for t in batch)
    # answered by the schema simulator from the row's own schemas: synthesised, or a schema error
    assert set(s.observation_kinds) <= {"synthesised", "error"} and sum(s.observation_kinds.values()) == len(batch)
    assert [c["batch"] for c in gen.calls] == [len(batch), len(batch)]
