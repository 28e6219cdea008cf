"""Each distinct spec composition runs Hydra once per test worker.

Hydra composes a spec in ~0.25 s (YAML parsing and OmegaConf merges), and the suite asks for the same
compositions again and again (the defaults alone dozens of times). The first request for a list of
overrides runs the real composition; a repeat gets a copy of its result. The key includes every
YAML file of the conf directory (path, size, modification time), so a test that writes or edits a
conf tree composes afresh; a composition that fails is never kept, so every error is Hydra's own.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest


def _conf_files(conf_dir: Path) -> tuple[tuple[str, int, int], ...]:
    found = []
    for root, _dirs, files in os.walk(conf_dir):
        for name in files:
            if name.endswith(".yaml"):
                stat = os.stat(os.path.join(root, name))
                found.append((os.path.join(root, name), stat.st_size, stat.st_mtime_ns))
    return tuple(sorted(found))


@pytest.fixture(scope="session", autouse=True)
def each_composition_once() -> Iterator[None]:
    import slca.config.compose as compose

    real = compose.compose_dict
    done: dict[tuple[Any, ...], dict[str, Any]] = {}

    def composed_once(overrides: list[str] | tuple[str, ...] = (), conf_dir: Path = compose.CONF_DIR) -> dict[str, Any]:
        key = (tuple(overrides), str(conf_dir), _conf_files(Path(conf_dir)))
        if key not in done:
            done[key] = real(overrides, conf_dir)
        return copy.deepcopy(done[key])

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(compose, "compose_dict", composed_once)
        yield
