"""Summary (response-quality) judges, chosen by name from `JudgeConfig.name`."""

from slca.rewards.judges import grounding, llm  # noqa: F401  (register the judges)
from slca.rewards.judges.base import (
    JUDGES,
    LABEL_SCORES,
    LABELS,
    JudgeRequest,
    JudgeResult,
    SummaryJudge,
    build_judge,
    register_judge,
)

__all__ = [
    "JUDGES",
    "LABELS",
    "LABEL_SCORES",
    "JudgeRequest",
    "JudgeResult",
    "SummaryJudge",
    "build_judge",
    "register_judge",
]
