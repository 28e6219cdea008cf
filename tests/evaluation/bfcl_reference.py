"""BFCL's own `ast_checker` (Python language, a prompting model), loaded without BFCL's vendor SDKs:
the reference verdict slca's BFCL checker is compared with (tests/evaluation/test_bfcl_agreement.py,
benchmarks/bfcl_checker_agreement.py).

BFCL's `ast_checker` module imports `bfcl_eval.constants.model_config`, which imports every vendor SDK
BFCL supports (anthropic, openai, cohere, ...), none of which the checker uses: it only reads
`MODEL_CONFIG_MAPPING[model].underscore_to_dot` to rename dotted functions for function-calling
models. Before importing the checker, a table holding one prompting model that keeps dots (how slca's
prompts present the functions) stands in that module's place; everything else is BFCL's own code, run
unchanged.
"""

from __future__ import annotations

import copy
import dataclasses
import sys
import types
from collections.abc import Callable
from typing import Any

from slca.evaluation.bfcl import Entry
from slca.toolcall.types import ToolCall

MODEL = "slca_prompting"  # BFCL spells model names with "_" for "/"


@dataclasses.dataclass(frozen=True)
class _ModelConfig:
    underscore_to_dot: bool = False


def load_bfcl_ast_checker() -> Callable[[Entry, list[ToolCall]], dict[str, Any]]:
    """`run(entry, calls)` → BFCL's `ast_checker` result ({"valid": bool, ...}) for those calls."""
    name = "bfcl_eval.constants.model_config"
    saved = sys.modules.get(name)
    table = types.ModuleType(name)
    table.MODEL_CONFIG_MAPPING = {MODEL.replace("_", "/"): _ModelConfig()}  # type: ignore[attr-defined]
    sys.modules[name] = table
    try:
        from bfcl_eval.constants.enums import Language
        from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker
    finally:
        if saved is None:
            del sys.modules[name]
        else:
            sys.modules[name] = saved

    def run(entry: Entry, calls: list[ToolCall]) -> dict[str, Any]:
        decoded = [{c.name: copy.deepcopy(c.arguments)} for c in calls]  # in the shape BFCL's decoder returns
        return ast_checker(list(entry.functions), decoded, list(entry.possible_answer or ()), Language.PYTHON, entry.category, MODEL)

    return run
