"""Multi-turn tools on verl 0.9.1, in one process: verl's own agent-loop worker runs slca's tool agent
loop (wildcard simulator tool, slca's hermes parser and environment insert) on real RL rows, and
the batch it returns is the batch slca's own rollout loop makes from the same model turns.

The model is replaced by a script (a test double for the policy only, as in tests/rollout): each
row's assistant turns are fixed, so tool calls are certain; verl's worker, the agent loop, the
tool config, the tokenizer, the chat template and the simulator are the real ones.
"""

from __future__ import annotations

import asyncio
import json

import numpy as np
import pytest
import torch
import yaml

from slca.backends.verl.compose import AGENT_LOOP, TOOL_CONFIG_NAME, VerlInputs, compose_verl_config
from slca.backends.verl.stages import _data_files, _model_path, write_verl_config
from slca.config.compose import compose_spec
from slca.config.io import write_spec
from slca.data.io import read_rows
from slca.rewards.record import WIRE
from slca.rollout import RolloutConfig, run_rollouts
from slca.rollout.protocol import protocol_prompt_fn
from slca.rollout.types import GenerationOutput
from slca.sim import build_simulator

# verl's own agent-loop worker runs here (in-process, a few seconds): selectable with the real verl runs.
pytestmark = pytest.mark.verl

LAST_TURN = WIRE["last_turn_is_tool_call"]
END = "<|im_end|>"  # the policy ends every turn itself, a tool-calling one too
FINAL = "All done." + END
# Three calls in one turn, one block each, as Qwen writes parallel calls.
THREE_BLOCKS = "\n".join(f'<tool_call>\n{{"name": "no_such_tool", "arguments": {{"x": {i}}}}}\n</tool_call>' for i in range(3)) + END


def gold_call_turn(row: dict) -> str:
    """The row's first recorded gold call, as the policy would write it."""
    call = json.loads(row["extra_info"]["gold_responses"])[0]
    return "Let me check.\n<tool_call>\n" + json.dumps({"name": call["name"], "arguments": call["arguments"]}) + "\n</tool_call>" + END


class ScriptedPolicy:
    """Replays fixed assistant turns, chosen by the row's question in the context and the turn count
    after it; honours stop ids (first one kept) and the turn's token budget. Serves verl's server
    interface (`generate(request_id, prompt_ids, sampling_params)`) and slca's generator interface,
    and records every verl request."""

    def __init__(self, tokenizer, script: dict[str, list[str]]):
        self.tok = tokenizer
        self.script = script
        self.requests: list[dict] = []

    def _turn(self, ids, cap, stops) -> tuple[list[int], str]:
        ctx = self.tok.decode(list(ids), skip_special_tokens=False)
        # The row's own question is the last one in its context (earlier turns may quote other rows').
        question = max((q for q in self.script if q in ctx), key=ctx.rindex)
        turn = ctx[ctx.rindex(question) :].count("<|im_start|>assistant") - 1
        turns = self.script[question]
        tokens = self.tok.encode(turns[min(turn, len(turns) - 1)], add_special_tokens=False)
        for j, t in enumerate(tokens):
            if t in stops:
                return tokens[: j + 1], "stop"
        return tokens[:cap], "length"

    async def generate(self, request_id, *, prompt_ids, sampling_params, **_media):
        from verl.workers.rollout.replica import TokenOutput

        self.requests.append({"id": request_id, "max_tokens": sampling_params["max_tokens"], "stops": set(sampling_params["stop_token_ids"])})
        tokens, _ = self._turn(prompt_ids, sampling_params["max_tokens"], set(sampling_params["stop_token_ids"]))
        return TokenOutput(token_ids=tokens, log_probs=[-1.0] * len(tokens), extra_fields={"global_steps": 1})

    def generate_batch(self, prompt_token_ids, *, max_new_tokens, temperature, top_p, stop_token_ids, seed):
        caps = [max_new_tokens] * len(prompt_token_ids) if isinstance(max_new_tokens, int) else list(max_new_tokens)
        return [GenerationOutput(*self._turn(ids, cap, set(stop_token_ids))) for ids, cap in zip(prompt_token_ids, caps)]


class SlcaGenerator:
    """slca's generator interface over the same script."""

    def __init__(self, policy: ScriptedPolicy):
        self.generate = policy.generate_batch


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """The verl_smoke spec's composed verl config and tool config in a run dir, the tiny backbone, four RL rows."""
    from transformers import AutoTokenizer

    # Room for a turn of three call blocks, their three observations and an answer.
    spec = compose_spec(["experiment=verl_smoke", "train.rl.max_response_length=400"])
    run_dir = tmp_path_factory.mktemp("verl_tools") / "run"
    spec_path = write_spec(spec, run_dir / "spec.yaml")
    model = _model_path(spec)
    train_file, val_file = _data_files(spec)
    cfg = compose_verl_config(spec, VerlInputs(model, train_file, val_file, run_dir, spec_path))
    write_verl_config(spec, run_dir, cfg)
    rows = list(read_rows(train_file))
    distinct = list({r["reward_model"]["ground_truth"]["question_content"]: r for r in rows}.values())
    return spec, cfg, AutoTokenizer.from_pretrained(model), distinct[:4]


def scripts(rows: list[dict]) -> dict[str, list[str]]:
    q = [r["reward_model"]["ground_truth"]["question_content"] for r in rows]
    return {
        q[0]: [gold_call_turn(rows[0]), FINAL],  # the gold call: answered from the row's schemas, then an answer
        q[1]: [THREE_BLOCKS, FINAL],  # each routed by name to the wildcard
        q[2]: ['<tool_call>\n{"name": oops}\n</tool_call>' + END],  # a call slca cannot parse: the rollout ends there
        q[3]: [FINAL],  # no call at all
    }


def verl_batch(cfg, policy: ScriptedPolicy, rows: list[dict]):
    """verl's own AgentLoopWorker (not a Ray actor) rolling out `rows` once each."""
    from verl import DataProto
    from verl.experimental.agent_loop.agent_loop import AgentLoopWorker, _agent_loop_registry

    # Imported, the module registers the agent loop (the plugin imports it in verl's processes).
    from slca.backends.verl.agent_loop import SlcaToolAgentLoop

    assert _agent_loop_registry[AGENT_LOOP]["_target_"] == f"{SlcaToolAgentLoop.__module__}.{SlcaToolAgentLoop.__qualname__}"
    worker = AgentLoopWorker(cfg, policy)
    columns = {k: np.array([r[k] for r in rows], dtype=object) for k in rows[0]}
    columns["raw_prompt"] = np.empty(len(rows), dtype=object)
    columns["raw_prompt"][:] = [list(r["prompt"]) for r in rows]
    columns["index"] = np.arange(len(rows))
    columns["tools_kwargs"] = np.array([{} for _ in rows], dtype=object)
    return asyncio.run(worker.generate_sequences(DataProto(non_tensor_batch=columns, meta_info={"global_steps": 1})))


def test_verl_rollouts_with_tools_are_slcas_rollouts_token_for_token_with_tool_tokens_out_of_the_loss(world):
    from verl.trainer.ppo.core_algos import agg_loss

    spec, cfg, tokenizer, rows = world
    policy = ScriptedPolicy(tokenizer, scripts(rows))
    out = verl_batch(cfg, policy, rows)
    ours = run_rollouts(
        rows, n=1, generator=SlcaGenerator(ScriptedPolicy(tokenizer, scripts(rows))), simulator=build_simulator(spec.simulator),
        tokenizer=tokenizer, cfg=RolloutConfig.from_rl(spec.train.rl), seed=0, prompt_fn=protocol_prompt_fn(system_prompt=spec.train.rl.system_prompt),
    )
    assert len(ours) == len(rows) == len(out)
    prompts, responses = out.batch["prompts"], out.batch["responses"]
    attention, mask = out.batch["attention_mask"], out.batch["response_mask"]
    width = prompts.shape[1]
    for i, t in enumerate(ours):
        n = len(t.response_ids)
        # Same prompt (left-padded by verl), same response tokens, same mask: 1 sampled, 0 environment.
        assert prompts[i][attention[i, :width].bool()].tolist() == t.prompt_ids
        assert responses[i, :n].tolist() == t.response_ids and int(attention[i, width:].sum()) == n
        assert mask[i, :n].tolist() == t.response_mask and not mask[i, n:].any()
        assert out.non_tensor_batch[LAST_TURN][i] == int(t.last_turn_is_tool_call)
        assert out.non_tensor_batch["slca_tool_calls"][i] == t.n_tool_calls
        assert out.non_tensor_batch["__num_turns__"][i] == t.n_assistant_turns + t.n_tool_rounds + 1
    assert [t.n_tool_rounds for t in ours] == [1, 1, 0, 0] and [t.last_turn_is_tool_call for t in ours] == [False, False, True, False]

    # The environment tokens are the tool responses: the simulator's answers, in the chat template's tool turn.
    inserts = [tokenizer.decode(responses[i][(mask[i] == 0) & attention[i, width:].bool()].tolist(), skip_special_tokens=False) for i in (0, 1)]
    assert all("<tool_response>" in text for text in inserts)
    assert "Tool 'no_such_tool' not found" in inserts[1]
    # All three blocks of one turn ran: three calls, three responses in one tool turn.
    assert out.non_tensor_batch["slca_tool_calls"][1] == 3 and inserts[1].count("<tool_response>") == 3
    # The gold call gets the response recorded with it in the data.
    recorded = json.loads(rows[0]["extra_info"]["gold_responses"])[0]
    assert recorded["response"] in inserts[0]

    # One generate call per assistant turn, each given what is left of the response budget; a turn ends
    # at <|im_end|> only, never at a </tool_call>.
    per_rollout: dict[str, list[int]] = {}
    for request in policy.requests:
        per_rollout.setdefault(request["id"], []).append(request["max_tokens"])
    assert sorted(len(v) for v in per_rollout.values()) == sorted(t.n_assistant_turns for t in ours)
    close, end = tokenizer.convert_tokens_to_ids(["</tool_call>", END])
    assert all(end in r["stops"] and close not in r["stops"] for r in policy.requests)
    assert sorted(v[0] for v in per_rollout.values()) == [spec.train.rl.max_response_length] * len(rows)

    # verl's loss aggregation on this batch: a loss on tool-response tokens changes nothing, on sampled tokens it does.
    loss = torch.rand(mask.shape, generator=torch.Generator().manual_seed(0))
    base = agg_loss(loss, mask, "token-mean")
    env = (mask == 0) & attention[:, width:].bool()
    assert env.any()
    assert torch.equal(agg_loss(loss + 1000.0 * env, mask, "token-mean"), base)
    assert not torch.equal(agg_loss(loss + 1000.0 * (mask > 0), mask, "token-mean"), base)


def test_the_trainer_reads_the_last_turn_flag_the_agent_loop_sets_beside_the_reward_extras():
    from slca.backends.verl.trainer import reward_columns
    from slca.rewards.record import RewardBatch

    extra = [
        {"reward_extra_info": {"score": 0.5, "process_score": 0.2, "summary_score": 0.3}, LAST_TURN: 1, "turn_scores": []},
        {"reward_extra_info": {"score": 0.1, "process_score": 0.0, "summary_score": 0.1}, LAST_TURN: 0},
    ]
    columns = reward_columns(extra)
    assert columns[LAST_TURN].tolist() == [1, 0] and "turn_scores" not in columns
    assert RewardBatch.from_columns(columns, 2).last_turn_is_tool_call.tolist() == [True, False]


def test_the_tool_config_names_one_wildcard_tool_that_verl_loads_with_the_specs_simulator(world, tmp_path):
    from verl.tools.tool_registry import initialize_tools_from_config

    spec, cfg, _, _ = world
    path = cfg.actor_rollout_ref.rollout.multi_turn.tool_config_path
    assert path.endswith(TOOL_CONFIG_NAME) and yaml.safe_load(open(path))["tools"][0]["config"]["simulator"] == spec.simulator.model_dump(mode="json")
    (tool,) = initialize_tools_from_config(path)
    assert tool.simulator.name == spec.simulator.name
    mt = cfg.actor_rollout_ref.rollout.multi_turn
    rl = spec.train.rl
    assert (mt.enable, mt.format, cfg.actor_rollout_ref.rollout.agent.default_agent_loop) == (True, "slca_hermes", AGENT_LOOP)
    assert (mt.max_assistant_turns, mt.max_user_turns, mt.max_parallel_calls) == (min(rl.max_assistant_turns, rl.max_tool_rounds + 1), rl.max_tool_rounds, rl.max_parallel_calls)
    assert mt.max_tool_response_length == spec.simulator.max_response_chars


def test_zero_tool_rounds_is_one_assistant_turn_on_verl_too(tmp_path):
    # verl reads max_user_turns=0 as "no cap"; the assistant-turn cap carries the limit instead.
    spec = compose_spec(["experiment=verl_smoke", "train.rl.max_tool_rounds=0", "train.rl.max_assistant_turns=5"])
    cfg = compose_verl_config(spec, VerlInputs("/m", "/a.parquet", "/b.parquet", tmp_path, tmp_path / "spec.yaml"))
    assert cfg.actor_rollout_ref.rollout.multi_turn.max_assistant_turns == 1


def _server(world):
    from omegaconf import OmegaConf

    from slca.backends.verl.rollout import HFRolloutServer

    _, cfg, _, _ = world
    return HFRolloutServer(OmegaConf.create({"prompt_length": 64, "response_length": 32}), cfg.actor_rollout_ref.model, replica_rank=0)


def test_the_cpu_rollout_server_honours_each_turns_budget_and_stop_ids(world):
    server = _server(world)
    prompt = [1, 2, 3, 4]
    capped = asyncio.run(server.generate("a", prompt, {"max_tokens": 3, "temperature": 1.0}))
    assert 1 <= len(capped.token_ids) <= 3 and len(capped.log_probs) == len(capped.token_ids)
    vocab = list(range(server.model.config.vocab_size))
    stopped = asyncio.run(server.generate("b", prompt, {"max_tokens": 20, "temperature": 1.0, "stop_token_ids": vocab}))
    assert len(stopped.token_ids) == 1  # every token is a stop: the turn ends on the first, which it keeps
    with pytest.raises(ValueError, match="top_k=5"):
        asyncio.run(server.generate("c", prompt, {"max_tokens": 3, "top_k": 5}))


def test_requests_sent_together_are_sampled_as_one_batch_and_each_gets_what_it_would_alone(world):
    server = _server(world)
    prompts, budgets = [[1, 2, 3, 4], [5, 6], [7, 8, 9, 10, 11, 12, 13], [5, 6]], [12, 5, 9, 3]
    greedy = {"temperature": 0.0}
    alone = [asyncio.run(server.generate(str(i), p, {**greedy, "max_tokens": b})) for i, (p, b) in enumerate(zip(prompts, budgets))]
    batches = []
    sample = server.generator.generate
    server.generator.generate = lambda prompt_ids, **kw: batches.append(len(prompt_ids)) or sample(prompt_ids, **kw)

    async def together():
        return await asyncio.gather(*(server.generate(str(i), p, {**greedy, "max_tokens": b}) for i, (p, b) in enumerate(zip(prompts, budgets))))

    replies = asyncio.run(together())
    assert batches == [4]
    for reply, single in zip(replies, alone):
        assert reply.token_ids == single.token_ids
        assert reply.log_probs == pytest.approx(single.log_probs, abs=1e-5)  # left padding changes sums by rounding only


HOSTILE = [
    '<tool_call>\n{"name": "f", "arguments": {"n": 1' + "0" * 5000 + "}}\n</tool_call>",  # an int past Python's digit limit
    '<tool_call>\n[{"name": "f"}, 3, "x", {"arguments": {}}]\n</tool_call>',
    '<tool_call>\n{"name": {"nested": true}, "arguments": []}\n</tool_call>',
    "<tool_call><tool_call></tool_call></tool_call>",
    "<think><tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call></think>",
    '<tool_call>\n{"name": "f", "parameters": "{\\"a\\": 1}"}\n</tool_call>',
    "<tool_call>\n" + "[" * 5000 + "\n</tool_call>",
    "</tool_call>",
]


def test_hostile_model_output_never_breaks_the_parser_or_the_wildcard_tool(world):
    """Every hostile turn parses without raising, only a turn the policy ended yields calls, and
    each call the wildcard tool gets is answered with an observation (never an exception)."""
    import random

    from verl.tools.tool_registry import initialize_tools_from_config

    from slca.backends.verl.agent_loop import SlcaHermesParser

    spec, cfg, tokenizer, rows = world
    parser = SlcaHermesParser(tokenizer)
    (tool,) = initialize_tools_from_config(cfg.actor_rollout_ref.rollout.multi_turn.tool_config_path)
    rng = random.Random(0)
    vocab = list(range(len(tokenizer)))
    end = tokenizer.convert_tokens_to_ids(END)
    turns = [tokenizer.encode(text + END, add_special_tokens=False) for text in HOSTILE]
    turns += [rng.choices(vocab, k=rng.randint(1, 60)) + ([end] if i % 2 else []) for i in range(200)]

    async def run_all() -> int:
        answered = 0
        for ids in turns:
            _, calls = await parser.extract_tool_calls(ids)
            assert not calls or ids[-1] == end
            for call in calls:
                instance, _ = await tool.create(create_kwargs={"tools": json.loads(rows[0]["tools"]), "recorded": []})
                response, reward, _ = await tool.execute(instance, {"name": call.name, "arguments": call.arguments})
                await tool.release(instance)
                assert isinstance(response.text, str) and response.text and reward == 0.0
                answered += 1
        return answered

    assert asyncio.run(run_all()) >= 1  # the blocks that do hold a call were answered
