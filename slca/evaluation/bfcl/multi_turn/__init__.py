"""BFCL multi-turn benchmark (`eval.benchmark=bfcl_multi_turn`): slca's loader, protocol loop and safe
executor around BFCL's environments and pure checkers. See docs/bfcl.md#multi-turn.

Importing this package registers the benchmark; `bfcl_eval` itself is imported only when entries are
executed or checked, and `bfcl_eval.utils` (which creates folders in the working directory) never.
"""

from __future__ import annotations

from slca.evaluation.bfcl.multi_turn.calls import Call, Parsed, decode, parse_source
from slca.evaluation.bfcl.multi_turn.check import Verdict, check
from slca.evaluation.bfcl.multi_turn.data import CATEGORIES, BadRow, MultiTurnEntry, load_category
from slca.evaluation.bfcl.multi_turn.environment import Environment
from slca.evaluation.bfcl.multi_turn.loop import Conversation, run_conversations
from slca.evaluation.bfcl.multi_turn.run import BfclMultiTurnBenchmark  # registers "bfcl_multi_turn"

__all__ = [
    "CATEGORIES", "BadRow", "BfclMultiTurnBenchmark", "Call", "Conversation", "Environment", "MultiTurnEntry", "Parsed", "Verdict",
    "check", "decode", "load_category", "parse_source", "run_conversations",
]
