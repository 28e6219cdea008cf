"""Seeded tool-use conversations for comparing slca's renderings with Qwen's official chat templates.

Each conversation is built from structured steps, so the same conversation is written twice
independently: as slca's messages (`tool_calls: [{name, arguments}]`, thinking inline as `<think>` or
in `reasoning`) and as the OpenAI-style messages Qwen's templates read (`tool_calls: [{type,
function}]`, `reasoning_content`). It always ends where the assistant speaks next (after a user
message or a tool round). Covered: parallel calls, several tool rounds and user turns, tool errors,
empty arguments, unicode, thinking in earlier and in the current turn's steps.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

TOOLS: list[dict[str, Any]] = [
    {"type": "function", "function": {
        "name": "get_weather", "description": "Current weather for a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["c", "f"]}},
                       "required": ["city"]}}},
    {"type": "function", "function": {
        "name": "convert_currency", "description": "Convert an amount between currencies (€, ¥, $).",
        "parameters": {"type": "object", "properties": {"amount": {"type": "number"}, "from": {"type": "string"}, "to": {"type": "string"}},
                       "required": ["amount", "from", "to"]}}},
    {"type": "function", "function": {
        "name": "list_holidays", "description": "Public holidays this year; takes no arguments.",
        "parameters": {"type": "object", "properties": {}}}},
    {"type": "function", "function": {
        "name": "search_docs", "description": "Search the 文档 index.",
        "parameters": {"type": "object", "properties": {"query": {"type": "string"}, "filters": {"type": "object"}}, "required": ["query"]}}},
]
QUESTIONS = ["What's the weather in Paris?", "Wie ist das Wetter in Zürich? 🌦", "東京の天気と祝日を教えて。",
             "Convert 12.5 EUR to JPY, and list the holidays.", "naïve café — find the docs on \"quotes\" and \\slashes\\",
             "Check Oslo and Lima at once, please."]
ANSWERS = ["It is sunny, 21 °C.", "Es ist bewölkt in Zürich.", "東京は晴れです。祝日は3件あります。",
           "12.5 EUR is 2,031 JPY.", "I could not find that city; the tool reported an error.", "Done."]
THOUGHTS = ["The user wants the weather; call get_weather.", "Two cities: call the tool twice in parallel.",
            "考えます: 為替を先に。", "The last call failed; answer with what I have."]
RESPONSES = ['{"temperature": 21, "sky": "sunny"}', '{"error": "city not found: Atlantis"}', "Error: upstream timeout",
             '{"rate": 162.5, "result": 2031.25}', '["Neujahr", "Tag der Arbeit", "元日"]', ""]
SYSTEMS = [None, "You are a helpful travel assistant.", "Réponds brièvement. 简洁回答。"]


def _arguments(rng: random.Random, name: str) -> dict[str, Any]:
    if name == "get_weather":
        args: dict[str, Any] = {"city": rng.choice(["Paris", "Zürich", "東京", "Atlantis"])}
        if rng.random() < 0.4:
            args["unit"] = rng.choice(["c", "f"])
        return args
    if name == "convert_currency":
        return {"amount": rng.choice([12.5, 3, 0.1, 1000000]), "from": "EUR", "to": rng.choice(["JPY", "USD"])}
    if name == "list_holidays":
        return {}
    return {"query": rng.choice(["ünïcödé", 'say "hi"', "a\\b", "🌍 maps"]), "filters": {"year": 2024, "tags": ["x", "ÿ"]}}


@dataclass
class Step:
    """One assistant message: its thinking, visible text and calls (with the tool answers that follow)."""

    thought: str | None
    text: str
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    responses: list[str] = field(default_factory=list)


@dataclass
class Conversation:
    system: str | None
    tools: list[dict[str, Any]]
    turns: list[tuple[str, list[Step]]]  # (user question, the assistant steps that answer it)
    thinking: str  # "none" | "inline" (<think> in the content) | "field" (reasoning / reasoning_content)

    def slca_messages(self) -> list[dict[str, Any]]:
        """The conversation as slca's rollout and data code hold it."""
        out: list[dict[str, Any]] = [{"role": "system", "content": self.system}] if self.system else []
        for question, steps in self.turns:
            out.append({"role": "user", "content": question})
            for step in steps:
                msg: dict[str, Any] = {"role": "assistant", "content": step.text}
                if step.thought is not None and self.thinking == "inline":
                    msg["content"] = f"<think>\n{step.thought}\n</think>\n\n{step.text}"
                elif step.thought is not None and self.thinking == "field":
                    msg["reasoning"] = step.thought
                if step.calls:
                    msg["tool_calls"] = [{"name": n, "arguments": a} for n, a in step.calls]
                out.append(msg)
                out += [{"role": "tool", "content": r} for r in step.responses]
        return out

    def qwen_messages(self, *, earlier_thinking: bool = True) -> list[dict[str, Any]]:
        """The conversation in the OpenAI form Qwen's templates read; earlier_thinking=False leaves out
        the thinking of every step before the last user question."""
        out: list[dict[str, Any]] = [{"role": "system", "content": self.system}] if self.system else []
        for t, (question, steps) in enumerate(self.turns):
            out.append({"role": "user", "content": question})
            keep = earlier_thinking or t == len(self.turns) - 1
            for step in steps:
                msg: dict[str, Any] = {"role": "assistant", "content": step.text}
                if step.thought is not None and keep and self.thinking == "inline":
                    msg["content"] = f"<think>\n{step.thought}\n</think>\n\n{step.text}"
                elif step.thought is not None and keep and self.thinking == "field":
                    msg["reasoning_content"] = step.thought
                if step.calls:
                    msg["tool_calls"] = [{"type": "function", "function": {"name": n, "arguments": a}} for n, a in step.calls]
                out.append(msg)
                out += [{"role": "tool", "content": r} for r in step.responses]
        return out

    @property
    def n_calls(self) -> int:
        return sum(len(s.calls) for _, steps in self.turns for s in steps)


def conversation(rng: random.Random, thinking_modes: tuple[str, ...]) -> Conversation:
    """One random conversation; the last turn stops before an assistant message."""
    tools = rng.sample(TOOLS, rng.randint(1, len(TOOLS)))
    names = [t["function"]["name"] for t in tools]
    thinking = rng.choice(thinking_modes)
    turns = []
    n_turns = rng.randint(1, 3)
    for t in range(n_turns):
        steps = []
        for _ in range(rng.choice([0, 1, 1, 2, 3])):
            calls = [(n, _arguments(rng, n)) for n in rng.choices(names, k=rng.choice([1, 1, 2, 3]))]
            text = rng.choice(["", "", "Let me check."])
            thought = rng.choice(THOUGHTS) if thinking != "none" and rng.random() < 0.6 else None
            steps.append(Step(thought, text, calls, [rng.choice(RESPONSES) for _ in calls]))
        last = t == n_turns - 1
        if not last:
            thought = rng.choice(THOUGHTS) if thinking != "none" and rng.random() < 0.6 else None
            steps.append(Step(thought, rng.choice(ANSWERS)))
        elif steps and rng.random() < 0.3:
            steps = steps[: rng.randint(1, len(steps))]  # stop right after a tool round
        elif rng.random() < 0.3:
            steps = []  # stop right after the question
        turns.append((rng.choice(QUESTIONS), steps))
    system = rng.choice(SYSTEMS)
    return Conversation(system, tools, turns, thinking)


def conversations(seed: int, n: int, thinking_modes: tuple[str, ...]) -> list[Conversation]:
    rng = random.Random(seed)
    return [conversation(rng, thinking_modes) for _ in range(n)]
