"""BFCL multi-turn (`eval.benchmark=bfcl_multi_turn`): slca's loader, the safe executor, BFCL's
checkers on slca's replay, and the per-turn protocol loop with scripted and real generators."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from slca.evaluation.bfcl.data import data_dir
from slca.evaluation.bfcl.multi_turn import CATEGORIES, Call, Environment, check, decode, load_category, run_conversations
from slca.evaluation.bfcl.multi_turn.check import EMPTY_TURN, FORCE_TERMINATED
from slca.evaluation.bfcl.multi_turn.data import FUNC_DOC_DIR, category_files
from slca.evaluation.bfcl.multi_turn.loop import DONE, PROMPT_OVERFLOW, STEP_LIMIT, bfcl_constants
from slca.rollout.config import RolloutConfig
from slca.rollout.protocol import protocol_prompt_fn
from slca.rollout.types import GenerationOutput
from slca.toolcall.templates import HISTORY_HEADING
from tests.badinput import assert_refused, run_cli, snapshot
from tests.evaluation.tiny_policy import save_tiny_policy

REPO = Path(__file__).resolve().parents[2]
ROLLOUT = RolloutConfig(max_prompt_length=200_000, max_response_length=512, temperature=0)

# Each perturbation maps a ground truth (per turn, the call strings) to what the model "did": per
# turn, its steps, each a list of call strings. The oracle subprocess below defines the same three
# on BFCL's own files, independently of slca's loader.
PERTURBATIONS = ("gold", "drop_last", "reversed")


def _perturb(name: str, truth: list[list[Any]]) -> list[list[list[Any]]]:
    turns = [list(t) for t in truth]
    if name == "drop_last":
        last = max(i for i, t in enumerate(turns) if t)
        turns[last] = turns[last][:-1]
    if name == "reversed":
        turns = [t[::-1] for t in turns]
    return [[t] if t else [] for t in turns]


ORACLE = textwrap.dedent('''
    import json, sys
    from pathlib import Path
    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import multi_turn_checker
    root, out = Path(sys.argv[1]), {}
    for cat in ("base", "miss_func", "miss_param", "long_context"):
        rows = [json.loads(l) for l in open(root / f"BFCL_v4_multi_turn_{cat}.json") if l.strip()]
        gold = {o["id"]: o["ground_truth"] for o in (json.loads(l) for l in open(root / "possible_answer" / f"BFCL_v4_multi_turn_{cat}.json") if l.strip())}
        for row in rows:
            truth = gold[row["id"]]
            verdicts = {}
            for name in ("gold", "drop_last", "reversed"):
                turns = [list(t) for t in truth]
                if name == "drop_last":
                    last = max(i for i, t in enumerate(turns) if t)
                    turns[last] = turns[last][:-1]
                if name == "reversed":
                    turns = [t[::-1] for t in turns]
                # A fresh model name per perturbation: BFCL caches instances by model name and entry id.
                result = multi_turn_checker([[t] if t else [] for t in turns], truth, row, cat, "oracle_" + name)
                verdicts[name] = result["valid"]
            out[row["id"]] = verdicts
    print(json.dumps(out))
''')


@pytest.fixture(scope="module")
def everything() -> dict[str, Any]:
    """Every category, loaded once for the tests that read all 800 conversations."""
    return {name: load_category(name) for name in CATEGORIES}


def test_every_category_loads_its_200_conversations_with_tools_gold_and_held_out_functions(everything: dict[str, Any]) -> None:
    for name, loaded in everything.items():
        assert len(loaded.entries) == 200 and loaded.bad == [], name
        for e in loaded.entries:
            assert len(e.ground_truth) == len(e.turns) and 18 <= len(e.functions) + sum(len(d) for d in e.held_out.values()) <= 39
            assert all(t["type"] == "function" and "dict" not in json.dumps(t["function"]["parameters"]) for t in e.tools)
            assert bool(e.held_out) == (name == "miss_func")
            for turn, docs in e.held_out.items():
                assert e.turns[turn] == () and not {d["name"] for d in docs} & {f["name"] for f in e.functions}
    longest = max(len(t) for e in everything["long_context"].entries for t in e.ground_truth)
    assert longest == 34  # the longest turn of the measurement


def _write(path: Path, rows: list[Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")


def test_malformed_rows_are_skipped_counted_and_named_by_file_line_and_field(tmp_path: Path) -> None:
    real = load_category("base", limit=1).entries[0]
    (tmp_path / FUNC_DOC_DIR).symlink_to(data_dir() / FUNC_DOC_DIR)
    good = {"id": "multi_turn_base_0", "question": [list(t) for t in real.turns], "initial_config": dict(real.initial_config),
            "involved_classes": list(real.involved_classes)}
    rows = [
        good,
        "{not json",
        {**good, "id": "b2", "involved_classes": ["WebSearchAPI"]},
        {**good, "id": "b3", "question": [[{"role": "user", "content": 5}]]},
        {**good, "id": "b4", "missed_function": {"0": ["cd"]}},
        {**good, "id": "b5"},
        {**good, "id": "b6"},
        {**good, "id": "no_answer"},
    ]
    gold = [[c.source() for c in t] for t in real.ground_truth]
    answers = [{"id": "multi_turn_base_0", "ground_truth": gold}, {"id": "b2", "ground_truth": gold}, {"id": "b3", "ground_truth": gold},
               {"id": "b4", "ground_truth": gold}, {"id": "b5", "ground_truth": gold[:-1]},
               {"id": "b6", "ground_truth": [["os.system('ls')"], *gold[1:]]}]
    qpath, apath = category_files("base", tmp_path)
    _write(qpath, rows)
    _write(apath, answers)
    loaded = load_category("base", root=tmp_path)
    assert [e.id for e in loaded.entries] == ["multi_turn_base_0"]
    assert [(Path(b.path).name, b.line, b.field) for b in loaded.bad] == [
        (qpath.name, 2, "(line)"),
        (qpath.name, 3, "involved_classes"),
        (qpath.name, 4, "question[0][0]"),
        (qpath.name, 5, "missed_function.0"),
        (apath.name, 5, "ground_truth"),
        (apath.name, 6, "ground_truth[0][0]"),
        (qpath.name, 8, "id"),
    ]
    assert "WebSearchAPI" in loaded.bad[1].reason and "bad_name" in loaded.bad[5].reason
    assert str(loaded.bad[0]).startswith(f"{qpath}:2: (line): invalid JSON")


def test_replaying_gold_and_perturbed_calls_gives_bfcls_own_verdict_on_every_entry(tmp_path: Path, everything: dict[str, Any]) -> None:
    # BFCL's own path evaluates call strings; it runs here only on BFCL's shipped gold, in a subprocess with
    # its own cwd, while this process checks the same conversations slca's way.
    oracle_run = subprocess.Popen([sys.executable, "-c", ORACLE, str(data_dir())], cwd=tmp_path, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
    ours, counts = {}, {p: 0 for p in PERTURBATIONS}
    for loaded in everything.values():
        for e in loaded.entries:
            ours[e.id] = {p: check(e, _perturb(p, e.ground_truth)).valid for p in PERTURBATIONS}
            for p in PERTURBATIONS:
                counts[p] += ours[e.id][p]
    out, err = oracle_run.communicate(timeout=300)
    assert oracle_run.returncode == 0, err
    oracle = json.loads(out)
    assert len(ours) == 800 and ours == oracle
    assert counts["gold"] == 800 and counts["drop_last"] == 0
    assert 0 < counts["reversed"] < 800, counts  # order matters for some entries only: the agreement is not trivial
    print(f"\nverdicts equal to BFCL's on {len(ours) * len(PERTURBATIONS)} checks; reversed turns valid: {counts['reversed']}/800")


def test_the_checker_never_reaches_bfcls_executor(monkeypatch: pytest.MonkeyPatch) -> None:
    from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_checker, multi_turn_utils

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("BFCL's eval-based executor was called")

    monkeypatch.setattr(multi_turn_utils, "execute_multi_turn_func_call", refuse)
    monkeypatch.setattr(multi_turn_checker, "execute_multi_turn_func_call", refuse)
    for name in CATEGORIES:
        for e in load_category(name, limit=3).entries:
            assert check(e, _perturb("gold", e.ground_truth)).valid
            assert check(e, _perturb("drop_last", e.ground_truth)).error_type is not None


def test_fewer_turns_than_the_gold_fail_as_force_terminated_and_a_silent_turn_as_empty() -> None:
    e = load_category("base", limit=1).entries[0]
    gold = _perturb("gold", e.ground_truth)
    assert check(e, gold[:-1]).error_type == FORCE_TERMINATED
    assert check(e, [[], *gold[1:]]) == check(e, [[()], *gold[1:]]) and check(e, [[], *gold[1:]]).error_type == EMPTY_TURN


HOSTILE = textwrap.dedent('''
    import json, os, sys, time
    from slca.evaluation.bfcl.multi_turn import Environment, decode, load_category
    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import state_checker
    entry = next(e for e in load_category("base").entries if {"GorillaFileSystem", "MathAPI"} <= set(e.involved_classes))
    env, fresh = Environment.for_entry(entry), Environment.for_entry(entry)
    big = "9" * 4000
    texts = json.loads(sys.argv[1]) + [f"[power(base=2, exponent={big})]", f"[power(7, {big})]",
                                        "[logarithm(value=2, base=10, precision=1000000000)]",
                                        "[square_root(number=2, precision=1000000000)]", "[square_root(2, 1000000000)]"]
    out = []
    for text in texts:
        start = time.perf_counter()
        parsed = decode(text)
        observations = env.execute(parsed.calls) if parsed.ok else []
        out.append({"text": text, "error": parsed.error, "observations": observations, "seconds": time.perf_counter() - start})
    print(json.dumps({"results": out, "state_unchanged": state_checker(env.instances, fresh.instances)["valid"], "cwd": os.listdir(".")}))
''')

# Each would create a file, run a command, reach a private member or compute for ever if it were evaluated.
HOSTILE_TEXTS = [
    "open('pwned_open.txt', 'w')",
    "[open('pwned_list.txt', 'w').write('x')]",
    "__import__('os').system('touch pwned_import')",
    """[exec("open('pwned_exec.txt', 'w')")]""",
    "[eval('1')]",
    "os.system('touch pwned_os')",
    "[cd(folder='x').__class__]",
    "[ls.__globals__]",
    "[(lambda: open('pwned_lambda.txt', 'w'))()]",
    "[cd(folder=lambda: 0)]",
    "[mkdir(dir_name=[open('pwned_comp.txt', 'w') for _ in range(1)])]",
    "[mkdir(dir_name={k: v for k, v in [(1, 2)]})]",
    "[power(base=2, exponent=2**10**10)]",
    "[add(a=9**9**9, b=1)]",
    "[__init__()]",
    "[_load_scenario({}, long_context=True)]",
    "[getattr(ls, '__globals__')]",
    "[cd(**{'folder': 'pwned'})]",
    "[cd(*['pwned'])]",
    '<tool_call>{"name": "__class__", "arguments": {}}</tool_call>',
    '<tool_call>{"name": "os.system", "arguments": {"command": "touch pwned"}}</tool_call>',
    '<tool_call>{"name": "_load_scenario", "arguments": {"scenario": {}}}</tool_call>',
]


def test_hostile_calls_are_refused_without_running_creating_files_or_hanging(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-c", HOSTILE, json.dumps(HOSTILE_TEXTS)], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["cwd"] == [] and list(tmp_path.iterdir()) == []  # nothing written anywhere it ran
    assert report["state_unchanged"]  # no hostile call changed an environment
    for r in report["results"]:
        assert r["seconds"] < 5, r
        refused_unread = r["error"] is not None and r["observations"] == []
        refused_at_dispatch = r["error"] is None and r["observations"] and all(o.startswith("Error during execution: ") for o in r["observations"])
        assert refused_unread or refused_at_dispatch, r
    by_text = {r["text"]: r for r in report["results"]}
    assert by_text["open('pwned_open.txt', 'w')"]["observations"] == ["Error during execution: name 'open' is not defined"]
    assert by_text["[power(base=2, exponent=2**10**10)]"]["error"] == "not_a_literal"
    assert by_text["os.system('touch pwned_os')"]["error"] == "bad_name"
    guarded = [r for r in report["results"] if r["error"] is None and ("bits" in r["observations"][0] or "precision above" in r["observations"][0])]
    assert len(guarded) == 5


def test_calls_read_positional_and_keyword_literals_in_both_output_forms() -> None:
    assert decode("[sort('a.txt'), cd(folder='x')]").calls == (Call("sort", ("a.txt",)), Call("cd", (), (("folder", "x"),)))
    assert decode("```python\n[ls(a=True)]\n```").calls == (Call("ls", (), (("a", True),)),)
    hermes = '<think>plan</think><tool_call>\n{"name": "mv", "arguments": {"source": "a", "destination": "b"}}\n</tool_call>'
    assert decode(hermes).calls == (Call("mv", (), (("source", "a"), ("destination", "b"))),)
    assert decode("").ok and decode("[]").calls == () and decode("I cannot help").error == "syntax_error"
    env = Environment.for_entry(load_category("base", limit=1).entries[0])
    assert env.execute(decode("[cd('document'), pwd(), cd(folder=1, extra=2)]").calls) == [
        json.dumps({"current_working_directory": "document"}), json.dumps({"current_working_directory": "/workspace/document"}),
        "Error during execution: GorillaFileSystem.cd() got an unexpected keyword argument 'extra'"]


FUZZ_CASES = 3000
FRAGMENTS = ["__import__('os')", "**", "lambda: 0", ".", "(", ")", "[", "]", "'", '"', ",", "=", "\\", "<tool_call>", "</tool_call>",
             "{", "}", "9" * 60, "-", "1e308", "None", "True", "*", "<think>", "</think>", "\n", "```", "open", "_", ":", "#", "\\x00"]


def test_mutated_gold_calls_never_raise_in_the_reader_the_executor_or_the_checker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import random

    monkeypatch.chdir(tmp_path)
    rng = random.Random(0)
    entries = [e for name in CATEGORIES for e in load_category(name, limit=5).entries]
    envs = {e.id: Environment.for_entry(e) for e in entries}
    readable = executed = 0
    for _ in range(FUZZ_CASES):
        entry = rng.choice(entries)
        turn = rng.choice([t for t in entry.ground_truth if t] or [()])
        text = "[" + ", ".join(c.source() for c in turn) + "]"
        for _ in range(rng.randint(1, 4)):
            i, j = sorted(rng.randrange(len(text) + 1) for _ in range(2))
            text = text[:i] + rng.choice(["", rng.choice(FRAGMENTS), text[j:i:-1]]) + text[j:]
        parsed = decode(text)
        if parsed.ok:
            readable += 1
            observations = envs[entry.id].execute(parsed.calls)
            executed += len(observations)
            assert all(isinstance(o, str) for o in observations)
            assert check(entry, [[parsed.calls]] * len(entry.turns)).valid in (True, False)
        else:
            assert parsed.calls == () and isinstance(parsed.error, str)
    assert list(tmp_path.iterdir()) == []
    assert readable > FUZZ_CASES // 10  # the mutations reach the executor, not only the parser
    print(f"\n{FUZZ_CASES} mutated outputs: {readable} readable, {executed} calls executed, none raised")


# ----------------------------------------------------------------------------- the protocol loop


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny real Qwen3 policy whose byte-level BPE tokenizer (slca's chat template) learnt BFCL's multi-turn text."""
    corpus = [json.dumps([e.turns, e.functions]) for name in CATEGORIES for e in load_category(name, limit=2).entries]
    return save_tiny_policy(tmp_path_factory.mktemp("bfcl_mt_policy"), corpus, vocab_size=4096)


@pytest.fixture(scope="module")
def tokenizer(tiny: Path) -> Any:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny, local_files_only=True)


class Scripted:
    """A Generator that plays a fixed policy per conversation, read back from the prompt it is given:
    the entry from its first question, the turn from the user turns so far (native construction).

    answer(entry, turn, after_tool) -> text; every prompt is kept in `prompts`.
    """

    def __init__(self, tokenizer: Any, entries: list[Any], answer: Any) -> None:
        self.tokenizer, self.entries, self.answer = tokenizer, entries, answer
        self.prompts: list[str] = []

    def generate(self, prompt_token_ids: Any, **kwargs: Any) -> list[GenerationOutput]:
        outs = []
        for ids in prompt_token_ids:
            text = self.tokenizer.backend_tokenizer.decode(list(ids), skip_special_tokens=False)
            self.prompts.append(text)
            entry = next(e for e in self.entries if e.turns[0][0]["content"] in text)
            users = text.count("<|im_start|>user\n") - text.count("<|im_start|>user\n<tool_response>")
            after_tool = text.removesuffix("<|im_start|>assistant\n").endswith("</tool_response><|im_end|>\n")
            reply = self.answer(entry, users - 1, after_tool) + "<|im_end|>"
            outs.append(GenerationOutput(self.tokenizer.encode(reply, add_special_tokens=False), "stop"))
        return outs


def _replay(perturbation: str) -> Any:
    def answer(entry: Any, turn: int, after_tool: bool) -> str:
        calls = _perturb(perturbation, entry.ground_truth)[turn]
        return "" if after_tool or not calls else "[" + ", ".join(c.source() for c in calls[0]) + "]"

    return answer


def test_the_loop_replaying_the_gold_passes_and_dropping_the_last_call_fails_in_every_category(tokenizer: Any) -> None:
    prompt_fn = protocol_prompt_fn(system_prompt="bfcl_default")
    for name in CATEGORIES:
        entries = load_category(name, limit=1).entries
        for perturbation, expected in (("gold", True), ("drop_last", False)):
            gen = Scripted(tokenizer, entries, _replay(perturbation))
            convs = run_conversations(entries, n=1, generator=gen, tokenizer=tokenizer, cfg=ROLLOUT, seed=0, prompt_fn=prompt_fn)
            assert [c.finish for c in convs] == [DONE]
            assert [check(c.entry, c.decoded).valid for c in convs] == [expected], (name, perturbation)
            # Each turn: one step per call list, then one closing step (a turn with no gold call closes at once).
            for c in convs:
                assert [len(o) for o in c.outputs] == [1 + bool(t) for t in _perturb(perturbation, c.entry.ground_truth)]


def test_two_rollouts_never_share_an_environment_instance(tokenizer: Any) -> None:
    entries = load_category("base", limit=2).entries
    gen = Scripted(tokenizer, entries, _replay("gold"))
    convs = run_conversations(entries, n=2, generator=gen, tokenizer=tokenizer, cfg=ROLLOUT, seed=0,
                              prompt_fn=protocol_prompt_fn(system_prompt="bfcl_default"))
    instances = [id(obj) for c in convs for obj in c.env.instances.values()]
    assert len(instances) == len(set(instances)) == sum(len(c.entry.involved_classes) for c in convs)
    # Shared state would show: the second sample's `mkdir` of the same folder would fail, its observations differ.
    first, second = convs[0], convs[1]
    assert first.entry is second.entry and first.messages == second.messages
    assert not any(m["content"].startswith("Error") for m in first.messages if m["role"] == "tool")
    assert all(check(c.entry, c.decoded).valid for c in convs)


@pytest.mark.parametrize("system_prompt", ["bfcl_default", "none"])
def test_held_out_functions_arrive_on_their_empty_turn_with_bfcls_message(tokenizer: Any, system_prompt: str) -> None:
    entry = load_category("miss_func", limit=1).entries[0]
    (turn, docs), = entry.held_out.items()
    (held,) = [d["name"] for d in docs]
    gen = Scripted(tokenizer, [entry], _replay("gold"))
    (conv,) = run_conversations([entry], n=1, generator=gen, tokenizer=tokenizer, cfg=ROLLOUT, seed=0,
                                prompt_fn=protocol_prompt_fn(system_prompt=system_prompt))
    _, prompting, fc = bfcl_constants()
    message = prompting.format(functions=list(docs)) if system_prompt == "bfcl_default" else fc
    # The held-out doc as Python's str() (BFCL's message), or as the tiny template's tool line `name(param: type)`.
    doc_marks = (f"'name': '{held}'", f"\n{held}({docs[0]['parameters']['required'][0]}: ")
    arrived = [i for i, p in enumerate(gen.prompts) if message in p]
    assert arrived, "the held-out message never reached the model"
    steps_before = sum(len(o) for o in conv.outputs[:turn])
    assert arrived[0] == steps_before  # the first step of the held-out turn
    for i, prompt in enumerate(gen.prompts):
        assert any(m in prompt for m in doc_marks) == (i >= steps_before), (i, steps_before)
    assert conv.finish == DONE and check(entry, conv.decoded).valid


def test_every_fragility_factor_applies_to_the_earlier_turns(tokenizer: Any) -> None:
    entry = load_category("base", limit=1).entries[0]
    silent = Scripted(tokenizer, [entry], lambda e, turn, after_tool: "<think>pondering</think>nothing to call")
    run_conversations([entry], n=1, generator=silent, tokenizer=tokenizer, cfg=ROLLOUT, seed=0,
                      prompt_fn=protocol_prompt_fn(system_prompt="stronger", construction="context", thinking="drop"))
    last = silent.prompts[-1]
    assert len(silent.prompts) == len(entry.turns) and HISTORY_HEADING in last
    assert all(t[0]["content"] in last for t in entry.turns) and "pondering" not in last and "nothing to call" in last


def test_a_turn_past_the_step_limit_or_an_overlong_prompt_ends_the_conversation(tokenizer: Any) -> None:
    entry = load_category("base", limit=1).entries[0]
    busy = Scripted(tokenizer, [entry], lambda e, turn, after_tool: "[pwd()]")
    (conv,) = run_conversations([entry], n=1, generator=busy, tokenizer=tokenizer, cfg=ROLLOUT, seed=0,
                                prompt_fn=protocol_prompt_fn(system_prompt="bfcl_default"))
    limit = bfcl_constants()[0]
    assert conv.finish == STEP_LIMIT and len(conv.decoded) == 1 and len(conv.decoded[0]) == limit + 1 == len(busy.prompts)
    assert check(entry, conv.decoded).error_type == FORCE_TERMINATED
    short = RolloutConfig(max_prompt_length=50, max_response_length=16, temperature=0)
    (conv,) = run_conversations([entry], n=1, generator=busy, tokenizer=tokenizer, cfg=short, seed=0,
                                prompt_fn=protocol_prompt_fn(system_prompt="bfcl_default"))
    assert conv.finish == PROMPT_OVERFLOW and len(busy.prompts) == limit + 1  # no further generation
    assert not check(entry, conv.decoded).valid


# ----------------------------------------------------------------------------- `slca eval`


def test_slca_eval_runs_the_tiny_backbone_on_every_category_and_writes_the_table(
    tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    import time

    run_dir = tmp_path / "run"
    start = time.perf_counter()
    result = run_cli(["eval", "--model", str(tiny), "experiment=embedded_smoke", "logger=none", "eval.benchmark=bfcl_multi_turn",
                      "eval.limit=1", "eval.max_tokens=8", "eval.system_prompts=[none]", "eval.rollout.max_prompt_length=60000",
                      f"run.dir={run_dir}"], capsys)
    seconds = time.perf_counter() - start
    assert result.code == 0, result.err
    table = (run_dir / "eval" / "table.md").read_text(encoding="utf-8")
    assert "(bfcl_multi_turn)" in table and "4 of 800 rows" in table
    for metric in ("accuracy", *CATEGORIES, "turns_with_calls", "force_quit"):
        assert f"| native/keep/none | {metric} |" in table
    record = json.loads((run_dir / "eval" / "results.json").read_text(encoding="utf-8"))
    (model,) = record["results"]
    (cell,) = model["cells"]
    (per_seed,) = cell["per_seed"]
    assert per_seed["rows"] == 4 and per_seed["skipped_rows"] == 0
    assert per_seed["accuracy"] == sum(per_seed[c] for c in CATEGORIES) / 4 and per_seed["force_quit"] == 0
    assert model["card"]["data"]["rows"] == 800 and len(model["card"]["data"]["sha256"]) == 64
    assert model["card"]["scoring"]["simulator"] == "bfcl environments through slca's executor"
    assert model["card"]["scoring"]["benchmark"] == "bfcl_multi_turn" and model["card"]["factors"]["system_prompts"] == ["none"]
    print(f"\ntiny backbone, one entry per category: accuracy {per_seed['accuracy']:.2f}, "
          f"steps per turn {per_seed['steps_per_turn']:.2f}, {seconds:.1f} s for the whole command ({seconds / 4:.1f} s per entry)")


def test_slca_eval_with_only_some_categories_reports_those_and_marks_the_rest_not_applicable(
    tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    run_dir = tmp_path / "run"
    result = run_cli(["eval", "--model", str(tiny), "experiment=embedded_smoke", "logger=none", "eval.benchmark=bfcl_multi_turn",
                      "eval.categories=[miss_func]", "eval.limit=1", "eval.max_tokens=2", "eval.system_prompts=[none]",
                      "eval.rollout.max_prompt_length=60000", f"run.dir={run_dir}"], capsys)
    assert result.code == 0, result.err
    (model,) = json.loads((run_dir / "eval" / "results.json").read_text(encoding="utf-8"))["results"]
    (per_seed,) = model["cells"][0]["per_seed"]
    assert per_seed["rows"] == 1 and per_seed["accuracy"] == per_seed["miss_func"]
    assert all(per_seed[c] is None for c in CATEGORIES if c != "miss_func")  # null: not evaluated (JSON has no NaN)
    assert model["card"]["data"]["rows"] == 200
    assert "| native/keep/none | base | n/a |" in (run_dir / "eval" / "table.md").read_text(encoding="utf-8")


def test_slca_eval_fails_a_cell_whose_every_conversation_overflows_at_its_first_prompt_naming_the_cap_and_the_longest(
    tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    run = ["eval", "--model", str(tiny), "experiment=embedded_smoke", "logger=none", "eval.benchmark=bfcl_multi_turn",
           "eval.categories=[base]", "eval.limit=2", "eval.max_tokens=2", "eval.system_prompts=[none]"]
    result = run_cli([*run, "eval.rollout.max_prompt_length=16", f"run.dir={tmp_path / 'short'}"], capsys)
    assert_refused(result, "eval cell native/keep/none", "no row evaluated", "eval.allow_empty_cells=true")
    found = re.search(r"2 of 2 conversations have a first prompt over eval\.rollout\.max_prompt_length=16 tokens, the longest (\d+)", result.err)
    assert found and not (tmp_path / "short" / "eval" / "results.json").exists()
    # Oracle for "the longest": under a cap of exactly that many tokens every conversation reaches the model.
    fits = run_cli([*run, f"eval.rollout.max_prompt_length={found.group(1)}", f"run.dir={tmp_path / 'fits'}"], capsys)
    assert fits.code == 0, fits.err


@pytest.mark.parametrize(("overrides", "mentions"), [
    (["eval.benchmark=bfcl_multi_turn", "eval.categories=[simple]"], ("eval.categories", "'simple'", "long_context")),
    (["eval.benchmark=bfcl", "eval.categories=[base]"], ("eval.categories", "'base'", "live_relevance")),
    (["eval.benchmark=bfcl_multi_turn", "eval.categories=[base,base]"], ("eval.categories", "twice")),
    (["eval.categories=[base]"], ("eval.categories", "eval.benchmark=toucan has no categories")),
])
def test_slca_eval_refuses_categories_the_benchmark_does_not_have_in_one_line_and_writes_nothing(
    tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], overrides: list[str], mentions: tuple[str, ...],
) -> None:
    run_dir = tmp_path / "run"
    before = snapshot([run_dir, tiny])
    result = run_cli(["eval", "--model", str(tiny), "experiment=embedded_smoke", "logger=none", *overrides, f"run.dir={run_dir}"], capsys)
    assert_refused(result, *mentions)
    assert snapshot([run_dir, tiny]) == before


def test_slca_eval_without_the_bfcl_package_is_refused_in_one_line(
    tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "bfcl_eval", None)  # Python's own mark of a package that cannot be imported
    run_dir = tmp_path / "run"
    result = run_cli(["eval", "--model", str(tiny), "experiment=embedded_smoke", "logger=none", "eval.benchmark=bfcl_multi_turn",
                      f"run.dir={run_dir}"], capsys)
    assert_refused(result, "eval.benchmark=bfcl_multi_turn", "bfcl-eval is not installed")
    assert not (run_dir / "eval" / "results.json").exists()
