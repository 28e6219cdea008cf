"""HierR: hierarchical tool-call reward = weighted process components + summary judge (docs/method.md#hierr-reward).

`score_process` gives the five components for one response; a `HierR` scorer (one per config,
built once by the run: it holds the row plan and the summary judge) turns rows into the flat result
dicts of docs/method.md#composition-and-success (same keys, same order, on every row), its batch
form judging all summaries in one `score_batch` call so that a remote judge runs them
concurrently.

Deviations from the reference, each behind a switch defaulting to the reference unless a plain
bug fix: `format_one_without_needed_call` (docs/method.md#reference-quirks Q6), `count_tags_outside_responses` (docs/method.md#reference-quirks Q18),
`judge.strip_role_word` (docs/method.md#reference-quirks Q18), `judge.require_tool_response` / `judge.prompt_style` (the v8.2
judge, docs/method.md#interactions-judge-prompt, docs/method.md#reference-quirks Q4); always on: weighted_score_norm = 0 when w_process + w_summary = 0 (docs/method.md#reference-quirks Q7).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from slca.config.groups.reward import HierRReward, JudgeConfig
from slca.rewards import text as T
from slca.rewards.components import key_value_scores, name_f1, parallel_score, strict_correct_ratio
from slca.rewards.gold import Gold, GoldMemo, RowGold, read_ground_truth
from slca.rewards.judges import JudgeRequest, JudgeResult, SummaryJudge, build_judge
from slca.rewards.net import guarded, guarded_rows, judged
from slca.toolcall import ParseResult, parse_hermes, parse_pythonic, strip_thinking

TOOL_NOT_FOUND = "tool_not_found"
NO_TOOL_CALL = "no_tool_call"
PARTIAL = "partial"
INVALID_SOLUTION = "invalid_solution_str"

_PARSERS: dict[str, Callable[..., ParseResult]] = {"hermes": parse_hermes, "pythonic": parse_pythonic}


@dataclass(slots=True)
class CheckedParse:
    """A ParseResult with the allowed-tools check applied (docs/method.md#format-check)."""

    n_open: int
    n_close: int
    blocks: list[tuple[Any, ...]]  # calls of each valid block, in order
    calls: list[Any]  # all calls of the valid blocks, flattened
    first_error: str  # "" when none
    input_error: str  # whole-input parser error ("too_large"), "" when none
    first_step_calls: int = 0  # calls of the valid blocks in the first valid block's step (its turn)

    @property
    def denom(self) -> int:
        return max(self.n_open, self.n_close)

    @property
    def n_valid(self) -> int:
        return len(self.blocks)

    @property
    def format_passed(self) -> bool:
        d = self.denom
        return d == 0 or (self.n_open == self.n_close and len(self.blocks) == d)


def check_parse(pr: ParseResult, allowed: frozenset[str]) -> CheckedParse:
    """Apply the allowed-tools rule: a call whose name is not allowed invalidates its block."""
    if pr.error is not None:
        # Nothing was parsed: treated as a response without calls.
        return CheckedParse(0, 0, [], [], pr.error, pr.error)
    blocks: list[tuple[Any, ...]] = []
    calls: list[Any] = []
    first_error = ""
    first_step, first_step_calls = -1, 0
    for b in pr.blocks:
        bc = b.calls
        if bc is not None:
            for c in bc:
                if c.name not in allowed:
                    bc = None
                    break
            if bc is not None:
                blocks.append(bc)
                calls.extend(bc)
                if first_step < 0:
                    first_step = b.step
                if b.step == first_step:
                    first_step_calls += len(bc)
                continue
            err = TOOL_NOT_FOUND
        else:
            err = b.error or "invalid"
        if not first_error:
            first_error = err
    return CheckedParse(pr.n_open, pr.n_close, blocks, calls, first_error, "", first_step_calls)


@dataclass(slots=True)
class ProcessScores:
    """The five components (each in [0, 1]), their weighted sum (docs/method.md#process-components)
    and the ToolPO strict-correct ratio (docs/method.md#baseline-estimators)."""

    fmt: float
    name: float
    key: float
    value: float
    parallel: float
    process: float
    strict: float


def process_components(cp: CheckedParse, gold: Gold, cfg: HierRReward) -> ProcessScores:
    """Components of a response that is not on the omission path (docs/method.md#process-components)."""
    denom = cp.denom
    if denom:
        fmt = len(cp.blocks) / denom
    else:
        fmt = 1.0 if (cfg.format_one_without_needed_call and not gold.flat) else 0.0
    calls = cp.calls
    name = name_f1([c.name for c in calls], gold.name_counts, len(gold.flat))
    key, value = key_value_scores(calls, gold.with_args, gold.arg_specs)
    par = parallel_score(cp.first_step_calls, gold.first_step_count)
    process = cfg.w_format * fmt + cfg.w_name * name + cfg.w_key * key + cfg.w_value * value + cfg.w_parallel * par
    return ProcessScores(fmt, name, key, value, par, process, strict_correct_ratio(calls, gold.strict_keys))


def parse_response(text: str, cfg: HierRReward) -> tuple[str, ParseResult]:
    """(think-stripped text, parse result); the parse honours `count_tags_outside_responses`."""
    if len(text) > cfg.max_response_chars:
        return "", _PARSERS[cfg.parser](text, max_chars=cfg.max_response_chars, max_depth=cfg.max_json_depth)
    stripped = strip_thinking(text)
    target = stripped
    if cfg.count_tags_outside_responses:
        # each removed response leaves its opening tag: it still separates one turn's calls from the next's
        target = T.remove_blocks(stripped, T.RESP_OPEN, T.RESP_CLOSE, keep=T.RESP_OPEN)
    return stripped, _PARSERS[cfg.parser](target, max_chars=cfg.max_response_chars, max_depth=cfg.max_json_depth)


def score_process(
    solution_str: str, ground_truth: Any, cfg: HierRReward, gold_of: Callable[[Any], RowGold] = read_ground_truth
) -> ProcessScores | None:
    """Process components for one response, or None for an invalid row / the omission path.
    `gold_of` reads the row's ground truth (a scorer passes its `GoldMemo`)."""
    row = gold_of(ground_truth)
    if row.error is not None or not isinstance(solution_str, str):
        return None
    if cfg.count_tags_outside_responses:
        _, pr = parse_response(solution_str, cfg)
    else:  # the parser strips thinking itself; no need for the stripped text here
        pr = _PARSERS[cfg.parser](solution_str, max_chars=cfg.max_response_chars, max_depth=cfg.max_json_depth)
    cp = check_parse(pr, row.allowed)
    if row.gold.flat and cp.n_open == 0:
        return None
    return process_components(cp, row.gold, cfg)


# ------------------------------------------------------------------------------- result rows


@dataclass(frozen=True, slots=True)
class _Plan:
    """Per-config constants, computed once: the row template and the threshold keys."""

    cfg: HierRReward
    template: dict[str, Any]
    thresholds: tuple[tuple[float, str, str], ...]  # (t_eff, "success@t", "tool_success@t")
    success_t: float


def _t_eff(t: float) -> float:
    """t = 1.0 is compared as >= 1 - 1e-9 (docs/method.md#composition-and-success); lower thresholds exactly."""
    return t - 1e-9 if t >= 1.0 else t


def _build_plan(cfg: HierRReward) -> _Plan:
    thresholds = tuple((_t_eff(float(t)), f"success@{float(t)}", f"tool_success@{float(t)}") for t in cfg.success_thresholds)
    row: dict[str, Any] = {
        "score": 0.0,
        "process_score": 0.0,
        "summary_score": 0.0,
        "format_score": 0.0,
        "name_f1": 0.0,
        "key_score": 0.0,
        "value_score": 0.0,
        "arg_match": 0.0,
        "parallel_score": 0.0,
        "should_call_but_no_call": 0,
        "toolpo_correct_ratio": 0.0,
        "success": 0,
        "weighted_score_norm": 0.0,
        "error_type": "",
        # docs/method.md#composition-and-success reference names (unprefixed; `reward/error_type` and `format_error_type`
        # are folded into `error_type`).
        "judge_failed": 0,
        "judge_parse_failed": 0,
        "no_tool_response": 0,
        "format_passed": 0,
        "tag_open_n": 0,
        "tag_close_n": 0,
        "tag_denom": 0,
        "tag_valid_pair_n": 0,
        "name_match_score": 0.0,
        "key_match_score": 0.0,
        "value_match_score": 0.0,
        "parallel_match": 0,
        "tool_match_score": 0.0,
        "arg_match_score": 0.0,
        "first_step_gold_count": 0,
        "first_step_pred_count": 0,
        "response_quality_score": 0.0,
        "pred_tool_count": 0,
        "gold_tool_count": 0,
        "total_score": 0.0,
        # slca additions
        "gold_names_only": 0,
        "gold_invalid": 0,
        "judge_cached": 0,
        "reward_error": 0,
    }
    for _, sk, _ in thresholds:
        row[sk] = 0
    for _, _, tk in thresholds:
        row[tk] = 0
    return _Plan(cfg, row, thresholds, _t_eff(float(cfg.success_threshold)))


def result_keys(cfg: HierRReward) -> list[str]:
    """Every key of a HierR result row, in order (the same for every row under one config)."""
    return list(_build_plan(cfg).template)


def error_result(plan: _Plan, error_type: str, gold: Gold | None = None) -> dict[str, Any]:
    """Score 0 with `error_type` set: bad ground truth or a non-string response."""
    row = dict(plan.template)
    row["error_type"] = error_type
    row["reward_error"] = 1
    if gold is not None:
        _gold_fields(row, gold)
    return row


def _gold_fields(row: dict[str, Any], gold: Gold) -> None:
    row["first_step_gold_count"] = gold.first_step_count
    row["gold_tool_count"] = len(gold.flat)
    row["gold_names_only"] = int(gold.names_only)
    row["gold_invalid"] = int(gold.error is not None)


def _norm(score: float, cfg: HierRReward) -> float:
    d = cfg.w_process + cfg.w_summary
    return score / d if d != 0 else 0.0  # [FIX] zero guard (docs/method.md#reference-quirks Q7), a plain bug fix


def _omission(plan: _Plan, cp: CheckedParse, gold: Gold) -> dict[str, Any]:
    """Gold needs a call but none was opened (docs/method.md#omission-path): penalty, no judge."""
    cfg = plan.cfg
    row = dict(plan.template)
    score = float(cfg.no_call_penalty)
    row["score"] = score
    row["should_call_but_no_call"] = 1
    row["format_passed"] = 1  # sic, as the reference (docs/method.md#reference-quirks Q6)
    row["error_type"] = cp.input_error or NO_TOOL_CALL
    row["tag_close_n"] = cp.n_close
    row["tag_denom"] = cp.denom
    norm = max(0.0, _norm(score, cfg))
    row["weighted_score_norm"] = norm
    row["total_score"] = norm
    _gold_fields(row, gold)
    return row


def _row_text(value: str | None, extra_info: Any, fallback_keys: tuple[str, ...]) -> str | None:
    """`value` from the ground truth, else the first non-empty string of `fallback_keys` in extra_info."""
    if value is not None:
        return value
    if isinstance(extra_info, Mapping):
        for k in fallback_keys:
            v = extra_info.get(k)
            if isinstance(v, str) and v:
                return v
    return None


def _question(row: RowGold, extra_info: Any) -> str:
    return _row_text(row.question, extra_info, ("input", "question")) or ""


def _gold_answer(row: RowGold, extra_info: Any) -> str | None:
    return _row_text(row.gold_answer, extra_info, ("gold_answer", "reference_answer"))


_SHORT = JudgeResult(0.0, "very poor")
_NO_RESPONSE = JudgeResult(0.0, "no_tool_response")


def _judge_request(
    stripped: str, row: RowGold, extra_info: Any, jcfg: JudgeConfig
) -> tuple[JudgeRequest | None, JudgeResult | None, bool]:
    """(request to judge, or the short-circuit result; no_tool_response flag) — docs/method.md#summary-judge order."""
    responses = T.tool_responses_text(stripped)
    no_resp = not responses
    if no_resp and jcfg.require_tool_response:
        return None, _NO_RESPONSE, True
    final = T.final_response(stripped)
    if jcfg.strip_role_word:
        final = T.strip_role_word(final)
    if jcfg.name != "none" and len(final) < jcfg.min_response_chars:
        return None, _SHORT, no_resp
    calls = T.tool_calls_text(stripped) if jcfg.prompt_style == "interactions" else ""
    req = JudgeRequest(_question(row, extra_info), responses, final, calls, _gold_answer(row, extra_info))
    return req, None, no_resp


_Staged = tuple  # (cp, ps, gold, no_tool_response, error_type): a scored row awaiting its judge


def _prepare(
    solution_str: Any, ground_truth: Any, extra_info: Any, plan: _Plan, gold_of: Callable[[Any], RowGold]
) -> tuple[dict[str, Any] | None, _Staged | None, JudgeRequest | None, JudgeResult | None]:
    """Phase 1: everything but the judge.

    Returns (final row, None, None, None) for error and omission rows, else (None, staged,
    request to judge or None, fixed judge result or None).
    """
    cfg = plan.cfg
    row_gt = gold_of(ground_truth)
    if row_gt.error is not None:
        return error_result(plan, row_gt.error), None, None, None
    if not isinstance(solution_str, str):
        return error_result(plan, INVALID_SOLUTION, row_gt.gold), None, None, None
    gold = row_gt.gold
    stripped, pr = parse_response(solution_str, cfg)
    cp = check_parse(pr, row_gt.allowed)
    if gold.flat and cp.n_open == 0:
        return _omission(plan, cp, gold), None, None, None
    ps = process_components(cp, gold, cfg)
    if cp.input_error:
        return None, (cp, ps, gold, 0, cp.input_error), None, JudgeResult(0.0, cp.input_error)
    if cp.n_open == 0 and cp.n_close == 0:
        err = NO_TOOL_CALL
    elif cp.first_error:
        err = cp.first_error
    elif not cp.format_passed:
        err = PARTIAL
    else:
        err = ""
    req, fixed, no_resp = _judge_request(stripped, row_gt, extra_info, cfg.judge)
    return None, (cp, ps, gold, int(no_resp), err), req, fixed


def _safe_prepare(
    solution_str: Any, ground_truth: Any, extra_info: Any, plan: _Plan, gold_of: Callable[[Any], RowGold]
) -> tuple[dict[str, Any] | None, _Staged | None, JudgeRequest | None, JudgeResult | None]:
    """`_prepare` inside the safety net (slca.rewards.net): a row that raises is an error row."""
    return guarded(_prepare, lambda reason: (error_result(plan, reason), None, None, None), solution_str, ground_truth, extra_info, plan, gold_of)


def _judge_failure(cfg: HierRReward) -> JudgeResult:
    return JudgeResult(cfg.judge.failure_score, "judge_failed", failed=True)


def _build_row(staged: _Staged, jr: JudgeResult, plan: _Plan) -> dict[str, Any]:
    """Phase 2: the full row from the process scores and the judge's result (docs/method.md#composition-and-success).

    Built as one literal in template order (the per-rollout hot path).
    """
    cp, ps, gold, no_resp, err = staged
    cfg = plan.cfg
    s = jr.score
    score = cfg.w_process * ps.process + cfg.w_summary * s
    norm = _norm(score, cfg)
    name = ps.name
    arg = (ps.key + ps.value) / 2
    blocks = cp.blocks
    n_valid = len(blocks)
    row: dict[str, Any] = {
        "score": score,
        "process_score": ps.process,
        "summary_score": s,
        "format_score": ps.fmt,
        "name_f1": name,
        "key_score": ps.key,
        "value_score": ps.value,
        "arg_match": arg,
        "parallel_score": ps.parallel,
        "should_call_but_no_call": 0,
        "toolpo_correct_ratio": ps.strict,
        "success": int(norm >= plan.success_t),
        "weighted_score_norm": norm,
        "error_type": err,
        "judge_failed": int(jr.failed),
        "judge_parse_failed": int(jr.parse_failed),
        "no_tool_response": no_resp,
        "format_passed": int(cp.format_passed),
        "tag_open_n": cp.n_open,
        "tag_close_n": cp.n_close,
        "tag_denom": max(cp.n_open, cp.n_close),
        "tag_valid_pair_n": n_valid,
        "name_match_score": name,
        "key_match_score": ps.key,
        "value_match_score": ps.value,
        "parallel_match": int(ps.parallel),
        "tool_match_score": name,
        "arg_match_score": arg,
        "first_step_gold_count": gold.first_step_count,
        "first_step_pred_count": cp.first_step_calls,
        "response_quality_score": s,
        "pred_tool_count": len(cp.calls),
        "gold_tool_count": len(gold.flat),
        "total_score": norm,
        "gold_names_only": int(gold.names_only),
        "gold_invalid": int(gold.error is not None),
        "judge_cached": int(jr.cached),
        "reward_error": 0,
    }
    thresholds = plan.thresholds
    for t, sk, _ in thresholds:
        row[sk] = int(norm >= t)
    for t, _, tk in thresholds:
        row[tk] = int(name >= t)
    return row


class HierR:
    """HierR scoring under one config: its row plan computed and its summary judge built once.

    A run builds one (slca.rewards.entry.RewardFunction does) and passes it down; the judge keeps
    its cache and connection pool for the run's lifetime. Malformed rows score 0 with
    `error_type` (slca.rewards.net)."""

    def __init__(self, cfg: HierRReward, judge: SummaryJudge | None = None) -> None:
        self.cfg = cfg
        self.plan = _build_plan(cfg)
        self.judge = judge if judge is not None else build_judge(cfg.judge)
        self.gold = GoldMemo()  # the n rollouts of a prompt share its ground truth: read it once

    def batch(self, solution_strs: Sequence[Any], ground_truths: Sequence[Any], extra_infos: Sequence[Any]) -> list[dict[str, Any]]:
        """Result rows for a batch; the summaries go to the judge in one `score_batch` call."""
        return guarded_rows(self._rows, lambda reason: error_result(self.plan, reason), solution_strs, ground_truths, extra_infos)

    def one(self, solution_str: Any, ground_truth: Any, extra_info: Any) -> dict[str, Any]:
        """One result row (inside the safety net, as `batch`), without the batch plumbing."""
        plan = self.plan
        row, st, req, fixed = _safe_prepare(solution_str, ground_truth, extra_info, plan, self.gold)
        if row is not None:
            return row
        if req is not None:
            fixed = guarded(self.judge.score, lambda _reason: _judge_failure(self.cfg), req)
        return guarded(_build_row, lambda reason: error_result(plan, reason), st, fixed, plan)

    def _rows(self, solution_strs: Sequence[Any], ground_truths: Sequence[Any], extra_infos: Sequence[Any]) -> list[dict[str, Any]]:
        plan = self.plan
        staged = [_safe_prepare(s, g, e, plan, self.gold) for s, g, e in zip(solution_strs, ground_truths, extra_infos)]
        reqs = [req for _, _, req, _ in staged if req is not None]
        results = iter(judged(self.judge, reqs, _judge_failure(self.cfg)) if reqs else ())
        out = []
        for row, st, req, fixed in staged:
            if row is not None:
                out.append(row)  # error or omission rows are final
            else:
                jr = next(results) if req is not None else fixed
                out.append(guarded(_build_row, lambda reason: error_result(plan, reason), st, jr, plan))
        return out
