"""Shared test fixtures. Tests run offline: W&B never syncs, hub libraries never reach the network."""

from __future__ import annotations

import os

import pytest

# Set before any test imports transformers, datasets or wandb: nothing in the suite may touch a hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("WANDB_SILENT", "true")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked `gpu` run only where CUDA is available (they are real GPU paths, not skipped stubs)."""
    try:
        import torch

        has_cuda = torch.cuda.is_available()
    except ImportError:
        has_cuda = False
    if has_cuda:
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
