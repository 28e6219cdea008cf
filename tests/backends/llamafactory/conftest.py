"""Fixtures for the LLaMA-Factory backend: its own environment (built once, cached under .cache/),
a small synthetic SFT set and a tiny backbone built from it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[3]
ENV_DIR = ROOT / ".cache" / "llamafactory-env"

# Small enough to build in seconds; the tokenizer still learns the markup tokens as single tokens.
TINY = dict(hidden_size=64, num_layers=2, num_heads=4, num_kv_heads=2, intermediate_size=128, vocab_size=800)


@pytest.fixture(scope="session")
def lf_env() -> Path:
    """LLaMA-Factory's environment, built by the repository's script on first use (minutes), then reused."""
    proc = subprocess.run(
        ["bash", str(ROOT / "scripts" / "build_llamafactory_env.sh"), str(ENV_DIR), sys._base_executable],
        capture_output=True, text=True, cwd=ROOT, timeout=1800,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return ENV_DIR


@pytest.fixture(scope="session")
def synth_cfg(tmp_path_factory):
    from slca.config.groups.data import SyntheticData

    return SyntheticData(n_sft=160, n_rl=16, n_eval=16, cache_dir=str(tmp_path_factory.mktemp("synth")))


@pytest.fixture(scope="session")
def synth_paths(synth_cfg):
    from slca.data.synth import ensure_synthetic

    return ensure_synthetic(synth_cfg)


@pytest.fixture(scope="session")
def synth_rows(synth_paths) -> list[dict[str, Any]]:
    from slca.data.io import read_rows

    return list(read_rows(synth_paths.sft))


@pytest.fixture(scope="session")
def tiny_cfg(tmp_path_factory):
    from slca.config.groups.backbone import TinyBackbone

    return TinyBackbone(cache_dir=str(tmp_path_factory.mktemp("backbones")), seed=0, **TINY)


@pytest.fixture(scope="session")
def tiny_path(tiny_cfg, synth_rows) -> Path:
    from slca.models.chat_template import template_source
    from slca.models.corpus import sft_corpus
    from slca.models.tiny import build_tiny_backbone

    return build_tiny_backbone(tiny_cfg, list(sft_corpus(synth_rows, template_source(tiny_cfg.tools_block))))


@pytest.fixture(scope="session")
def lf_base_model(tiny_path, tmp_path_factory) -> Path:
    """The tiny backbone as the LLaMA-Factory stage starts from it: carrying the `qwen` layout template."""
    from slca.backends.llamafactory.template import qwen_tools_template, with_template

    return with_template(tiny_path, tmp_path_factory.mktemp("lf") / "base_model", qwen_tools_template())
