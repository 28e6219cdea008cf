"""Runs τ²-bench tasks inside τ²'s own Python 3.12 environment (docs/tau2.md#how-it-runs).

This file is executed by that environment's interpreter (`python driver.py JOB.json ...`), never
imported by slca: it imports only the standard library and the vendored `tau2` package. It reads a
job (JSON, written by slca.evaluation.tau2.job), runs every (trial, task) through τ²'s own
orchestrator and evaluator, and writes one JSON result atomically. A task that raises (an
unusable model reply, an endpoint that keeps failing) scores 0 with the error as its reason; the
run itself goes on.

Two changes to τ²'s behaviour are made here, at run time, without editing the vendored code:
- the `calculate` tool refuses exponentiation (and anything but + - * / on numbers) before τ²'s
  own `eval` sees the expression: `9**9**9**9` passes its character whitelist and hangs a worker;
- the natural-language assertion judge, a module constant in τ², is pointed at the job's judge.

Modes: `llm` (τ²'s LLM agent and user simulator at the job's endpoints), `gold` (a scripted agent
and user replay each task's gold actions, then the agent states every required piece of
information) and `gold_drop_last` (the same without the last gold action: a negative control).
"""

from __future__ import annotations

import ast
import functools
import json
import os
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

MAX_EXPRESSION_CHARS = 1000
STOP = "###STOP###"


# ----------------------------------------------------------------------------- calculate guard


def check_expression(expression: Any) -> None:
    """Raise ValueError unless `expression` is plain arithmetic: numbers, unary +/-, + - * /, brackets.

    τ²'s `calculate` evaluates any string made of `0123456789+-*/(). `; `**` is such a string and a
    tower of powers never finishes. The walk accepts only the operators the tool documents.
    """
    if not isinstance(expression, str):
        raise ValueError("expression must be a string")
    if len(expression) > MAX_EXPRESSION_CHARS:
        raise ValueError(f"expression longer than {MAX_EXPRESSION_CHARS} characters")
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        raise ValueError("invalid expression") from None
    allowed_ops = (ast.Add, ast.Sub, ast.Mult, ast.Div)
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp):
            if not isinstance(node.op, allowed_ops):
                raise ValueError(f"operator {type(node.op).__name__} is not allowed (only + - * /)")
        elif isinstance(node, ast.UnaryOp):
            if not isinstance(node.op, (ast.UAdd, ast.USub)):
                raise ValueError(f"operator {type(node.op).__name__} is not allowed")
        elif isinstance(node, ast.Constant):
            if not isinstance(node.value, (int, float)) or isinstance(node.value, bool):
                raise ValueError("only numbers are allowed")
        elif not isinstance(node, (ast.Expression, ast.operator, ast.unaryop)):
            raise ValueError(f"{type(node).__name__} is not allowed in an expression")


def guard_calculate(toolkit_classes: list[type]) -> None:
    """Wrap each class's `calculate` tool so the expression is checked before the original runs.

    functools.wraps keeps the name, docstring, signature and τ²'s tool markers, so the schema the
    agent sees is unchanged.
    """
    for cls in toolkit_classes:
        original = cls.__dict__.get("calculate")
        if original is None or getattr(original, "__slca_guarded__", False):
            continue

        @functools.wraps(original)
        def calculate(self: Any, expression: str, _original: Any = original) -> str:
            check_expression(expression)
            return _original(self, expression)

        calculate.__slca_guarded__ = True  # type: ignore[attr-defined]
        setattr(cls, "calculate", calculate)


def calculate_toolkits() -> list[type]:
    """Every τ² toolkit class that defines a `calculate` tool."""
    from tau2.domains.airline.tools import AirlineTools
    from tau2.domains.retail.tools import RetailTools
    from tau2.environment.toolkit import ToolKitBase

    found = [AirlineTools, RetailTools]
    pending = list(ToolKitBase.__subclasses__())
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        if "calculate" in cls.__dict__ and cls not in found:
            found.append(cls)
    return found


# ----------------------------------------------------------------------------- LLM endpoints


def llm_args(spec: dict[str, Any]) -> dict[str, Any]:
    """litellm keyword arguments for one role: temperature, api_base and the key (from the named variable)."""
    args: dict[str, Any] = {"temperature": spec["temperature"]}
    if spec.get("base_url"):
        args["api_base"] = spec["base_url"]
    key_env = spec.get("api_key_env")
    if not key_env:
        # litellm's OpenAI client insists on some key; a local OpenAI-compatible server never checks it.
        args["api_key"] = "unused"
    elif os.environ.get(key_env):
        args["api_key"] = os.environ[key_env]
    if spec.get("max_tokens"):
        args["max_tokens"] = spec["max_tokens"]
    return args


def point_judge(judge: dict[str, Any]) -> None:
    """Aim τ²'s natural-language assertion judge (a module constant there) at the job's judge."""
    import tau2.evaluator.evaluator_nl_assertions as nl

    nl.DEFAULT_LLM_NL_ASSERTIONS = judge["model"]
    nl.DEFAULT_LLM_NL_ASSERTIONS_ARGS = llm_args(judge)


# ----------------------------------------------------------------------------- gold replay


class Replay:
    """The gold actions of one task, shared by the scripted agent and user, consumed in order."""

    def __init__(self, task: Any, drop_last: bool) -> None:
        criteria = task.evaluation_criteria
        actions = list(criteria.actions or []) if criteria is not None else []
        self.actions = actions[:-1] if drop_last and actions else actions
        self.info = list(criteria.communicate_info or []) if criteria is not None else []
        self.next = 0
        self.told = False

    def pending(self) -> Any:
        return self.actions[self.next] if self.next < len(self.actions) else None

    def take(self, requestor: str) -> Any:
        from tau2.data_model.message import ToolCall

        action = self.actions[self.next]
        self.next += 1
        return ToolCall(id=f"gold_{self.next}", name=action.name, arguments=dict(action.arguments), requestor=requestor)


def scripted_classes() -> tuple[type, type]:
    """The scripted agent and user classes (defined here so τ² is imported only inside its environment)."""
    from tau2.agent.base import LocalAgent
    from tau2.data_model.message import AssistantMessage, MultiToolMessage, UserMessage
    from tau2.user.base import BaseUser, UserState

    class GoldAgent(LocalAgent):
        def __init__(self, tools: Any, domain_policy: str, replay: Replay) -> None:
            super().__init__(tools=tools, domain_policy=domain_policy)
            self.replay = replay

        def get_init_state(self, message_history: Any = None) -> list:
            return list(message_history or [])

        def generate_next_message(self, message: Any, state: list) -> tuple[Any, list]:
            state.extend(message.tool_messages if isinstance(message, MultiToolMessage) else [message])
            action = self.replay.pending()
            if action is not None and action.requestor == "assistant":
                reply = AssistantMessage(role="assistant", tool_calls=[self.replay.take("assistant")], cost=0.0)
            elif action is not None:
                reply = AssistantMessage(role="assistant", content=f"Please run {action.name} on your device.", cost=0.0)
            else:
                self.replay.told = True
                reply = AssistantMessage(role="assistant", content=" ".join(["Done."] + self.replay.info), cost=0.0)
            state.append(reply)
            return reply, state

        def set_seed(self, seed: int) -> None:
            pass

    class GoldUser(BaseUser):
        def __init__(self, replay: Replay, instructions: str = "") -> None:
            super().__init__(instructions=instructions, llm="scripted")
            self.replay = replay

        def get_init_state(self, message_history: Any = None) -> Any:
            return UserState(system_messages=[], messages=list(message_history or []))

        @classmethod
        def is_stop(cls, message: Any) -> bool:
            return not message.is_tool_call() and STOP in (message.content or "")

        def generate_next_message(self, message: Any, state: Any) -> tuple[Any, Any]:
            action = self.replay.pending()
            if action is not None and action.requestor == "user":
                reply = UserMessage(role="user", tool_calls=[self.replay.take("user")], cost=0.0)
            elif action is None and self.replay.told:
                reply = UserMessage(role="user", content=STOP, cost=0.0)
            else:
                reply = UserMessage(role="user", content="Please go on.", cost=0.0)
            return reply, state

        def set_seed(self, seed: int) -> None:
            pass

    return GoldAgent, GoldUser


# ----------------------------------------------------------------------------- one task


def run_one(job: dict[str, Any], task: Any, trial: int, seed: int) -> dict[str, Any]:
    """Run one (task, trial) through τ²'s orchestrator and evaluator; the reward and how it ended."""
    from tau2.agent.llm_agent import LLMAgent
    from tau2.evaluator.evaluator import EvaluationType, evaluate_simulation
    from tau2.orchestrator.orchestrator import Orchestrator
    from tau2.registry import registry
    from tau2.user.user_simulator import UserSimulator

    domain = job["domain"]
    environment = registry.get_env_constructor(domain)()
    if job["mode"] == "llm":
        agent = LLMAgent(tools=environment.get_tools(), domain_policy=environment.get_policy(), llm=job["agent"]["model"],
                         llm_args=llm_args(job["agent"]))
        try:
            user_tools = environment.get_user_tools()
        except Exception:  # τ²'s own rule: a domain without user tools raises here
            user_tools = None
        user = UserSimulator(tools=user_tools, instructions=str(task.user_scenario), llm=job["user"]["model"],
                             llm_args=llm_args(job["user"]))
    else:
        gold_agent, gold_user = scripted_classes()
        replay = Replay(task, drop_last=job["mode"] == "gold_drop_last")
        agent = gold_agent(environment.get_tools(), environment.get_policy(), replay)
        user = gold_user(replay, str(task.user_scenario))
    orchestrator = Orchestrator(domain=domain, agent=agent, user=user, environment=environment, task=task,
                                max_steps=job["max_steps"], max_errors=job["max_errors"], seed=seed)
    simulation = orchestrator.run()
    evaluation = EvaluationType.ALL_WITH_NL_ASSERTIONS if job["judge"] is not None else EvaluationType.ALL
    reward = evaluate_simulation(simulation=simulation, task=task, evaluation_type=evaluation, solo_mode=False, domain=domain)
    return {"task_id": task.id, "trial": trial, "seed": seed, "reward": float(reward.reward),
            "termination": str(getattr(simulation.termination_reason, "value", simulation.termination_reason)),
            "steps": len(simulation.messages), "duration_s": round(float(simulation.duration), 3), "error": None}


def select_tasks(job: dict[str, Any]) -> list[Any]:
    from tau2.registry import registry

    tasks = registry.get_tasks_loader(job["domain"])()
    if job.get("task_ids") is not None:
        by_id = {t.id: t for t in tasks}
        missing = [i for i in job["task_ids"] if i not in by_id]
        if missing:
            raise SystemExit(f"tau2 driver: domain {job['domain']} has no task {missing[0]!r}")
        tasks = [by_id[i] for i in job["task_ids"]]
    if job.get("limit"):
        tasks = tasks[: job["limit"]]
    return tasks


def trial_seeds(seed: int, trials: int) -> list[int]:
    """One seed per trial, derived from the job seed as τ²'s runner does."""
    import random

    rng = random.Random(seed)
    return [rng.randint(0, 1_000_000) for _ in range(trials)]


def run_job(job: dict[str, Any]) -> dict[str, Any]:
    from concurrent.futures import ThreadPoolExecutor

    guard_calculate(calculate_toolkits())
    if job["judge"] is not None:
        point_judge(job["judge"])
    tasks = select_tasks(job)
    seeds = trial_seeds(job["seed"], job["trials"])
    work = [(task, trial, seeds[trial]) for trial in range(job["trials"]) for task in tasks]

    def attempt(item: tuple[Any, int, int]) -> dict[str, Any]:
        task, trial, seed = item
        start = time.perf_counter()
        try:
            return run_one(job, task, trial, seed)
        except Exception as exc:  # one task's failure scores 0 and is reported, the others go on
            return {"task_id": task.id, "trial": trial, "seed": seed, "reward": 0.0, "termination": "error",
                    "steps": 0, "duration_s": round(time.perf_counter() - start, 3),
                    "error": f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:500]}

    with ThreadPoolExecutor(max_workers=job["max_concurrency"]) as pool:
        results = list(pool.map(attempt, work))
    return {"domain": job["domain"], "mode": job["mode"], "trials": job["trials"],
            "task_ids": [t.id for t in tasks], "simulations": results}


def write_atomic(path: Path, payload: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(payload, fh, indent=1)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def main(argv: list[str]) -> int:
    """Run each job file named on the command line, in order, in this one process (τ² imports once)."""
    if len(argv) < 2:
        print("usage: driver.py JOB.json [JOB.json ...]", file=sys.stderr)
        return 2
    jobs = [json.loads(Path(arg).read_text(encoding="utf-8")) for arg in argv[1:]]
    from loguru import logger

    logger.remove()  # τ² logs every step at INFO; keep warnings and errors only
    logger.add(sys.stderr, level="WARNING")
    for job in jobs:
        try:
            result = run_job(job)
        except SystemExit:
            raise
        except Exception:
            traceback.print_exc()
            return 1
        write_atomic(Path(job["out"]), result)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
