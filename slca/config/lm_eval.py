"""`eval.lm_eval`: how the `lm_eval` benchmark runs lm-evaluation-harness (docs/eval.md#table-5-general-capabilities).

The harness scores the saved model directory with its own tasks, prompts and metrics; slca picks
the tasks, the headline metric of each, few-shot and batch settings, and whether the harness may
reach the Hugging Face hub for its tasks' data.
"""

from __future__ import annotations

import re

from pydantic import Field, field_validator

from slca.config.base import RuleViolation, SlcaModel
from slca.config.limits import MAX_WALL_SECONDS

# A harness task or group name, a metric name: what its registries and result keys use.
_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]*$")


class LmEvalTask(SlcaModel):
    """One harness task (or group, e.g. mmlu) and the metric its table row shows."""

    name: str = Field(..., min_length=1, max_length=200, description="Task or group name in the harness's registry, slca's shipped tasks or include_path.")
    metric: str = Field("acc", min_length=1, max_length=100, description="Metric shown (the harness's key, e.g. acc, acc_norm); its standard error is shown beside it.")

    @field_validator("name", "metric")
    @classmethod
    def _plain(cls, value: str) -> str:
        if not _NAME.match(value):
            raise RuleViolation("", f"{value!r} is not a task or metric name (letters, digits, _ . -)")
        return value


def _paper_tasks() -> list[LmEvalTask]:
    # The efficiency paper's Table 5; HellaSwag reported length-normalised, as the harness's leaderboards do.
    return [LmEvalTask(name="hellaswag", metric="acc_norm"), LmEvalTask(name="mmlu", metric="acc"),
            LmEvalTask(name="truthfulqa_mc2", metric="acc"), LmEvalTask(name="winogrande", metric="acc")]


class LmEvalEval(SlcaModel):
    """lm-evaluation-harness settings, read when eval.benchmark is lm_eval (eval.limit caps the documents per task)."""

    tasks: list[LmEvalTask] = Field(default_factory=_paper_tasks, min_length=1, max_length=256, description="Tasks evaluated (distinct names), each with its headline metric; default: the paper's HellaSwag, MMLU, TruthfulQA (mc2), WinoGrande.")
    num_fewshot: int | None = Field(None, ge=0, le=128, description="Few-shot examples per prompt; null keeps each task's own default.")
    batch_size: int = Field(8, ge=1, le=4096, description="Requests per forward pass of the harness's model.")
    include_path: str | None = Field(None, min_length=1, description="Folder of task YAMLs of your own, indexed besides the harness's tasks and slca's shipped ones.")
    offline: bool = Field(True, description="Set HF_HUB_OFFLINE and HF_DATASETS_OFFLINE for the harness: task data only from the local Hugging Face cache or local files; false lets it download from the hub.")
    timeout_s: float = Field(86400.0, gt=0, le=MAX_WALL_SECONDS, description="Wall-clock limit in seconds of one harness run (one seed).")

    @field_validator("tasks")
    @classmethod
    def _distinct(cls, value: list[LmEvalTask]) -> list[LmEvalTask]:
        names = [t.name for t in value]
        if len(set(names)) != len(names):
            raise RuleViolation("", f"{names} lists a task twice")
        return value
