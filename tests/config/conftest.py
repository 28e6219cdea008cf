"""Fixtures shared by the config tests."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest


@pytest.fixture(scope="session")
def composed_option() -> Callable[[str, str], dict[str, Any]]:
    """`group=option` over the defaults, composed by Hydra once for the session (the compose and the
    hardening tests read every option; sharing this fixture keeps them on one worker): a copy of the
    resolved spec dict each time."""
    from slca.config.compose import compose_dict

    done: dict[tuple[str, str], dict[str, Any]] = {}

    def composed(group: str, option: str) -> dict[str, Any]:
        if (group, option) not in done:
            done[group, option] = compose_dict([f"{group}={option}"])
        return copy.deepcopy(done[group, option])

    return composed
