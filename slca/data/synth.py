"""Synthetic Toucan-shaped data (`slca data synth`): trajectories in the SFT schema, then the same
derivation as real data (eval carved first, RL rows per user turn) into the published schemas.

A dataset draws `n_tools` tools from the catalogue (always including dependent pairs); each row
offers `tools_per_row` of them (always the ones it needs). Each user turn is one task: single
call, parallel calls (one step, several calls), dependent steps (a chain), or an irrelevant
request answered without a call. Answers after tool calls cite the results, except a share
`uncited_answer_fraction` that reports none of them (an imperfect teacher). A biased teacher
(`redundant_call_fraction`, `omitted_optional_fraction` in the calls, `omitted_results_fraction` in
the answer) makes systematic, reward-visible errors in the SFT split only, so SFT inherits them and
RL has something to fix (docs/method.md#biased-teacher). Everything derives from
`cfg.seed`: per-trajectory RNGs are seeded by (seed, trajectory number), so the same config gives
byte-identical files.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from slca.data import hermes
from slca.data.catalogue import BY_NAME, CHAINS, IRRELEVANT, IRRELEVANT_ANSWER, SLOTS, TOOLS, Chain, ToolDef

if TYPE_CHECKING:
    from slca.config.groups.data import SyntheticData

GENERATOR_VERSION = 3  # bump when the generator's output changes, so caches are rebuilt
# What the generator can do (docs/method.md#numbers-empty-files-and-limits): a split is capped at a
# million rows (10 to 20 minutes of generation on one core; full Toucan has 74,241 SFT rows), so a
# typo cannot run for days; the catalogue holds len(TOOLS) tools. `slca data synth` refuses more of
# either; a spec may ask for more tools (the config allows it), gets the whole catalogue, and the
# manifest's `used` says so.
MAX_ROWS = 1_000_000
LIMITS = MappingProxyType({"n_sft": MAX_ROWS, "n_rl": MAX_ROWS, "n_eval": MAX_ROWS, "n_tools": len(TOOLS)})
_ROW_OPTIONS = ("n_sft", "n_rl", "n_eval")
_OPENERS = ("Please {c}.", "Can you {c}?", "I need you to {c}.")
_FOLLOWUPS = ("Next, please {c}.", "Also, can you {c}?")
_NS = uuid.UUID("6a1c0d2e-1f2b-4c3d-9e8f-5a4b3c2d1e0f")
# What an imperfect teacher says instead of reporting the tool results (`uncited_answer_fraction`).
UNCITED_ANSWERS = (
    "I have the results from the tool.",
    "Done, the tool returned its results.",
    "The request was completed with the tools.",
)
# The biased teacher's answer habit (`omitted_results_fraction`): one fixed sentence that reports no
# tool result, in words no cited answer uses, so a policy's habit is visible and the grounding judge
# scores it 0 (docs/method.md#biased-teacher).
RESULTLESS_ANSWER = "Finished, nothing else needed."


def _fmt(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        return " and ".join(str(x) for x in v)
    return str(v)


def _fill(template: str, values: dict[str, Any]) -> str:
    return template.format(**{k: _fmt(v) for k, v in values.items()})


@dataclass
class Task:
    kind: str  # single | parallel | multistep | irrelevant
    clause: str
    steps: list[list[dict[str, Any]]]
    responses: list[list[dict[str, Any]]]
    answer: str


def _args(t: ToolDef, rng: random.Random, fixed: dict[str, Any] | None = None, optional_p: float = 0.3,
          ) -> tuple[dict[str, Any], str]:
    """Arguments for one call (required + some optional) and the request clause naming them."""
    args: dict[str, Any] = {}
    for p in t.required:
        args[p] = SLOTS[t.slots[p]](rng)
    suffix = ""
    for p, extra in t.optional_clauses.items():
        if rng.random() < optional_p:
            args[p] = SLOTS[t.slots[p]](rng)
            suffix += _fill(extra, args)
    if fixed:
        args.update(fixed)
    # keep the schema's parameter order so identical calls serialise identically
    args = {p: args[p] for p in t.properties if p in args}
    return args, _fill(t.clause, args) + suffix


def _call(t: ToolDef, args: dict[str, Any], rng: random.Random) -> tuple[dict[str, Any], dict[str, Any], str]:
    resp = t.respond(args, rng)
    return {"name": t.name, "arguments": args}, resp, _fill(t.answer, {**args, **resp})


def make_task(kind: str, tools: list[ToolDef], chains: list[Chain], rng: random.Random) -> Task:
    """One user task of `kind` over the dataset's tools (multistep falls back to single without a chain)."""
    if kind == "irrelevant":
        clause = _fill(rng.choice(IRRELEVANT), {k: SLOTS[k](rng) for k in ("word", "city", "product", "genre")})
        return Task(kind, clause, [], [], IRRELEVANT_ANSWER)
    if kind == "multistep" and chains:
        ch = rng.choice(chains)
        t1, t2 = BY_NAME[ch.first], BY_NAME[ch.second]
        a1, c1 = _args(t1, rng, optional_p=0.0)
        call1, r1, ans1 = _call(t1, a1, rng)
        a2, _ = _args(t2, rng, fixed={ch.param: r1[ch.out]}, optional_p=0.0)
        call2, r2, ans2 = _call(t2, a2, rng)
        clause = f"{c1}, then {_fill(ch.clause, a2)}"
        return Task(kind, clause, [[call1], [call2]], [[r1], [r2]], f"{ans1} {ans2}")
    if kind == "parallel":
        t1 = rng.choice(tools)
        t2 = t1 if rng.random() < 0.5 or len(tools) == 1 else rng.choice([t for t in tools if t is not t1])
        a1, c1 = _args(t1, rng)
        for _ in range(8):  # two identical calls would not be a parallel task
            a2, c2 = _args(t2, rng)
            if (t2.name, a2) != (t1.name, a1):
                break
        call1, r1, ans1 = _call(t1, a1, rng)
        call2, r2, ans2 = _call(t2, a2, rng)
        return Task(kind, f"{c1} and {c2}", [[call1, call2]], [[r1, r2]], f"{ans1} {ans2}")
    t = rng.choice(tools)
    a, c = _args(t, rng)
    call, r, ans = _call(t, a, rng)
    return Task("single", c, [[call]], [[r]], ans)


def catalogue_sample(n_tools: int, seed: int) -> tuple[list[ToolDef], list[Chain]]:
    """The dataset's tools: whole dependent pairs first (about one per four tools), then others."""
    rng = random.Random(f"{seed}:catalogue")
    n = min(n_tools, len(TOOLS))
    chosen: list[str] = []
    chains = CHAINS[:]
    rng.shuffle(chains)
    for ch in chains[: max(1, n // 4) if n >= 2 else 0]:
        for name in (ch.first, ch.second):
            if name not in chosen and len(chosen) < n:
                chosen.append(name)
    rest = [t.name for t in TOOLS if t.name not in chosen]
    rng.shuffle(rest)
    chosen += rest[: n - len(chosen)]
    usable = [ch for ch in CHAINS if ch.first in chosen and ch.second in chosen]
    return [BY_NAME[c] for c in sorted(chosen)], usable


def _kind(rng: random.Random, cfg: SyntheticData) -> str:
    x = rng.random()
    for kind, p in (("irrelevant", cfg.irrelevant_fraction), ("parallel", cfg.parallel_fraction),
                    ("multistep", cfg.multistep_fraction)):
        if x < p:
            return kind
        x -= p
    return "single"


def omit_optional(task: Task, share: float, rng: random.Random) -> None:
    """Biased teacher: each requested optional argument is left out of its call with probability `share`
    (the request still asks for it, so argument F1 drops; docs/method.md#biased-teacher)."""
    for step in task.steps:
        for call in step:
            optional = BY_NAME[call["name"]].optional_clauses
            for p in [p for p in call["arguments"] if p in optional]:
                if rng.random() < share:
                    del call["arguments"][p]


def add_redundant_call(task: Task, offered: list[str], rng: random.Random) -> None:
    """Biased teacher: one extra step calling an offered tool the task does not need, after the correct
    calls; the answer is unchanged (Name F1 precision drops). Nothing when every offered tool is used.

    The extra call always carries that tool's default arguments (one fixed draw per tool): a habit the
    model can pick up, not values found nowhere in the request (docs/method.md#biased-teacher)."""
    used = {c["name"] for step in task.steps for c in step}
    spare = sorted(n for n in offered if n not in used)
    if not spare:
        return
    tool = BY_NAME[rng.choice(spare)]
    defaults = _args(tool, random.Random(f"redundant-defaults:{tool.name}"), optional_p=0.0)[0]
    extra, resp, _ = _call(tool, defaults, rng)
    task.steps.append([extra])
    task.responses.append([resp])


def limit_problem(name: str, value: int) -> str | None:
    """Why `value` exceeds what the generator can do for option `name` (a LIMITS key), or None."""
    cap = LIMITS[name]
    if value <= cap:
        return None
    shown = str(value) if len(str(value)) <= 30 else f"a {len(str(value))}-digit number"
    what = f"the catalogue has {cap} tools" if name == "n_tools" else f"the generator's cap is {cap:,} rows per split"
    return f"at most {cap:,} ({what}), got {shown}"


def check_limits(cfg: SyntheticData) -> None:
    """DataInputError naming `data.<option>` when cfg asks for more rows than the generator makes."""
    from slca.data.errors import DataInputError

    for name in _ROW_OPTIONS:
        problem = limit_problem(name, getattr(cfg, name))
        if problem is not None:
            raise DataInputError(f"data.{name}: {problem}")


def trajectory(i: int, cfg: SyntheticData, tools: list[ToolDef], chains: list[Chain], *, biased: bool = False,
               ) -> dict[str, Any]:
    """The i-th synthetic trajectory as an SFT row (ShareGPT + hermes); `biased` applies the biased
    teacher's knobs (SFT split only), each from its own RNG so the clean row's draws are unchanged."""
    rng = random.Random(f"{cfg.seed}:traj:{i}")
    n_turns = 2 if rng.random() < cfg.followup_fraction else 1
    tasks = [make_task(_kind(rng, cfg), tools, chains, rng) for _ in range(n_turns)]
    if cfg.uncited_answer_fraction > 0:
        # Its own RNG, so that calls and responses stay those of the clean set.
        answer_rng = random.Random(f"{cfg.seed}:answer:{i}")
        for task in tasks:
            if task.steps and answer_rng.random() < cfg.uncited_answer_fraction:
                task.answer = answer_rng.choice(UNCITED_ANSWERS)
    needed = sorted({c["name"] for t in tasks for s in t.steps for c in s})
    lo, hi = cfg.tools_per_row
    k = max(len(needed), min(rng.randint(lo, hi), len(tools)))
    others = [t.name for t in tools if t.name not in needed]
    rng.shuffle(others)
    offered = needed + others[: k - len(needed)]
    rng.shuffle(offered)
    if biased:
        omit_rng = random.Random(f"{cfg.seed}:omit:{i}")
        extra_rng = random.Random(f"{cfg.seed}:redundant:{i}")
        results_rng = random.Random(f"{cfg.seed}:results:{i}")
        for task in tasks:
            if cfg.omitted_optional_fraction > 0:
                omit_optional(task, cfg.omitted_optional_fraction, omit_rng)
            if task.steps and extra_rng.random() < cfg.redundant_call_fraction:
                add_redundant_call(task, offered, extra_rng)
            if task.steps and results_rng.random() < cfg.omitted_results_fraction:
                task.answer = RESULTLESS_ANSWER
    conv = [{"from": "system", "value": hermes.reference_system([BY_NAME[n].schema() for n in offered])}]
    for turn, task in enumerate(tasks):
        opener = rng.choice(_OPENERS if turn == 0 else _FOLLOWUPS)
        conv.append({"from": "human", "value": opener.format(c=task.clause)})
        for step, resps in zip(task.steps, task.responses):
            conv.append({"from": "gpt", "value": hermes.render_calls(step, parallel_style=cfg.parallel_style)})
            conv.append({"from": "human", "value": hermes.render_responses([json.dumps(r, ensure_ascii=False) for r in resps])})
        conv.append({"from": "gpt", "value": task.answer})
    return {
        "uuid": str(uuid.uuid5(_NS, f"{cfg.seed}:{i}")),
        "subset_name": "synthetic-" + "+".join(t.kind for t in tasks),
        "question": conv[1]["value"],
        "target_tools": ", ".join(needed),
        "conversations": conv,
    }


def config_hash(cfg: SyntheticData) -> str:
    """Key of a generated set: the config (less where it is cached) and the generator version."""
    payload = cfg.model_dump(mode="json", exclude={"cache_dir"})
    payload["_generator_version"] = GENERATOR_VERSION
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class SyntheticPaths:
    root: Path
    sft: Path
    sft_full: Path
    rl: Path
    eval: Path
    manifest: Path

    @classmethod
    def under(cls, root: str | os.PathLike[str]) -> SyntheticPaths:
        r = Path(root)
        return cls(r, r / "sft.parquet", r / "sft_full.parquet", r / "rl.parquet", r / "eval.parquet", r / "manifest.json")

    def as_dict(self) -> dict[str, str]:
        return {k: str(v) for k, v in self.__dict__.items()}


def synthesize(cfg: SyntheticData, out_dir: str | os.PathLike[str]) -> SyntheticPaths:
    """Generate all four splits into `out_dir` (each file atomic); eval rows are carved first,
    then RL rows, then SFT conversations; trajectories that repeat an eval trajectory, or
    any of its user turns, are skipped, so no eval question reaches training."""
    from slca.data.dialogue import dialogue_key, parse_conversations
    from slca.data.io import RowWriter
    from slca.fileio import atomic_write_text
    from slca.data.prepare import Funnel, PrepareOptions, route, turn_keys
    from slca.data.schemas import arrow_schema

    check_limits(cfg)
    paths = SyntheticPaths.under(out_dir)
    paths.root.mkdir(parents=True, exist_ok=True)
    tools, chains = catalogue_sample(cfg.n_tools, cfg.seed)
    opts = PrepareOptions(seed=cfg.seed, data_source="synthetic_toolcall")
    writers = {
        "eval": RowWriter(paths.eval, arrow_schema("eval")),
        "rl": RowWriter(paths.rl, arrow_schema("rl")),
        "sft": RowWriter(paths.sft, arrow_schema("sft")),
        "sft_full": RowWriter(paths.sft_full, arrow_schema("sft")),
    }
    funnel = Funnel()
    biased_teacher = cfg.redundant_call_fraction > 0 or cfg.omitted_optional_fraction > 0 or cfg.omitted_results_fraction > 0
    eval_keys: set[str] = set()
    eval_turns: set[bytes] = set()
    # tools offered per written trajectory (a row whose tasks need more gets more than tools_per_row)
    fewest_offered, most_offered = len(TOOLS), 0
    i = 0
    try:
        max_tries = 50 * (cfg.n_eval + cfg.n_rl + cfg.n_sft) + 1000
        while funnel.sft_trajectories < cfg.n_sft:
            if i > max_tries:
                from slca.data.errors import DataInputError

                raise DataInputError(f"the synthetic generator cannot find {cfg.n_sft} distinct SFT trajectories "
                                     f"with {cfg.n_tools} tools; raise n_tools or lower n_sft")
            row = trajectory(i, cfg, tools, chains)
            i += 1
            funnel.raw += 1
            d, errs = parse_conversations(row["conversations"])
            if errs:  # a generator bug, never expected: fail loudly
                raise AssertionError(f"synthetic row {i - 1} is invalid: {errs}")
            funnel.valid += 1
            key = dialogue_key(d)
            to_eval = funnel.eval_rows < cfg.n_eval
            # Only eval must be unique and disjoint from training (templated questions repeat;
            # dropping every repeat would skew the task mix toward tools with many slot values).
            if key in eval_keys:
                funnel.duplicates += 1
                continue
            funnel.unique += 1
            tk = turn_keys(d)
            if to_eval:
                eval_keys.add(key)
                eval_turns.update(tk)
            elif not eval_turns.isdisjoint(tk):
                funnel.eval_overlap += 1
                continue
            fewest_offered, most_offered = min(fewest_offered, len(d.tool_names)), max(most_offered, len(d.tool_names))
            if to_eval:
                route(row, d, key, "eval", writers, funnel, opts, max_rows=cfg.n_eval - funnel.eval_rows)
            elif funnel.rl_rows < cfg.n_rl:
                route(row, d, key, "rl", writers, funnel, opts, max_rows=cfg.n_rl - funnel.rl_rows)
            else:
                if biased_teacher:  # only SFT rows are biased; dedup and overlap used the clean row above
                    row = trajectory(i - 1, cfg, tools, chains, biased=True)
                    d, errs = parse_conversations(row["conversations"])
                    if errs:
                        raise AssertionError(f"biased synthetic row {i - 1} is invalid: {errs}")
                route(row, d, key, "sft", writers, funnel, opts)
        for w in writers.values():
            w.close()
    except BaseException:
        for w in writers.values():
            w.abort()
        raise
    funnel.check()
    manifest = {
        "generator_version": GENERATOR_VERSION,
        "config": cfg.model_dump(mode="json"),
        "config_hash": config_hash(cfg),
        # what the generator actually made, beside what the config asked for
        "used": {"n_tools": len(tools), "n_sft": funnel.sft_trajectories, "n_rl": funnel.rl_rows,
                 "n_eval": funnel.eval_rows, "tools_per_row": [fewest_offered, most_offered]},
        "tools": [t.name for t in tools],
        "chains": [f"{c.first}.{c.out} -> {c.second}.{c.param}" for c in chains],
        "funnel": funnel.as_dict(),
        "files": {k: Path(v).name for k, v in paths.as_dict().items() if k not in ("root", "manifest")},
    }
    atomic_write_text(paths.manifest, json.dumps(manifest, indent=2) + "\n")
    return paths


OWNED_FILES = tuple(Path(p).name for k, p in SyntheticPaths.under(".").as_dict().items() if k != "root")


def synthesize_dir(cfg: SyntheticData, out_dir: str | os.PathLike[str]) -> SyntheticPaths:
    """`synthesize` into `out_dir` as one unit (`slca data synth`): written into a temporary sibling
    directory that replaces `out_dir` at the end, so a failure leaves the old set untouched."""
    from slca.data.outputs import check_out_dir
    from slca.fileio import make_parents, remove_made
    from slca.fileio import atomic_directory

    check_out_dir(out_dir, [], OWNED_FILES)
    made = make_parents(out_dir)
    try:
        with atomic_directory(out_dir) as tmp:
            synthesize(cfg, tmp)
    except BaseException:
        remove_made(made)
        raise
    return SyntheticPaths.under(out_dir)


def ensure_synthetic(cfg: SyntheticData) -> SyntheticPaths:
    """Paths of the set for `cfg`, generating it on first use into `cfg.cache_dir/<config hash>/`.

    Generation goes to a private temp folder that is renamed into place, so concurrent callers
    and crashes never expose a partial set.
    """
    root = Path(cfg.cache_dir) / config_hash(cfg)
    paths = SyntheticPaths.under(root)
    if paths.manifest.exists():
        return paths
    import tempfile

    from slca.fileio import remove_stale, temp_prefix

    root.parent.mkdir(parents=True, exist_ok=True)
    remove_stale(root)
    tmp = Path(tempfile.mkdtemp(prefix=temp_prefix(root), suffix=".tmp", dir=root.parent))
    try:
        synthesize(cfg, tmp)
        try:
            os.rename(tmp, root)
        except OSError:
            if not paths.manifest.exists():  # not a lost race: a real error
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return paths
