"""Algorithms as pure functions over tensors: advantage estimators, prompt filters, dynamic
sampling and down-sampling. Names resolve lazily so `import slca.algos` does not pull torch."""

from __future__ import annotations

from slca.lazy import lazy_getattr

_LAZY = {
    "get_estimator": "slca.algos.registry",
    "register_estimator": "slca.algos.registry",
    "list_estimators": "slca.algos.registry",
    "ESTIMATORS": "slca.algos.registry",
    "compute_slca_grpo": "slca.algos.slca_grpo",
    "SlcaOutput": "slca.algos.slca_grpo",
    "segment_bounds": "slca.algos.segment_bounds",
    "SegmentBounds": "slca.algos.segment_bounds",
    "group_normalise": "slca.algos.groups",
    "group_ids": "slca.algos.groups",
    "measure_misattribution": "slca.algos.misattribution",
    "Misattribution": "slca.algos.misattribution",
    "get_downsampler": "slca.algos.downsample",
    "register_downsampler": "slca.algos.downsample",
    "downsample_from_config": "slca.algos.downsample",
    "PreRolloutFilter": "slca.algos.filters",
    "stability_curve": "slca.algos.filters",
    "build_filters": "slca.algos.filters",
    "FILTERS": "slca.algos.filters",
    "RolloutFilters": "slca.algos.filters",
    "DOWNSAMPLERS": "slca.algos.downsample",
    "drop_zero_variance": "slca.algos.dynamic_sampling",
    "BatchFiller": "slca.algos.dynamic_sampling",
}

__all__ = sorted(_LAZY)


__getattr__ = lazy_getattr(__name__, _LAZY)
