"""SFT and RL hand a chat template the same tools, so the system turn they render is the same tokens:
under slca's tiny template (both its tools blocks) and Qwen2.5's and Qwen3's official templates.

SFT side: the local backend's encoding of a ShareGPT + hermes row (`encode_rows`, which renders with
`slca.models.corpus`). RL side: the RL row the data stage derives from that row (`decompose`), through the
rollout protocol (`dataset_template`: the row's text, tools rendered by the template) and the rollout
loop's ChatFormat. Oracle: the template's own `apply_chat_template` on the conversation written out here
by hand, each tool in the OpenAI envelope that transformers documents for `tools=` and Qwen's prompts show.
LLaMA-Factory's side: its own Qwen tool formatter on the `tools` column slca's converter writes.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest


SYSTEM = "Réponds brièvement. 简洁回答。"
QUESTION = "Wetter in Zürich?"
WEATHER = {"name": "get_weather", "description": "Current weather of a city (°C).",
           "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}
ENVELOPED = {"type": "function", "function": WEATHER}
# (template family, tiny tools block or None for Qwen's own template)
FAMILIES = [("tiny", "compact"), ("tiny", "qwen"), ("qwen2.5", None), ("qwen3", None)]


def sharegpt_row(stored_tool: dict) -> dict:
    """One tool round then an answer, the tool listed in the system turn as a dataset stores it."""
    tools = f"# Tools\n\n<tools>\n{json.dumps(stored_tool, ensure_ascii=False)}\n</tools>"
    return {"conversations": [
        {"from": "system", "value": f"{SYSTEM}\n\n{tools}"},
        {"from": "human", "value": QUESTION},
        {"from": "gpt", "value": '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Zürich"}}\n</tool_call>'},
        {"from": "human", "value": '<tool_response>\n{"sky": "clear", "celsius": 21}\n</tool_response>'},
        {"from": "gpt", "value": "Klar, 21 °C."},
    ]}


def qwen_oracle_text(tokenizer, template: str) -> str:
    return tokenizer.apply_chat_template(
        [{"role": "system", "content": SYSTEM}, {"role": "user", "content": QUESTION}], tools=[ENVELOPED],
        add_generation_prompt=True, tokenize=False, chat_template=template)


def rl_prompt_ids(row: dict, tokenizer, template: str, system_prompt: str = "dataset_template") -> list[int]:
    from slca.data.dialogue import parse_conversations
    from slca.data.prepare import decompose
    from slca.rollout import RolloutConfig
    from slca.rollout.chat import ChatFormat
    from slca.rollout.protocol import protocol_prompt_fn

    dialogue, errors = parse_conversations(row["conversations"])
    assert dialogue is not None and not errors, errors
    (rl_row,) = decompose(row, dialogue, source_key="k", split="rl")
    messages, tools = protocol_prompt_fn(system_prompt=system_prompt)(rl_row, RolloutConfig())
    text = ChatFormat(tokenizer, chat_template=template).render_prompt(messages, tools)
    return tokenizer(text, add_special_tokens=False)["input_ids"]


@pytest.mark.parametrize("stored", [ENVELOPED, WEATHER], ids=["stored_enveloped", "stored_bare"])
@pytest.mark.parametrize(("family", "tiny_block"), FAMILIES, ids=[f"{f}-{b}" if b else f for f, b in FAMILIES])
def test_sft_trains_after_exactly_the_prompt_tokens_rl_renders_for_the_same_conversation_and_tools(family, tiny_block, stored, qwen_tokenizers):
    from slca.backends.local.sft import encode_rows
    from slca.models.chat_template import template_source

    # The tiny template's tokenizer is trained per run; Qwen3's stands in for it, since what is under test
    # is the text the template writes, not how a tokenizer splits it.
    tokenizer = qwen_tokenizers["qwen3" if family == "tiny" else family]
    template = template_source(tiny_block) if family == "tiny" else tokenizer.chat_template
    oracle_text = qwen_oracle_text(tokenizer, template)
    oracle = tokenizer(oracle_text, add_special_tokens=False)["input_ids"]
    assert "get_weather" in oracle_text

    row = sharegpt_row(stored)
    encoded = encode_rows([row], tokenizer, max_length=4096, template=template)
    assert not encoded.rejected, encoded.rejected
    sft_ids, labels = encoded.ids[0].tolist(), encoded.labels[0].tolist()
    assert rl_prompt_ids(row, tokenizer, template) == oracle
    assert sft_ids[: len(oracle)] == oracle
    # SFT learns from the first token the policy writes at that prompt on, and nothing before it.
    assert not any(labels[: len(oracle)]) and labels[len(oracle)]


def llamafactory_qwen_tool_formatter():
    """LLaMA-Factory's `qwen` tool formatter (its qwen and qwen3 templates use it), loaded from its file:
    the package's data initialiser imports a multimodal plugin that needs torchaudio."""
    found = importlib.util.find_spec("llamafactory")
    if found is None or found.origin is None:
        raise AssertionError("LLaMA-Factory is not installed: `make test` installs it (extra `sft`)")
    spec = importlib.util.spec_from_file_location("lf_tool_utils", Path(found.origin).parent / "data" / "tool_utils.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.TOOLS["qwen"].tool_formatter


@pytest.mark.parametrize("stored", [ENVELOPED, WEATHER], ids=["stored_enveloped", "stored_bare"])
@pytest.mark.parametrize("qwen", ["qwen2.5", "qwen3"])
def test_llamafactory_writes_the_converted_tools_into_the_system_turn_exactly_as_qwens_template_renders_them(qwen, stored, qwen_tokenizers):
    from slca.data.convert import convert_rows

    tokenizer = qwen_tokenizers[qwen]
    (converted,) = convert_rows(iter([sharegpt_row(stored)]), "llamafactory")
    system_turn = f"<|im_start|>system\n{SYSTEM}{llamafactory_qwen_tool_formatter()(json.loads(converted['tools']))}<|im_end|>\n"
    assert converted["messages"][0] == {"role": "system", "content": SYSTEM}
    assert qwen_oracle_text(tokenizer, tokenizer.chat_template).startswith(system_turn)


@pytest.mark.parametrize("qwen", ["qwen2.5", "qwen3"])
def test_by_default_rl_prompts_carry_the_system_turn_sft_trains_on_and_the_verbatim_row_text_would_not(qwen, qwen_tokenizers):
    from slca.config.compose import compose_spec
    from slca.data.convert import convert_rows

    tokenizer = qwen_tokenizers[qwen]
    oracle = tokenizer(qwen_oracle_text(tokenizer, tokenizer.chat_template), add_special_tokens=False)["input_ids"]
    row = sharegpt_row(ENVELOPED)
    default = compose_spec([]).train.rl.system_prompt
    assert rl_prompt_ids(row, tokenizer, tokenizer.chat_template, default) == oracle
    (converted,) = convert_rows(iter([row]), "llamafactory")
    assert converted["messages"][0] == {"role": "system", "content": SYSTEM}  # LLaMA-Factory's SFT: the same text
    # `dataset` keeps the row's own tools block in the row's wording: a system turn SFT never trained on.
    assert rl_prompt_ids(row, tokenizer, tokenizer.chat_template, "dataset") != oracle
