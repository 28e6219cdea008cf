"""`estimator` group: how per-rollout rewards become per-token advantages."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from slca.config.base import SlcaModel
from slca.config.limits import MAX_WEIGHT
from slca.config.options import Options

# eps is added to a std of rewards of order one: above 1 it would drown what it guards.
MAX_EPS = 1.0


ESTIMATOR_OPTIONS = Options("estimator")


@ESTIMATOR_OPTIONS.add
class GrpoEstimator(SlcaModel):
    """Group z-score of the total reward (DeepSeekMath, Shao et al. 2024)."""

    name: Literal["grpo"] = Field("grpo", description="Option name.")
    eps: float = Field(1e-6, gt=0, le=MAX_EPS, description="Added to the group std before dividing.")
    norm_by_std: bool = Field(True, description="Divide by the group std (False: mean-centring only).")
    singleton_fallback: Literal["zero", "reference"] = Field(
        "zero", description="Group of one rollout: advantage 0, or the stock-GRPO mean=0/std=1 fallback (`reference`, as verl)."
    )


@ESTIMATOR_OPTIONS.add
class DrGrpoEstimator(SlcaModel):
    """Mean-centred group advantage without std normalisation (Dr. GRPO, Liu et al. 2025)."""

    name: Literal["dr_grpo"] = Field("dr_grpo", description="Option name; pair with loss_agg_mode=seq-mean-token-sum-norm.")


@ESTIMATOR_OPTIONS.add
class RlooEstimator(SlcaModel):
    """Leave-one-out baseline (Ahmadian et al. 2024)."""

    name: Literal["rloo"] = Field("rloo", description="Option name.")


@ESTIMATOR_OPTIONS.add
class SlcaGrpoEstimator(SlcaModel):
    """Segment-locked credit assignment: tool and summary segments normalised and credited separately."""

    name: Literal["slca_grpo"] = Field("slca_grpo", description="Option name.")
    w_process: float = Field(1.0, ge=0.0, le=MAX_WEIGHT, description="Weight (>= 0) on the tool-segment advantage, applied after normalisation.")
    w_summary: float = Field(1.0, ge=0.0, le=MAX_WEIGHT, description="Weight (>= 0) on the summary-segment advantage, applied after normalisation.")
    eps: float = Field(1e-6, gt=0, le=MAX_EPS, description="Added to the group std before dividing.")
    norm_by_std: bool = Field(True, description="Divide by the group std (False: mean-centring only).")
    penalty_guard: Literal["reference", "flag"] = Field(
        "reference", description="Omission guard trigger: `reference` = no-call flag or negative score; `flag` = no-call flag only."
    )
    final_tool_turn: Literal["summary", "process"] = Field(
        "summary", description="A last turn opening a tool call that never ran (cut off or unparsable) is the summary (reference) or the tool segment, summary absent (`process`, for weak SFTs)."
    )


@ESTIMATOR_OPTIONS.add
class ToolPoEstimator(SlcaModel):
    """Global GRPO advantage on all tokens plus lambda times a tool-segment advantage (ToolPO baseline)."""

    name: Literal["toolpo"] = Field("toolpo", description="Option name.")
    lam: float = Field(1.0, ge=0.0, le=MAX_WEIGHT, description="Scale (>= 0) of the tool-segment advantage added to process tokens.")
    eps: float = Field(1e-6, gt=0, le=MAX_EPS, description="Added to the group std before dividing.")
    norm_by_std: bool = Field(True, description="Divide by the group std (False: mean-centring only).")
    singleton_fallback: Literal["zero", "reference"] = Field(
        "zero", description="Global term for a group of one rollout: 0, or the stock-GRPO mean=0/std=1 fallback (`reference`)."
    )


# The union is built from the registered options when first imported (slca/config/options.py).
__getattr__ = ESTIMATOR_OPTIONS.module_getattr(__name__, "EstimatorConfig")
