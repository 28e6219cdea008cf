"""Fixtures for the rollout tests: a tiny real tokenizer + random Qwen3 model, RL rows, a scripted generator.

The scripted generator is a test double for the *model* only (the loop logic is under test): it
implements the Generator interface by replaying fixed assistant turns chosen from the context.
"""

from __future__ import annotations

import json

import pytest

from slca.rollout.types import GenerationOutput
from tests.threads import one_torch_thread  # noqa: F401 - autouse in this folder: one intra-op thread (oversubscription stalls cost 100x here)

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather of a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
TIME = {
    "type": "function",
    "function": {
        "name": "get_time",
        "description": "Local time of a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}

_CORPUS = [
    "<|im_start|>system\n# Tools\nget_weather(city: string)\nget_time(city: string)<|im_end|>\n"
    "<|im_start|>user\nWhat is the weather in Paris and the time in Oslo?<|im_end|>\n"
    "<|im_start|>assistant\n<think>\nI should call the tools.\n</think>\n\n<tool_call>\n"
    '[{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "get_time", "arguments": {"city": "Oslo"}}]'
    "\n</tool_call><|im_end|>\n<|im_start|>user\n<tool_response>\n"
    '{"temp_c": 21, "sky": "clear"}\n</tool_response>\n<tool_response>\n{"time": "10:42"}\n</tool_response><|im_end|>\n'
    "<|im_start|>assistant\nIt is 21 degrees and clear in Paris; in Oslo it is 10:42.<|im_end|>\n"
] * 20


@pytest.fixture(scope="session")
def tiny():
    """(model, tokenizer): the tiny backbone recipe shrunk to ~60k parameters, built in memory."""
    from slca.models.tiny import init_model, train_tokenizer
    from slca.config.groups.backbone import TinyBackbone

    cfg = TinyBackbone(hidden_size=64, num_layers=1, num_heads=2, num_kv_heads=1, intermediate_size=128,
                       vocab_size=400, max_position_embeddings=4096, seed=0)
    tok = train_tokenizer(_CORPUS, cfg)
    model = init_model(cfg, tok)
    model.eval()
    return model, tok


@pytest.fixture(scope="session")
def corpus():
    return list(_CORPUS)


@pytest.fixture(scope="session")
def tokenizer(tiny):
    return tiny[1]


def make_row(question: str, *, recorded: list | None = None, tools=(WEATHER, TIME)) -> dict:
    """A verl-native RL row (the stored layout of slca.data)."""
    tools_json = json.dumps(list(tools))
    return {
        "prompt": [{"role": "system", "content": "You answer questions."}, {"role": "user", "content": question}],
        "data_source": "test",
        "tools": tools_json,
        "reward_model": {"style": "rule", "ground_truth": {
            "allowed_tools": [t["function"]["name"] for t in tools],
            "gold_tool_calls": json.dumps([[{"name": "get_weather", "arguments": {"city": "Paris"}}]]),
            "question_content": question, "subset_name": "tool_call", "tool_schemas": tools_json}},
        "extra_info": {"index": 0, "gold_responses": json.dumps(recorded or [])},
    }


@pytest.fixture
def row_factory():
    return make_row


class ScriptedGenerator:
    """Replays assistant turns: script[tag][turn] is the text of turn `turn` for rows whose user text has `tag`.

    The turn index is read from the context (generation prompts after the tag), so it works however the
    loop batches. Honours stop ids (first one kept, finish "stop") and max_new_tokens ("length")
    unless `ignore_cap`. Records every call's batch size and caps.
    """

    def __init__(self, tokenizer, script: dict[str, list[str]], *, ignore_cap: bool = False):
        self.tok = tokenizer
        self.script = script
        self.ignore_cap = ignore_cap
        self.calls: list[dict] = []

    def generate(self, prompt_token_ids, *, max_new_tokens, temperature, top_p, stop_token_ids, seed):
        caps = [max_new_tokens] * len(prompt_token_ids) if isinstance(max_new_tokens, int) else list(max_new_tokens)
        self.calls.append({"batch": len(prompt_token_ids), "caps": caps, "seed": seed})
        outs = []
        for ids, cap in zip(prompt_token_ids, caps):
            ctx = self.tok.decode(list(ids), skip_special_tokens=False)
            tag = next(t for t in self.script if t in ctx)
            # the tag sits in the last user turn: generation prompts after it count the turns so far
            turn = ctx[ctx.rindex(tag) :].count("<|im_start|>assistant") - 1
            turns = self.script[tag]
            tokens = self.tok.encode(turns[min(turn, len(turns) - 1)], add_special_tokens=False)
            reason = "length"
            for j, t in enumerate(tokens):
                if t in stop_token_ids:
                    tokens, reason = tokens[: j + 1], "stop"
                    break
            if not self.ignore_cap and len(tokens) > cap:
                tokens, reason = tokens[:cap], "length"
            outs.append(GenerationOutput(list(tokens), reason))
        return outs


@pytest.fixture
def scripted():
    return ScriptedGenerator


@pytest.fixture
def schema_sim():
    """The real deterministic `schema` simulator, counting the calls it answers."""
    from slca.sim import build_simulator

    sim = build_simulator({"name": "schema", "seed": 0, "max_response_chars": 2048})
    sim.answered = []
    inner = sim.respond_many

    def respond_many(calls, **kw):
        sim.answered.append(list(calls))
        return inner(calls, **kw)

    sim.respond_many = respond_many
    return sim
