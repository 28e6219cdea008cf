"""ACEBench's agent categories under one protocol cell and seed of slca's evaluation grid
(docs/eval.md#acebenchs-agent-categories).

Every episode of the batch steps together: the scenario answers what was sent to it, the simulated
user (agent_multi_turn, concurrently over its endpoint) answers what was sent to it, and then every
episode waiting on the agent gets its next message from one batched generator call. Each agent step
is ACEBench's fresh request (slca.evaluation.acebench.agent_prompt) rendered under the cell: its
construction and thinking as for any row, and its system prompt as named, except that
`acebench_default` (and `dataset`) keep ACEBench's agent system turn, which shows the functions in
the user turn as ACEBench does; any other prompt replaces that turn and gets the functions as
tools. A step generates at most eval.max_tokens, else eval.rollout.max_response_length tokens; its
visible text (thinking dropped) is the agent's message. A step whose prompt is over
eval.rollout.max_prompt_length ends its episode there: scored as it stands, or, at the first step,
not evaluated and counted.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from slca.config.acebench import AceBenchUser
from slca.config.benchmarks import ACEBENCH_AGENT_CATEGORIES
from slca.evaluation.acebench.agent_data import AgentEntry
from slca.evaluation.acebench.agent_loop import AGENT, USER, Conversation, opening
from slca.evaluation.acebench.agent_prompt import agent_messages
from slca.evaluation.acebench.agent_score import AgentScore, score_episode
from slca.evaluation.acebench.data import to_tool
from slca.evaluation.acebench.user_sim import UserSimulator
from slca.evaluation.harness import ProtocolCell, nan_mean
from slca.http import HttpClient
from slca.rollout.chat import ChatFormat
from slca.rollout.config import RolloutConfig
from slca.rollout.loop import round_seed
from slca.rollout.protocol import protocol_prompt_fn
from slca.toolcall import strip_thinking

OWN_PROMPTS = ("acebench_default", "dataset")


@dataclass(frozen=True)
class AgentOutcome:
    """One episode: its entry, its score (None when its first agent prompt was over the cap) and
    whether a prompt over the cap ended it."""

    entry: AgentEntry
    score: AgentScore | None
    overflow: bool


def _users(entries: Sequence[AgentEntry], user_cfg: AceBenchUser | None) -> list[UserSimulator | None]:
    if user_cfg is None:
        return [None] * len(entries)
    client = HttpClient(user_cfg, "/chat/completions")
    return [UserSimulator(user_cfg, e, client) if e.category == "agent_multi_turn" else None for e in entries]


def _answer_users(convs: list[Conversation], users: list[UserSimulator | None], pool: ThreadPoolExecutor) -> None:
    """Let every conversation run until it waits on the agent or is over."""
    while waiting := [i for i, c in enumerate(convs) if c.turn() == USER]:
        for i, reply in zip(waiting, pool.map(lambda i: users[i](convs[i].history), waiting)):  # type: ignore[misc]
            convs[i].say(reply)


def run_agent_episodes(entries: Sequence[AgentEntry], *, n: int, generator: Any, tokenizer: Any, cfg: RolloutConfig,
                       seed: int, cell: ProtocolCell, user_cfg: AceBenchUser | None) -> list[AgentOutcome]:
    """Every entry's episode n times (entry-major) under `cell`; see the module docstring. An
    agent_multi_turn entry needs `user_cfg`."""
    own = cell.system_prompt in OWN_PROMPTS
    prompt_fn = protocol_prompt_fn(system_prompt="dataset" if own else cell.system_prompt,
                                   construction=cell.construction, thinking=cell.thinking)
    fmt = ChatFormat(tokenizer)
    cap = min(cfg.max_response_length, cfg.max_turn_tokens or cfg.max_response_length)
    episodes = [e for e in entries for _ in range(n)]
    users = _users(episodes, user_cfg)
    steps = [0] * len(episodes)
    overflow = [False] * len(episodes)
    with ThreadPoolExecutor(user_cfg.max_concurrency if user_cfg else 1) as pool:
        convs = [Conversation(e, text) for e, text in zip(episodes, pool.map(opening, episodes, users))]
        round_index = 0
        while True:
            _answer_users(convs, users, pool)
            waiting = [i for i, c in enumerate(convs) if c.turn() == AGENT]
            if not waiting:
                break
            texts = []
            for i in waiting:
                row = {"prompt": agent_messages(episodes[i], convs[i].history)}
                if not own:
                    row["tools"] = [to_tool(f) for f in episodes[i].functions]
                texts.append(fmt.render_prompt(*prompt_fn(row, cfg)))
            ready = []
            for i, ids in zip(waiting, tokenizer(texts, add_special_tokens=False, verbose=False)["input_ids"]):
                if len(ids) > cfg.max_prompt_length:
                    convs[i].end()
                    overflow[i] = True
                else:
                    ready.append((i, ids))
            if ready:
                outs = generator.generate([ids for _, ids in ready], max_new_tokens=cap, temperature=cfg.temperature,
                                          top_p=cfg.top_p, stop_token_ids=set(fmt.stop_token_ids),
                                          seed=round_seed(seed, round_index))
                if len(outs) != len(ready):
                    raise RuntimeError(f"generator returned {len(outs)} outputs for {len(ready)} prompts")
                for (i, _), out in zip(ready, outs):
                    convs[i].say(strip_thinking(fmt.decode_solution(out.token_ids)))
                    steps[i] += 1
            round_index += 1
    return [AgentOutcome(e, score_episode(e, c.run.episode()) if s else None, o)
            for e, c, s, o in zip(episodes, convs, steps, overflow)]


def agent_metrics(outcomes: Sequence[AgentOutcome]) -> dict[str, float]:
    """Per agent category, ACEBench's end-to-end accuracy (the category's name) and process accuracy
    (`<name>_process`) over the evaluated episodes (NaN when none), and `agent_prompt_overflow`,
    the fraction of them a prompt over the cap ended."""
    out: dict[str, float] = {}
    for name in ACEBENCH_AGENT_CATEGORIES:
        scored = [o.score for o in outcomes if o.entry.category == name and o.score is not None]
        out[name] = nan_mean([float(s.correct) for s in scored])
        out[f"{name}_process"] = nan_mean([s.process for s in scored])
    out["agent_prompt_overflow"] = nan_mean([float(o.overflow) for o in outcomes if o.score is not None])
    return out


def agent_skip_note(outcomes: Sequence[AgentOutcome], cap: int) -> str:
    """Why agent episodes were not evaluated, as one phrase ("" when all were)."""
    skipped = sum(o.score is None for o in outcomes)
    if not skipped:
        return ""
    return f"{skipped} of {len(outcomes)} agent episodes have a first agent prompt over eval.rollout.max_prompt_length={cap} tokens"
