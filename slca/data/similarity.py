"""Mean pairwise cosine similarity between two sets of prompts and within each (the efficiency paper's Table 7).

Every statistic over pairs is computed from per-set sums, never by enumerating pairs: for unit
vectors x_i (set A, n of them) and y_j (set B, m of them), with s = Σ x_i and G = Σ x_i x_iᵀ,

    Σ_ij cos(x_i, y_j)   = s_A · s_B                 Σ_ij cos(x_i, y_j)² = <G_A, G_B>_F
    Σ_i≠j cos(x_i, x_j)  = s_A · s_A − Σ_i |x_i|²     Σ_i≠j cos(x_i, x_j)² = |G_A|_F² − Σ_i |x_i|⁴

so 40,000 × 800 pairs cost O((n + m) d²) and the embeddings are folded in batch by batch (`SetMoments.add`):
the numbers are exact over every pair of the prompts embedded. Within a set the diagonal (a prompt
with itself) is left out; the std is the population std over the pairs counted.

Also here: the text of a split row that is embedded (`prompt_text`), pure.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

TextMode = Literal["user_turns", "first_user"]
# An embedding shorter than this cannot be normalised: it is dropped and counted, not given a direction.
MIN_NORM = 1e-12


@dataclass
class SetMoments:
    """The sums of one set of unit vectors that every pairwise statistic needs (float64).

    n: vectors; total: Σ x (d,); gram: Σ x xᵀ (d, d); sq_norms: Σ |x|²; fourth: Σ |x|⁴ (both n up to
    rounding for unit vectors, kept so the diagonal is removed exactly); dropped: zero vectors left out.
    """

    dim: int
    n: int = 0
    total: np.ndarray = field(init=False)
    gram: np.ndarray = field(init=False)
    sq_norms: float = 0.0
    fourth: float = 0.0
    dropped: int = 0

    def __post_init__(self) -> None:
        self.total = np.zeros(self.dim, dtype=np.float64)
        self.gram = np.zeros((self.dim, self.dim), dtype=np.float64)

    def add(self, embeddings: Any) -> None:
        """Fold a batch (k, dim) in: each row is normalised here; a row of norm < MIN_NORM is dropped and counted."""
        x = np.asarray(embeddings, dtype=np.float64)
        if x.ndim != 2 or x.shape[1] != self.dim:
            raise ValueError(f"expected embeddings of shape (k, {self.dim}), got {x.shape}")
        norms = np.linalg.norm(x, axis=1)
        keep = np.isfinite(norms) & (norms >= MIN_NORM)
        self.dropped += int((~keep).sum())
        unit = x[keep] / norms[keep, None]
        sq = np.einsum("ij,ij->i", unit, unit)
        self.n += unit.shape[0]
        self.total += unit.sum(axis=0)
        self.gram += unit.T @ unit
        self.sq_norms += float(sq.sum())
        self.fourth += float((sq * sq).sum())


@dataclass(frozen=True)
class PairStats:
    """Mean and population std of cosine similarity over `pairs` (ordered) pairs; NaN when there is none."""

    mean: float
    std: float
    pairs: int

    def as_dict(self) -> dict[str, Any]:
        finite = self.pairs > 0 and math.isfinite(self.mean)
        return {"mean": self.mean if finite else None, "std": self.std if finite else None, "pairs": self.pairs}


def _stats(total: float, total_sq: float, pairs: int) -> PairStats:
    if pairs <= 0:
        return PairStats(float("nan"), float("nan"), 0)
    mean = total / pairs
    # Rounding can push E[c²] − E[c]² a hair below 0 when every pair is identical.
    return PairStats(mean, math.sqrt(max(0.0, total_sq / pairs - mean * mean)), pairs)


def cross_stats(a: SetMoments, b: SetMoments) -> PairStats:
    """Cosine similarity over every (a_i, b_j) pair."""
    return _stats(float(a.total @ b.total), float(np.sum(a.gram * b.gram)), a.n * b.n)


def within_stats(a: SetMoments) -> PairStats:
    """Cosine similarity over every ordered pair (a_i, a_j), i ≠ j (the diagonal left out)."""
    return _stats(float(a.total @ a.total) - a.sq_norms, float(np.sum(a.gram * a.gram)) - a.fourth, a.n * (a.n - 1))


def brute_force(a: Any, b: Any | None = None) -> PairStats:
    """The same statistics by enumerating pairs (b None: within a, diagonal left out); a test oracle for small sets."""
    x = np.asarray(a, dtype=np.float64)
    x = x / np.linalg.norm(x, axis=1, keepdims=True)
    y = x if b is None else np.asarray(b, dtype=np.float64) / np.linalg.norm(np.asarray(b, dtype=np.float64), axis=1, keepdims=True)
    values = [float(x[i] @ y[j]) for i in range(len(x)) for j in range(len(y)) if b is not None or i != j]
    if not values:
        return PairStats(float("nan"), float("nan"), 0)
    return PairStats(float(np.mean(values)), float(np.std(values)), len(values))


def sample_indices(total: int, cap: int | None, seed: int) -> list[int] | None:
    """Indices of `cap` of `total` items drawn uniformly without replacement (sorted), or None to keep all."""
    if cap is None or cap >= total:
        return None
    return sorted(np.random.default_rng(seed).choice(total, size=cap, replace=False).tolist())


class PromptTextError(ValueError):
    """A row has no text to embed; str() is the field and why."""


def _chat(value: Any, name: str) -> list[Any]:
    if isinstance(value, str):  # parquet rows may hold the chat as a JSON string
        try:
            value = json.loads(value)
        except ValueError:
            raise PromptTextError(f"{name}: not JSON") from None
    if not isinstance(value, list):
        raise PromptTextError(f"{name}: expected a list of messages, got {type(value).__name__}")
    return value


def user_text(messages: list[Any], mode: TextMode, name: str = "messages") -> str:
    """The user messages' text: all joined by a newline (`user_turns`) or the first one (`first_user`)."""
    texts = []
    for i, m in enumerate(messages):
        if isinstance(m, dict) and m.get("role") == "user":
            content = m.get("content")
            if not isinstance(content, str):
                raise PromptTextError(f"{name}[{i}].content: expected a string, got {type(content).__name__}")
            texts.append(content)
    texts = [t for t in texts if t.strip()]
    if not texts:
        raise PromptTextError(f"{name}: no user message with text")
    return texts[0] if mode == "first_user" else "\n".join(texts)


def prompt_text(row: Any, mode: TextMode) -> str:
    """The embedded text of a split row: its user messages (`prompt` of rl/eval rows, `messages` of sft rows)."""
    if not isinstance(row, dict):
        raise PromptTextError(f"row: expected an object, got {type(row).__name__}")
    for name in ("prompt", "messages"):
        if name in row:
            return user_text(_chat(row[name], name), mode, name)
    raise PromptTextError("row: neither a prompt nor a messages field")
