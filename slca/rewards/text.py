"""What the summary judge sees, cut from a think-stripped response (docs/method.md#summary-judge).

`str.find` loops rather than non-greedy regexes, so unclosed tags cost linear time; the result
is the same as the reference's `<tag>(.*?)</tag>` DOTALL matching.
"""

from __future__ import annotations

RESP_OPEN = "<tool_response>"
RESP_CLOSE = "</tool_response>"
CALL_OPEN = "<tool_call>"
CALL_CLOSE = "</tool_call>"


def blocks_between(text: str, open_tag: str, close_tag: str) -> list[str]:
    """Contents of each non-overlapping `open…first close` pair, in order (unstripped)."""
    out: list[str] = []
    pos = 0
    lo, lc = len(open_tag), len(close_tag)
    while True:
        s = text.find(open_tag, pos)
        if s < 0:
            return out
        e = text.find(close_tag, s + lo)
        if e < 0:
            return out
        out.append(text[s + lo : e])
        pos = e + lc


def remove_blocks(text: str, open_tag: str, close_tag: str, keep: str = "") -> str:
    """`text` with every `open…first close` pair (tags included) replaced by `keep`."""
    if open_tag not in text:
        return text
    pieces: list[str] = []
    pos = 0
    lo, lc = len(open_tag), len(close_tag)
    while True:
        s = text.find(open_tag, pos)
        e = text.find(close_tag, s + lo) if s >= 0 else -1
        if e < 0:
            pieces.append(text[pos:])
            return "".join(pieces)
        pieces.append(text[pos:s])
        pieces.append(keep)
        pos = e + lc


def numbered_sections(contents: list[str], label: str) -> str:
    """"[label k]" line, stripped content line, blank line per item; joined, stripped."""
    # Same text as joining [header, content, ""] lines with "\n" and stripping the whole.
    return "\n\n".join([f"[{label} {k}]\n{c.strip()}" for k, c in enumerate(contents, 1)]).strip()


def tool_responses_text(text: str) -> str:
    """All `<tool_response>` contents as numbered "[Tool Response k]" sections ("" if none)."""
    if RESP_OPEN not in text:
        return ""
    return numbered_sections(blocks_between(text, RESP_OPEN, RESP_CLOSE), "Tool Response")


def tool_calls_text(text: str) -> str:
    """All `<tool_call>` contents as numbered "[Tool Call k]" sections (docs/method.md#interactions-judge-prompt prompt)."""
    if CALL_OPEN not in text:
        return ""
    return numbered_sections(blocks_between(text, CALL_OPEN, CALL_CLOSE), "Tool Call")


def final_response(text: str) -> str:
    """The answer after the tool interaction (docs/method.md#summary-judge).

    Text after the last `</tool_response>` if non-empty; else text after the last
    `</tool_call>` ("" when that tail holds a `<tool_response>` or starts with `<tool_call>`);
    else, with no closed call at all, the text with tool-call blocks removed. Stripped.
    """
    i = text.rfind(RESP_CLOSE)
    if i >= 0:
        tail = text[i + len(RESP_CLOSE) :].strip()
        if tail:
            return tail
    j = text.rfind(CALL_CLOSE)
    if j >= 0:
        tail = text[j + len(CALL_CLOSE) :].strip()
        if RESP_OPEN in tail or tail.startswith(CALL_OPEN):
            return ""
        return tail
    return remove_blocks(text, CALL_OPEN, CALL_CLOSE).strip()


_ROLE_WORDS = ("assistant",)


def strip_role_word(answer: str) -> str:
    """Drop a leading decoded role word ("assistant"), left behind when special tokens are
    skipped during decoding (docs/method.md#reference-quirks Q18)."""
    for w in _ROLE_WORDS:
        if answer.startswith(w) and (len(answer) == len(w) or answer[len(w)].isspace()):
            return answer[len(w) :].lstrip()
    return answer
