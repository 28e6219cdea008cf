"""Multi-turn rollout loop (docs/method.md#segments-from-mask-topology "Where the mask comes from", docs/method.md#tool-simulators "Termination rules").

All B×n rollouts advance together: each round makes ONE generator call for every still-active
trajectory (a generator with independent_prompts gets the first round in parts of PART_ROWS rows,
each sent while the next is tokenised, with its prompts numbered as in one call), then answers the
tool calls of the turns that wrote a `</tool_call>` and appends the template's tool-round insert
(mask 0). Sampled tokens get mask 1. A turn ends only when the policy ends it (`<|im_end|>`), so
every call of a turn runs, whether the turn writes one block holding a list or one block per call
(as Qwen does).

Termination, checked after each generation in the reference's order:
  turn cut by its budget → "max_response_length" when the response budget ran out, else
  "max_turn_tokens"; turn ended without a </tool_call> → "final";
  otherwise response length ≥ cap → "max_response_length"; assistant turns ≥ cap →
  "max_assistant_turns"; tool rounds ≥ cap → "max_tool_rounds"; no call parsed → "unparsed_call";
  and before appending observations: the insert would reach the response cap → "observation_overflow".
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from slca.rollout.chat import ChatFormat, PromptCache, decode_texts, token_kinds
from slca.rollout.config import RolloutConfig
from slca.rollout.generators.base import Generator
from slca.rollout.types import RolloutStats, Span, Trajectory, summarize
from slca.toolcall import parse_hermes
from slca.toolcall.prompts import tools_for_template

# Rows per part of a first round sent in parts (independent_prompts): small enough that the first requests
# leave early, large enough that each part keeps an endpoint's concurrency busy.
PART_ROWS = 64

PromptFn = Callable[[Mapping[str, Any], RolloutConfig], tuple[list[dict[str, Any]], list[dict[str, Any]] | None]]


class BadRow(ValueError):
    """A row that cannot be rolled out; carries the offending field."""

    def __init__(self, field: str, reason: str):
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


class RolloutBatch(list):
    """The trajectories (a plain list, interleaved row0×n, row1×n, …) plus `.stats` for the batch."""

    def __init__(self, trajectories: Sequence[Trajectory] = (), stats: RolloutStats | None = None):
        super().__init__(trajectories)
        self.stats = stats if stats is not None else RolloutStats()

    @property
    def trajectories(self) -> list[Trajectory]:
        """The trajectories as a plain list (same objects)."""
        return list(self)


def _as_list(value: Any) -> Any:
    # parquet readers hand back numpy arrays for list columns
    return value.tolist() if hasattr(value, "tolist") and not isinstance(value, (str, bytes)) else value


def _json_list(value: Any, field: str) -> list[Any] | None:
    value = _as_list(value)
    if value is None or value == "":
        return None
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise BadRow(field, f"invalid JSON ({exc.msg})") from None
    if not isinstance(value, list) or not all(isinstance(v, Mapping) for v in value):
        raise BadRow(field, "expected a list of objects")
    return [dict(v) for v in value]


def default_prompt(row: Mapping[str, Any], cfg: RolloutConfig) -> tuple[list[dict[str, Any]], list[dict[str, Any]] | None]:
    """(messages, tools) of a verl-native RL row: `prompt` as is, `tools` when cfg.inject_tools, in the
    form every chat template is handed (`tools_for_template`)."""
    messages = _as_list(row.get("prompt"))
    if not isinstance(messages, list) or not messages:
        raise BadRow("prompt", "missing or empty list of chat messages")
    out = []
    for i, m in enumerate(messages):
        if not isinstance(m, Mapping) or not isinstance(m.get("role"), str) or not isinstance(m.get("content"), str):
            raise BadRow(f"prompt[{i}]", "expected {role: str, content: str}")
        out.append(dict(m))
    tools = _json_list(row.get("tools"), "tools") if cfg.inject_tools else None
    return out, tools_for_template(tools) or None


@dataclass
class _RowEnv:
    """What the simulator needs for one row: its tool schemas and recorded gold responses."""

    tools: list[dict[str, Any]]
    recorded: list[dict[str, Any]]


def row_env(row: Mapping[str, Any]) -> _RowEnv:
    """The row's tool schemas (`tools`, else the ground truth's) and recorded gold responses; BadRow names a malformed field."""
    tools = _json_list(row.get("tools"), "tools")
    if tools is None:
        gt = (row.get("reward_model") or {}).get("ground_truth") or {}
        tools = _json_list(gt.get("tool_schemas"), "reward_model.ground_truth.tool_schemas")
    extra = row.get("extra_info") or {}
    recorded = _json_list(extra.get("gold_responses"), "extra_info.gold_responses")
    return _RowEnv(tools or [], recorded or [])


def round_seed(seed: int, round_index: int) -> int:
    """Seed of one generation round: distinct per round, fixed by (seed, round)."""
    return (int(seed) * 1_000_003 + round_index * 7919 + 1) % (2**63 - 1)


def run_rollouts(
    rows: Sequence[Mapping[str, Any]],
    *,
    n: int,
    generator: Generator,
    simulator: Any,
    tokenizer: Any,
    cfg: RolloutConfig,
    seed: int,
    prompt_fn: PromptFn | None = None,
    cache: PromptCache | None = None,
    keep_prompt_ids: bool = True,
) -> RolloutBatch:
    """Roll out every row n times (interleaved) with multi-turn tool use; see the module docstring.

    rows: verl-native RL rows (`prompt`, `tools`, `reward_model.ground_truth`, `extra_info`).
    simulator: answers calls via respond_many(calls, tools=, recorded=) (slca.sim).
    prompt_fn: row → (messages, tools) override (default: `default_prompt`).
    cache: prompts kept from earlier calls over the same rows (an evaluation's seeds and cells), reused
    as they were rendered and tokenised then.
    keep_prompt_ids: False for a caller that reads only texts (an evaluation). In a one-round run
    (cfg.max_tool_rounds == 0) through a generator sent the prompts' texts (independent_prompts), a prompt
    the cap cannot bind by slca.rollout.token_bound is then not tokenised: its trajectories' prompt_ids is None.
    Overlong prompts (> cfg.max_prompt_length tokens) and unreadable rows are skipped and
    reported in `.stats` (row indices); they produce no trajectories.
    """
    if n < 1:
        raise ValueError("n must be >= 1")
    fmt = ChatFormat(tokenizer)
    fmt.env_pattern(1)  # a template that cannot render tool turns fails here, before any generation
    stats = RolloutStats(rows_in=len(rows))
    prompt_fn = prompt_fn or default_prompt

    # Render and encode the prompts; report what cannot be rolled out.
    kept: list[tuple[int, str, _RowEnv]] = []
    for i, row in enumerate(rows):
        try:
            text = cache.text(prompt_fn, i) if cache is not None else None
            if text is None:
                messages, tools = prompt_fn(row, cfg)
                env = row_env(row)
                text = fmt.render_prompt(messages, tools)
                if cache is not None:
                    cache.keep_text(prompt_fn, i, text)
            else:
                env = row_env(row)
            kept.append((i, text, env))
        except BadRow as exc:
            stats.bad_rows.append((i, exc.field, exc.reason))
        except Exception as exc:  # one unrenderable row must not sink the batch
            stats.bad_rows.append((i, "prompt", f"cannot render: {type(exc).__name__}: {exc}"))
    trajectories: list[Trajectory] = []
    envs: list[_RowEnv] = []
    texts_sent: list[str] = []  # per trajectory, the text of its prompt (what its prompt ids were tokenised from)
    # Prompt ids nobody reads: the generator is sent the prompts' texts, no later round extends them, and the
    # caller reads texts only. Tokenising a prompt costs more than its request to a fast local server.
    bound = (fmt.token_bound if not keep_prompt_ids and cfg.max_tool_rounds == 0
             and getattr(generator, "independent_prompts", False) else None)

    def start(part: list[tuple[int, str, _RowEnv]]) -> list[int]:
        """Tokenise `part`'s prompts (those the cap could bind, with `bound`), skip the overlong ones, add n
        trajectories per other row; their indices."""
        texts = [text for _, text, _ in part]
        counted = [j for j, text in enumerate(texts) if bound is None or bound(text) > cfg.max_prompt_length]
        todo = [texts[j] for j in counted]
        if cache is not None:
            encoded = cache.encode(fmt, todo)
        else:  # verbose=False: the cap below is what decides; the tokenizer's own "longer than the model" warning is noise.
            encoded = tokenizer(todo, add_special_tokens=False, verbose=False)["input_ids"] if todo else []
        prompt_ids: list[list[int] | None] = [None] * len(part)
        for j, ids in zip(counted, encoded):
            prompt_ids[j] = ids
        first = len(trajectories)
        for (i, text, env), ids in zip(part, prompt_ids):
            if ids is not None:
                stats.longest_prompt = max(stats.longest_prompt, len(ids))
                if len(ids) > cfg.max_prompt_length:
                    stats.overlong_rows.append(i)
                    continue
            group = stats.rows_rolled_out
            stats.rows_rolled_out += 1
            for s in range(n):
                trajectories.append(Trajectory(row_index=i, group_index=group, sample_index=s,
                                               prompt_ids=None if ids is None else list(ids)))
                envs.append(env)
                texts_sent.append(text)
        return list(range(first, len(trajectories)))

    round_index = 0
    pool = ThreadPoolExecutor(cfg.sim_workers) if cfg.sim_workers > 1 else None
    try:
        if getattr(generator, "independent_prompts", False):
            # The first round goes out part by part with the prompts' own texts, each part's requests in flight
            # while the next part is tokenised (outside the GIL), and two parts at a time where that is safe, so
            # one part's slowest requests do not idle the endpoint: the client's work overlaps the tokenising
            # the prompt cap needs.
            failed = threading.Event()

            def send(part: list[int]) -> list[int]:
                if failed.is_set():  # a part failed (an endpoint down): its error fails the batch, send no more
                    return []
                try:
                    return _one_round(part, trajectories, envs, generator, simulator, fmt, cfg, round_seed(seed, 0),
                                      pool, first_index=part[0], prompt_texts=[texts_sent[k] for k in part])
                except BaseException:
                    failed.set()
                    raise

            # Two parts in flight run their tool rounds side by side: only with no simulator or one that
            # sim_workers > 1 already calls from several threads.
            with ThreadPoolExecutor(2 if simulator is None or cfg.sim_workers > 1 else 1) as sender:
                sent = [sender.submit(send, part) for lo in range(0, len(kept), PART_ROWS)
                        if (part := start(kept[lo:lo + PART_ROWS]))]
                active = [k for future in sent for k in future.result()]
            stats.generator_calls += len(sent)
            round_index = 1
        else:
            active = start(kept)
        while active:
            active = _one_round(active, trajectories, envs, generator, simulator, fmt, cfg,
                                round_seed(seed, round_index), pool)
            stats.generator_calls += 1
            round_index += 1
    finally:
        if pool is not None:
            pool.shutdown()

    _finalise(trajectories, fmt, cfg)
    summarize(trajectories, stats)
    return RolloutBatch(trajectories, stats)


def _sequence(t: Trajectory) -> list[int]:
    """The ids the next turn continues; [] for a prompt not tokenised (its first and only turn is sent its text)."""
    return [] if t.prompt_ids is None else t.prompt_ids + t.response_ids


def turn_cap(cfg: RolloutConfig, response_length: int) -> int:
    """Tokens the next assistant turn may generate: what is left of the response budget, at most cfg.max_turn_tokens."""
    left = cfg.max_response_length - response_length
    return left if cfg.max_turn_tokens is None else min(left, cfg.max_turn_tokens)


def _one_round(active: list[int], trajs: list[Trajectory], envs: list[_RowEnv], generator: Generator, simulator: Any,
               fmt: ChatFormat, cfg: RolloutConfig, seed: int, pool: ThreadPoolExecutor | None,
               first_index: int | None = None, prompt_texts: list[str] | None = None) -> list[int]:
    """Generate one assistant turn for every active trajectory, run the tool rounds; return who continues.
    first_index, prompt_texts: where `active` starts in its round and the texts of its prompts, for a first
    round sent in parts (independent_prompts)."""
    outs = generator.generate(
        [_sequence(trajs[k]) for k in active],
        max_new_tokens=[turn_cap(cfg, trajs[k].response_length) for k in active],
        temperature=cfg.temperature,
        top_p=cfg.top_p,
        stop_token_ids=set(fmt.stop_token_ids),
        seed=seed,
        **({} if first_index is None else {"first_index": first_index, "prompt_texts": prompt_texts}),
    )
    if len(outs) != len(active):
        raise RuntimeError(f"generator returned {len(outs)} outputs for {len(active)} prompts")
    texts = decode_texts(fmt.tokenizer, [o.token_ids for o in outs])
    pending: list[tuple[int, list[Any]]] = []  # (trajectory, calls to execute)
    for k, out, text in zip(active, outs, texts):
        t = trajs[k]
        start = t.response_length
        t.response_ids.extend(out.token_ids)
        t.response_mask.extend([1] * len(out.token_ids))
        t.n_assistant_turns += 1
        parsed = parse_hermes(text)
        t.last_turn_is_tool_call = parsed.n_open > 0
        t.spans.append(Span("tool" if t.last_turn_is_tool_call else "final", start, t.response_length))
        if out.finish_reason != "stop":  # cut by its budget: no tool runs on a turn the policy did not end
            t.finish_reason = "max_turn_tokens" if t.response_length < cfg.max_response_length else "max_response_length"
        elif parsed.n_close == 0:
            t.finish_reason = "final"
        elif t.response_length >= cfg.max_response_length:
            t.finish_reason = "max_response_length"
        elif t.n_assistant_turns >= cfg.max_assistant_turns:
            t.finish_reason = "max_assistant_turns"
        elif t.n_tool_rounds >= cfg.max_tool_rounds:
            t.finish_reason = "max_tool_rounds"
        elif not parsed.calls:
            t.finish_reason = "unparsed_call"
        else:
            calls = parsed.calls
            t.n_dropped_calls += max(0, len(calls) - cfg.max_parallel_calls)
            pending.append((k, calls[: cfg.max_parallel_calls]))
    if not pending:
        return []

    def answer(job: tuple[int, list[Any]]) -> list[Any]:
        k, calls = job
        return simulator.respond_many(calls, tools=envs[k].tools, recorded=envs[k].recorded)

    observations = list(pool.map(answer, pending)) if pool is not None else [answer(j) for j in pending]
    inserts = [fmt.env_text([o.text for o in obs]) for obs in observations]
    insert_ids = fmt.tokenizer(inserts, add_special_tokens=False)["input_ids"]
    still: list[int] = []
    for (k, calls), obs, ids in zip(pending, observations, insert_ids):
        t = trajs[k]
        t.n_tool_calls += len(calls)
        t.tool_calls.append(list(calls))
        t.observation_kinds.update(o.kind for o in obs)
        t.n_truncated_observations += sum(1 for o in obs if o.truncated)
        if t.response_length + len(ids) >= cfg.max_response_length:
            t.finish_reason = "observation_overflow"
            continue
        start = t.response_length
        t.response_ids.extend(ids)
        t.response_mask.extend([0] * len(ids))
        t.spans.append(Span("env", start, t.response_length))
        t.n_tool_rounds += 1
        still.append(k)
    return still


def _finalise(trajs: list[Trajectory], fmt: ChatFormat, cfg: RolloutConfig) -> None:
    """Cut responses (and masks, spans) to the cap and decode the texts."""
    cap = cfg.max_response_length
    for t in trajs:
        if t.response_length > cap:
            t.response_ids, t.response_mask = t.response_ids[:cap], t.response_mask[:cap]
            t.spans = [Span(s.kind, s.start, min(s.end, cap)) for s in t.spans if s.start < cap]
            t.finish_reason = "max_response_length"
    if not trajs:
        return
    ids = [t.response_ids for t in trajs]
    for t, text, solution in zip(trajs, decode_texts(fmt.tokenizer, ids), fmt.decode_solutions(ids)):
        t.response_text = text
        t.solution_text = solution
        t.token_kinds = token_kinds(t.response_ids, t.response_mask, fmt.markup_ids)
