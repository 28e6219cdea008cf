"""`acebench` benchmark: ACEBench's English categories rolled out by slca's loop
(docs/eval.md#table-3-acebench).

Every category of slca.config.benchmarks is evaluated (the normal and special ones, then the agent
ones), or those `eval.categories` names (`eval.limit` caps the entries taken from each).
agent_multi_turn needs its user simulator (`eval.acebench.user`); without one it is not run, and
the card's scoring says so. Each normal or special entry becomes a row carrying ACEBench's own
system and user turns (the `acebench_default` and `dataset` prompts keep them; the other prompts of
the grid replace the system turn); one assistant turn is sampled and scored with
slca.evaluation.acebench.check. The agent entries run as episodes (slca.evaluation.acebench.agent_run)
under the same cell and seed. Metrics per seed: `summary` (ACEBench's Summary weights over the
normal, special and agent groups, renormalised over those run), `normal`, `special` and `agent`
(unweighted means of their categories; an agent category counts its end-to-end accuracy), each
category's accuracy, each agent category's process accuracy (`<name>_process`),
`agent_prompt_overflow`, and `parseable`, the fraction of normal outputs read as a call list.
"""

from __future__ import annotations

import dataclasses
import hashlib
from typing import Any

from slca.config.benchmarks import ACEBENCH_AGENT_CATEGORIES, ACEBENCH_CATEGORIES
from slca.evaluation.acebench.agent_data import AgentEntry, load_agent_category
from slca.evaluation.acebench.agent_run import agent_metrics, agent_skip_note, run_agent_episodes
from slca.evaluation.acebench.data import DATA_DIR, NORMAL, AceBenchDataError, Entry, category_files, load_category
from slca.evaluation.acebench.decode import decode
from slca.evaluation.acebench.score import GROUP_WEIGHTS, category_accuracy, check, summary
from slca.evaluation.benchmarks import BENCHMARKS, BenchmarkDataError, BenchmarkInputs, DataRef, Scoring
from slca.evaluation.harness import CellResult, ProtocolCell, SeedRun, nan_mean, run_grid, skip_note
from slca.rollout import run_rollouts
from slca.rollout.chat import PromptCache

AGENT_HEADLINE = tuple(m for c in ACEBENCH_AGENT_CATEGORIES for m in (c, f"{c}_process"))
HEADLINE = ("summary", "normal", "special", "agent", *ACEBENCH_CATEGORIES, *AGENT_HEADLINE, "parseable")
NO_USER = "agent_multi_turn not run: eval.acebench.user is null (no user simulator endpoint)"


def selected(cfg: Any) -> tuple[str, ...]:
    """The categories `eval.categories` names, in ACEBench's order (all when null)."""
    return tuple(c for c in (*ACEBENCH_CATEGORIES, *ACEBENCH_AGENT_CATEGORIES)
                 if cfg.categories is None or c in cfg.categories)


def runnable(cfg: Any) -> tuple[str, ...]:
    """The selected categories that can run: agent_multi_turn only with a user simulator."""
    return tuple(c for c in selected(cfg) if c != "agent_multi_turn" or cfg.acebench.user is not None)


def load_entries(limit: int | None, categories: tuple[str, ...] = ACEBENCH_CATEGORIES) -> list[Entry]:
    """The first `limit` entries (all when None) of each normal or special category among `categories`."""
    return [e for name in categories if name in ACEBENCH_CATEGORIES for e in load_category(name, limit=limit)]


def load_agent_entries(limit: int | None, categories: tuple[str, ...]) -> list[AgentEntry]:
    """The first `limit` entries (all when None) of each agent category among `categories`."""
    return [e for name in categories if name in ACEBENCH_AGENT_CATEGORIES for e in load_agent_category(name, limit=limit)]


def score_outputs(entries: list[Entry], outputs: list[tuple[int, str]]) -> dict[str, float]:
    """The metrics of the normal and special categories (summary and groups over them, each category's
    accuracy, `parseable`) from one seed's (entry index, model text) pairs."""
    verdicts: dict[int, list[bool]] = {}
    readable = []
    for index, text in outputs:
        ok, _ = check(entries[index], text)
        verdicts.setdefault(index, []).append(ok)
        if entries[index].category in NORMAL:
            decoded = decode(text)
            readable.append(float(decoded.ok and bool(decoded.calls)))
    accuracy = category_accuracy(entries, verdicts)
    return {**summary(accuracy), **accuracy, "parseable": nan_mean(readable)}


class AceBenchBenchmark:
    """The `acebench` entry of slca.evaluation.benchmarks.BENCHMARKS (its protocol in that module's docstring)."""

    headline = HEADLINE

    def data(self, inputs: BenchmarkInputs) -> DataRef:
        digest = hashlib.sha256()
        total = evaluated = 0
        limit, run = inputs.eval_cfg.limit, runnable(inputs.eval_cfg)
        try:
            for name in selected(inputs.eval_cfg):
                for path in category_files(name):
                    digest.update(path.relative_to(DATA_DIR).as_posix().encode() + b"\0" + path.read_bytes())
                n = len(load_agent_category(name) if name in ACEBENCH_AGENT_CATEGORIES else load_category(name))
                total += n
                evaluated += (min(n, limit) if limit else n) if name in run else 0
        except AceBenchDataError as exc:
            raise BenchmarkDataError(f"eval.benchmark=acebench: {exc}") from None
        except OSError as exc:
            raise BenchmarkDataError(f"eval.benchmark=acebench: {exc.filename}: cannot read: {exc.strerror}") from None
        return DataRef(str(DATA_DIR), digest.hexdigest(), total, evaluated)

    def scoring(self, inputs: BenchmarkInputs) -> Scoring:
        cfg = inputs.eval_cfg
        weights = ", ".join(f"{g} {w}" for g, w in GROUP_WEIGHTS.items())
        reward = f"acebench_checker (slca's own, ACEBench's rules); summary: ACEBench's weights {weights}, renormalised over the groups run"
        agents = [c for c in selected(cfg) if c in ACEBENCH_AGENT_CATEGORIES]
        if not agents:
            return Scoring("acebench", reward, None, "none: single-turn calls are checked, not run (no agent category selected)")
        parts = ["single-turn calls are checked, not run; agent calls run on ACEBench's scenario classes through slca's executor"]
        if "agent_multi_turn" in agents:
            user = cfg.acebench.user
            parts.append(NO_USER if user is None else f"agent_multi_turn user simulator: {user.model} at {user.base_url}")
        return Scoring("acebench", reward, None, "; ".join(parts))

    def evaluate(self, generator: Any, inputs: BenchmarkInputs) -> list[CellResult]:
        cfg = inputs.eval_cfg
        categories = runnable(cfg)
        if "agent_multi_turn" in selected(cfg) and "agent_multi_turn" not in categories:
            print(f"[eval] acebench: {NO_USER}", flush=True)
        try:
            entries = load_entries(cfg.limit, categories)
            agents = load_agent_entries(cfg.limit, categories)
        except AceBenchDataError as exc:
            raise BenchmarkDataError(f"eval.benchmark=acebench: {exc}") from None
        rows = [e.row() for e in entries]
        # One answer per entry, scored as written: no tool round follows it.
        single = dataclasses.replace(inputs.rollout_cfg, max_tool_rounds=0)
        cache = PromptCache()
        builders: dict[ProtocolCell, Any] = {}

        def run_cell(cell: ProtocolCell, seed: int) -> SeedRun:
            outputs, rolled, notes = [], 0, []
            if rows:
                batch = run_rollouts(rows, n=inputs.n, generator=generator, simulator=None, tokenizer=inputs.tokenizer, cfg=single,
                                     seed=seed, prompt_fn=builders.setdefault(cell, cell.prompt_fn()), cache=cache,
                                     keep_prompt_ids=False)
                outputs = [(t.row_index, t.solution_text) for t in batch]
                rolled = len({t.row_index for t in batch})
                notes.append(skip_note(batch.stats, single.max_prompt_length))
            outcomes = run_agent_episodes(agents, n=inputs.n, generator=generator, tokenizer=inputs.tokenizer, cfg=inputs.rollout_cfg,
                                          seed=seed, cell=cell, user_cfg=cfg.acebench.user) if agents else []
            notes.append(agent_skip_note(outcomes, inputs.rollout_cfg.max_prompt_length))
            accuracy = {**score_outputs(entries, outputs), **agent_metrics(outcomes)}  # its summary is redone over every group
            evaluated = rolled + len({o.entry.id for o in outcomes if o.score is not None})
            metrics = {**accuracy, **summary(accuracy), "rows": float(evaluated), "skipped_rows": float(len(rows) + len(agents) - evaluated)}
            return SeedRun(metrics, evaluated, "; ".join(n for n in notes if n))

        return run_grid(inputs, "acebench", run_cell)


BENCHMARKS.register("acebench")(AceBenchBenchmark())
