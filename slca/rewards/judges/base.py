"""Summary-judge interface, result type and registry (docs/method.md#summary-judge)."""

from __future__ import annotations

from typing import Callable, NamedTuple, Protocol, Sequence

from slca.config.groups.reward import JudgeConfig
from slca.registry import Registry

# Five-level rubric, k = 1..5 ↦ (k − 1) / 4.
LABELS = ("very poor", "poor", "acceptable", "good", "excellent")
LABEL_SCORES = {lab: i / 4 for i, lab in enumerate(LABELS)}


def level_label(score: float) -> str:
    """Label of the nearest rubric level to a score in [0, 1]."""
    return LABELS[min(4, max(0, int(score * 4 + 0.5)))]


class JudgeRequest(NamedTuple):
    """Everything a judge may look at for one rollout (a NamedTuple: cheap, hashable for dedup)."""

    question: str
    tool_responses: str  # numbered "[Tool Response k]" sections, "" if none
    final_response: str
    tool_calls: str = ""  # numbered "[Tool Call k]" sections (interactions prompt)
    gold_answer: str | None = None


class JudgeResult(NamedTuple):
    """A summary score in [0, 1] (or the failure score) with its label and failure flags."""

    score: float
    rating: str
    failed: bool = False
    parse_failed: bool = False
    cached: bool = False


class SummaryJudge(Protocol):
    name: str

    def score(self, req: JudgeRequest) -> JudgeResult: ...

    def score_batch(self, reqs: Sequence[JudgeRequest]) -> list[JudgeResult]: ...


JUDGES: Registry[Callable[[JudgeConfig], SummaryJudge]] = Registry("summary judge")
register_judge = JUDGES.register

def build_judge(cfg: JudgeConfig) -> SummaryJudge:
    """The judge `cfg` names, newly built: a run builds its judge once (with its reward scorer) and
    keeps it, so the judge's cache and connection pool live as long as the run."""
    return JUDGES.get(cfg.name)(cfg)


class SequentialBatch:
    """Mixin: `score_batch` as a plain loop (for judges with no I/O)."""

    def score_batch(self, reqs: Sequence[JudgeRequest]) -> list[JudgeResult]:
        return [self.score(r) for r in reqs]  # type: ignore[attr-defined]


@register_judge("none")
class NoJudge(SequentialBatch):
    """Judge switched off: every rollout gets the failure score (not counted as a failure)."""

    name = "none"

    def __init__(self, cfg: JudgeConfig) -> None:
        self._result = JudgeResult(cfg.failure_score, "disabled")

    def score(self, req: JudgeRequest) -> JudgeResult:
        return self._result
