"""Binary exact-match reward (efficiency paper, eq. 8).

score = 1 iff the format is correct and the predicted calls equal the gold calls as a multiset of
(name, canonical JSON of the arguments: sorted keys, no whitespace normalisation of values, so
1 and 1.0 differ). Format correct = every `<tool_call>` block is valid (JSON, allowed tool
names), the tags are balanced (if `require_tool_tags`) and a `<think>…</think>` block is
present (if `require_think`). Gold given as bare names (docs/method.md#reference-quirks Q1) is compared on names
only. The row also carries the HierR process diagnostics (judge off) so that the same metrics
(Name F1, ArgMatch, Process) are available under either reward; `success` is the exact match.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from slca.config.groups.reward import ExactMatchReward, HierRReward, JudgeConfig
from slca.rewards.gold import Gold, RowGold, read_ground_truth
from slca.rewards.hierr import CheckedParse, HierR, check_parse, parse_response
from slca.rewards.net import guarded
from slca.toolcall.types import canonical_json

_THINK = (("<think>", "</think>"), ("<thinking>", "</thinking>"))


def has_think(text: str) -> bool:
    """True when a closed `<think>`/`<thinking>` block is present."""
    for o, c in _THINK:
        s = text.find(o)
        if s >= 0 and text.find(c, s + len(o)) >= 0:
            return True
    return False


def _canon_args(args: Any) -> str:
    return canonical_json(args or {})


def _gold_multiset(gold: Gold) -> dict[Any, int]:
    out: dict[Any, int] = {}
    for g in gold.flat:
        k = g.name if gold.names_only else (g.name, _canon_args(g.arguments))
        out[k] = out.get(k, 0) + 1
    return out


def _pred_multiset(cp: CheckedParse, names_only: bool) -> dict[Any, int]:
    out: dict[Any, int] = {}
    for c in cp.calls:
        k = c.name if names_only else (c.name, _canon_args(c.arguments))
        out[k] = out.get(k, 0) + 1
    return out


def exact_match_reason(
    text: str, ground_truth: Any, cfg: ExactMatchReward, diag: HierRReward, gold_of: Callable[[Any], RowGold] = read_ground_truth
) -> str:
    """"" for an exact match, else the first reason it is not one (`gold_of` reads the ground truth)."""
    row = gold_of(ground_truth)
    if row.error is not None:
        return row.error
    if cfg.require_think and not has_think(text):
        return "missing_think"
    _, pr = parse_response(text, diag)
    cp = check_parse(pr, row.allowed)
    if cp.input_error:
        return cp.input_error
    if cfg.require_tool_tags and cp.n_open != cp.n_close:
        return "unbalanced_tags"
    if cp.first_error:
        return f"invalid_block:{cp.first_error}"
    gold = row.gold
    if _pred_multiset(cp, gold.names_only) != _gold_multiset(gold):
        return "calls_differ"
    return ""


class ExactMatch:
    """Exact-match scoring under one config, with the HierR diagnostics scorer (same parser, judge
    off) built once beside it."""

    def __init__(self, cfg: ExactMatchReward) -> None:
        self.cfg = cfg
        self.diag = HierR(HierRReward(
            parser=cfg.parser,
            max_response_chars=cfg.max_response_chars,
            max_json_depth=cfg.max_json_depth,
            judge=JudgeConfig(name="none", cache_dir=None),
        ))

    def batch(self, solution_strs: Sequence[Any], ground_truths: Sequence[Any], extra_infos: Sequence[Any]) -> list[dict[str, Any]]:
        """Result rows: HierR diagnostics plus `exact_match`; `score` and `success` are the match.

        Inside the safety net (slca.rewards.net): a row whose check raises scores 0 with the reason."""
        rows = self.diag.batch(solution_strs, ground_truths, extra_infos)
        for row, text, gt in zip(rows, solution_strs, ground_truths):
            if isinstance(text, str):
                reason = guarded(exact_match_reason, lambda why: why, text, gt, self.cfg, self.diag.cfg, self.diag.gold)
            else:
                reason = row["error_type"]
            hit = int(reason == "")
            row["score"] = float(hit)
            row["success"] = hit
            row["exact_match"] = hit
            row["error_type"] = reason
        return rows

    def one(self, solution_str: Any, ground_truth: Any, extra_info: Any) -> dict[str, Any]:
        return self.batch([solution_str], [ground_truth], [extra_info])[0]
