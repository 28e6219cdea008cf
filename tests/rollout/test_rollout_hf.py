"""The `hf` generator and the loop end to end with a real (random) tiny Qwen3 model and tokenizer."""

from __future__ import annotations

import copy
import json

import pytest
import torch

from slca.rollout import GENERATORS, HFGenerator, RolloutConfig, collate, get_generator, register_generator
from slca.rollout import response_logprobs, run_rollouts
from slca.rollout.generators import sample_next


def greedy_reference(model, prompt, steps):
    """Greedy continuation by full re-encoding each step (no cache, no padding)."""
    ids = list(prompt)
    with torch.no_grad():
        for _ in range(steps):
            ids.append(int(model(torch.tensor([ids])).logits[0, -1].argmax()))
    return ids[len(prompt):]


@pytest.fixture(scope="module")
def prompts(tiny):
    _, tok = tiny
    texts = ["What is the weather in Paris?", "<|im_start|>user\nHi", "Oslo", "a b c d e f g h i j k"]
    return [tok.encode(t, add_special_tokens=False) for t in texts]


def test_registry():
    assert get_generator("hf") is HFGenerator and {"hf", "vllm", "openai"} <= set(GENERATORS)
    with pytest.raises(ValueError, match="already registered"):
        register_generator("hf")(object)
    with pytest.raises(KeyError, match="unknown generator"):
        get_generator("nope")


def test_greedy_matches_uncached_reference_with_left_padding(tiny, prompts):
    model, tok = tiny
    outs = HFGenerator(model, pad_token_id=tok.pad_token_id).generate(
        prompts, max_new_tokens=[12, 7, 0, 9], temperature=0, top_p=1.0, stop_token_ids=set(), seed=0)
    for p, o, cap in zip(prompts, outs, [12, 7, 0, 9]):
        assert o.finish_reason == "length" and len(o.token_ids) == cap
        assert o.token_ids == greedy_reference(model, p, cap)
        assert len(o.logprobs) == cap and all(lp <= 0 for lp in o.logprobs)
    # repeated prompts share one prefill; every copy still continues correctly
    dup = HFGenerator(model, pad_token_id=tok.pad_token_id).generate(
        [prompts[1], prompts[0], prompts[1], prompts[0]], max_new_tokens=[5, 12, 9, 3], temperature=0, top_p=1.0,
        stop_token_ids=set(), seed=0)
    assert [o.token_ids for o in dup] == [outs[1].token_ids[:5], outs[0].token_ids, greedy_reference(model, prompts[1], 9),
                                          outs[0].token_ids[:3]]


def test_stops_per_sequence_at_first_stop_token_and_keeps_it(tiny, prompts):
    model, tok = tiny
    free = HFGenerator(model, pad_token_id=tok.pad_token_id).generate(
        prompts, max_new_tokens=20, temperature=0, top_p=1.0, stop_token_ids=set(), seed=0)
    # stop on the 4th greedy token of prompt 0 and the 2nd of prompt 3; the others never meet a stop id
    stop = {free[0].token_ids[3], free[3].token_ids[1]}
    outs = HFGenerator(model, pad_token_id=tok.pad_token_id).generate(
        prompts, max_new_tokens=20, temperature=0, top_p=1.0, stop_token_ids=stop, seed=0)
    for f, o in zip(free, outs):
        first = next((j for j, t in enumerate(f.token_ids) if t in stop), None)
        if first is None:
            assert o.finish_reason == "length" and o.token_ids == f.token_ids
        else:
            assert o.finish_reason == "stop" and o.token_ids == f.token_ids[: first + 1]
            assert o.token_ids[-1] in stop
    assert outs[0].finish_reason == "stop" and len(outs[0].token_ids) <= 4


def test_sampling_deterministic_for_a_seed_and_chunking(tiny, prompts):
    model, tok = tiny
    kw = dict(max_new_tokens=15, temperature=1.0, top_p=0.95, stop_token_ids={tok.eos_token_id})
    gen = HFGenerator(model, pad_token_id=tok.pad_token_id)
    a = gen.generate(prompts * 2, seed=7, **kw)
    b = gen.generate(prompts * 2, seed=7, **kw)
    c = gen.generate(prompts * 2, seed=8, **kw)
    assert [o.token_ids for o in a] == [o.token_ids for o in b]
    assert [o.token_ids for o in a] != [o.token_ids for o in c]
    greedy = dict(max_new_tokens=10, temperature=0, top_p=1.0, stop_token_ids=set(), seed=0)
    whole = gen.generate(prompts, **greedy)
    model.train()  # generation runs in eval mode and gives the caller's mode back
    try:
        chunked = HFGenerator(model, pad_token_id=tok.pad_token_id, max_batch_size=3).generate(prompts, **greedy)
        assert model.training is True
    finally:
        model.eval()
    assert [o.token_ids for o in whole] == [o.token_ids for o in chunked]


def test_sample_next_top_p_and_greedy():
    logits = torch.tensor([[0.0, 5.0, 1.0, 0.5]] * 64)
    g = torch.Generator().manual_seed(0)
    tok, lp = sample_next(logits, temperature=1.0, top_p=0.5, generator=g)
    assert tok.tolist() == [1] * 64  # token 1 alone holds > 50% of the mass
    assert torch.allclose(lp, torch.log_softmax(logits, -1)[:, 1])
    tok, _ = sample_next(logits, temperature=0, top_p=1.0, generator=g)
    assert tok.tolist() == [1] * 64
    tok, _ = sample_next(logits, temperature=10.0, top_p=1.0, generator=g)
    assert len(set(tok.tolist())) > 1  # a flat distribution is really sampled


def test_sampled_tokens_follow_the_tempered_distribution_and_report_its_log_probs():
    logits = torch.tensor([[1.0, 0.0, -0.5, 2.0]] * 4000)
    temperature = 0.7
    expected = torch.softmax(logits[0] / temperature, -1)
    tokens, logprobs = sample_next(logits, temperature=temperature, top_p=1.0, generator=torch.Generator().manual_seed(0))
    assert torch.allclose(logprobs, torch.log(expected[tokens]), atol=1e-5)
    assert torch.allclose(torch.bincount(tokens, minlength=4) / len(tokens), expected, atol=0.03)


def test_end_to_end_real_model(tiny, schema_sim, row_factory):
    """Real tokenizer, random model, hf generator, schema simulator: invariants of every trajectory."""
    model, tok = tiny
    # make </tool_call> likely so some turns end in a tool round (tied embeddings: scale its row)
    close_id = tok.convert_tokens_to_ids("</tool_call>")
    emb = model.get_input_embeddings().weight
    saved = emb.data[close_id].clone()
    emb.data[close_id] *= 6.0
    try:
        rows = [row_factory("weather in Paris?"), row_factory("time in Oslo?")]
        cfg = RolloutConfig(max_prompt_length=512, max_response_length=96, max_assistant_turns=3, max_tool_rounds=2,
                            temperature=1.0, top_p=1.0)
        gen = HFGenerator(model, pad_token_id=tok.pad_token_id)
        batch = run_rollouts(rows, n=4, generator=gen, simulator=schema_sim, tokenizer=tok, cfg=cfg, seed=3)
        again = run_rollouts(rows, n=4, generator=gen, simulator=schema_sim, tokenizer=tok, cfg=cfg, seed=3)
        other = run_rollouts(rows, n=4, generator=gen, simulator=schema_sim, tokenizer=tok, cfg=cfg, seed=4)
    finally:
        emb.data[close_id] = saved
    assert [t.response_ids for t in batch] == [t.response_ids for t in again]
    assert [t.response_ids for t in batch] != [t.response_ids for t in other]
    assert len(batch) == 8 and [t.row_index for t in batch] == [0] * 4 + [1] * 4
    reasons = set()
    for t in batch:
        reasons.add(t.finish_reason)
        assert len(t.response_ids) == len(t.response_mask) <= 96
        assert t.response_text == tok.decode(t.response_ids, skip_special_tokens=False)
        # spans tile the response; mask is 1 exactly on assistant spans
        assert t.spans[0].start == 0 and t.spans[-1].end == t.response_length
        for s, nxt in zip(t.spans, t.spans[1:]):
            assert s.end == nxt.start
        for s in t.spans:
            assert set(t.response_mask[s.start : s.end]) <= ({0} if s.kind == "env" else {1})
        assert t.n_assistant_turns == sum(s.kind != "env" for s in t.spans)
        assert t.n_tool_rounds == sum(s.kind == "env" for s in t.spans)
    # the biased model ends turns at </tool_call> (unparsed: a random model writes no JSON) or runs out
    assert reasons <= {"final", "unparsed_call", "max_response_length", "observation_overflow"}
    assert sum(batch.stats.finish_reasons.values()) == 8 and batch.stats.generator_calls >= 1


def test_collate_and_response_logprobs(tiny, scripted, schema_sim, row_factory):
    model, tok = tiny
    script = {"TAG-A": ['<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
                        "Sunny.<|im_end|>"], "TAG-B": ["No tools needed here.<|im_end|>"]}
    rows = [row_factory("TAG-A Paris"), row_factory("TAG-B a much longer question about nothing at all")]
    cfg = RolloutConfig(max_prompt_length=512, max_response_length=300)
    batch = run_rollouts(rows, n=2, generator=scripted(tok, script), simulator=schema_sim, tokenizer=tok, cfg=cfg,
                         seed=0)
    pad = tok.pad_token_id
    out = collate(batch, pad)
    b = len(batch)
    p = max(len(t.prompt_ids) for t in batch)
    r = max(t.response_length for t in batch)
    assert out["input_ids"].shape == (b, p + r) and out["attention_mask"].shape == (b, p + r)
    assert out["response_mask"].shape == (b, r) and out["responses"].shape == (b, r)
    assert out["response_start"] == p and out["response_mask"].dtype == torch.float32
    for i, t in enumerate(batch):
        n_p, n_r = len(t.prompt_ids), t.response_length
        assert out["input_ids"][i, p - n_p : p].tolist() == t.prompt_ids
        assert out["input_ids"][i, :p - n_p].eq(pad).all()
        assert out["attention_mask"][i].sum() == n_p + n_r
        assert out["response_mask"][i, :n_r].tolist() == t.response_mask
        assert out["response_mask"][i, n_r:].eq(0).all()
        assert out["position_ids"][i, p - n_p] == 0 and out["position_ids"][i, p + n_r - 1] == n_p + n_r - 1
    fixed = collate(batch, pad, prompt_length=p + 3, response_length=r + 5)
    assert fixed["input_ids"].shape == (b, p + r + 8)
    with pytest.raises(ValueError):
        collate(batch, pad, response_length=r - 1)
    # log-probs from the padded batch equal the ones from each trajectory alone
    with torch.no_grad():
        logits = model(input_ids=out["input_ids"], attention_mask=out["attention_mask"],
                       position_ids=out["position_ids"]).logits
        lp = response_logprobs(logits, out)
        assert lp.shape == (b, r)
        for i, t in enumerate(batch):
            seq = torch.tensor([t.prompt_ids + t.response_ids])
            ref = torch.log_softmax(model(seq).logits[0, len(t.prompt_ids) - 1 : -1], -1)
            ref = ref.gather(-1, torch.tensor(t.response_ids)[:, None]).squeeze(-1)
            assert torch.allclose(lp[i, : t.response_length], ref, atol=1e-4)


def test_memorised_model_makes_a_real_tool_round(tiny, schema_sim, row_factory):
    """A copy of the tiny model overfitted on one conversation replays it through the real loop:
    greedy call → recorded observation appended by the loop → final answer."""
    model, tok = tiny
    recorded = [{"name": "get_weather", "arguments": {"city": "Paris"}, "response": '{"sky": "clear"}'}]
    row = row_factory("What is the weather in Paris?", recorded=recorded)
    call = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    convo = row["prompt"] + [{"role": "assistant", "content": call}, {"role": "tool", "content": '{"sky": "clear"}'},
                             {"role": "assistant", "content": "It is clear in Paris."}]
    text = tok.apply_chat_template(convo, tools=json.loads(row["tools"]), tokenize=False)
    ids = torch.tensor([tok.encode(text, add_special_tokens=False)])
    torch.manual_seed(0)
    m = copy.deepcopy(model).train()
    opt = torch.optim.Adam(m.parameters(), lr=1e-2)
    for _ in range(80):
        loss = m(input_ids=ids, labels=ids).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert loss.item() < 0.05
    cfg = RolloutConfig(max_prompt_length=512, max_response_length=200, temperature=0)
    batch = run_rollouts([row], n=2, generator=HFGenerator(m, pad_token_id=tok.pad_token_id), simulator=schema_sim,
                         tokenizer=tok, cfg=cfg, seed=0)
    for t in batch:
        assert t.finish_reason == "final" and (t.n_assistant_turns, t.n_tool_rounds, t.n_tool_calls) == (2, 1, 1)
        assert [s.kind for s in t.spans] == ["tool", "env", "final"]
        assert t.observation_kinds == {"recorded": 1}
        assert tok.decode(t.prompt_ids + t.response_ids, skip_special_tokens=False) + "\n" == text
        assert t.solution_text == (call + "\nuser\n<tool_response>\n{\"sky\": \"clear\"}\n</tool_response>\n"
                                   "assistant\nIt is clear in Paris.")
    assert batch.stats.generator_calls == 2
