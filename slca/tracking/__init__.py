"""Run tracking: metrics.jsonl always, plus the configured logger (W&B, offline by default)."""

from slca.tracking.tracker import Tracker, open_tracker

__all__ = ["Tracker", "open_tracker"]
