"""One torch intra-op thread for the tests of tiny in-process models, restored after each test."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def one_torch_thread():
    """These models are too small to gain from intra-op threads, and on a shared 2-core box extra
    threads only spin against other processes; the setting is restored after each test, so no later
    test inherits it."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
