"""Synthetic set: determinism, schema, task mix, grounding, recorded responses, caching."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from slca.config.groups.data import SyntheticData
from slca.data import hermes
from slca.data.catalogue import BY_NAME, CHAINS, TOOLS
from slca.data.dialogue import parse_conversations
from slca.data.io import read_rows, write_rows
from slca.data.schemas import gold_steps
from slca.data.synth import catalogue_sample, ensure_synthetic, synthesize


def test_same_seed_same_bytes_other_seed_differs(small_cfg, synth_set, tmp_path):
    again = synthesize(small_cfg, tmp_path / "again")
    for name in ("sft", "sft_full", "rl", "eval"):
        assert getattr(synth_set, name).read_bytes() == getattr(again, name).read_bytes(), name
    other = synthesize(small_cfg.model_copy(update={"seed": 4}), tmp_path / "other")
    assert other.rl.read_bytes() != synth_set.rl.read_bytes()


def test_sizes_and_manifest(small_cfg, synth_set):
    assert sum(1 for _ in read_rows(synth_set.sft)) == small_cfg.n_sft
    assert sum(1 for _ in read_rows(synth_set.rl)) == small_cfg.n_rl
    assert sum(1 for _ in read_rows(synth_set.eval)) == small_cfg.n_eval
    man = json.loads(synth_set.manifest.read_text())
    assert len(man["tools"]) == small_cfg.n_tools and man["chains"]
    assert man["funnel"]["rl_rows"] == small_cfg.n_rl


def test_the_manifest_records_what_the_generator_used(small_cfg, synth_set):
    man = json.loads(synth_set.manifest.read_text())
    used = man["used"]
    assert used["n_tools"] == len(man["tools"]) == small_cfg.n_tools
    assert (used["n_sft"], used["n_rl"], used["n_eval"]) == (small_cfg.n_sft, small_cfg.n_rl, small_cfg.n_eval)
    # every written trajectory is in sft_full (SFT and RL ones) or behind an eval row
    offered = [len(parse_conversations(r["conversations"])[0].tool_names) for r in read_rows(synth_set.sft_full)]
    offered += [len(r["reward_model"]["ground_truth"]["allowed_tools"]) for r in read_rows(synth_set.eval)]
    assert used["tools_per_row"] == [min(offered), max(offered)]


def test_options_beyond_what_the_generator_can_make_are_refused_by_name(small_cfg, tmp_path, capsys):
    from slca.data.errors import DataInputError
    from slca.data.synth import MAX_ROWS
    from tests.badinput import run_cli

    assert len(catalogue_sample(len(TOOLS), 0)[0]) == len(TOOLS)  # the cap is what the catalogue holds
    # the caps as documented and as `slca data synth --help` states them
    text = run_cli(["data", "synth", "--help"], capsys).out
    assert f"1 to {MAX_ROWS:,}" in text and f"1 to {len(TOOLS)} (all of it)" in text
    method = Path(__file__).resolve().parents[2].joinpath("docs", "method.md").read_text()
    assert f"at most {MAX_ROWS:,} each" in method and f"the catalogue's {len(TOOLS)} tools" in method
    for name, value in (("n_sft", MAX_ROWS + 1), ("n_rl", 10**20), ("n_eval", MAX_ROWS + 1)):
        cfg = small_cfg.model_copy(update={name: value})  # as a spec could hold it
        with pytest.raises(DataInputError, match=rf"^data\.{name}: at most "):
            synthesize(cfg, tmp_path / name)
        assert not (tmp_path / name).exists()
    # a spec asking for more tools than the catalogue holds gets all of them, and the manifest says so
    many = synthesize(small_cfg.model_copy(update={"n_tools": 1000, "n_sft": 4, "n_rl": 2, "n_eval": 2}), tmp_path / "all")
    man = json.loads(many.manifest.read_text())
    assert man["config"]["n_tools"] == 1000 and man["used"]["n_tools"] == len(man["tools"]) == len(TOOLS)


def test_catalogue_is_typed_and_diverse():
    assert len(TOOLS) >= 24 and len({t.domain for t in TOOLS}) >= 8
    types = {p["type"] for t in TOOLS for p in t.properties.values()}
    assert {"string", "number", "integer", "boolean"} <= types
    assert any("enum" in p for t in TOOLS for p in t.properties.values())
    for t in TOOLS:
        assert set(t.required) <= set(t.properties) and set(t.slots) == set(t.properties), t.name
    tools, chains = catalogue_sample(8, 0)
    assert len(tools) == 8 and chains
    assert all(c.first in {t.name for t in tools} and c.second in {t.name for t in tools} for c in chains)
    assert all(c.first in BY_NAME and c.second in BY_NAME for c in CHAINS)


def test_task_mix_and_offered_tools(tmp_path):
    cfg = SyntheticData(seed=1, n_sft=600, n_rl=10, n_eval=10, followup_fraction=0.0)
    paths = synthesize(cfg, tmp_path / "mix")
    kinds = {"single": 0, "parallel": 0, "multistep": 0, "irrelevant": 0}
    tools_per_row = []
    for r in read_rows(paths.sft):
        kinds[r["subset_name"].removeprefix("synthetic-")] += 1
        d, _ = parse_conversations(r["conversations"])
        tools_per_row.append(len(d.tools))
        called = {c["name"] for t in d.turns for c in t.calls}
        assert called <= set(d.tool_names)
    n = sum(kinds.values())
    assert abs(kinds["parallel"] / n - 0.22) < 0.06
    assert abs(kinds["irrelevant"] / n - 0.10) < 0.05
    assert kinds["multistep"] > 0.08 * n
    assert min(tools_per_row) == 2 and max(tools_per_row) == 4


def test_rl_rows_have_nested_gold_with_arguments_and_recorded_responses(synth_set):
    seen_parallel = seen_multi = seen_irrelevant = False
    for r in read_rows(synth_set.rl):
        gt = r["reward_model"]["ground_truth"]
        steps, shape = gold_steps(gt["gold_tool_calls"])
        assert shape == ("nested" if steps else "empty")
        recorded = json.loads(r["extra_info"]["gold_responses"])
        calls = [c for s in steps for c in s]
        assert [(c["name"], c["arguments"]) for c in calls] == [(x["name"], x["arguments"]) for x in recorded]
        for c in calls:
            spec = BY_NAME[c["name"]]
            assert set(spec.required) <= set(c["arguments"]) <= set(spec.properties)
        if not steps:
            seen_irrelevant = True
            assert gt["subset_name"] == "irrelevant"
            continue
        seen_parallel |= any(len(s) > 1 for s in steps)
        if len(steps) > 1:
            seen_multi = True
            # dependent step: a value from step 1's recorded response is an argument of step 2
            first = json.loads(recorded[0]["response"])
            assert set(map(str, first.values())) & set(map(str, steps[1][0]["arguments"].values()))
    assert seen_parallel and seen_multi and seen_irrelevant


def test_final_answers_cite_response_values(synth_set):
    for r in read_rows(synth_set.sft):
        d, _ = parse_conversations(r["conversations"])
        for k, t in enumerate(d.turns):
            if t.role != "tool":
                continue
            answer = next(u for u in d.turns[k + 1:] if u.role == "assistant" and not u.calls).text
            for resp in t.responses:
                for v in json.loads(resp).values():
                    vals = v if isinstance(v, list) else [v]
                    assert all(str(x) in answer for x in vals), (resp, answer)


def test_uncited_answers_change_only_answers(small_cfg, synth_set, tmp_path):
    from slca.data.synth import UNCITED_ANSWERS

    noisy = synthesize(small_cfg.model_copy(update={"uncited_answer_fraction": 0.5}), tmp_path / "noisy")
    clean_rows, noisy_rows = list(read_rows(synth_set.sft)), list(read_rows(noisy.sft))
    assert len(clean_rows) == len(noisy_rows)
    uncited = after_tools = 0
    for clean, other in zip(clean_rows, noisy_rows):
        c, o = clean["conversations"], other["conversations"]
        assert [m["from"] for m in c] == [m["from"] for m in o]
        for k, (a, b) in enumerate(zip(c, o)):
            final_after_tools = a["from"] == "gpt" and "<tool_call>" not in a["value"] and "<tool_response>" in c[k - 1]["value"]
            if not final_after_tools:
                assert a == b  # calls, responses, questions and direct answers are those of the clean set
                continue
            after_tools += 1
            if b["value"] != a["value"]:
                assert b["value"] in UNCITED_ANSWERS
                uncited += 1
    assert 0.35 < uncited / after_tools < 0.65
    # RL gold and requests are unaffected (a follow-up prompt's history carries the earlier answer).
    for clean, other in zip(read_rows(synth_set.rl), read_rows(noisy.rl)):
        assert clean["reward_model"] == other["reward_model"] and clean["prompt"][-1] == other["prompt"][-1]


def test_parallel_style_blocks(tmp_path):
    cfg = SyntheticData(seed=2, n_sft=80, n_rl=5, n_eval=5, parallel_fraction=1.0, irrelevant_fraction=0.0,
                        multistep_fraction=0.0, parallel_style="blocks")
    paths = synthesize(cfg, tmp_path / "blocks")
    row = next(read_rows(paths.sft))
    gpt = next(t["value"] for t in row["conversations"] if t["from"] == "gpt")
    assert len(hermes.parse_calls(gpt)) == 2 and all(len(b) == 1 for b in hermes.parse_calls(gpt))


def test_round_trip_through_jsonl(synth_set, tmp_path):
    rows = list(read_rows(synth_set.rl))
    write_rows(tmp_path / "rl.jsonl", iter(rows))
    assert list(read_rows(tmp_path / "rl.jsonl")) == rows
    write_rows(tmp_path / "rl2.parquet", read_rows(tmp_path / "rl.jsonl"))
    assert list(read_rows(tmp_path / "rl2.parquet")) == rows


def test_ensure_synthetic_caches(tmp_path):
    cfg = SyntheticData(seed=5, n_sft=40, n_rl=10, n_eval=5, cache_dir=str(tmp_path / "cache"))
    p1 = ensure_synthetic(cfg)
    assert p1.root.parent == tmp_path / "cache" and re.fullmatch(r"[0-9a-f]{16}", p1.root.name)
    stamp = p1.rl.stat().st_mtime_ns
    p2 = ensure_synthetic(cfg)
    assert p2 == p1 and p2.rl.stat().st_mtime_ns == stamp  # not regenerated
    assert [x.name for x in (tmp_path / "cache").iterdir()] == [p1.root.name]  # no temp folders left
    p3 = ensure_synthetic(cfg.model_copy(update={"n_rl": 11}))
    assert p3.root != p1.root
    # the cache location is not part of the key
    assert ensure_synthetic(cfg.model_copy(update={"cache_dir": str(tmp_path / "c2")})).root.name == p1.root.name


# ------------------------------------------------------------------ biased teacher (SFT split only)

BIASED = {"redundant_call_fraction": 0.45, "omitted_optional_fraction": 0.5, "omitted_results_fraction": 0.6}


def _tasks(conversations):
    """Per user request: (its calls step by step, the offered tool names)."""
    d, errs = parse_conversations(conversations)
    assert not errs
    tasks, steps = [], None
    for t in d.turns:
        if t.role == "user":
            steps = []
            tasks.append(steps)
        elif t.role == "assistant" and t.calls:
            steps.append([(c["name"], c["arguments"]) for c in t.calls])
    return tasks, set(d.tool_names)


def _answers(conversations):
    """Per user request: (whether it called a tool, its final answer)."""
    d, errs = parse_conversations(conversations)
    assert not errs
    out = []
    for t in d.turns:
        if t.role == "user":
            out.append([False, None])
        elif t.role == "assistant" and t.calls:
            out[-1][0] = True
        elif t.role == "assistant":
            out[-1][1] = t.text
    return [tuple(x) for x in out]


def _first_request_text(conversations):
    """What a rollout of the first request would produce: calls, tool responses, then the answer."""
    out = []
    for m in conversations[2:]:
        if m["from"] == "human" and "<tool_response>" not in m["value"]:
            break
        out.append(m["value"])
    return "\n".join(out)


@pytest.fixture(scope="module")
def biased_root(tmp_path_factory):
    return tmp_path_factory.mktemp("biased")


@pytest.fixture(scope="module")
def biased_pair(biased_root):
    base = SyntheticData(seed=6, n_sft=700, n_rl=40, n_eval=20)
    return base, synthesize(base, biased_root / "clean"), synthesize(base.model_copy(update=BIASED), biased_root / "biased")


def test_biased_teacher_leaves_rl_and_eval_splits_byte_identical(biased_pair):
    base, clean, biased = biased_pair
    assert clean.rl.read_bytes() == biased.rl.read_bytes() and clean.eval.read_bytes() == biased.eval.read_bytes()
    assert clean.sft.read_bytes() != biased.sft.read_bytes()
    assert json.loads(clean.manifest.read_text())["funnel"] == json.loads(biased.manifest.read_text())["funnel"]
    # knobs written out at 0 are the clean teacher, byte for byte
    zero = synthesize(base.model_copy(update={k: 0.0 for k in BIASED}), clean.root.parent / "zero")
    for name in ("sft", "sft_full", "rl", "eval"):
        assert getattr(zero, name).read_bytes() == getattr(clean, name).read_bytes(), name


def test_each_bias_appears_at_its_share_and_nothing_else_changes(biased_pair):
    _, clean, biased = biased_pair
    redundant = eligible = omitted = optional = 0
    extra_args: dict[str, set[str]] = {}  # redundant tool -> every argument set it was called with
    for a, b in zip(read_rows(clean.sft), read_rows(biased.sft), strict=True):
        assert a["question"] == b["question"] and a["target_tools"] == b["target_tools"]
        clean_tasks, offered = _tasks(a["conversations"])
        biased_tasks, _ = _tasks(b["conversations"])
        for ct, bt in zip(clean_tasks, biased_tasks, strict=True):
            if not ct:
                assert bt == []  # direct answers are never biased
                continue
            used = {name for step in ct for name, _ in step}
            if offered - used:
                eligible += 1
            assert len(bt) in (len(ct), len(ct) + 1)
            if len(bt) == len(ct) + 1:
                redundant += 1
                [(name, args)] = bt[-1]
                assert name in offered - used and set(BY_NAME[name].required) == set(args)
                extra_args.setdefault(name, set()).add(json.dumps(args, sort_keys=True))
            for cstep, bstep in zip(ct, bt):
                for (cname, cargs), (bname, bargs) in zip(cstep, bstep, strict=True):
                    assert cname == bname and bargs.items() <= cargs.items()
                    opt = [p for p in cargs if p in BY_NAME[cname].optional_clauses]
                    optional += len(opt)
                    omitted += sum(p not in bargs for p in opt)
                    # only optional arguments are ever left out
                    assert set(cargs) - set(bargs) <= set(opt)
    # a habit, not noise: each tool's redundant call always carries the same default arguments
    assert len(extra_args) > 5 and all(len(v) == 1 for v in extra_args.values()), extra_args
    for hits, n, p in ((redundant, eligible, BIASED["redundant_call_fraction"]),
                       (omitted, optional, BIASED["omitted_optional_fraction"])):
        assert_share(hits, n, p)


def assert_share(hits: int, n: int, p: float) -> None:
    assert n > 100, n
    assert abs(hits / n - p) < 4 * (p * (1 - p) / n) ** 0.5, (hits, n, p)  # 4-sigma binomial band


def test_the_resultless_answer_replaces_a_majority_of_answers_after_calls_in_words_no_cited_answer_uses(biased_pair):
    from slca.data.synth import RESULTLESS_ANSWER

    _, clean, biased = biased_pair
    resultless = after_calls = 0
    clean_words: set[str] = set()
    for a, b in zip(read_rows(clean.sft), read_rows(biased.sft), strict=True):
        for (called, clean_answer), (_, answer) in zip(_answers(a["conversations"]), _answers(b["conversations"]), strict=True):
            clean_words |= set(re.findall(r"[a-z]+", clean_answer.lower()))
            if not called:
                assert answer == clean_answer  # direct answers are never biased
                continue
            after_calls += 1
            if answer != clean_answer:
                assert answer == RESULTLESS_ANSWER
                resultless += 1
    assert_share(resultless, after_calls, BIASED["omitted_results_fraction"])
    # distinct tokens: a policy's habit shows in its answer's first word
    assert not set(re.findall(r"[a-z]+", RESULTLESS_ANSWER.lower())) & clean_words


def test_the_answer_bias_and_the_call_bias_are_drawn_independently(biased_pair, biased_root):
    base, clean, biased = biased_pair
    calls_only = synthesize(base.model_copy(update={**BIASED, "omitted_results_fraction": 0.0}), biased_root / "calls_only")
    answers_only = synthesize(base.model_copy(update={"omitted_results_fraction": BIASED["omitted_results_fraction"]}),
                              biased_root / "answers_only")
    assert answers_only.rl.read_bytes() == clean.rl.read_bytes() and answers_only.eval.read_bytes() == clean.eval.read_bytes()
    both = redundant = resultless = eligible = 0
    for c, b, calls, answers in zip(*(read_rows(p.sft) for p in (clean, biased, calls_only, answers_only)), strict=True):
        # each knob's draws are the same whether or not the other knob is on
        assert _tasks(b["conversations"]) == _tasks(calls["conversations"])
        assert [x[1] for x in _answers(b["conversations"])] == [x[1] for x in _answers(answers["conversations"])]
        clean_tasks, offered = _tasks(c["conversations"])
        for ct, bt, (_, clean_answer), (_, answer) in zip(clean_tasks, _tasks(b["conversations"])[0],
                                                          _answers(c["conversations"]), _answers(b["conversations"]), strict=True):
            if not ct or not offered - {name for step in ct for name, _ in step}:
                continue  # only tasks that can carry both biases
            eligible += 1
            r, s = len(bt) > len(ct), answer != clean_answer
            redundant, resultless, both = redundant + r, resultless + s, both + (r and s)
    # independent draws: the joint share is the product of the marginal ones
    assert_share(both, eligible, (redundant / eligible) * (resultless / eligible))


def test_hierr_scores_each_biased_trajectory_below_the_clean_one(biased_pair):
    from slca.config.groups.reward import HierRReward
    from slca.data.prepare import PrepareOptions, decompose
    from slca.data.synth import RESULTLESS_ANSWER
    from slca.rewards import compute_score

    _, clean, biased = biased_pair
    cfg = HierRReward()
    compared = {"redundant": 0, "omitted": 0, "resultless": 0}
    for a, b in zip(read_rows(clean.sft), read_rows(biased.sft), strict=True):
        good, bad = _first_request_text(a["conversations"]), _first_request_text(b["conversations"])
        if good == bad:
            continue
        d, _ = parse_conversations(a["conversations"])
        gold = decompose(a, d, source_key="k", split="rl", opts=PrepareOptions(data_source="synthetic_toolcall"))[0]
        gt, info = gold["reward_model"]["ground_truth"], gold["extra_info"]
        r_good = compute_score(gold["data_source"], good, gt, info, reward_config=cfg)
        r_bad = compute_score(gold["data_source"], bad, gt, info, reward_config=cfg)
        assert r_good["success"] == 1 and r_good["process_score"] == pytest.approx(1.0), a["uuid"]
        assert r_bad["score"] < r_good["score"]
        calls_changed = good.rsplit("</tool_response>", 1)[0] != bad.rsplit("</tool_response>", 1)[0]
        if calls_changed:
            assert r_bad["process_score"] < r_good["process_score"] - 0.01, (a["uuid"], bad)
            compared["redundant" if bad.count("<tool_call>") > good.count("<tool_call>") else "omitted"] += 1
        if bad.endswith(RESULTLESS_ANSWER):
            # the answer cites nothing: the grounding judge gives it the lowest level, the clean one the highest
            assert (r_bad["summary_score"], r_good["summary_score"]) == (0.0, 1.0), (a["uuid"], good)
            compared["resultless"] += 1
    assert min(compared.values()) > 30, compared
