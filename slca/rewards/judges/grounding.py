"""`grounding`: an offline, deterministic summary judge (no model).

Rule (all matching on lower-cased text):
* Salient values are numbers (commas dropped, trailing decimal zeros dropped; single digits are
  ignored as too common, e.g. list numbering) and words of at least 4 characters that start
  with a letter and are not in a short stop list.
* Coverage of a source = |source values found in the answer| / min(|source values|, K), capped
  at 1, with K = `grounding_max_values`: citing K distinct facts of a long tool output is
  enough, citing every one of a short output is needed.
* Sources: the tool responses and, when the row has one, the gold answer; the answer's coverage
  is the mean over the sources present. JSON object keys (a word directly followed by `":`)
  name fields rather than state facts and are skipped; so are the "[Tool Response k]" headers
  (the words "tool" and "response" are dropped from the tool-response values).
* Precision = share of the answer's numbers that appear in the tool responses, the question or
  the gold answer (1 when the answer has no numbers): invented numbers cost.
* g = coverage × precision, mapped to the nearest rubric level {0, .25, .5, .75, 1}.
* No source at all (no tool response, no gold answer) scores the middle level, "acceptable":
  there is nothing to ground against, and the reference short-circuit (require_tool_response)
  normally catches this case before any judge runs.
"""

from __future__ import annotations

import re

from slca.config.groups.reward import JudgeConfig
from slca.rewards.judges.base import LABELS, JudgeRequest, JudgeResult, SequentialBatch, register_judge

# Numbers of two or more characters (single digits are list numbering more often than facts).
_NUM = re.compile(r"\d[\d,]*\d(?:\.\d+)?|\d\.\d+")
# Words of 4+ characters; possessive so that a JSON object key (word directly followed by `":`)
# is skipped whole rather than matched minus its last letter.
_WORD = re.compile(r"[a-z][a-z0-9_\-]{3,}+(?!\"\s*:)")
_HEADER = re.compile(r"\[Tool Response \d+\]")
_STOP = frozenset(
    """about also been being both from have here into just like more most much must only other
    over same some such than that their them then there these they this those very were what
    when where which while will with would your true false null none""".split()
)
_RESULTS = tuple(JudgeResult(i / 4, LABELS[i]) for i in range(5))


def _norm_num(tok: str) -> str:
    if "," in tok:
        tok = tok.replace(",", "")
    if "." in tok:
        tok = tok.rstrip("0").rstrip(".")
    return tok


def salient(text: str) -> tuple[set[str], set[str]]:
    """(numbers, words) of `text` by the rule in the module docstring."""
    low = text.lower()
    nums = set(_NUM.findall(low))
    if any("," in n or "." in n for n in nums):
        nums = {_norm_num(n) for n in nums}
    words = set(_WORD.findall(low))
    words -= _STOP
    return nums, words


def _coverage(src: tuple[set[str], set[str]], ans: tuple[set[str], set[str]], k: int) -> float | None:
    n_src = len(src[0]) + len(src[1])
    if n_src == 0:
        return None
    hits = len(src[0] & ans[0]) + len(src[1] & ans[1])
    return min(1.0, hits / min(n_src, k))


def grounding_score(req: JudgeRequest, max_values: int = 8, question_numbers: dict[str, set[str]] | None = None) -> float:
    """g in [0, 1] before level mapping (see module docstring); `question_numbers` memoises the
    numbers of each question (the rollouts of one prompt share it) for a judge that scores many."""
    ans = salient(req.final_response)
    tool = salient(req.tool_responses) if req.tool_responses else (set(), set())
    if tool[1]:
        # The "[Tool Response k]" headers are ours, not evidence (their k is a single digit,
        # which `salient` ignores, below ten responses).
        tool = (salient(_HEADER.sub("", req.tool_responses))[0], tool[1]) if "[Tool Response 10]" in req.tool_responses else tool
        tool[1].discard("tool")
        tool[1].discard("response")
    gold = salient(req.gold_answer) if req.gold_answer else (set(), set())
    covs = [c for c in (_coverage(tool, ans, max_values), _coverage(gold, ans, max_values)) if c is not None]
    if not covs:
        return 0.5
    coverage = sum(covs) / len(covs)
    if ans[0]:
        evidence = tool[0] | gold[0]
        if req.question:
            evidence = evidence | _numbers_of_question(req.question, question_numbers)
        precision = len(ans[0] & evidence) / len(ans[0])
    else:
        precision = 1.0
    return coverage * precision


def _numbers_of_question(question: str, memo: dict[str, set[str]] | None) -> set[str]:
    if memo is None:
        return salient(question)[0]
    nums = memo.get(question)
    if nums is None:
        if len(memo) > 4096:  # a run's prompts in flight, not all it ever saw
            memo.clear()
        nums = memo[question] = salient(question)[0]
    return nums


@register_judge("grounding")
class GroundingJudge(SequentialBatch):
    """Deterministic answer-vs-evidence overlap judge; never fails."""

    name = "grounding"

    def __init__(self, cfg: JudgeConfig) -> None:
        self.max_values = cfg.grounding_max_values
        self._question_numbers: dict[str, set[str]] = {}

    def score(self, req: JudgeRequest) -> JudgeResult:
        g = grounding_score(req, self.max_values, self._question_numbers)
        return _RESULTS[min(4, int(g * 4 + 0.5))]
