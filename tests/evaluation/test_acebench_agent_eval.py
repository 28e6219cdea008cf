"""ACEBench's agent categories under `eval.benchmark=acebench`: the tiny backbone through `slca eval`
with agent_multi_turn's user simulator a local server, the category not run (and said so) without
one, and a scripted gold agent scoring as its replay (docs/eval.md#acebenchs-agent-categories)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from slca.config.compose import compose_spec
from slca.evaluation.acebench.agent_data import AgentEntry, load_agent_category
from slca.evaluation.acebench.agent_episode import replay
from slca.evaluation.acebench.agent_loop import Message
from slca.evaluation.acebench.agent_prompt import agent_messages
from slca.evaluation.acebench.agent_score import score_episode
from slca.evaluation.acebench.user_sim import system_prompt
from slca.evaluation.generators import build_generator
from slca.evaluation.run import evaluate_model
from tests.badinput import run_cli
from tests.conftest import serve_scripted
from tests.evaluation.tiny_policy import save_tiny_policy

AGENTS = ("agent_multi_turn", "agent_multi_step")
LIMIT = 1  # entries per category for the tiny backbone: its agent_multi_step episode runs all 40 messages
GOLD_LIMIT = 3  # agent_multi_step's first path reaches the gold state in entry 2, not in 0 and 1
WEIGHTS = {"normal": 0.578, "special": 0.2676, "agent": 0.1545}  # ACEBench's evaluation_helper


def _entries(limit: int = LIMIT) -> list[AgentEntry]:
    return [e for name in AGENTS for e in load_agent_category(name, limit=limit)]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny real Qwen3 model whose tokenizer learnt the agents' own prompts."""
    corpus = [m["content"] for e in _entries(1) for m in agent_messages(e, [Message("user", "agent", e.question)])]
    return save_tiny_policy(tmp_path_factory.mktemp("acebench_agent_policy"), corpus, vocab_size=1024)


def _user_server(entries: list[AgentEntry]):
    """An OpenAI-compatible chat endpoint playing ACEBench's user: it names its task on its first line
    and closes the conversation on every later one. Two entries may share their instructions, so the
    k-th opening is taken as the k-th agent_multi_turn entry's: the simulator is asked one request at
    a time (`_user_override`), and the openings come in entry order."""
    tasks = [e for e in entries if e.category == "agent_multi_turn"]
    opened: list[str] = []

    def reply(body: dict) -> tuple[int, bytes, float]:
        if sum(m["role"] == "system" for m in body["messages"]) == 1:
            entry = tasks[len(opened)]
            assert body["messages"][0]["content"] == system_prompt(entry)
            opened.append(entry.id)
            text = f"I need help with task <{entry.id}>."
        else:
            text = "Thanks. finish conversation"
        return 200, json.dumps({"choices": [{"message": {"content": text}}]}).encode(), 0.0
    return serve_scripted(reply)


def _user_override(url: str) -> str:
    return f"eval.acebench.user={{base_url: '{url}', model: acebench-user, max_retries: 0, max_concurrency: 1}}"


@pytest.mark.slow  # the tiny policy's tokenizer is trained in the fixture
def test_slca_eval_runs_the_tiny_backbone_on_the_agent_categories_with_a_local_user_simulator(
        tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = tmp_path / "run"
    start = time.perf_counter()
    with _user_server(_entries()) as user:
        result = run_cli(["eval", "--model", str(tiny), "experiment=embedded_smoke", "logger=none", "eval.benchmark=acebench",
                          f"eval.categories=[special_irrelevant,{','.join(AGENTS)}]", f"eval.limit={LIMIT}",
                          "eval.max_tokens=4", "eval.rollout.max_prompt_length=60000", "eval.system_prompts=[acebench_default]",
                          _user_override(user.url),
                          f"run.dir={run_dir}"], capsys)
    seconds = time.perf_counter() - start
    assert result.code == 0, result.err
    (model,) = json.loads((run_dir / "eval" / "results.json").read_text(encoding="utf-8"))["results"]
    (per_seed,) = model["cells"][0]["per_seed"]
    assert per_seed["rows"] == 3 * LIMIT and per_seed["skipped_rows"] == 0
    for name in AGENTS:
        assert per_seed[name] in (0.0, 1.0) and 0.0 <= per_seed[f"{name}_process"] <= 1.0
    assert per_seed["agent"] == pytest.approx((per_seed["agent_multi_turn"] + per_seed["agent_multi_step"]) / 2)
    assert per_seed["summary"] == pytest.approx((WEIGHTS["special"] * per_seed["special"] + WEIGHTS["agent"] * per_seed["agent"])
                                                / (WEIGHTS["special"] + WEIGHTS["agent"]))
    assert per_seed["normal"] is None and per_seed["normal_atom_bool"] is None
    card = model["card"]
    assert (card["data"]["rows"], card["data"]["rows_evaluated"]) == (50 + 30 + 20, 3 * LIMIT)
    assert "agent_multi_turn user simulator: acebench-user at " + user.url in card["scoring"]["simulator"]
    assert "agent 0.1545" in card["scoring"]["reward"]
    # Every agent_multi_turn episode opened with the simulated user, told its own entry's instructions.
    prompts = {r["body"]["messages"][0]["content"] for r in user.requests}
    assert prompts == {system_prompt(e) for e in load_agent_category("agent_multi_turn", limit=LIMIT)}
    table = (run_dir / "eval" / "table.md").read_text(encoding="utf-8")
    for metric in ("summary", "agent", *AGENTS, "agent_multi_step_process", "special_irrelevant"):
        assert f"| native/keep/acebench_default | {metric} |" in table
    print(f"\nuntrained tiny backbone, {LIMIT} entries per category: "
          + ", ".join(f"{k} {per_seed[k]:.3f}" for k in ("agent_multi_turn", "agent_multi_turn_process", "agent_multi_step",
                                                        "agent_multi_step_process", "special_irrelevant"))
          + f"; {len(user.requests)} user turns; {seconds:.1f} s for the whole command")


HISTORY = {"agent_multi_turn": ("Conversation history 1..t:\n", "\nagent:"),
           "agent_multi_step": ("Conversation history: ", "execution result:")}


def _taken_for(entry: AgentEntry, entries: list[AgentEntry]) -> AgentEntry:
    """The entry the gold agent takes `entry`'s prompts for: its own in agent_multi_turn (its task line),
    in agent_multi_step the first with the same request (entries 0 and 1 share theirs, and their functions)."""
    if entry.category == "agent_multi_turn":
        return entry
    return next(e for e in entries if e.category == entry.category and e.question == entry.question)


def _gold_agent(entries: list[AgentEntry]):
    """A completions endpoint answering each agent step with the next call of the first milestone path of
    the entry it takes the prompt for, then ACEBench's closing phrase; the step is the number of agent
    messages (agent_multi_turn) or scenario answers (agent_multi_step) in the prompt's history."""
    def reply(body: dict) -> tuple[int, bytes, float]:
        prompt = body["prompt"]
        entry = next(e for e in entries if (f"<{e.id}>" if e.category == "agent_multi_turn" else e.question) in prompt)
        heading, mark = HISTORY[entry.category]
        step = prompt[prompt.index(heading):].count(mark)
        path = entry.milestones[0]
        text = path[step] if step < len(path) else "finish conversation"
        return 200, json.dumps({"choices": [{"text": text + "<|im_end|>", "finish_reason": "stop"}]}).encode(), 0.0
    return serve_scripted(reply)


@pytest.mark.slow  # the tiny policy's tokenizer is trained in the fixture
def test_a_scripted_gold_agent_scores_through_the_eval_as_its_milestone_replay(tiny: Path) -> None:
    from transformers import AutoTokenizer

    entries = _entries(GOLD_LIMIT)
    tokenizer = AutoTokenizer.from_pretrained(tiny, local_files_only=True)
    with _gold_agent(entries) as agent, _user_server(entries) as user:
        spec = compose_spec(["eval.benchmark=acebench", f"eval.categories=[{','.join(AGENTS)}]", f"eval.limit={GOLD_LIMIT}",
                             "eval.generator=openai", f"eval.endpoint.base_url={agent.url}", "eval.endpoint.model=gold",
                             "eval.endpoint.max_retries=0", "eval.rollout.max_prompt_length=60000", _user_override(user.url)])
        result = evaluate_model(spec, label="gold", model_dir=str(tiny), generator=build_generator(spec.eval, str(tiny), tokenizer, "cpu"),
                                tokenizer=tokenizer, split_path=None, device="cpu", progress=False)
    (cell,) = result.cells
    (per_seed,) = cell.per_seed
    for name in AGENTS:
        replays = [score_episode(e, replay(e, _taken_for(e, entries).milestones[0])) for e in entries if e.category == name]
        assert per_seed[name] == sum(s.correct for s in replays) / GOLD_LIMIT, name
        assert per_seed[f"{name}_process"] == pytest.approx(sum(s.process for s in replays) / GOLD_LIMIT), name
    assert per_seed["agent"] == pytest.approx((per_seed["agent_multi_turn"] + per_seed["agent_multi_step"]) / 2)
    assert per_seed["summary"] == per_seed["agent"] and per_seed["agent_prompt_overflow"] == 0.0
    print(f"\ngold agent: {({k: round(per_seed[k], 3) for k in ('agent_multi_turn', 'agent_multi_step', 'agent')})}")


@pytest.mark.slow  # the tiny policy's tokenizer is trained in the fixture
def test_without_a_user_simulator_agent_multi_turn_is_not_run_and_the_card_says_why(
        tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = tmp_path / "run"
    with _gold_agent(_entries(1)) as agent:
        result = run_cli(["eval", "--model", str(tiny), "experiment=embedded_smoke", "logger=none", "eval.benchmark=acebench",
                          f"eval.categories=[{','.join(AGENTS)}]", "eval.limit=1", "eval.generator=openai",
                          f"eval.endpoint.base_url={agent.url}", "eval.endpoint.max_retries=0",
                          "eval.rollout.max_prompt_length=60000", f"run.dir={run_dir}"], capsys)
    assert result.code == 0, result.err
    reason = "agent_multi_turn not run: eval.acebench.user is null (no user simulator endpoint)"
    assert reason in result.out
    (model,) = json.loads((run_dir / "eval" / "results.json").read_text(encoding="utf-8"))["results"]
    assert reason in model["card"]["scoring"]["simulator"]
    assert (model["card"]["data"]["rows"], model["card"]["data"]["rows_evaluated"]) == (50, 1)
    (per_seed,) = model["cells"][0]["per_seed"]
    assert per_seed["rows"] == 1 and per_seed["agent_multi_turn"] is None and per_seed["agent_multi_step"] is not None
    assert per_seed["agent"] == per_seed["agent_multi_step"] == per_seed["summary"]
