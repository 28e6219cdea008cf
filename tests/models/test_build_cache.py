"""A backbone build writes its files without transformers' progress bars on the terminal, and leaves the
library's switch for them as it found it."""

from __future__ import annotations

from pathlib import Path

import pytest
from transformers.utils import logging as hf_logging

from slca.models.build_cache import cached_build


def _write_with_a_library_bar(out: Path) -> None:
    for _ in hf_logging.tqdm(range(3), desc="Writing model shards"):
        pass
    (out / "config.json").write_text("{}", encoding="utf-8")


@pytest.mark.parametrize("bars_on", [True, False])
def test_a_build_shows_no_library_bar_and_restores_the_switch(bars_on: bool, tmp_path: Path, capsys) -> None:
    before = hf_logging.is_progress_bar_enabled()
    hf_logging.enable_progress_bar() if bars_on else hf_logging.disable_progress_bar()
    try:
        built = cached_build(tmp_path / "backbone", _write_with_a_library_bar)
        assert (built / "config.json").is_file()
        assert "Writing model shards" not in capsys.readouterr().err
        assert hf_logging.is_progress_bar_enabled() is bars_on
        if bars_on:  # the control: outside a build the same bar does print where the test listens
            _write_with_a_library_bar(tmp_path)
            assert "Writing model shards" in capsys.readouterr().err
    finally:
        hf_logging.enable_progress_bar() if before else hf_logging.disable_progress_bar()
