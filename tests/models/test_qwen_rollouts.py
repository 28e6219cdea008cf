"""slca's rollout loop on Qwen's own tokenizers: prompt + response is Qwen's rendering token for token,
the mask marks exactly the assistant-generated tokens, and a turn of one block per parallel call runs,
answers and scores every call.

The policy is scripted (the model is not under test): each assistant turn writes exactly what Qwen's
official template renders for that assistant message, including its `<|im_end|>`.
"""

from __future__ import annotations

import json

import pytest

from slca.config.groups.reward import HierRReward
from slca.rewards.hierr import HierR
from slca.rollout import RolloutConfig, run_rollouts
from slca.sim import build_simulator
from slca.toolcall.types import canonical_json
from tests.models.qwen_conversations import Conversation, Step, conversations
from tests.rollout.conftest import ScriptedGenerator

N_CONVERSATIONS = 60
THINKING_MODES = {"qwen2.5": ("none", "inline"), "qwen3": ("none", "inline", "field")}
ASSISTANT = "<|im_start|>assistant\n"
IM_END = "<|im_end|>"


@pytest.fixture(params=sorted(THINKING_MODES))
def qwen(request, qwen_tokenizers):
    return request.param, qwen_tokenizers[request.param]


def _episode(conv: Conversation, tag: str) -> tuple[dict, list[dict], list[Step]]:
    """(RL row, Qwen's messages of the whole episode, the policy's steps): the conversation's last
    question is the prompt, its tool steps then a final answer are what the policy writes. Equal calls
    get equal responses, so a replay simulator can answer them."""
    question, steps = conv.turns[-1]
    steps = [*steps, Step(steps[0].thought if steps else None, "Done: 完成。")]
    answers: dict[tuple[str, str], str] = {}
    for s in steps:
        s.responses = [answers.setdefault((n, canonical_json(a)), r) for (n, a), r in zip(s.calls, s.responses)]
    conv = Conversation(conv.system, conv.tools, [*conv.turns[:-1], (f"{tag} {question}", steps)], conv.thinking)
    messages = conv.slca_messages()
    n_prompt = max(i for i, m in enumerate(messages) if m["role"] == "user") + 1
    row = {
        "prompt": messages[:n_prompt],
        "tools": json.dumps(conv.tools),
        "extra_info": {"gold_responses": json.dumps([{"name": n, "arguments": json.loads(a), "response": r}
                                                     for (n, a), r in answers.items()])},
    }
    return row, conv.qwen_messages(), steps


def _policy_turns(text: str, n_prompt_turns: int) -> list[str]:
    """What the policy writes in each turn of Qwen's rendering: every assistant body after the prompt, with its `<|im_end|>`."""
    bodies = text.split(ASSISTANT)[1 + n_prompt_turns :]
    return [b[: b.index(IM_END) + len(IM_END)] for b in bodies]


def test_rollouts_are_qwens_rendering_token_for_token_with_exactly_the_assistant_tokens_masked(qwen):
    name, tok = qwen
    # Rows whose prompt keeps earlier turns need them in the prompt as plain text; keep to conversations
    # whose earlier turns have no tool calls or thinking, which a verl-native prompt can hold.
    convs = [c for c in conversations(7, 4 * N_CONVERSATIONS, THINKING_MODES[name])
             if all(not s.calls and s.thought is None for _, steps in c.turns[:-1] for s in steps)][:N_CONVERSATIONS]
    rows, expected, script, n_calls = [], [], {}, []
    for i, conv in enumerate(convs):
        tag = f"[episode {i}]"
        row, messages, steps = _episode(conv, tag)
        text = tok.apply_chat_template(messages, tools=conv.tools, tokenize=False)
        n_prompt_turns = sum(m["role"] == "assistant" for m in row["prompt"])
        script[tag] = _policy_turns(text, n_prompt_turns)
        assert len(script[tag]) == len(steps)
        rows.append(row)
        expected.append(text.removesuffix("\n"))  # the episode ends at the policy's last <|im_end|>
        n_calls.append([len(s.calls) for s in steps if s.calls])
    cfg = RolloutConfig(max_prompt_length=4096, max_response_length=8192, max_assistant_turns=10, max_tool_rounds=6,
                        max_parallel_calls=20, temperature=1.0, top_p=1.0)
    batch = run_rollouts(rows, n=1, generator=ScriptedGenerator(tok, script), tokenizer=tok, cfg=cfg, seed=0,
                         simulator=build_simulator({"name": "replay", "max_response_chars": 2048}))
    assert len(batch) == len(convs) >= 40
    enc = tok(expected, add_special_tokens=False, return_offsets_mapping=True)
    for t, tag, text, ids, offsets, calls in zip(batch, script, expected, enc["input_ids"], enc["offset_mapping"], n_calls):
        assert t.finish_reason == "final" and t.observation_kinds.keys() <= {"recorded"}
        assert [len(c) for c in t.tool_calls] == calls  # every call of every turn ran, whichever form
        assert t.prompt_ids + t.response_ids == ids
        # Oracle mask: the characters of the policy's turns in Qwen's rendering (each assistant body after
        # the prompt, with its <|im_end|>); a token is generated when it lies inside one.
        turns, pos = [], len(tok.decode(t.prompt_ids))
        for turn in script[tag]:
            start = text.index(turn, pos)
            turns.append((start, start + len(turn)))
            pos = start + len(turn)
        generated = [int(any(s <= a and b <= e for s, e in turns)) for a, b in offsets]
        assert [0] * len(t.prompt_ids) + t.response_mask == generated
    assert sum(c > 1 for calls in n_calls for c in calls) >= 10


def test_three_calls_in_three_blocks_of_one_turn_run_answer_mask_and_score_as_one_list(qwen):
    name, tok = qwen
    cities = ["Paris", "Zürich", "東京"]
    gold = [{"name": "get_weather", "arguments": {"city": c}} for c in cities]
    tools = [{"type": "function", "function": {"name": "get_weather", "description": "Weather.",
              "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
    recorded = [{**g, "response": f'{{"city": "{g["arguments"]["city"]}", "sky": "sunny"}}'} for g in gold]
    blocks = "\n".join(f"<tool_call>\n{json.dumps(g, ensure_ascii=False)}\n</tool_call>" for g in gold)
    one_list = f"<tool_call>\n{json.dumps(gold, ensure_ascii=False)}\n</tool_call>"
    final = "Sunny in Paris, Zürich and 東京 today, as the weather tool reports for each city." + IM_END
    rows, script = [], {}
    for tag, turn in (("BLOCKS", blocks), ("LIST", one_list)):
        rows.append({"prompt": [{"role": "user", "content": f"{tag}: weather in three cities?"}], "tools": json.dumps(tools),
                     "extra_info": {"gold_responses": json.dumps(recorded)}})
        script[tag] = [turn + IM_END, final]
    cfg = RolloutConfig(max_prompt_length=1024, max_response_length=1024)
    batch = run_rollouts(rows, n=1, generator=ScriptedGenerator(tok, script), tokenizer=tok, cfg=cfg, seed=0,
                         simulator=build_simulator({"name": "replay", "max_response_chars": 2048}))
    ground_truth = {"allowed_tools": ["get_weather"], "gold_tool_calls": json.dumps([gold]), "question_content": "q"}
    reward = HierR(HierRReward(judge={"name": "grounding"}))
    for t in batch:
        # executed and answered: three calls in one tool round, each with its recorded response
        assert [c.name for c in t.tool_calls[0]] == ["get_weather"] * 3 and t.n_tool_rounds == 1
        assert t.observation_kinds == {"recorded": 3}
        assert all(r["response"] in t.solution_text for r in recorded)
        # masked: the whole turn, three blocks and the policy's <|im_end|>, is generated
        first = t.spans[0]
        assert t.response_mask[first.start : first.end] == [1] * (first.end - first.start)
        assert tok.decode(t.response_ids[first.start : first.end]) == script["BLOCKS" if t.row_index == 0 else "LIST"][0]
        assert t.response_mask[first.end] == 0
        # scored: both forms are the same correct parallel step
        row = reward.one(t.solution_text, ground_truth, {})
        assert (row["parallel_score"], row["process_score"], row["first_step_pred_count"]) == (1.0, 1.0, 3)


def test_decoding_by_qwens_backend_gives_the_text_of_its_own_batch_decode_for_any_ids(qwen_tokenizers):
    """decode_texts skips batch_decode's Python pass for a tokenizer that decodes as its backend does; on Qwen's
    tokenizers (which do) the texts must be batch_decode's for ids of every kind: control and markup tokens,
    ids that split a multi-byte character, CJK and emoji, an empty list."""
    import random
    from unittest import mock

    from slca.rollout.chat import ChatFormat, decode_texts

    for name, tokenizer in sorted(qwen_tokenizers.items()):
        fmt = ChatFormat(tokenizer)
        text = "<|im_start|>assistant\n<think>x</think><tool_call>\n{\"a\": \"完成 🚀\"}\n</tool_call><|im_end|>"
        whole = tokenizer.encode(text, add_special_tokens=False)
        rng = random.Random(0)
        batch = [whole, whole[:7], [], [rng.randrange(len(tokenizer)) for _ in range(200)]]
        batch += [whole[rng.randrange(len(whole)):] for _ in range(20)]
        expected = tokenizer.batch_decode(batch, skip_special_tokens=False)
        with mock.patch.object(type(tokenizer), "batch_decode", side_effect=AssertionError("the backend path was not taken")):
            assert decode_texts(tokenizer, batch) == expected, name
        control = fmt.control_ids
        assert fmt.decode_solutions(batch) == [tokenizer.decode([i for i in ids if i not in control], skip_special_tokens=False)
                                               for ids in batch], name
        assert "<tool_call>" in fmt.decode_solution(whole) and "<|im_end|>" not in fmt.decode_solution(whole)
