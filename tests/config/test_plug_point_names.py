"""The generator and system-prompt names the config layer validates against
(slca/config/plug_point_names.py) are exactly those their registries hold, and validating a spec
imports neither registry."""

from __future__ import annotations

import subprocess
import sys

from slca.config.plug_point_names import GENERATOR_NAMES, SYSTEM_PROMPT_NAMES


def test_the_generator_names_the_config_accepts_are_the_registered_generators() -> None:
    from slca.rollout.generators import GENERATORS

    assert sorted(GENERATOR_NAMES) == GENERATORS.names()


def test_the_system_prompt_names_the_config_accepts_are_the_registered_prompts() -> None:
    from slca.toolcall.prompts import PROMPTS

    assert sorted(SYSTEM_PROMPT_NAMES) == PROMPTS.names()


def test_composing_a_spec_imports_neither_the_generators_nor_the_system_prompts() -> None:
    code = ("import sys; from slca.config.compose import compose_spec; compose_spec(['eval.generator=openai', 'eval.system_prompts=[stronger]']); "
            "print(sorted(m for m in ('slca.rollout.generators', 'slca.toolcall.prompts') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120).stdout
    assert out.strip() == "[]"
