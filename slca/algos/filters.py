"""Pre-rollout prompt filter (efficiency paper, eq. 4-6) and its stability analysis (Fig. 5).

Per prompt (stable dataset id) the filter counts consecutive epochs in which all n rollouts
reached the correct threshold (z_e = 1, c_e = (c_{e-1} + 1) * z_e); when the next epoch is
sampled, prompts with c >= k are skipped. Beyond the paper: all-wrong prompts can be skipped by
the same rule, and skipped prompts are re-admitted after R skipped epochs (prompts move between
regimes). Usage per epoch: `admit(ids)` -> roll out -> `observe(ids_per_rollout, rewards)`
(any number of times) -> `end_epoch()` -> metrics. The state is JSON-serialisable.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from slca.algos.dynamic_sampling import BatchFiller
from slca.registry import Registry

CORRECT, WRONG, MIXED = "correct", "wrong", "mixed"
PromptId = int | str
STATE_VERSION = 1


def _pid(value: Any) -> PromptId:
    """Prompt ids must survive JSON exactly: ints and strings only."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"prompt id must be int or str, got {value!r}")
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (str, np.str_)):
        return str(value)
    raise TypeError(f"prompt id must be int or str, got {type(value).__name__}")


@dataclass
class _Record:
    correct_run: int = 0  # consecutive observed epochs all-correct (c in eq. 5)
    wrong_run: int = 0  # consecutive observed epochs all-wrong
    skipped_run: int = 0  # consecutive epochs skipped


class PreRolloutFilter:
    """Skip prompts that were all-correct (optionally all-wrong) for k consecutive epochs."""

    def __init__(
        self, k: int = 1, correct_threshold: float = 1.0, skip_all_wrong: bool = False, readmit_every: int | None = None
    ) -> None:
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        if readmit_every is not None and readmit_every < 1:
            raise ValueError(f"readmit_every must be >= 1 or None, got {readmit_every}")
        self.k = k
        self.correct_threshold = correct_threshold
        self.skip_all_wrong = skip_all_wrong
        self.readmit_every = readmit_every
        self.epoch = 0
        self._records: dict[PromptId, _Record] = {}
        self.outcome_log: list[dict[PromptId, str]] = []  # one dict per finished epoch
        self.metrics_log: list[dict[str, float]] = []
        self._reset_epoch()

    @classmethod
    def from_config(cls, config: Any, success_threshold: float = 1.0) -> PreRolloutFilter:
        """From `slca.config.groups.filter.PreRolloutFilter`; a null `correct_threshold` takes
        `success_threshold` (the reward's own success rule)."""
        threshold = success_threshold if config.correct_threshold is None else config.correct_threshold
        return cls(config.k, threshold, config.skip_all_wrong, config.readmit_every)

    def _reset_epoch(self) -> None:
        self._candidates = 0
        self._skipped: list[PromptId] = []
        self._outcomes: dict[PromptId, str] = {}
        self._rollouts: dict[PromptId, list[float]] = {}

    def _skips(self, rec: _Record) -> bool:
        return rec.correct_run >= self.k or (self.skip_all_wrong and rec.wrong_run >= self.k)

    def admit(self, prompt_ids: Iterable[Any]) -> list[PromptId]:
        """The prompt ids to roll out this epoch, in the given order (eq. 6); records the skips."""
        admitted = []
        for raw in prompt_ids:
            pid = _pid(raw)
            self._candidates += 1
            rec = self._records.get(pid)
            if rec is not None and self._skips(rec):
                if self.readmit_every is not None and rec.skipped_run >= self.readmit_every:
                    rec.skipped_run = 0  # re-admitted: roll out once more and re-test
                else:
                    rec.skipped_run += 1
                    self._skipped.append(pid)
                    continue
            admitted.append(pid)
        return admitted

    def observe(self, prompt_ids: Sequence[Any], rewards: Any) -> None:
        """Record this epoch's rollouts: prompt_ids [N] (one per rollout), rewards [N].

        A prompt may be observed over several calls; its outcome is decided at `end_epoch`.
        """
        values = np.asarray(rewards.detach().cpu() if hasattr(rewards, "detach") else rewards, dtype=np.float64).reshape(-1)
        ids = list(prompt_ids.tolist() if hasattr(prompt_ids, "tolist") else prompt_ids)
        if len(ids) != values.size:
            raise ValueError(f"{len(ids)} prompt ids for {values.size} rewards")
        for raw, value in zip(ids, values.tolist()):
            self._rollouts.setdefault(_pid(raw), []).append(value)

    def end_epoch(self) -> dict[str, float]:
        """Update the consecutive counters (eq. 4-5) and return this epoch's metrics.

        Metrics: skipped_frac (of candidate prompts), all_correct_frac, all_wrong_frac and
        informative_frac (non-zero reward variance) of the prompts rolled out, and counts.
        """
        n_correct = n_wrong = n_informative = 0
        for pid, values in self._rollouts.items():
            arr = np.asarray(values)
            # float32 comparison: rewards usually arrive as float32 tensors (0.9f < 0.9 in float64).
            correct = arr.astype(np.float32) >= np.float32(self.correct_threshold)
            outcome = CORRECT if correct.all() else (WRONG if not correct.any() else MIXED)
            rec = self._records.setdefault(pid, _Record())
            rec.correct_run = rec.correct_run + 1 if outcome == CORRECT else 0
            rec.wrong_run = rec.wrong_run + 1 if outcome == WRONG else 0
            rec.skipped_run = 0
            self._outcomes[pid] = outcome
            n_correct += outcome == CORRECT
            n_wrong += outcome == WRONG
            n_informative += bool(arr.max() > arr.min())
        rolled = len(self._rollouts)
        metrics = {
            "epoch": self.epoch,
            "candidates": self._candidates,
            "skipped": len(self._skipped),
            "rolled_out": rolled,
            "skipped_frac": len(self._skipped) / self._candidates if self._candidates else 0.0,
            "all_correct_frac": n_correct / rolled if rolled else 0.0,
            "all_wrong_frac": n_wrong / rolled if rolled else 0.0,
            "informative_frac": n_informative / rolled if rolled else 0.0,
        }
        self.outcome_log.append(dict(self._outcomes))
        self.metrics_log.append(metrics)
        self.epoch += 1
        self._reset_epoch()
        return metrics

    def state_dict(self) -> dict[str, Any]:
        """JSON-serialisable state (lists of [id, ...] pairs keep int ids ints)."""
        return {
            "version": STATE_VERSION,
            "config": {
                "k": self.k,
                "correct_threshold": self.correct_threshold,
                "skip_all_wrong": self.skip_all_wrong,
                "readmit_every": self.readmit_every,
            },
            "epoch": self.epoch,
            "records": [[pid, r.correct_run, r.wrong_run, r.skipped_run] for pid, r in self._records.items()],
            "outcome_log": [[[pid, o] for pid, o in epoch.items()] for epoch in self.outcome_log],
            "metrics_log": [dict(m) for m in self.metrics_log],
            "current": {
                "candidates": self._candidates,
                "skipped": list(self._skipped),
                "rollouts": [[pid, list(v)] for pid, v in self._rollouts.items()],
            },
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore `state_dict()` output exactly; the config in the state must match this filter's."""
        if state.get("version") != STATE_VERSION:
            raise ValueError(f"unsupported filter state version {state.get('version')!r}")
        mine = self.state_dict()["config"]
        if dict(state["config"]) != mine:
            raise ValueError(f"filter state was saved with config {dict(state['config'])}, this filter has {mine}")
        self.epoch = int(state["epoch"])
        self._records = {_pid(p): _Record(int(c), int(w), int(s)) for p, c, w, s in state["records"]}
        self.outcome_log = [{_pid(p): str(o) for p, o in epoch} for epoch in state["outcome_log"]]
        self.metrics_log = [dict(m) for m in state["metrics_log"]]
        cur = state["current"]
        self._reset_epoch()
        self._candidates = int(cur["candidates"])
        self._skipped = [_pid(p) for p in cur["skipped"]]
        self._rollouts = {_pid(p): [float(x) for x in v] for p, v in cur["rollouts"]}

    def filtered(self, prompt_id: Any) -> bool:
        """Whether the prompt's counters say skip (before readmission): `admit` then skips or re-admits it."""
        rec = self._records.get(_pid(prompt_id))
        return rec is not None and self._skips(rec)

    def counter(self, prompt_id: Any) -> int:
        """Consecutive all-correct epochs of a prompt (c in eq. 5); 0 if never observed."""
        rec = self._records.get(_pid(prompt_id))
        return rec.correct_run if rec else 0


@dataclass(frozen=True)
class RolloutFilters:
    """What a `filter` config option puts around generation: a pre-rollout prompt filter (or
    None) and, for dynamic sampling, a factory of the per-step `BatchFiller` (or None)."""

    prompt_filter: PreRolloutFilter | None = None
    new_filler: Callable[[int], BatchFiller] | None = None


FILTERS: Registry[Callable[[Any, float], RolloutFilters]] = Registry("filter")


@FILTERS.register("none")
def _no_filter(config: Any, success_threshold: float) -> RolloutFilters:
    return RolloutFilters()


@FILTERS.register("pre_rollout")
def _pre_rollout(config: Any, success_threshold: float) -> RolloutFilters:
    return RolloutFilters(prompt_filter=PreRolloutFilter.from_config(config, success_threshold))


@FILTERS.register("dynamic_sampling")
def _dynamic_sampling(config: Any, success_threshold: float) -> RolloutFilters:
    # Acts after generation: no prompt filter, one filler per step sized in prompts.
    return RolloutFilters(new_filler=lambda target_groups: BatchFiller.from_config(config, target_groups))


def build_filters(config: Any, success_threshold: float = 1.0) -> RolloutFilters:
    """The filters of a `slca.config.groups.filter` option, through the registry.

    success_threshold: the normalised reward at which a rollout counts as correct when the
    option's own `correct_threshold` is null (the reward's success rule)."""
    return FILTERS.get(config.name)(config, success_threshold)


def stability_curve(outcome_log: Sequence[Mapping[Any, Any]], k: int) -> dict[str, Any]:
    """P(all-correct at epoch e | all-correct in each of the k previous epochs), per epoch e.

    outcome_log: one mapping per epoch, prompt id -> outcome ("correct"/"wrong"/"mixed", or a
    bool all-correct flag); prompts absent from an epoch (skipped) were not observed then and do
    not count. Returns {"k", "epochs", "n" (prompts conditioned on), "p" (None where n == 0),
    "pooled" (over all epochs)} — the efficiency paper's Fig. 5 for k = 1, 2.
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")

    def correct(value: Any) -> bool:
        return value is True or value == CORRECT

    epochs, ns, ps = [], [], []
    hits_all = n_all = 0
    for e in range(k, len(outcome_log)):
        previous = outcome_log[e - k : e]
        n = hits = 0
        for pid, outcome in outcome_log[e].items():
            if all(pid in prev and correct(prev[pid]) for prev in previous):
                n += 1
                hits += correct(outcome)
        epochs.append(e)
        ns.append(n)
        ps.append(hits / n if n else None)
        hits_all += hits
        n_all += n
    return {"k": k, "epochs": epochs, "n": ns, "p": ps, "pooled": hits_all / n_all if n_all else None}
