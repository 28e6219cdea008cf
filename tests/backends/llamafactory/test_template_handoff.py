"""The hand-off: the tiny backbone's rollouts render exactly the token ids LLaMA-Factory trained on.

LLaMA-Factory's side comes from its own loader, converter and `qwen` template, run in its own
environment (lf_encode.py); the rollout side from slca's ChatFormat on the tokenizer the SFT stage
starts from. Conversations are rebuilt from the ShareGPT rows (not from the converted file), so the
converter is checked too.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.llamafactory]  # the first use builds LLaMA-Factory's environment (minutes)

HERE = Path(__file__).resolve().parent


def openai_messages(row: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(messages, tools) of a ShareGPT + hermes row as the rollout code sees a conversation: the row's
    system text without its tools block (the template renders the tools), one assistant message per
    step (its calls as tool_calls), one tool message per response."""
    from slca.data.dialogue import parse_conversations
    from slca.toolcall.prompts import split_system_tools

    dialogue, errors = parse_conversations(row["conversations"])
    assert dialogue is not None and not errors, errors
    system, _ = split_system_tools(dialogue.system)
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for turn in dialogue.turns:
        if turn.role == "tool":
            messages += [{"role": "tool", "content": r} for r in turn.responses]
        elif turn.calls:
            calls = [{"type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}} for c in turn.calls]
            messages.append({"role": "assistant", "content": "", "tool_calls": calls})
        else:
            messages.append({"role": turn.role, "content": turn.text})
    return messages, dialogue.tools


@pytest.fixture(scope="module")
def lf_encoded(lf_env, lf_base_model, synth_paths, tmp_path_factory) -> dict[str, Any]:
    from slca.data.convert import convert_file

    data_dir = tmp_path_factory.mktemp("lf_data")
    report = convert_file(synth_paths.sft, data_dir / "slca_sft.jsonl", dataset_name="slca_sft")
    out_path = data_dir / "encoded.json"
    proc = subprocess.run([str(lf_env / "bin" / "python"), str(HERE / "lf_encode.py"), str(lf_base_model), str(data_dir), "slca_sft", "qwen", str(out_path)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    out = json.loads(out_path.read_text())
    assert len(out["rows"]) == report.rows_out
    return out


def test_every_synthetic_conversation_renders_to_the_ids_llamafactory_trained_on(lf_encoded, lf_base_model, synth_rows):
    from transformers import AutoTokenizer

    from slca.rollout.chat import ChatFormat

    tokenizer = AutoTokenizer.from_pretrained(lf_base_model)
    fmt = ChatFormat(tokenizer)
    parallel = multi_response = 0
    for row, pairs in zip(synth_rows, lf_encoded["rows"], strict=True):
        messages, tools = openai_messages(row)
        parallel += any(len(m.get("tool_calls", [])) > 1 for m in messages)
        multi_response += any(a["role"] == b["role"] == "tool" for a, b in zip(messages, messages[1:]))
        full = [i for prompt, response in pairs for i in prompt + response]
        rendered = tokenizer.apply_chat_template(messages, tools=tools, tokenize=False)
        assert tokenizer(rendered, add_special_tokens=False)["input_ids"] == full

        # Each point where the rollout asks the policy to speak: the prompt up to there, with the
        # generation prompt, is the prefix LLaMA-Factory trained the next response after.
        done: list[int] = []
        k = 0
        for cut, message in enumerate(messages):
            if message["role"] != "assistant":
                continue
            prompt_ids = tokenizer(fmt.render_prompt(messages[:cut], tools), add_special_tokens=False)["input_ids"]
            assert prompt_ids == done + pairs[k][0]
            done += pairs[k][0] + pairs[k][1]
            k += 1
        assert k == len(pairs)
    # the set exercises the layouts where templates usually disagree
    assert parallel and multi_response


def test_the_tool_round_insert_is_llamafactorys_turn_close_and_observation(lf_encoded, lf_base_model, synth_rows):
    from transformers import AutoTokenizer

    from slca.rollout.chat import ChatFormat

    tokenizer = AutoTokenizer.from_pretrained(lf_base_model)
    fmt = ChatFormat(tokenizer)
    checked = 0
    for row, pairs in zip(synth_rows, lf_encoded["rows"], strict=True):
        messages, _ = openai_messages(row)
        speaking = [i for i, m in enumerate(messages) if m["role"] == "assistant"]
        for k, at in enumerate(speaking[:-1]):
            if not messages[at].get("tool_calls"):
                continue
            responses = [m["content"] for m in messages[at + 1 : speaking[k + 1]]]
            response_ids = pairs[k][1]
            # the policy ends its turn (one block per parallel call, as LLaMA-Factory writes them) with
            # <|im_end|>; the environment supplies everything after it
            stop = len(response_ids) - response_ids[::-1].index(fmt.im_end_id)
            insert = tokenizer(fmt.env_text(responses), add_special_tokens=False)["input_ids"]
            assert insert == response_ids[stop:] + pairs[k + 1][0], k
            checked += 1
    assert checked > len(synth_rows)


def test_llamafactory_keeps_the_starting_models_template_and_stops_on_im_end(lf_encoded, lf_base_model):
    from slca.backends.llamafactory.template import qwen_tools_template

    assert lf_encoded["chat_template"] == qwen_tools_template()
    assert lf_encoded["eos"] == "<|im_end|>"
