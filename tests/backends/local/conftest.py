"""Fixtures for the local backend: a small synthetic SFT set and one tiny backbone built from it."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest
from tests.reference import SFT_PREVIEW as REFERENCE_SFT_PREVIEW
from tests.threads import one_torch_thread  # noqa: F401 - autouse in this folder

SFT_PREVIEW = REFERENCE_SFT_PREVIEW

# Small enough to build in a few seconds, big enough to learn something in a few steps.
TINY = dict(hidden_size=32, num_layers=1, num_heads=2, num_kv_heads=1, intermediate_size=64, vocab_size=600)


def reference_sft_rows() -> list[dict[str, Any]]:
    """The reference SFT preview rows rebuilt as ShareGPT + hermes rows (calls of a step in one block)."""
    from slca.data import hermes

    out = []
    for line in SFT_PREVIEW.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        tools, msgs = json.loads(row["tools"]), json.loads(row["messages"])
        conv = [{"from": "system", "value": hermes.reference_system(tools)}]
        i = 0
        while i < len(msgs):
            role = msgs[i]["role"]
            if role == "user":
                conv.append({"from": "human", "value": msgs[i]["content"]})
                i += 1
            elif role == "tool_response":
                resps = []
                while i < len(msgs) and msgs[i]["role"] == "tool_response":
                    resps.append(msgs[i]["content"])
                    i += 1
                conv.append({"from": "human", "value": hermes.render_responses(resps)})
            else:
                text = msgs[i]["content"] if role == "assistant" else ""
                i += role == "assistant"
                calls = []
                while i < len(msgs) and msgs[i]["role"] == "tool_call":
                    c = ast.literal_eval(msgs[i]["content"])
                    calls.append({"name": c["name"], "arguments": json.loads(c["arguments"])})
                    i += 1
                value = text if not calls else (text + "\n" if text else "") + hermes.render_calls(calls)
                conv.append({"from": "gpt", "value": value})
        out.append({"conversations": conv})
    return out


@pytest.fixture(scope="session")
def reference_rows() -> list[dict[str, Any]]:
    return reference_sft_rows()


@pytest.fixture(scope="session")
def synth_rows(tmp_path_factory) -> list[dict[str, Any]]:
    from slca.config.groups.data import SyntheticData
    from slca.data.io import read_rows
    from slca.data.synth import ensure_synthetic

    cfg = SyntheticData(n_sft=96, n_rl=8, n_eval=8, cache_dir=str(tmp_path_factory.mktemp("synth")))
    return list(read_rows(ensure_synthetic(cfg).sft))


@pytest.fixture(scope="session")
def tiny_cfg(tmp_path_factory):
    from slca.config.groups.backbone import TinyBackbone

    return TinyBackbone(cache_dir=str(tmp_path_factory.mktemp("backbones")), seed=0, **TINY)


@pytest.fixture(scope="session")
def corpus(synth_rows, reference_rows, tiny_cfg) -> list[str]:
    from slca.models.chat_template import template_source
    from slca.models.corpus import sft_corpus

    texts = list(sft_corpus(synth_rows, template_source(tiny_cfg.tools_block)))
    texts += list(sft_corpus(reference_rows, template_source(tiny_cfg.tools_block)))
    return texts


@pytest.fixture(scope="session")
def tiny_path(tiny_cfg, corpus) -> Path:
    from slca.models.tiny import build_tiny_backbone

    return build_tiny_backbone(tiny_cfg, corpus)


@pytest.fixture()
def tiny(tiny_path):
    """A fresh (model, tokenizer) loaded from the cached build: every test starts from the same weights."""
    from slca.models.load import load_backbone

    return load_backbone(tiny_path)
