"""Tool-round inserts derived from the chat template, stop ids, and verl-style solution decoding."""

from __future__ import annotations

import pytest

from slca.rollout import ChatFormat, RolloutConfig, run_rollouts
from slca.rollout.chat import single_token_id

# A Qwen3-like ChatML template written for this test: default system turn, tool messages grouped in
# one user turn, an empty think block on a final assistant turn, and the enable_thinking switch.
# The derivation must not be fooled by the think block the *last* assistant turn gets.
QWEN3_LIKE = (
    "{%- if messages[0].role != 'system' -%}{{- '<|im_start|>system\\nYou are helpful.<|im_end|>\\n' -}}{%- endif -%}"
    "{%- for m in messages -%}"
    "{%- if m.role == 'assistant' -%}"
    "{{- '<|im_start|>assistant\\n' -}}{%- if loop.last -%}{{- '<think>\\n\\n</think>\\n\\n' -}}{%- endif -%}"
    "{{- m.content + '<|im_end|>\\n' -}}"
    "{%- elif m.role == 'tool' -%}"
    "{%- if loop.first or messages[loop.index0 - 1].role != 'tool' -%}{{- '<|im_start|>user' -}}{%- endif -%}"
    "{{- '\\n<tool_response>\\n' + m.content + '\\n</tool_response>' -}}"
    "{%- if loop.last or messages[loop.index0 + 1].role != 'tool' -%}{{- '<|im_end|>\\n' -}}{%- endif -%}"
    "{%- else -%}{{- '<|im_start|>' + m.role + '\\n' + m.content + '<|im_end|>\\n' -}}{%- endif -%}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}"
    "{%- if enable_thinking is defined and enable_thinking is false -%}{{- '<think>\\n\\n</think>\\n\\n' -}}{%- endif -%}"
    "{%- endif -%}"
)


def test_tiny_template_insert(tokenizer):
    fmt = ChatFormat(tokenizer)
    # the policy wrote the turn's <|im_end|> itself (a stop id); the insert starts after it
    assert fmt.env_text(["A"]) == ("\n<|im_start|>user\n<tool_response>\nA\n</tool_response><|im_end|>\n"
                                   "<|im_start|>assistant\n")
    two = fmt.env_text(["A", "B"])
    assert two.count("<tool_response>") == 2 and two.count("<|im_start|>user") == 1
    # a turn ends only at the end of turn, never at a </tool_call> (parallel calls come one block each)
    assert fmt.stop_token_ids == {tokenizer.convert_tokens_to_ids("<|im_end|>")}


def test_qwen3_like_template_insert_and_thinking_switch(tokenizer):
    fmt = ChatFormat(tokenizer, {"enable_thinking": False}, chat_template=QWEN3_LIKE)
    assert fmt.env_text(["r1", "r2"]) == (
        "\n<|im_start|>user\n<tool_response>\nr1\n</tool_response>\n<tool_response>\nr2\n"
        "</tool_response><|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n")
    assert ChatFormat(tokenizer, chat_template=QWEN3_LIKE).env_text(["r"]).endswith("<|im_start|>assistant\n")
    # response text containing the probe's own shape is inserted verbatim
    assert "{{ x }} <tool_response>" in fmt.env_text(["{{ x }} <tool_response>"])


def test_template_that_drops_tool_messages_is_refused(tokenizer):
    broken = "{%- for m in messages if m.role != 'tool' -%}{{- m.content -}}{%- endfor -%}"
    with pytest.raises(ValueError, match="tool message"):
        ChatFormat(tokenizer, chat_template=broken).env_text(["x"])


def test_single_token_required(tokenizer):
    assert single_token_id(tokenizer, "</tool_call>") == tokenizer.convert_tokens_to_ids("</tool_call>")
    with pytest.raises(ValueError, match="single token"):
        single_token_id(tokenizer, "hello world")


def test_solution_decoding_keeps_markup_only(tokenizer):
    fmt = ChatFormat(tokenizer)
    text = "<|im_start|>x<think>t</think><tool_call>c</tool_call><tool_response>r</tool_response><|im_end|><|endoftext|>"
    assert fmt.decode_solution(tokenizer.encode(text, add_special_tokens=False)) == (
        "x<think>t</think><tool_call>c</tool_call><tool_response>r</tool_response>")


def test_prompt_fn_reaches_the_prompt_rendered_by_the_tokenizers_own_template(tokenizer, scripted, schema_sim, row_factory):
    import copy

    def no_system(row, cfg):
        return [m for m in row["prompt"] if m["role"] != "system"], None

    tokenizer = copy.deepcopy(tokenizer)
    tokenizer.chat_template = QWEN3_LIKE
    cfg = RolloutConfig(max_prompt_length=512, max_response_length=300, sim_workers=2)
    gen = scripted(tokenizer, {"TAG": ["<tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"city\": \"Oslo\"}}\n"
                                       "</tool_call><|im_end|>", "ok<|im_end|>"]})
    batch = run_rollouts([row_factory("TAG q")], n=2, generator=gen, simulator=schema_sim, tokenizer=tokenizer,
                         cfg=cfg, seed=0, prompt_fn=no_system)
    prompt = tokenizer.decode(batch[0].prompt_ids, skip_special_tokens=False)
    assert prompt == "<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nTAG q<|im_end|>\n<|im_start|>assistant\n"
    assert all(t.n_tool_rounds == 1 for t in batch) and len(schema_sim.answered) == 2


def test_markup_registered_as_special_tokens_is_still_kept(tokenizer):
    """Where <tool_call> & co. are special tokens, plain skip_special_tokens would drop them; we keep them."""
    import copy

    tok = copy.deepcopy(tokenizer)
    tok.add_special_tokens({"additional_special_tokens": ["<tool_call>", "</tool_call>", "<think>", "</think>"]})
    ids = tok.encode("<|im_start|>a<think>t</think><tool_call>b</tool_call><|im_end|>", add_special_tokens=False)
    assert tok.decode(ids, skip_special_tokens=True) == "atb"
    assert ChatFormat(tok).decode_solution(ids) == "a<think>t</think><tool_call>b</tool_call>"
