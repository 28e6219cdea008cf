"""Tiny backbone: determinism, caching, tokenizer round trip and special tokens, the chat template."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from slca.models.chat_template import render, template_source
from slca.models.tiny import MARKUP_TOKENS, SPECIAL_TOKENS, backbone_key, build_tiny_backbone, corpus_fingerprint
from slca.toolcall.prompts import split_system_tools

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "weather-get",
            "description": "Current weather.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                "required": ["city"],
            },
        },
    },
    {"name": "calc-add", "parameters": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]}},
]

CONVERSATION = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Weather in Oslo and Rome?"},
    {
        "role": "assistant",
        "content": "",
        "reasoning": "two cities",
        "tool_calls": [
            {"type": "function", "function": {"name": "weather-get", "arguments": {"city": "Oslo"}}},
            {"name": "weather-get", "arguments": '{"city": "Rome"}'},
        ],
    },
    {"role": "tool", "content": '{"t": 3}'},
    {"role": "tool", "content": '{"t": 19}'},
    {"role": "assistant", "content": "Adding.", "tool_calls": [{"name": "calc-add", "arguments": {"a": 3, "b": 19}}]},
    {"role": "tool", "content": "22"},
    {"role": "assistant", "content": "Oslo 3, Rome 19, sum 22."},
]

TURNS = (
    "<|im_start|>user\nWeather in Oslo and Rome?<|im_end|>\n"
    "<|im_start|>assistant\n<think>\ntwo cities\n</think>\n\n<tool_call>\n"
    '[{"name": "weather-get", "arguments": {"city": "Oslo"}}, {"name": "weather-get", "arguments": {"city": "Rome"}}]'
    "\n</tool_call><|im_end|>\n"
    '<|im_start|>user\n<tool_response>\n{"t": 3}\n</tool_response>\n<tool_response>\n{"t": 19}\n</tool_response><|im_end|>\n'
    '<|im_start|>assistant\nAdding.\n<tool_call>\n{"name": "calc-add", "arguments": {"a": 3, "b": 19}}\n</tool_call><|im_end|>\n'
    "<|im_start|>user\n<tool_response>\n22\n</tool_response><|im_end|>\n"
    "<|im_start|>assistant\nOslo 3, Rome 19, sum 22.<|im_end|>\n"
)


def test_compact_template_renders_a_tool_call_conversation():
    text = render(CONVERSATION, TOOLS, template=template_source("compact"))
    system = (
        "<|im_start|>system\nBe brief.\n\n# Tools\n"
        "weather-get(city: string, days?: integer)\ncalc-add(a: number, b: number)<|im_end|>\n"
    )
    assert text == system + TURNS


def test_qwen_template_renders_json_schemas():
    text = render(CONVERSATION, TOOLS, template=template_source("qwen"))
    assert text.endswith(TURNS)
    system = text[: -len(TURNS)]
    assert system.startswith("<|im_start|>system\nBe brief.\n\n# Tools\n")
    inner = system.split("<tools>\n", 1)[1].split("\n</tools>", 1)[0]
    assert [json.loads(line) for line in inner.splitlines()] == TOOLS
    # The per-call override beats the template's built-in default.
    assert render(CONVERSATION, TOOLS, template=template_source("compact"), tools_block="qwen") == text


def test_template_generation_prompt_thinking_history_and_no_tools():
    tpl = template_source("compact")
    assert render(CONVERSATION[1:2], None, template=tpl, add_generation_prompt=True) == (
        "<|im_start|>user\nWeather in Oslo and Rome?<|im_end|>\n<|im_start|>assistant\n"
    )
    assert render(CONVERSATION[1:2], None, template=tpl, add_generation_prompt=True, enable_thinking=False).endswith(
        "<|im_start|>assistant\n<think>\n\n</think>\n\n"
    )
    # Like Qwen3: reasoning of turns before the last user turn is dropped unless asked for.
    later = CONVERSATION + [{"role": "user", "content": "Thanks"}]
    assert "<think>" not in render(later, TOOLS, template=tpl)
    assert "<think>\ntwo cities" in render(later, TOOLS, template=tpl, keep_all_thinking=True)


def test_template_calls_match_the_data_markup():
    from slca.data import hermes

    calls = [{"name": "weather-get", "arguments": {"city": "Ünïcode"}}, {"name": "calc-add", "arguments": {"a": 1, "b": 2}}]
    for step in (calls[:1], calls):
        text = render([{"role": "assistant", "content": "", "tool_calls": step}], None, template=template_source("compact"))
        assert text == f"<|im_start|>assistant\n{hermes.render_calls(step)}<|im_end|>\n"
    resp = render([{"role": "tool", "content": "a"}, {"role": "tool", "content": "b"}], None, template=template_source("compact"))
    assert resp == f"<|im_start|>user\n{hermes.render_responses(['a', 'b'])}<|im_end|>\n"
    # Structured tool output is serialised; an assistant turn with content None renders only its calls.
    mixed = [{"role": "tool", "content": {"t": 3}}, {"role": "assistant", "content": None, "tool_calls": calls[:1]}]
    assert render(mixed, None, template=template_source("compact")) == (
        "<|im_start|>user\n" + hermes.render_responses(['{"t": 3}']) + "<|im_end|>\n"
        f"<|im_start|>assistant\n{hermes.render_calls(calls[:1])}<|im_end|>\n"
    )


def test_split_system_tools_removes_the_hermes_block():
    from slca.data import hermes

    base, tools = split_system_tools(hermes.reference_system(TOOLS))
    assert tools == [hermes.envelope(t) for t in TOOLS]
    assert base == "You have access to the following tools:\n\nUse them when appropriate to help answer the user's questions."
    assert split_system_tools(hermes.tools_block(TOOLS))[0] is None
    with pytest.raises(ValueError):
        split_system_tools("no tools here")


def test_special_tokens_are_single_ids_and_roundtrip(tiny, corpus):
    model, tok = tiny
    ids = {t: tok.encode(t, add_special_tokens=False) for t in SPECIAL_TOKENS + MARKUP_TOKENS}
    assert all(len(v) == 1 for v in ids.values()), ids
    assert len({v[0] for v in ids.values()}) == len(ids)
    assert tok.eos_token == "<|im_end|>" and tok.pad_token == "<|endoftext|>"
    assert model.config.eos_token_id == tok.eos_token_id
    assert len(tok) == model.config.vocab_size
    for text in corpus + ["naïve 😀 text\t with  spaces \n\n and 12345 ‑ dashes", " leading space", "<think>x</think>"]:
        assert tok.decode(tok.encode(text, add_special_tokens=False)) == text
    # Control tokens vanish when skipping specials; markup tokens stay (the parsers need them).
    s = '<tool_call>\n{"name": "a"}\n</tool_call><|im_end|>'
    assert tok.decode(tok.encode(s, add_special_tokens=False), skip_special_tokens=True) == s.replace("<|im_end|>", "")


def test_loaded_through_the_hub_code_path(tiny_path, tiny_cfg):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    assert (tiny_path / "model.safetensors").is_file()
    assert not list(tiny_path.glob("*.bin"))
    model = AutoModelForCausalLM.from_pretrained(tiny_path, local_files_only=True)
    tok = AutoTokenizer.from_pretrained(tiny_path, local_files_only=True)
    assert type(model).__name__ == "Qwen3ForCausalLM"
    c = model.config
    assert (c.hidden_size, c.num_hidden_layers, c.num_attention_heads, c.num_key_value_heads, c.intermediate_size) == (
        tiny_cfg.hidden_size, tiny_cfg.num_layers, tiny_cfg.num_heads, tiny_cfg.num_kv_heads, tiny_cfg.intermediate_size,
    )
    assert c.tie_word_embeddings and model.get_output_embeddings().weight is model.get_input_embeddings().weight
    assert len(tok) <= tiny_cfg.vocab_size
    # The saved template is ours with the configured default, usable through apply_chat_template.
    assert tok.apply_chat_template(CONVERSATION, tools=TOOLS, tokenize=False) == render(
        CONVERSATION, TOOLS, template=template_source(tiny_cfg.tools_block)
    )


def test_build_is_deterministic_and_cached(tiny_cfg, tiny_path, corpus, tmp_path):
    from safetensors.torch import load_file

    again = build_tiny_backbone(tiny_cfg.model_copy(update={"cache_dir": str(tmp_path / "a")}), corpus)
    assert again.name == tiny_path.name
    assert (again / "tokenizer.json").read_text() == (tiny_path / "tokenizer.json").read_text()
    w1, w2 = load_file(tiny_path / "model.safetensors"), load_file(again / "model.safetensors")
    assert w1.keys() == w2.keys() and all((w1[k] == w2[k]).all() for k in w1)
    # A cache hit returns the existing build without touching it.
    stamp = (tiny_path / "model.safetensors").stat().st_mtime_ns
    assert build_tiny_backbone(tiny_cfg, corpus) == tiny_path
    assert (tiny_path / "model.safetensors").stat().st_mtime_ns == stamp
    assert not [p for p in tiny_path.parent.iterdir() if p.name.endswith(".tmp")]
    # Another seed changes the weights (and the cache key), the corpus changes the key.
    other = build_tiny_backbone(tiny_cfg.model_copy(update={"cache_dir": str(tmp_path / "b"), "seed": 1}), corpus)
    assert other.name != tiny_path.name
    w3 = load_file(other / "model.safetensors")
    assert not all((w1[k] == w3[k]).all() for k in w1)
    assert backbone_key(tiny_cfg, corpus_fingerprint(corpus[:-1])) != tiny_path.name


def test_build_is_identical_in_another_process(tiny_cfg, tiny_path, corpus, tmp_path):
    import subprocess
    import sys

    (tmp_path / "corpus.json").write_text(json.dumps(corpus))
    cfg = tiny_cfg.model_copy(update={"cache_dir": str(tmp_path / "c")})
    code = (
        "import json, sys\n"
        "from slca.models.tiny import build_tiny_backbone\n"
        "from slca.config.groups.backbone import TinyBackbone\n"
        "cfg = TinyBackbone.model_validate_json(sys.argv[1])\n"
        "print(build_tiny_backbone(cfg, json.load(open(sys.argv[2]))))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, cfg.model_dump_json(), str(tmp_path / "corpus.json")],
        capture_output=True, text=True, check=True,
    )
    built = Path(out.stdout.strip().splitlines()[-1])
    assert built.name == tiny_path.name
    for f in ("tokenizer.json", "model.safetensors", "config.json"):
        assert (built / f).read_bytes() == (tiny_path / f).read_bytes(), f


@pytest.mark.parametrize(("hidden", "heads", "kv_heads", "tied"), [(32, 4, 2, True), (48, 6, 1, False), (64, 2, 2, True)])
def test_the_config_parameter_cap_counts_what_init_model_builds(hidden, heads, kv_heads, tied):
    """Oracle for backbone's MAX_TINY_PARAMETERS rule: the count composition checks equals the built model's."""
    from slca.models.tiny import init_model
    from slca.config.groups.backbone import TinyBackbone, tiny_parameter_count

    cfg = TinyBackbone(hidden_size=hidden, num_heads=heads, num_kv_heads=kv_heads, intermediate_size=40, num_layers=2,
                       vocab_size=300, tie_embeddings=tied, max_position_embeddings=64)

    class FullVocabulary:  # the built tokenizer has at most vocab_size tokens; the count takes the most
        def __len__(self) -> int:
            return cfg.vocab_size

        def convert_tokens_to_ids(self, token: str) -> int:
            return 0

    model = init_model(cfg, FullVocabulary())
    assert sum(p.numel() for p in model.parameters()) == tiny_parameter_count(cfg)
