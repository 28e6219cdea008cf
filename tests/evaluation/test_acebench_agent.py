"""ACEBench's agent categories: the vendored entries are read whole, slca's executor runs the scenario
classes by name without evaluating any text, gold milestone paths replayed through it reach the
gold end states, and the scores follow ACEBench's rules on hand-made cases
(docs/eval.md#acebenchs-agent-categories)."""

from __future__ import annotations

import json

import pytest

from slca.evaluation.acebench.agent_agreement import message_sets, render
from slca.evaluation.acebench.agent_data import AGENT_CATEGORIES, load_agent_category
from slca.evaluation.acebench.agent_episode import NOT_CALLS, AgentRun, replay
from slca.evaluation.acebench.agent_loop import Message, run_episode
from slca.evaluation.acebench.agent_prompt import MULTI_STEP_FILE, MULTI_TURN_FILE, RULES_FILE, multi_step_messages, multi_turn_messages
from slca.evaluation.acebench.agent_score import Episode, end_to_end, path_share, score_episode
from slca.evaluation.acebench.data import DATA_DIR, AceBenchDataError
from slca.evaluation.acebench.decode import decode_agent
from slca.evaluation.acebench.scenarios import Scenario, ScenarioError


@pytest.fixture(scope="module")
def entries() -> dict[str, list]:
    return {name: load_agent_category(name) for name in AGENT_CATEGORIES}


def _entry(entries: dict[str, list], category: str, index: int):
    return entries[category][index]


def test_every_agent_entry_is_read_with_its_gold_state_and_milestones(entries: dict[str, list]) -> None:
    assert [len(entries[c]) for c in AGENT_CATEGORIES] == [30, 20]
    for name in AGENT_CATEGORIES:
        lines = (DATA_DIR / f"data_{name}.json").read_text(encoding="utf-8").splitlines()
        assert [e.id for e in entries[name]] == [json.loads(line)["id"] for line in lines]
        assert all(e.truth and e.milestones and all(e.milestones) for e in entries[name])
    first = entries["agent_multi_turn"][0]
    assert first.involved_classes == ("BaseApi", "MessageApi")
    assert first.truth[0] == ("BaseApi", {"wifi": True, "logged_in": True})
    assert first.milestones[0][0] == "[turn_on_wifi()]" and not first.several


def test_an_unknown_agent_category_or_class_is_refused_by_name() -> None:
    with pytest.raises(AceBenchDataError, match="agent_parallel"):
        load_agent_category("agent_parallel")
    with pytest.raises(ScenarioError, match="'Bank'"):
        Scenario(["Bank"], {})


def test_a_method_every_phone_class_inherits_runs_on_each_involved_class(entries: dict[str, list]) -> None:
    entry = _entry(entries, "agent_multi_turn", 0)  # BaseApi and MessageApi, wifi off
    scenario = Scenario(entry.involved_classes, entry.initial_config)
    assert [vars(i)["wifi"] for i in scenario.instances.values()] == [False, False]
    outcome = scenario.run([("turn_on_wifi", {})])
    assert outcome.error is None and json.loads(outcome.answers[0])["status"] is True
    assert [vars(i)["wifi"] for i in scenario.instances.values()] == [True, True]
    assert scenario.state()[0] == ("BaseApi", {"wifi": True, "logged_in": True})


def test_private_unknown_and_badly_called_methods_end_the_message_keeping_earlier_effects(entries: dict[str, list]) -> None:
    entry = _entry(entries, "agent_multi_turn", 0)
    scenario = Scenario(entry.involved_classes, entry.initial_config)
    for calls, error in [([("turn_on_wifi", {}), ("_load_scenario", {"scenario": {}})], "'_load_scenario' is not a function"),
                         ([("turn_on_wifi", {}), ("__init__", {})], "'__init__' is not a function"),
                         ([("turn_on_wifi", {}), ("send_message", {"to": "Frank"})], "TypeError"),
                         ([("turn_on_wifi", {}), ("delete_message", {1: 2})], "identifiers")]:
        outcome = scenario.run(calls)
        assert len(outcome.answers) == 1 and error in (outcome.error or ""), outcome
        assert outcome.observation().startswith("Error during execution: ")
    assert scenario.state()[0][1]["wifi"] is True


def test_call_text_is_never_evaluated_arithmetic_goes_to_the_user_and_a_nested_call_is_a_value(entries: dict[str, list]) -> None:
    entry = _entry(entries, "agent_multi_turn", 0)
    run = AgentRun(entry)
    assert run.send("[delete_message(message_id=1+2)]") is None
    assert run.send("Which message should I delete?") is None
    assert run.process == []
    run.send("[turn_on_wifi()]")
    run.send("[delete_message(message_id=3)]")  # the inbox starts full
    text = "[send_message(sender_name='Grace', receiver_name='Frank', message=__import__('os').getcwd())]"
    assert json.loads(run.send(text))[0]["status"] is True
    assert run.process == ["[turn_on_wifi()]", "[delete_message(message_id=3)]", text]
    sent = list(run.episode().state[1][1]["inbox"].values())[-1]
    assert sent["message"] == {"getcwd": {}}


def test_in_multi_step_every_message_is_a_process_step_and_prose_gets_acebenchs_reminder(entries: dict[str, list]) -> None:
    run = AgentRun(_entry(entries, "agent_multi_step", 0))
    assert run.send("What is your password?") == NOT_CALLS
    assert run.process == ["What is your password?"] and run.episode().state == ()


def test_path_share_matches_milestones_in_order_each_at_the_first_later_message() -> None:
    assert path_share(["a", "b", "c"], ["a", "x", "c", "b"]) == pytest.approx(2 / 3)
    assert path_share(["a", "b"], [" b ", "a"]) == 0.5
    assert path_share(["a", "a"], ["a"]) == 0.5
    assert path_share([], []) == 1.0


def test_end_to_end_needs_as_many_records_and_leaves_a_misspelt_gold_class_unchecked() -> None:
    truth = [("BaseApi", {"wifi": True}), ("ReminderAPI", {"reminder_list": {"1": "x"}})]
    assert end_to_end(truth, [("BaseApi", {"wifi": True}), ("ReminderApi", {"reminder_list": {}})])
    assert not end_to_end(truth, [("BaseApi", {"wifi": False}), ("ReminderApi", {})])
    assert not end_to_end(truth, [("BaseApi", {"wifi": True})])
    assert not end_to_end(truth, [])
    # A mapping attribute needs only the gold keys; any other attribute must be in the gold record and equal.
    assert end_to_end([("M", {"inbox": {"1": "a"}})], [("M", {"inbox": {"1": "a", "2": "b"}})])
    assert not end_to_end([("M", {"inbox": {"1": "a"}})], [("M", {"inbox": {"1": "a"}, "extra": 1})])


def test_a_wrong_episode_scores_the_best_listed_path_rounded_as_acebench_rounds_it(entries: dict[str, list]) -> None:
    entry = next(e for e in entries["agent_multi_step"] if e.several)
    best = max(len(p) for p in entry.milestones)
    path = next(p for p in entry.milestones if len(p) == best)
    score = score_episode(entry, Episode(tuple(path[:1]), ()))
    assert not score.correct
    assert score.process == max(round(1 / len(p), 3) if p[0] == path[0] else round(0.0, 3) for p in entry.milestones)


def test_replaying_the_milestone_paths_reaches_the_gold_end_state_except_where_the_data_cannot(entries: dict[str, list]) -> None:
    # A path fails only when one of its texts cannot be read (some such paths still reach it: the unread call only looked) (an unescaped apostrophe as in 'Domino's', or text after
    # the closing bracket: ACEBench's own executor refuses both) or in the listed entries, whose milestones skip a
    # step the gold state needs (a login) or contradict it (the message deleted, a final period).
    failing, unreadable, reached = set(), set(), set()
    for name in AGENT_CATEGORIES:
        for entry in entries[name]:
            for k, path in enumerate(entry.milestones):
                score = score_episode(entry, replay(entry, path))
                if score.correct:
                    assert score.process == 1.0
                    reached.add(entry.id)
                else:
                    failing.add(f"{entry.id}/{k}")
                if not all(decode_agent(text).ok for text in path):
                    unreadable.add(f"{entry.id}/{k}")
    assert failing - unreadable == MILESTONES_OFF_THE_GOLD_STATE
    assert len(failing) == 27 and len(reached) == 28


def test_perturbed_replays_fail_end_to_end_except_a_repeat_acebenchs_mapping_rule_lets_through(entries: dict[str, list]) -> None:
    entry = _entry(entries, "agent_multi_turn", 0)
    sets = message_sets(entry)
    assert score_episode(entry, replay(entry, sets["gold"])).correct
    for kind in ("drop_last", "changed_value", "prose"):
        assert not score_episode(entry, replay(entry, sets[kind])).correct, kind
    # The message sent twice adds an inbox key the gold does not list; only the gold's keys are compared.
    assert score_episode(entry, replay(entry, sets["repeat_last"])).correct
    assert sets["changed_value"][-1] == render("send_message", {"sender_name": "Grace (changed)", "receiver_name": "Frank",
                                                                 "message": "Are you free tomorrow to have lunch with me?"})


MILESTONES_OFF_THE_GOLD_STATE = {f"agent_multi_step_{i}/{k}" for i, k in
                                 [(8, 1), (9, 1), (12, 0), (13, 0), (14, 0), (15, 0), (16, 0), (17, 0)]}


def _scripted(lines: list[str]):
    """A speaker that says `lines` in order, then ACEBench's closing phrase, recording what it was shown."""
    seen: list[list] = []

    def speak(history) -> str:
        seen.append(list(history))
        return lines[len(seen) - 1] if len(seen) <= len(lines) else "finish conversation"

    return speak, seen


def test_a_multi_turn_episode_alternates_user_agent_and_scenario_and_a_gold_agent_scores_as_its_replay(entries: dict[str, list]) -> None:
    entry = _entry(entries, "agent_multi_turn", 0)
    path = list(entry.milestones[0])
    agent, agent_saw = _scripted(["Which message should I delete?", *path, "Done."])
    user, user_saw = _scripted(["Send Frank a lunch invitation.", "The oldest one."])
    episode, history = run_episode(entry, agent, user)
    assert episode == replay(entry, path) and score_episode(entry, episode).correct
    assert [(m.sender, m.recipient) for m in history[:4]] == [("user", "agent"), ("agent", "user"), ("user", "agent"),
                                                             ("agent", "execution")]
    assert history[4].sender == "execution" and json.loads(history[4].text)[0]["status"] is True
    assert user_saw[0] == [] and agent_saw[0][0].text == "Send Frank a lunch invitation."
    assert history[-1] == Message("user", "agent", "finish conversation")


def test_a_multi_step_episode_runs_every_agent_message_until_the_agent_finishes(entries: dict[str, list]) -> None:
    entry = _entry(entries, "agent_multi_step", 2)
    agent, _ = _scripted(list(entry.milestones[0]))
    episode, history = run_episode(entry, agent)
    assert history[0] == Message("user", "agent", entry.question)
    assert episode == replay(entry, entry.milestones[0])
    assert history[-1] == Message("agent", "execution", "finish conversation") and episode.process == entry.milestones[0]


def test_an_episode_stops_after_acebenchs_message_cap_and_multi_turn_needs_a_user(entries: dict[str, list]) -> None:
    entry = _entry(entries, "agent_multi_step", 2)
    _, history = run_episode(entry, lambda history: "[turn_on_wifi()]", max_messages=7)
    assert len(history) == 8
    with pytest.raises(ValueError, match="user simulator"):
        run_episode(_entry(entries, "agent_multi_turn", 0), lambda history: "")


def test_the_multi_step_agent_is_sent_acebenchs_prompt_with_the_request_and_each_scenario_answer(entries: dict[str, list]) -> None:
    entry = _entry(entries, "agent_multi_step", 2)
    agent, _ = _scripted(["[turn_on_wifi()]"])
    _, history = run_episode(entry, agent, max_messages=2)
    system, user = multi_step_messages(entry, history)
    source = MULTI_STEP_FILE.read_text(encoding="utf-8")
    start = source.index('MULTI_TURN_AGENT_PROMPT_SYSTEM_EN = """') + 39
    assert system == {"role": "system", "content": source[start:source.index('"""', start)]}
    assert user == {"role": "user", "content": f"Below is the list of APIs you can call (in JSON format): {list(entry.functions)}. "
                    f"Conversation history: user:{entry.question}\nexecution result:[{{'status': True, 'message': "
                    f"'Wi-Fi has been turned on'}}]\n\n"}


def _source_string(path, name: str) -> str:
    # The constant as written in the file: between its triple quotes, its escaped newlines read as newlines.
    source = path.read_text(encoding="utf-8")
    start = source.index(f'{name} = """') + len(name) + 6
    return source[start:source.index('"""', start)].replace("\\n", "\n")


@pytest.mark.parametrize(("cls", "rules"), [("BaseApi", "BASE_PROMPT_EN"), ("Travel", "TRAVEL_PROMPT_EN")])
def test_the_multi_turn_agent_is_sent_acebenchs_prompt_its_classes_rules_and_every_message_so_far(
        entries: dict[str, list], cls: str, rules: str) -> None:
    entry = next(e for e in entries["agent_multi_turn"] if cls in e.involved_classes)  # no entry involves both
    history = [Message("user", "agent", "Hello."), Message("agent", "execution", "[f(a='x')]"),
               Message("execution", "agent", '[{"status": true, "message": "done"}]'), Message("agent", "user", "Anything else?"),
               Message("user", "agent", "No.")]
    system, user = multi_turn_messages(entry, history)
    assert system == {"role": "system", "content": _source_string(MULTI_TURN_FILE, "MULTI_TURN_AGENT_PROMPT_SYSTEM_EN")
                      + _source_string(RULES_FILE, rules)}
    assert user == {"role": "user", "content": f"Below is the list of APIs you can use:\n {list(entry.functions)}\n\n"
                    "Conversation history 1..t:\nuser:Hello.\nagent:[f(a='x')]\n"
                    "execution:[{'status': True, 'message': 'done'}]\nagent:Anything else?\nuser:No.\n"}
