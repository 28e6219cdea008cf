"""The `vllm` generator on a GPU: the same interface contract as `hf` (runs only where CUDA and vllm exist)."""

from __future__ import annotations

import pytest

from slca.rollout import VLLMGenerator, get_generator

pytestmark = pytest.mark.gpu


def _build(tmp_path, corpus):
    from slca.models.tiny import init_model, train_tokenizer
    from slca.config.groups.backbone import TinyBackbone

    # head_dim 64: a size every vLLM attention backend supports
    cfg = TinyBackbone(hidden_size=128, num_layers=2, num_heads=2, num_kv_heads=1, intermediate_size=256,
                       vocab_size=400, max_position_embeddings=1024)
    tok = train_tokenizer(corpus, cfg)
    init_model(cfg, tok).save_pretrained(tmp_path)
    tok.save_pretrained(tmp_path)
    return tok


def test_vllm_generator_contract(tmp_path, corpus):
    pytest.importorskip("vllm")
    tok = _build(tmp_path, corpus)
    gen = get_generator("vllm")(model=str(tmp_path), logprobs=True, dtype="float32", enforce_eager=True,
                                gpu_memory_utilization=0.2, max_model_len=1024, seed=0)
    assert isinstance(gen, VLLMGenerator)
    prompts = [tok.encode(t, add_special_tokens=False) for t in ("What is the weather?", "<|im_start|>user\nHi", "a")]
    free = gen.generate(prompts, max_new_tokens=[12, 7, 0], temperature=0, top_p=1.0, stop_token_ids=set(), seed=0)
    assert [len(o.token_ids) for o in free] == [12, 7, 0] and all(o.finish_reason == "length" for o in free)
    assert len(free[0].logprobs) == 12
    stop = {free[0].token_ids[3]}
    outs = gen.generate(prompts, max_new_tokens=12, temperature=0, top_p=1.0, stop_token_ids=stop, seed=0)
    first = next(j for j, t in enumerate(free[0].token_ids) if t in stop)
    assert outs[0].finish_reason == "stop" and outs[0].token_ids == free[0].token_ids[: first + 1]
    kw = dict(max_new_tokens=16, temperature=1.0, top_p=0.9, stop_token_ids=set())
    a = gen.generate(prompts[:2] * 2, seed=5, **kw)
    b = gen.generate(prompts[:2] * 2, seed=5, **kw)
    assert [o.token_ids for o in a] == [o.token_ids for o in b]
