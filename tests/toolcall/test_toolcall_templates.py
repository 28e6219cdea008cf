"""Chat rendering (native/context × keep/drop, built-in ChatML and a real HF tokenizer) and system prompts."""

from __future__ import annotations

import json

import pytest

from slca.toolcall import parse_hermes, strip_thinking
from slca.toolcall.prompts import (
    BFCL_SYSTEM_PROMPT,
    PROMPTS,
    PromptSpec,
    get_system_prompt,
    register_prompt,
    resolve_prompt,
    tools_for_template,
)
from slca.toolcall.segments import split_spans
from slca.toolcall.templates import HISTORY_HEADING, QUESTION_HEADING, format_tool_calls, prompt_messages, render, render_chatml
from tests.reference import SAMPLES as REFERENCE_SAMPLES

SAMPLES = REFERENCE_SAMPLES

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather for a city.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    },
    {"name": "add", "description": "Add two numbers.", "parameters": {"type": "object", "properties": {}}},
]
MESSAGES = [
    {"role": "system", "content": "Row system prompt."},
    {"role": "user", "content": "Weather in Paris?"},
    {
        "role": "assistant",
        "content": "",
        "reasoning": "REASONING-ONE",
        "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}],
    },
    {"role": "tool", "content": "TOOL-OUT-sunny"},
    {"role": "assistant", "content": "<think>REASONING-TWO</think>It is sunny in Paris."},
    {"role": "user", "content": "And in London?"},
]

# A Qwen-like chat template written for these tests (tools block in the system turn, hermes calls,
# consecutive tool results grouped into one user turn of <tool_response> blocks). Newlines are
# written as expressions because transformers renders with trim_blocks/lstrip_blocks.
NL = '{{ "\\n" }}'
TEST_TEMPLATE = (
    "{% if tools %}<|im_start|>system" + NL
    + "{% if messages[0].role == 'system' %}{{ messages[0].content }}" + NL + NL + "{% endif %}"
    + "# Tools" + NL + "<tools>{% for t in tools %}" + NL + "{{ t | tojson }}{% endfor %}" + NL
    + "</tools><|im_end|>" + NL
    + "{% elif messages[0].role == 'system' %}<|im_start|>system" + NL + "{{ messages[0].content }}<|im_end|>" + NL
    + "{% endif %}"
    + "{% for m in messages %}"
    + "{% if m.role == 'system' %}"
    + "{% elif m.role == 'tool' %}"
    + "{% if loop.first or loop.previtem.role != 'tool' %}<|im_start|>user{% endif %}"
    + NL + "<tool_response>" + NL + "{{ m.content }}" + NL + "</tool_response>"
    + "{% if loop.last or loop.nextitem.role != 'tool' %}<|im_end|>" + NL + "{% endif %}"
    + "{% elif m.role == 'assistant' %}<|im_start|>assistant" + NL + "{{ m.content }}"
    + "{% for c in m.tool_calls or [] %}" + NL + "<tool_call>" + NL
    + '{"name": "{{ c.function.name }}", "arguments": {{ c.function.arguments | tojson }}}' + NL + "</tool_call>"
    + "{% endfor %}<|im_end|>" + NL
    + "{% else %}<|im_start|>{{ m.role }}" + NL + "{{ m.content }}<|im_end|>" + NL
    + "{% endif %}"
    + "{% endfor %}"
    + "{% if add_generation_prompt %}<|im_start|>assistant" + NL + "{% endif %}"
)


@pytest.fixture(scope="module")
def tokenizer():
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    specials = ["<unk>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>", "<think>", "</think>"]
    trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=specials, show_progress=False)
    tok.train_from_iterator(["weather in paris and london is sunny", json.dumps(TOOLS)], trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, chat_template=TEST_TEMPLATE, eos_token="<|im_end|>", unk_token="<unk>"
    )


def turns(text: str) -> list[tuple[str, str]]:
    """(role, body) of each `<|im_start|>role\\n…<|im_end|>` turn; the open generation prompt last."""
    out = []
    for chunk in text.split("<|im_start|>")[1:]:
        role, _, body = chunk.partition("\n")
        out.append((role, body.split("<|im_end|>")[0]))
    return out


@pytest.fixture(params=["chatml", "hf"])
def tok(request, tokenizer):
    return None if request.param == "chatml" else tokenizer


# ----------------------------------------------------------------------------- native / context × keep / drop


@pytest.mark.parametrize("thinking", ["keep", "drop"])
def test_native_history_as_role_messages(tok, thinking):
    text = render(MESSAGES, TOOLS, tokenizer=tok, construction="native", thinking=thinking)
    roles = [r for r, _ in turns(text)]
    # system, user, assistant(call), user(tool results), assistant(answer), user, generation prompt
    assert roles == ["system", "user", "assistant", "user", "assistant", "user", "assistant"]
    assert text.endswith("<|im_start|>assistant\n")
    t = turns(text)
    assert "Row system prompt." in t[0][1] and "get_weather" in t[0][1] and '"add"' in t[0][1]
    assert t[3][1].strip() == "<tool_response>\nTOOL-OUT-sunny\n</tool_response>"
    # The assistant call is a hermes block the parser recovers.
    r = parse_hermes(t[2][1])
    assert [(c.name, c.arguments) for c in r.calls] == [("get_weather", {"city": "Paris"})]
    assert t[4][1].endswith("It is sunny in Paris.")
    if thinking == "keep":
        assert "<think>\nREASONING-ONE\n</think>" in t[2][1] and "<think>REASONING-TWO</think>" in t[4][1]
    else:
        assert "REASONING" not in text and "<think>" not in text


@pytest.mark.parametrize("thinking", ["keep", "drop"])
def test_context_history_in_one_user_turn(tok, thinking):
    text = render(MESSAGES, TOOLS, tokenizer=tok, construction="context", thinking=thinking)
    t = turns(text)
    assert [r for r, _ in t] == ["system", "user", "assistant"]
    user = t[1][1]
    assert user.startswith(HISTORY_HEADING) and user.endswith(f"{QUESTION_HEADING}\nAnd in London?")
    for piece in ["Weather in Paris?", "TOOL-OUT-sunny", "It is sunny in Paris.", '"name": "get_weather"']:
        assert piece in user
    assert user.index("Weather in Paris?") < user.index("get_weather") < user.index("TOOL-OUT") < user.index("sunny in Paris")
    assert ("REASONING-ONE" in user and "REASONING-TWO" in user) == (thinking == "keep")
    assert ("REASONING" in user) == (thinking == "keep")


def test_context_without_history_equals_native(tok):
    msgs = [{"role": "user", "content": "Hi"}]
    assert render(msgs, TOOLS, tokenizer=tok, construction="context") == render(msgs, TOOLS, tokenizer=tok)


def test_current_turn_steps_stay_role_messages_and_keep_reasoning(tok):
    msgs = MESSAGES + [
        {"role": "assistant", "content": "", "reasoning": "CURRENT-R", "tool_calls": [{"name": "get_weather", "arguments": {"city": "London"}}]},
        {"role": "tool", "content": "rainy"},
    ]
    for construction in ("native", "context"):
        text = render(msgs, TOOLS, tokenizer=tok, construction=construction, thinking="drop")
        t = turns(text)
        assert [r for r, _ in t][-3:] == ["assistant", "user", "assistant"]
        assert "CURRENT-R" in t[-3][1] and "REASONING" not in text
        assert "<tool_response>\nrainy\n</tool_response>" in t[-2][1]


def test_render_does_not_mutate_input():
    before = json.dumps(MESSAGES)
    render(MESSAGES, TOOLS, construction="context", thinking="drop", system_prompt="stronger")
    assert json.dumps(MESSAGES) == before


def test_invalid_modes_raise():
    with pytest.raises(ValueError):
        render(MESSAGES, TOOLS, construction="mixed")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        render(MESSAGES, TOOLS, thinking="maybe")  # type: ignore[arg-type]
    with pytest.raises(KeyError):
        render(MESSAGES, TOOLS, system_prompt="no_such_prompt")


# ----------------------------------------------------------------------------- system prompts


def test_bfcl_default_exact_text_and_quirks():
    docs_hint = " Note that the provided function is in Python 3 syntax."
    text = get_system_prompt("bfcl_default", TOOLS)
    assert text.startswith("You are an expert in composing functions. You are given a question and a set of possible functions.")
    assert "\nHere is a list of functions in JSON format that you can invoke.\n[{'name': 'get_weather'" in text
    assert text.endswith("}]\n\n")
    assert "'description': 'Current weather for a city." + docs_hint + "'" in text
    expected_docs = [dict(TOOLS[0]["function"]), dict(TOOLS[1])]
    for d in expected_docs:
        d["description"] += docs_hint
    assert text == BFCL_SYSTEM_PROMPT.format(functions=expected_docs)
    # A row's own system prompt is appended after a blank line.
    assert get_system_prompt("bfcl_default", TOOLS, dataset_prompt="Extra.") == text + "\n\nExtra."


def test_prompt_registry_entries(tmp_path):
    assert {"bfcl_default", "stronger", "none", "dataset"} <= set(PROMPTS)
    assert get_system_prompt("none", TOOLS, dataset_prompt="x") is None
    assert get_system_prompt("dataset", TOOLS, dataset_prompt="Row.") == "Row."
    assert get_system_prompt("dataset", TOOLS) is None
    stronger = get_system_prompt("stronger", TOOLS)
    assert all(f"\n{i}. " in stronger for i in range(1, 5)) and stronger.startswith("**Important Notes**")
    assert stronger.count("<tools>\n") == 1 and '"name": "get_weather"' in stronger and '"name": "add"' in stronger
    f = tmp_path / "p.txt"
    f.write_text("Use tools wisely {literal braces}.\n{tools}")
    out = get_system_prompt(str(f), TOOLS)
    assert out.startswith("Use tools wisely {literal braces}.\n") and '"name": "add"' in out
    with pytest.raises(ValueError):
        register_prompt(PromptSpec("none", lambda t, d: None, False))
    with pytest.raises(KeyError):
        resolve_prompt(str(tmp_path / "missing.txt"))


def test_every_tool_reaches_a_chat_template_in_the_openai_envelope_whatever_form_it_arrives_in():
    bare = TOOLS[1]
    expected = [TOOLS[0], {"type": "function", "function": bare}]
    assert tools_for_template(TOOLS) == tools_for_template([TOOLS[0], json.dumps(bare)]) == expected
    assert tools_for_template(expected) == expected and tools_for_template(None) == []
    # What the prompt protocol hands the template is that same form.
    assert prompt_messages(MESSAGES, TOOLS, system_prompt="none")[1] == expected


@pytest.mark.parametrize(
    "prompt,template_gets_tools,system_has",
    [
        ("bfcl_default", False, "You are an expert in composing functions."),
        ("stronger", False, "1. If a tool call completes the user's request"),
        ("none", True, None),
        ("dataset", True, "Row system prompt."),
    ],
)
def test_system_prompt_choice_and_tool_routing(tok, prompt, template_gets_tools, system_has):
    text = render(MESSAGES, TOOLS, tokenizer=tok, system_prompt=prompt)
    t = turns(text)
    system = t[0][1] if t[0][0] == "system" else ""
    # Tools reach the model exactly once: via the template's block or via the prompt text.
    template_block = "# Tools" if tok is not None else "Available functions (JSON schemas"
    if prompt == "stronger":
        assert system.count("<tools>\n") == 1 and "Available functions (JSON schemas" not in system
    else:
        assert (template_block in system) == template_gets_tools
    assert "get_weather" in system
    if system_has:
        assert system_has in system
    if prompt == "none":
        assert "Row system prompt." not in text
    if prompt == "bfcl_default":
        assert system.rstrip().endswith("Row system prompt.")


def test_dataset_prompt_showing_tools_is_not_duplicated(tok):
    path = SAMPLES / "toucan_toolcall_rl.preview.jsonl"
    row = json.loads(path.read_text().splitlines()[1])
    tools = json.loads(row["tools"])
    text = render(row["prompt"], tools, tokenizer=tok, system_prompt="dataset")
    name = tools[0]["function"]["name"] if "function" in tools[0] else tools[0]["name"]
    assert text.count(f'"name": "{name}", "description"') == 1
    assert row["prompt"][0]["content"] in text
    # Its earlier assistant tool call survives as a parseable hermes block.
    assert parse_hermes(text).n_valid >= 1


# ----------------------------------------------------------------------------- ChatML renderer and spans


def test_render_chatml_spans_feed_split_spans():
    text, spans = render_chatml(MESSAGES, TOOLS, return_spans=True)
    assistant = [(s, e) for s, e, r in spans if r == "assistant"]
    assert len(assistant) == 2
    for s, e in assistant:
        assert text[s:e].endswith("<|im_end|>") and text[:s].endswith("<|im_start|>assistant\n")
    tool_spans = [(s, e) for s, e, r in spans if r == "tool"]
    assert text[tool_spans[0][0] : tool_spans[0][1]] == "<tool_response>\nTOOL-OUT-sunny\n</tool_response>"
    process, summary = split_spans(spans)
    assert process == [assistant[0]] and summary == [assistant[1]]
    assert "It is sunny in Paris." in text[summary[0][0] : summary[0][1]]


def test_format_tool_calls_styles_roundtrip():
    calls = [{"name": "a", "arguments": {"x": 1}}, {"function": {"name": "b", "arguments": '{"y": 2}'}}]
    blocks = format_tool_calls(calls)
    single = format_tool_calls(calls, style="list")
    rb, rs = parse_hermes(blocks), parse_hermes(single)
    assert len(rb.blocks) == 2 and len(rs.blocks) == 1
    assert rb.calls == rs.calls and [(c.name, c.arguments) for c in rs.calls] == [("a", {"x": 1}), ("b", {"y": 2})]
    assert format_tool_calls([]) == ""


def test_strip_thinking_used_for_drop_is_consistent():
    msgs = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "<think>a</think>\nanswer"}, {"role": "user", "content": "q2"}]
    text = render(msgs, None, thinking="drop")
    assert "answer" in text and "<think>" not in text and strip_thinking(text) == text


def test_sft_sample_rows_segment_via_spans():
    """SFT preview rows → messages → ChatML with spans → summary is the final assistant answer."""
    import ast

    path = SAMPLES / "toucan_toolcall_sft.preview.jsonl"
    for line in path.read_text().splitlines():
        row = json.loads(line)
        msgs = []
        for m in json.loads(row["messages"]):
            if m["role"] == "tool_call":
                call = ast.literal_eval(m["content"])  # a Python-repr dict (docs/method.md#reference-quirks Q3); data, not code
                msgs.append({"role": "assistant", "content": "", "tool_calls": [call]})
            elif m["role"] == "tool_response":
                msgs.append({"role": "tool", "content": m["content"]})
            else:
                msgs.append({"role": m["role"], "content": m["content"]})
        text, spans = render_chatml(msgs, json.loads(row["tools"]), add_generation_prompt=False, return_spans=True)
        process, summary = split_spans(spans)
        n_assistant = sum(m["role"] == "assistant" for m in msgs)
        assert len(process) + len(summary) == n_assistant
        last = msgs[-1] if msgs[-1]["role"] == "assistant" else None
        if last is not None and not last.get("tool_calls"):
            assert text[summary[0][0] : summary[0][1]] == last["content"] + "<|im_end|>"
        # Every tool call rendered into the process spans parses back.
        calls = [c for s, e in process for c in parse_hermes(text[s:e]).calls]
        assert len(calls) == sum(len(m.get("tool_calls") or []) for m in msgs) - (
            len((last or {}).get("tool_calls") or [])
        )


@pytest.mark.parametrize("construction", ["native", "context"])
@pytest.mark.parametrize("thinking", ["keep", "drop"])
def test_rl_sample_rows_render_in_every_mode(tok, construction, thinking):
    path = SAMPLES / "toucan_toolcall_rl.preview.jsonl"
    for line in path.read_text().splitlines():
        row = json.loads(line)
        text = render(row["prompt"], json.loads(row["tools"]), tokenizer=tok, construction=construction, thinking=thinking)
        question = row["reward_model"]["ground_truth"]["question_content"]
        assert text.endswith("<|im_start|>assistant\n") and question in text
        if construction == "context":
            assert [r for r, _ in turns(text)] == ["system", "user", "assistant"]


def test_import_is_cheap_and_lazy_names_resolve():
    import subprocess
    import sys

    code = (
        "import sys, slca.toolcall as t\n"
        "assert 'torch' not in sys.modules and 'transformers' not in sys.modules, 'heavy import'\n"
        "assert callable(t.render) and callable(t.split_segments) and callable(t.get_system_prompt)\n"
        "try:\n    t.no_such_name\nexcept AttributeError:\n    pass\nelse:\n    raise SystemExit('no AttributeError')\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
