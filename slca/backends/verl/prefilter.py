"""The pre-rollout filter in verl's prompt flow (docs/method.md#pre-rollout-filter): slca's trainer
asks the gate about each prompt verl's dataloader yields (one at a time) and skips it before it is
rolled out. The decisions are the local trainer's: the gate holds the same `PreRolloutFilter`
(its counters, epoch count and readmission every R epochs), keyed by the dataset's stable
`extra_info.index`, and its state rides in each verl checkpoint folder so a resumed run skips
the same prompts.

An epoch is one pass of verl's dataloader over the RL prompts; it ends when the first prompt of
the next pass is asked about, as in the local trainer (where the batch that needs the next
epoch's prompts ends the current one).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from slca.algos.filters import PreRolloutFilter
from slca.fileio import atomic_write_json

STATE_FILE = "slca_prompt_filter.json"
STATE_VERSION = 1


class FilterExhausted(RuntimeError):
    """Every prompt is filtered and none will be re-admitted: nothing is left to roll out."""


class PromptGate:
    """A `PreRolloutFilter` asked prompt by prompt, with per-step counts for verl's metrics."""

    def __init__(self, prompt_filter: PreRolloutFilter, dataset_size: int) -> None:
        if dataset_size < 1:
            raise ValueError(f"the RL split has {dataset_size} prompts; the pre-rollout filter needs at least one")
        self.filter = prompt_filter
        self.dataset_size = dataset_size
        self.position = 0  # prompts asked about in the current pass
        self._idle = 0  # prompts skipped in a row
        self._counts: Counter[str] = Counter()
        self._ended: dict[str, float] = {}

    def admit(self, prompt_id: Any) -> bool:
        """Whether to roll out `prompt_id` now (the next prompt of verl's dataloader)."""
        if self.position >= self.dataset_size:
            self._ended = self.filter.end_epoch()
            self.position = 0
        self.position += 1
        held = self.filter.filtered(prompt_id)
        admitted = bool(self.filter.admit([prompt_id]))
        self._counts["admitted" if admitted else "skipped"] += 1
        self._counts["readmitted"] += held and admitted
        self._idle = 0 if admitted else self._idle + 1
        # A skipped prompt waits at most R skipped epochs; past that, no prompt will ever come back.
        if self._idle > self.dataset_size * (1 + (self.filter.readmit_every or 0)):
            raise FilterExhausted(
                f"pre-rollout filter: all {self.dataset_size} RL prompts are filtered (all-correct for filter.k={self.filter.k} epochs) "
                f"and filter.readmit_every={self.filter.readmit_every} brings none back; nothing is left to roll out"
            )
        return admitted

    def observe(self, prompt_ids: list[Any], normalised: list[float]) -> None:
        """Rewards of rolled-out prompts (one entry per rollout, all n of each prompt)."""
        if prompt_ids:
            self.filter.observe(prompt_ids, normalised)

    def take_metrics(self) -> dict[str, float]:
        """Counts since the last call (skipped, readmitted, admitted prompts), the filter's epoch,
        and the metrics of an epoch that ended meanwhile (`slca/prefilter/epoch_*`)."""
        out = {f"slca/prefilter/{k}": float(self._counts[k]) for k in ("admitted", "skipped", "readmitted")}
        out["slca/prefilter/epoch"] = float(self.filter.epoch)
        out.update({f"slca/prefilter/epoch_{k}": float(v) for k, v in self._ended.items() if k != "epoch"})
        self._counts.clear()
        self._ended = {}
        return out

    def state_dict(self) -> dict[str, Any]:
        return {"version": STATE_VERSION, "dataset_size": self.dataset_size, "position": self.position, "filter": self.filter.state_dict()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if state.get("version") != STATE_VERSION:
            raise ValueError(f"unsupported prompt-filter state version {state.get('version')!r}")
        if int(state["dataset_size"]) != self.dataset_size:
            raise ValueError(f"the filter state was saved for {state['dataset_size']} RL prompts, this run has {self.dataset_size}")
        self.filter.load_state_dict(state["filter"])
        self.position = int(state["position"])

    def save(self, folder: str | Path) -> Path:
        """Write the state into a verl checkpoint folder (atomically)."""
        return Path(atomic_write_json(Path(folder) / STATE_FILE, self.state_dict()))

    def load(self, folder: str | Path) -> None:
        """Restore the state a checkpoint folder holds; one line naming the file when it cannot."""
        path = Path(folder) / STATE_FILE
        try:
            self.load_state_dict(json.loads(path.read_text(encoding="utf-8")))
        except FileNotFoundError:
            raise ValueError(f"{path}: the checkpoint has no pre-rollout filter state (was it saved by a run without filter=pre_rollout?)") from None
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{path}: cannot restore the pre-rollout filter state: {exc}") from None
