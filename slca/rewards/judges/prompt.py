"""The `llm` judge's prompt (structure of docs/method.md#summary-judge and #interactions-judge-prompt, our own wording) and its strict parse."""

from __future__ import annotations

import re

from slca.rewards.judges.base import LABEL_SCORES, JudgeRequest

_SCALE = """Rating scale:
1 = very poor: the reply ignores or contradicts what the tools returned, or gives no usable answer.
2 = poor: the reply uses little of the tool output, or misreads it.
3 = acceptable: the reply uses the main tool output but leaves out important parts or is unclear.
4 = good: the reply reads the tool output correctly and covers nearly all of it; small flaws in presentation.
5 = excellent: the reply reads the tool output correctly, covers everything that matters, and is clear and well organised."""

_OUTPUT = """Reply in exactly this format, where LABEL is one of: very poor, poor, acceptable, good, excellent.
<response><response_quality><reasoning>your reasoning</reasoning><rating>LABEL</rating></response_quality></response>"""


def _fenced(title: str, body: str) -> str:
    return f"## {title}\n```\n{body}\n```"


def build_prompt(req: JudgeRequest, style: str = "reference") -> str:
    """One user message: task, 1–5 rubric, fenced question / tool section / final reply, three
    criteria, the required output format. `style="interactions"` is the v8.2 variant (docs/method.md#interactions-judge-prompt):
    all tool calls then all responses, completeness judged against the question."""
    if style == "interactions":
        task = "Evaluate the assistant's final reply, written after it used tools to help the user."
        section = _fenced("Tool Interactions", "\n\n".join(s for s in (req.tool_calls, req.tool_responses) if s))
        complete = "Completeness: does the reply address everything the user asked?"
    else:
        task = "Evaluate the assistant's final reply on the basis of the results its tools returned."
        section = _fenced("Tool Results", req.tool_responses)
        complete = "Completeness: does the reply cover everything relevant in the tool results?"
    criteria = (
        "Judge these three points:\n"
        "1. Interpretation: are the tool results understood and reported correctly?\n"
        f"2. {complete}\n"
        "3. Expression: is the reply clear, well organised and helpful?"
    )
    return "\n\n".join(
        (
            task,
            _SCALE,
            _fenced("User Question", req.question),
            section,
            _fenced("Model's Final Response", req.final_response),
            criteria,
            _OUTPUT,
        )
    )


_RATING = re.compile(r"<response_quality>.*?<rating>(.*?)</rating>.*?</response_quality>", re.DOTALL | re.IGNORECASE)


def parse_rating(content: str) -> str | None:
    """The rubric label of the first `<response_quality>…<rating>X</rating>…` match, or None."""
    if not isinstance(content, str):
        return None
    m = _RATING.search(content)
    if m is None:
        return None
    label = m.group(1).strip().lower()
    return label if label in LABEL_SCORES else None
