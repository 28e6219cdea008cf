"""The smollm2-135m-instruct backbone: SmolLM2-135M-Instruct's GGUF (fetched by `make real-models`)
converted once into a safetensors checkpoint, resolved offline through slca.models.

Oracles: the `gguf` package's own reader and dequantiser (the tensors and metadata as stored), and
transformers' GGUF loader (the model it builds straight from the file). The conversion is built into
the repository's backbone cache, as a run would build it, so a session pays for it once per machine.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from slca.config.compose import compose_spec
from slca.models.backbones import backbone_dir, template_family
from slca.models.gguf import OWN_TEMPLATE_FILE
from slca.models.real_files import verified_file

REPO = Path(__file__).resolve().parents[2]
OPTION = "smollm2-135m-instruct"
WEATHER = {"type": "function", "function": {"name": "get_weather", "description": "Current weather of a city.",
           "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}
CALLING = [
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "content": "", "tool_calls": [{"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]},
    {"role": "tool", "content": "sunny"},
]


def no_sft_rows() -> list:
    raise AssertionError("a converted GGUF backbone reads no SFT rows")


def _cfg(*overrides: str):
    return compose_spec([f"backbone={OPTION}", f"backbone.cache_dir={REPO / '.cache/slca/backbones'}", *overrides]).backbone


@pytest.fixture(scope="module")
def converted() -> Path:
    return Path(backbone_dir(_cfg("backbone.chat_template=own"), no_sft_rows))


@pytest.fixture(scope="module")
def gguf_path() -> Path:
    return verified_file(_cfg().gguf)


@pytest.fixture(scope="module")
def reader(gguf_path):
    """The `gguf` package's reader of the fetched file (parsing its 49k-token vocabulary takes seconds)."""
    import gguf

    return gguf.GGUFReader(gguf_path)


def _metadata(reader, key: str):
    field = reader.fields[key]
    return field.parts[field.data[0]]


# GGUF (llama.cpp) tensor names → transformers' Llama names, per layer and global.
LAYER_NAMES = {"attn_q": "self_attn.q_proj", "attn_k": "self_attn.k_proj", "attn_v": "self_attn.v_proj", "attn_output": "self_attn.o_proj",
               "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj", "ffn_down": "mlp.down_proj", "attn_norm": "input_layernorm",
               "ffn_norm": "post_attention_layernorm"}
GLOBAL_NAMES = {"token_embd.weight": "model.embed_tokens.weight", "output_norm.weight": "model.norm.weight"}


def test_the_option_is_a_converted_gguf_with_slcas_template_and_no_llamafactory_twin():
    cfg = _cfg()
    assert (cfg.kind, cfg.name, cfg.chat_template) == ("gguf", OPTION, "slca")
    assert template_family(cfg) is None


@pytest.mark.slow  # reads and dequantises the whole GGUF
def test_every_converted_weight_equals_the_gguf_packages_own_dequantisation_of_the_stored_tensor(converted, reader):
    import gguf
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(converted, local_files_only=True, use_safetensors=True)
    mine = model.state_dict()
    config = model.config
    # llama.cpp stores q/k rows permuted for its RoPE layout (each head's halves interleaved); undone by hand.
    heads = {"attn_q": config.num_attention_heads, "attn_k": config.num_key_value_heads}
    seen = set()
    for tensor in reader.tensors:
        stored = torch.from_numpy(gguf.dequantize(tensor.data, tensor.tensor_type).copy())
        if tensor.name in GLOBAL_NAMES:
            name = GLOBAL_NAMES[tensor.name]
        else:
            _, layer, kind, suffix = tensor.name.split(".")
            name = f"model.layers.{layer}.{LAYER_NAMES[kind]}.{suffix}"
            if kind in heads:
                rows, cols = stored.shape
                stored = stored.reshape(heads[kind], rows // heads[kind] // 2, 2, cols).transpose(1, 2).reshape(rows, cols)
        assert mine[name].dtype == torch.float32 and torch.equal(mine[name], stored), name
        seen.add(name)
    # Every weight came from the file; the output head is the embedding (SmolLM2 ties them, the GGUF has no output.weight).
    assert seen == set(mine) - {"lm_head.weight"}
    assert config.tie_word_embeddings and model.lm_head.weight.data_ptr() == model.model.embed_tokens.weight.data_ptr()
    assert sum(p.numel() for p in model.parameters()) == 134_515_008


@pytest.mark.slow  # loads the 135M-parameter model
def test_the_tokenizer_and_smollm2s_chatml_template_come_from_the_gguf_metadata(converted, reader):
    from transformers import AutoTokenizer

    metadata_template = bytes(_metadata(reader, "tokenizer.chat_template")).decode("utf-8")
    metadata_eos = int(_metadata(reader, "tokenizer.ggml.eos_token_id")[0])
    tokenizer = AutoTokenizer.from_pretrained(converted, local_files_only=True)
    assert tokenizer.chat_template == metadata_template == (converted / OWN_TEMPLATE_FILE).read_text(encoding="utf-8")
    text = tokenizer.apply_chat_template([{"role": "user", "content": "Hi"}], tokenize=False, add_generation_prompt=True)
    assert text.endswith("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n")
    assert text.startswith("<|im_start|>system\n")  # SmolLM2's default system turn
    for marker in ("<|im_start|>", "<|im_end|>"):
        assert len(tokenizer.encode(marker, add_special_tokens=False)) == 1
    sample = 'Zürich {"city": "Paris"} <tool_call>\n'
    assert tokenizer.decode(tokenizer.encode(sample, add_special_tokens=False)) == sample
    # The turn end the metadata names, not the <|im_start|> transformers' GGUF tokenizer reads; padding is another token.
    assert tokenizer.eos_token_id == metadata_eos and tokenizer.eos_token == "<|im_end|>"
    assert tokenizer.pad_token == "<|endoftext|>"
    assert tokenizer.clean_up_tokenization_spaces is False  # decode gives the text verbatim, spaces before punctuation kept


@pytest.mark.slow  # needs the converted backbone
def test_the_prompt_token_bound_holds_on_smollm2s_tokenizer(converted):
    from transformers import AutoTokenizer

    from slca.rollout.token_bound import utf8_bytes
    from tests.models.bound_checks import assert_bounds

    assert_bounds(AutoTokenizer.from_pretrained(converted, local_files_only=True), utf8_bytes)  # byte level, no normaliser


@pytest.mark.slow  # loads the 135M-parameter model
def test_smollm2s_own_template_drops_tools_and_tool_calls_which_slcas_template_renders(converted):
    from transformers import AutoTokenizer

    own = AutoTokenizer.from_pretrained(converted, local_files_only=True)
    slca = AutoTokenizer.from_pretrained(backbone_dir(_cfg(), no_sft_rows), local_files_only=True)
    own_text = own.apply_chat_template(CALLING, tools=[WEATHER], tokenize=False, add_generation_prompt=True)
    slca_text = slca.apply_chat_template(CALLING, tools=[WEATHER], tokenize=False, add_generation_prompt=True)
    assert "get_weather" not in own_text and "<tool_call>" not in own_text
    assert "<|im_start|>assistant\n<|im_end|>" in own_text  # the calling turn renders empty
    assert '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>' in slca_text
    assert "<tool_response>\nsunny\n</tool_response>" in slca_text


@pytest.mark.slow  # loads the 135M-parameter model
def test_the_backbone_resolves_offline_and_answers_a_question_greedily():
    import torch

    from slca.models.load import load_backbone

    model, tokenizer = load_backbone(backbone_dir(_cfg(), no_sft_rows))
    prompt = tokenizer.apply_chat_template([{"role": "user", "content": "What is the capital of France?"}], tokenize=False,
                                           add_generation_prompt=True)
    ids = tokenizer(prompt, return_tensors="pt", add_special_tokens=False).input_ids
    with torch.no_grad():
        out = model.generate(ids, max_new_tokens=12, do_sample=False)[0, ids.shape[1]:]
    assert "Paris" in tokenizer.decode(out, skip_special_tokens=True)


def test_a_gguf_that_is_not_pinned_refuses_the_run_in_one_line_naming_it(tmp_path):
    from slca.runcontext import RunError

    cfg = _cfg("backbone.gguf=smollm2-135m-instruct/other.gguf", f"backbone.cache_dir={tmp_path}")
    with pytest.raises(RunError) as err:
        backbone_dir(cfg, no_sft_rows)
    message = str(err.value)
    assert "\n" not in message and "smollm2-135m-instruct/other.gguf" in message and "real_models.sha256" in message
    assert not any(tmp_path.iterdir())


def test_a_gguf_path_outside_the_real_models_cache_fails_at_composition_naming_the_field():
    from slca.config.errors import SpecError

    for bad in ("../elsewhere.gguf", "/tmp/model.gguf", "smollm2-135m-instruct/model.bin"):
        with pytest.raises(SpecError, match="backbone.gguf"):
            _cfg(f"backbone.gguf={bad}")
