"""`slca data curate`: a policy that always, never or sometimes solves known prompts, reached as a
real OpenAI-compatible endpoint, splits them as each keep mode says; the outcome cache makes a
rerun free and lets an interrupted curation continue; the same seed keeps the same prompts."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.badinput import run_cli
from tests.conftest import serve_scripted
from tests.data.curate_helpers import CASE, coin, gold_calls, marked_table, scripted_policy, synthetic_rl, toy_overrides

# `slca data curate` end to end, rollouts of the tiny backbone included: not in `make test-fast`.
pytestmark = pytest.mark.slow

K = 4
BEHAVIOURS = ["always", "never", "half"] * 4


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("curate")


@pytest.fixture(scope="module")
def known_mix(work: Path) -> tuple[Path, pa.Table, dict]:
    table, plan = marked_table(synthetic_rl(work), BEHAVIOURS)
    path = work / "known_mix.parquet"
    pq.write_table(table, path)
    return path, table, plan


def curate_cli(capsys, work: Path, source: Path, out: Path, cache: Path, policy: str, *flags: str):  # type: ignore[no-untyped-def]
    result = run_cli(["data", "curate", source, *toy_overrides(work), "--out", out, "--policy", policy, "--cache", cache,
                      "--no-progress", "--json", *flags], capsys)
    assert result.code == 0, result.err
    return json.loads(result.out)


def kept_of(out: Path) -> pa.Table:
    return pq.read_table(out / "rl.parquet")


def test_prompts_a_policy_always_never_or_sometimes_solves_are_split_as_each_keep_mode_says(work, known_mix, capsys) -> None:
    source, table, plan = known_mix
    expected_successes = {"always": K, "never": 0, "half": K // 2}
    expected_kept = {"mixed": {"half"}, "not_all_correct": {"never", "half"}, "not_all_wrong": {"always", "half"}}
    cache = work / "mix-cache"
    with serve_scripted(scripted_policy(plan)) as endpoint:
        calls = []
        for mode in ("mixed", "not_all_correct", "not_all_wrong"):
            before = len(endpoint.requests)
            funnel = curate_cli(capsys, work, source, work / f"out-{mode}", cache, endpoint.url, "--rollouts", str(K),
                                "--keep", mode, "--batch-prompts", "5")
            calls.append(len(endpoint.requests) - before)
            rows = len(BEHAVIOURS)
            assert funnel["successes"] == {str(c): expected_successes[b] for c, (b, _) in plan.items()}
            assert funnel["histogram"] == {f"{s}/{K}": (rows // 3 if s in (0, K // 2, K) else 0) for s in range(K + 1)}
            keep = [plan[c][0] in expected_kept[mode] for c in range(rows)]
            # The kept rows are the input rows, columns and types unchanged.
            assert kept_of(work / f"out-{mode}").equals(table.filter(pa.array(keep)))
            assert funnel["kept"] == sum(keep)
            assert funnel["rows_in"] == funnel["kept"] + sum(funnel["dropped"].values())
            dropped = {r: n for r, n in funnel["dropped"].items() if n}
            assert dropped == {r: rows // 3 for r in {"mixed": ("all_correct", "all_wrong"), "not_all_correct": ("all_correct",),
                                                       "not_all_wrong": ("all_wrong",)}[mode]}
            on_disk = json.loads((work / f"out-{mode}" / "funnel.json").read_text())
            assert on_disk["kept"] == funnel["kept"] and on_disk["policy"] == endpoint.url
    # Every rollout is a first turn (a call) and, after its tool response, a final answer: 2 requests.
    assert calls[0] == 2 * K * len(BEHAVIOURS)
    # The keep mode is decided on the cached outcomes: switching it rolls nothing out again.
    assert calls[1:] == [0, 0]


def test_a_rerun_is_free_and_an_interrupted_curation_continues_to_the_same_result(work, known_mix) -> None:
    from slca.config.compose import compose_spec
    from slca.curate.cli import spec_backbone_dir
    from slca.curate.policy import endpoint_source
    from slca.curate.run import curate_file

    source, _, plan = known_mix
    spec = compose_spec([*toy_overrides(work), f"train.curate.rollouts={K}", "train.curate.batch_prompts=3", "train.curate.keep=mixed"])
    tokenizer_dir = spec_backbone_dir(spec)
    with serve_scripted(scripted_policy(plan)) as endpoint:
        policy = endpoint_source(spec, endpoint.url, lambda: tokenizer_dir)
        fresh = curate_file(source, work / "fresh", spec=spec, policy=policy, cache_dir=work / "fresh-cache", progress=False)
        assert fresh.cached_batches == 0 and fresh.generator_calls > 0

        def stop_after_two(batch: int) -> None:
            if batch == 1:
                raise KeyboardInterrupt

        out = work / "interrupted"
        with pytest.raises(KeyboardInterrupt):
            curate_file(source, out, spec=spec, policy=policy, cache_dir=work / "resume-cache", progress=False, on_batch=stop_after_two)
        assert not out.exists()  # nothing half-written
        before = len(endpoint.requests)
        resumed = curate_file(source, out, spec=spec, policy=policy, cache_dir=work / "resume-cache", progress=False)
        batches = -(-len(BEHAVIOURS) // 3)
        assert resumed.cached_batches == 2
        assert len(endpoint.requests) - before == 2 * K * 3 * (batches - 2)
        assert resumed.successes == fresh.successes and kept_of(out).equals(kept_of(work / "fresh"))
        before = len(endpoint.requests)
        rerun = curate_file(source, out, spec=spec, policy=policy, cache_dir=work / "resume-cache", progress=False)
        assert len(endpoint.requests) == before and rerun.generator_calls == 0 and rerun.cached_batches == batches
        assert kept_of(out).equals(kept_of(work / "fresh"))


def test_the_same_seed_keeps_the_same_prompts_and_another_seed_others(work, capsys) -> None:
    table, plan = marked_table(synthetic_rl(work), ["coin"] * len(BEHAVIOURS))
    path = work / "coins.parquet"
    pq.write_table(table, path)
    with serve_scripted(scripted_policy(plan)) as endpoint:
        runs = {}
        for name, seed in (("a", "5"), ("b", "5"), ("c", "6")):
            funnel = curate_cli(capsys, work, path, work / f"seed-{name}", work / f"seed-cache-{name}", endpoint.url, "--rollouts", str(K),
                                "--keep", "mixed", "--seed", seed)
            runs[name] = (funnel["successes"], kept_of(work / f"seed-{name}"))
    assert runs["a"][0] == runs["b"][0] and runs["a"][1].equals(runs["b"][1])
    assert runs["a"][0] != runs["c"][0]
    # Independent oracle: a rollout solves its case exactly when the coin of the seed its first
    # request carried says so; the success counts add up to that over all three runs.
    solved = 0
    for request in endpoint.requests:
        prompt = request["body"]["prompt"]
        if "<tool_response>" not in prompt[prompt.rfind("[case") :]:
            solved += coin(request["body"]["seed"], int(CASE.findall(prompt)[-1]))
    assert solved == sum(sum(run[0].values()) for run in runs.values())


def test_structural_checks_drop_by_dialogue_turns_and_gold_calls_before_any_rollout(work, capsys) -> None:
    table = pq.read_table(synthetic_rl(work))
    rows = table.to_pylist()
    n_calls = [len(gold_calls(r)) for r in rows]
    n_turns = [sum(m["role"] in ("user", "assistant") for m in r["prompt"]) for r in rows]
    assert max(n_calls) >= 2 and max(n_turns) >= 3, "the synthetic set lacks multi-call or multi-turn rows"
    with serve_scripted(scripted_policy({})) as endpoint:
        funnel = curate_cli(capsys, work, synthetic_rl(work), work / "structural", work / "structural-cache", endpoint.url,
                            "--rollouts", "1", "--keep", "not_all_correct", "--turns", "1-2", "--max-gold-calls", "1")
    by_turns = [not 1 <= t <= 2 for t in n_turns]
    by_calls = [not bt and c > 1 for bt, c in zip(by_turns, n_calls)]
    assert funnel["dropped"]["turns"] == sum(by_turns) > 0 and funnel["dropped"]["gold_calls"] == sum(by_calls) > 0
    passing = [i for i in range(len(rows)) if not by_turns[i] and not by_calls[i]]
    assert sorted(int(k) for k in funnel["successes"]) == passing and funnel["rolled_out"] == len(passing)
    # The scripted policy answers unmarked prompts without a call: exact match calls that right
    # exactly when the gold needs no call, so those prompts are all-correct and dropped.
    kept = [i for i in passing if n_calls[i] > 0]
    assert funnel["dropped"]["all_correct"] == len(passing) - len(kept) > 0
    assert kept_of(work / "structural").equals(table.take(kept))


def test_a_gold_integer_beyond_64_bits_is_matched_exactly_and_its_row_kept_unchanged(work, capsys) -> None:
    """Exact match on a 31-digit gold argument: the policy answering with the exact integer solves
    the prompt, the one answering with its float rendering (1e+30) never does; the kept row's gold
    text is the input's, digit for digit (docs/method.md#numbers-empty-files-and-limits)."""
    table, plan = marked_table(synthetic_rl(work), ["always"] * len(BEHAVIOURS))
    cases = [c for c, (_, call) in plan.items() if call.get("arguments")][:2]
    rows = table.take(cases).to_pylist()
    for row, case in zip(rows, cases):
        gt = row["reward_model"]["ground_truth"]
        gold = json.loads(gt["gold_tool_calls"])
        gold[0][0]["arguments"][next(iter(gold[0][0]["arguments"]))] = 10**30
        gt["gold_tool_calls"] = json.dumps(gold)
        answer = json.loads(json.dumps(gold[0][0]))
        if case == cases[1]:
            answer["arguments"] = {k: float(v) if v == 10**30 else v for k, v in answer["arguments"].items()}
        plan[case] = ("always", answer)
    source = work / "big_integer.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), source)
    with serve_scripted(scripted_policy(plan)) as endpoint:
        funnel = curate_cli(capsys, work, source, work / "big-out", work / "big-cache", endpoint.url, "--rollouts", "2",
                            "--keep", "not_all_wrong")
    assert funnel["successes"] == {"0": 2, "1": 0}
    kept = kept_of(work / "big-out")
    assert kept.equals(pa.Table.from_pylist(rows[:1], schema=table.schema))
    assert "1000000000000000000000000000000" in kept.to_pylist()[0]["reward_model"]["ground_truth"]["gold_tool_calls"]


def test_with_on_error_skip_a_bad_row_is_named_counted_as_invalid_and_the_rest_are_curated(work, capsys) -> None:
    table = pq.read_table(synthetic_rl(work))
    rows = table.to_pylist()[:6]
    rows[2]["data_source"] = ""
    source = work / "one_bad_row.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), source)
    with serve_scripted(scripted_policy({})) as endpoint:
        result = run_cli(["data", "curate", source, *toy_overrides(work), "--out", work / "skipped", "--policy", endpoint.url,
                          "--cache", work / "skipped-cache", "--no-progress", "--json", "--rollouts", "1",
                          "--keep", "not_all_correct", "--on-error", "skip"], capsys)
    assert result.code == 0, result.err
    assert [line for line in result.err.splitlines() if "skipped" in line] == [
        line for line in result.err.splitlines() if "row 2" in line and "data_source" in line] != []
    funnel = json.loads(result.out)
    assert funnel["rows_in"] == 6 and funnel["dropped"]["invalid_row"] == 1
    assert funnel["kept"] + sum(funnel["dropped"].values()) == 6
    assert "2" not in funnel["successes"] and funnel["rolled_out"] == 5
    # The scripted policy answers without a call, so exactly the rows whose gold needs a call are kept.
    kept = [i for i in range(6) if i != 2 and gold_calls(rows[i])]
    assert kept_of(work / "skipped").equals(pa.Table.from_pylist(rows, schema=table.schema).take(kept))
