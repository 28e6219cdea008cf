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


# Each tag is found with one forward search (the label is the text up to the first `</rating>` after
# the first `<rating>` inside the first `<response_quality>`, and some `</response_quality>` must follow):
# what the lazy regex `<response_quality>.*?<rating>(.*?)</rating>.*?</response_quality>` (DOTALL,
# IGNORECASE) matched, in linear time; that regex backtracked cubically on replies full of open tags.
_QUALITY_OPEN = re.compile(re.escape("<response_quality>"), re.IGNORECASE)
_QUALITY_CLOSE = re.compile(re.escape("</response_quality>"), re.IGNORECASE)
_RATING_OPEN = re.compile(re.escape("<rating>"), re.IGNORECASE)
_RATING_CLOSE = re.compile(re.escape("</rating>"), re.IGNORECASE)


def _rating_text(content: str) -> str | None:
    """The raw text between `<rating>` and `</rating>` of the first `<response_quality>` block, or None."""
    quality = _QUALITY_OPEN.search(content)
    if quality is None:
        return None
    rating = _RATING_OPEN.search(content, quality.end())
    if rating is None:
        return None
    rating_end = _RATING_CLOSE.search(content, rating.end())
    if rating_end is None or _QUALITY_CLOSE.search(content, rating_end.end()) is None:
        return None
    return content[rating.end():rating_end.start()]


def parse_rating(content: str) -> str | None:
    """The rubric label of the first `<response_quality>…<rating>X</rating>…</response_quality>` (tags in
    any case), or None; linear in the length of `content`."""
    if not isinstance(content, str):
        return None
    text = _rating_text(content)
    if text is None:
        return None
    label = text.strip().lower()
    return label if label in LABEL_SCORES else None
