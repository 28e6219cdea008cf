"""The report's plots: each section is a grid of panels, one line per run on every panel.

A panel takes its data from one run (`data(run)`, None when that run did not log it) and draws
the runs that have it; panels no run has data for are left out, and a section with none at all
draws nothing and says so on the page. Figures are drawn on matplotlib's Agg canvas directly
(no pyplot, no global state), so the report never needs a display.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from slca.report.runs import RunData
from slca.report.series import Series, all_correct_fraction, metric_series, outcome_log, retention_curve

Item = tuple[RunData, dict[str, Any], Any]  # a run, its line style (colour included), its data for the panel


@dataclass(frozen=True)
class Panel:
    title: str
    data: Callable[[RunData], Any]
    draw: Callable[[Any, Sequence[Item]], None]
    source: str  # what the panel reads, named on the page when no run has it


@dataclass(frozen=True)
class Section:
    anchor: str
    title: str
    caption: str
    panels: tuple[Panel, ...]


def _lines(xlabel: str, unit: tuple[float, float] | None = None) -> Callable[[Any, Sequence[Item]], None]:
    """Draw one line per run; markers when the series are short enough to read point by point."""

    def draw(ax: Any, items: Sequence[Item]) -> None:
        from matplotlib.ticker import MaxNLocator

        longest = max(len(series) for _, _, series in items)
        for run, style, series in items:
            ax.plot(series.x, series.y, label=run.label, **{**style, "marker": style["marker"] if longest <= 40 else None})
        ax.set_xlabel(xlabel)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # steps and epochs are whole numbers
        ax.ticklabel_format(axis="y", useOffset=False)  # an offset label reads as part of the values
        if unit is not None:
            ax.set_ylim(*unit)
        ax.grid(True, alpha=0.3)

    return draw


MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "*")


def run_styles(n: int) -> list[dict[str, Any]]:
    """A colour and marker per run (matplotlib's tab10, then tab20 for larger sweeps). Earlier runs
    are drawn wider with bigger markers, so a later run that coincides with one (same seed, same
    data) leaves it visible around its own line instead of hiding it."""
    from matplotlib import colormaps

    cmap = colormaps["tab10" if n <= 10 else "tab20"]
    styles = []
    for rank in range(n):
        wide = (n - 1 - rank) / max(1, n - 1)
        styles.append({"color": cmap(rank % cmap.N), "linewidth": 1.3 + 1.7 * wide, "marker": MARKERS[rank % len(MARKERS)],
                       "markersize": 3.5 + 3.5 * wide})
    return styles


def first_series(run: RunData, keys: Sequence[str]) -> Series | None:
    """The first of `keys` the run logged with a finite value (slca's name, then verl's)."""
    for key in keys:
        if (series := _finite(metric_series(run.records, key))) is not None:
            return series
    return None


def metric(title: str, key: str, *, fraction: bool = False, verl: str | None = None) -> Panel:
    """A panel of one metrics.jsonl key of the RL stage against the step; `verl` is the name
    verl's own logger gives the same quantity (a verl run's lines keep verl's names)."""
    keys = (key, verl) if verl else (key,)
    return Panel(title, lambda run: first_series(run, keys), _lines("step", (-0.03, 1.03) if fraction else None), " or ".join(keys))


def _finite(series: Series | None) -> Series | None:
    """None for a series with no finite value (e.g. a segment no rollout had): nothing to draw."""
    return series if series is not None and any(math.isfinite(v) for v in series.y) else None


def _retention(k: int) -> Callable[[RunData], Series | None]:
    def data(run: RunData) -> Series | None:
        curve = retention_curve(outcome_log(run.records), k)
        if not any(n > 0 for n in curve.n):
            return None
        return Series(tuple(float(e) for e in curve.epochs), tuple(math.nan if p is None else p for p in curve.p))

    return data


TIME_KEYS = (("rollout", "time/rollout_s", "timing_s/gen"), ("reward", "time/reward_s", "timing_s/reward"),
             ("update", "time/update_s", "timing_s/update_actor"))
TIME_COLOURS = ("#4c72b0", "#dd8452", "#55a868")


def _time_totals(run: RunData) -> dict[str, float] | None:
    totals = {}
    for phase, *keys in TIME_KEYS:
        series = first_series(run, keys)
        totals[phase] = sum(v for v in series.y if v == v) if series else 0.0
    return totals if sum(totals.values()) > 0 else None


def _draw_time_split(ax: Any, items: Sequence[Item]) -> None:
    """One horizontal bar per run: its total wall time, split into the three phases."""
    labels = [run.label for run, _, _ in items]
    left = [0.0] * len(items)
    for (phase, *_), colour in zip(TIME_KEYS, TIME_COLOURS):
        widths = [totals[phase] for _, _, totals in items]
        ax.barh(range(len(items)), widths, left=left, height=0.6, color=colour, label=phase)
        left = [a + b for a, b in zip(left, widths)]
    for row, ((_, _, totals), total) in enumerate(zip(items, left)):
        shares = " / ".join(f"{100 * totals[p] / total:.0f}%" for p, *_ in TIME_KEYS)
        ax.text(total, row, f"  {total:.1f} s ({shares})", va="center", fontsize=8)
    ax.set_yticks(range(len(items)), [label[-28:] for label in labels], fontsize=8)
    ax.set_xlim(0, max(left) * 1.8)  # room for the totals written after each bar
    ax.set_ylim(len(items) - 0.4, -1.3)  # first run on top; the top row is left free for the legend
    ax.set_xlabel("seconds (rollout / reward / update)")
    ax.legend(fontsize=8, loc="upper left", ncols=3, frameon=False)


SECTIONS: tuple[Section, ...] = (
    Section(
        "reward",
        "Reward and its components",
        "Per RL step, the mean over the step's rollouts of the reward the estimator sees, the "
        "normalised reward and the success rate (normalised reward at least the success threshold), "
        "the tool-segment (HierR process) and summary rewards, and the process components.",
        (
            metric("reward (estimator input)", "reward/score_mean", verl="critic/score/mean"),
            metric("normalised reward", "reward/norm_mean"),
            metric("success rate", "reward/success_rate", fraction=True),
            metric("process (tool) reward", "reward/process_mean"),
            metric("summary reward", "reward/summary_mean"),
            metric("format", "reward/format_score_mean", fraction=True),
            metric("name F1", "reward/name_f1_mean", fraction=True),
            metric("ArgMatch", "reward/arg_match_mean", fraction=True),
            metric("parallel", "reward/parallel_score_mean", fraction=True),
            metric("no-call rate", "reward/no_call_rate", fraction=True),
        ),
    ),
    Section(
        "advantages",
        "Per-segment advantages",
        "Per RL step, the mean advantage (and mean absolute advantage) over the tokens of the tool "
        "segment and of the summary segment, after down-sampling. Under SLCA-GRPO each segment is "
        "normalised on its own; under GRPO both carry the same per-rollout value.",
        (
            metric("tool segment: mean", "adv/tool_mean"),
            metric("summary segment: mean", "adv/summary_mean"),
            metric("tool segment: mean |A|", "adv/tool_abs_mean"),
            metric("summary segment: mean |A|", "adv/summary_abs_mean"),
        ),
    ),
    Section(
        "credit",
        "Credit misattribution",
        "Per RL step, among the tokens of rollouts whose tool segment and summary sit on opposite sides "
        "of their group means, the share whose advantage pushes against their own segment's side, and "
        "how many such rollouts the step had. GRPO misattributes one segment of every such rollout by "
        "construction; SLCA-GRPO only where its presence filter, omission guard or final-turn rule "
        "make it (docs/method.md#credit-misattribution).",
        (
            metric("misattributed tokens", "credit/misattributed_token_frac", fraction=True),
            metric("segment-disagreeing rollouts", "credit/disagreeing_rollouts"),
        ),
    ),
    Section(
        "fractions",
        "Zero-variance, all-correct and skipped prompts",
        "The efficiency paper's Fig. 4. Per RL step, the share of rollout groups whose rewards are all "
        "equal (no gradient signal), the share of prompts whose n rollouts all succeeded, and, at each "
        "epoch end, the share of candidate prompts the pre-rollout filter skipped.",
        (
            metric("zero-variance groups", "groups/zero_variance_frac", fraction=True, verl="slca/zero_variance_group_frac"),
            Panel("all-correct prompts", lambda run: all_correct_fraction(run.records), _lines("step", (-0.03, 1.03)), "prompts/all_correct"),
            metric("skipped by the filter (per epoch)", "filter/skipped_frac", fraction=True),
            metric("dropped groups (dynamic sampling)", "dynamic_sampling/dropped_groups"),
        ),
    ),
    Section(
        "stability",
        "Stability of all-correct prompts",
        "The efficiency paper's Fig. 5. Of the prompts whose rollouts were all correct in epoch e and "
        "that were rolled out again in each of the next k epochs, the share that stayed all-correct "
        "in all of them. A high share is what makes skipping such prompts cheap. Prompts skipped by a "
        "pre-rollout filter are not rolled out again, so a run with filter k = 1 has no curve.",
        (
            Panel("k = 1", _retention(1), _lines("epoch e", (-0.03, 1.03)), "prompts/all_correct over at least two epochs"),
            Panel("k = 2", _retention(2), _lines("epoch e", (-0.03, 1.03)), "prompts/all_correct over at least three epochs"),
        ),
    ),
    Section(
        "time",
        "Wall time: rollout, reward, update",
        "The efficiency paper's Fig. 6. Per RL step, the seconds spent generating rollouts, scoring "
        "them (with down-sampling) and updating the policy; the last panel adds them up per run.",
        (
            *(metric(f"{phase} (s)", key, verl=verl) for phase, key, verl in TIME_KEYS),
            Panel("total per run", _time_totals, _draw_time_split, "time/*_s or timing_s/*"),
        ),
    ),
    Section(
        "entropy",
        "Policy entropy",
        "The efficiency paper's Fig. 8. Per RL step, the mean token entropy of the policy over all "
        "generated tokens, over the tool segment and the summary segment, and over thinking and "
        "tool-call tokens.",
        (
            metric("all tokens", "entropy/all", verl="actor/entropy"),
            metric("tool segment", "entropy/tool"),
            metric("summary segment", "entropy/summary"),
            metric("thinking tokens", "entropy/thinking"),
            metric("tool-call tokens", "entropy/tool_call"),
        ),
    ),
)


@dataclass(frozen=True)
class Drawn:
    """What drawing one section produced: the PNG (None when no panel had data) and the panels left out."""

    image: Path | None
    missing: tuple[Panel, ...]


def draw_section(section: Section, runs: Sequence[RunData], out_dir: Path) -> Drawn:
    """Draw the panels that have data into `out_dir/<anchor>.png`."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    styles = run_styles(len(runs))
    filled: list[tuple[Panel, list[Item]]] = []
    missing = []
    for panel in section.panels:
        items = [(run, style, data) for run, style in zip(runs, styles) if (data := panel.data(run)) is not None]
        if items:
            filled.append((panel, items))
        else:
            missing.append(panel)
    if not filled:
        return Drawn(None, tuple(missing))
    ncols = min(3, len(filled))
    nrows = math.ceil(len(filled) / ncols)
    fig = Figure(figsize=(4.4 * ncols, 3.1 * nrows + (0.5 if len(runs) > 1 else 0.0)), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(nrows, ncols, squeeze=False)
    for ax, (panel, items) in zip(axes.flat, filled):
        panel.draw(ax, items)
        ax.set_title(panel.title, fontsize=10)
        ax.tick_params(labelsize=8)
    for ax in list(axes.flat)[len(filled):]:
        ax.set_visible(False)
    if len(runs) > 1:  # name the runs this figure shows (a run missing from every panel is not listed)
        shown = {id(run) for _, items in filled for run, _, _ in items}
        pairs = [(run, style) for run, style in zip(runs, styles) if id(run) in shown]
        handles = [_legend_handle(style) for _, style in pairs]
        fig.legend(handles, [run.label for run, _ in pairs], loc="outside upper center", ncols=min(4, len(pairs)), fontsize=8, frameon=False)
    image = out_dir / f"{section.anchor}.png"
    fig.savefig(image, dpi=100, metadata={"Software": None})
    return Drawn(image, tuple(missing))


def _legend_handle(style: dict[str, Any]) -> Any:
    from matplotlib.lines import Line2D

    return Line2D([], [], **style)
