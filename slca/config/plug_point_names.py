"""The entry names of plug points whose registries live above the config layer (generators in
slca/rollout, system prompts in slca/toolcall), so validating a spec imports neither; each registry
must register exactly these (tests/config/test_plug_point_names.py)."""

from __future__ import annotations

GENERATOR_NAMES: tuple[str, ...] = ("hf", "openai", "vllm")
SYSTEM_PROMPT_NAMES: tuple[str, ...] = (
    "acebench_default", "bfcl_default", "bfcl_default_copied", "dataset", "dataset_template", "none", "stronger", "stronger_notes_1_2",
)
