"""Table 7's pair statistics from per-set sums vs enumerating the pairs in blocks (baseline, same run).

    .venv/bin/python benchmarks/similarity_pairs.py [--quick]

Random unit embeddings of the paper's shape (40,000 training prompts x 800 BFCL multi-turn ones,
384 dimensions as sentence-BERT's MiniLM; --quick: 4,000 x 800): the mean and std of every cross
and within-set cosine, by slca.data.similarity (sums of embeddings and of outer products, folded in
1,024-row batches) and by matrix products over every pair in 1,024-row blocks. Prints both times,
their ratio and the largest difference between the two answers. Embedding the prompts, which both
share, is not timed.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from slca.data.similarity import SetMoments, cross_stats, within_stats

BLOCK = 1024


def by_sums(a: np.ndarray, b: np.ndarray) -> list[tuple[float, float]]:
    moments = []
    for x in (a, b):
        m = SetMoments(x.shape[1])
        for start in range(0, len(x), BLOCK):
            m.add(x[start:start + BLOCK])
        moments.append(m)
    stats = [cross_stats(*moments), within_stats(moments[0]), within_stats(moments[1])]
    return [(s.mean, s.std) for s in stats]


def _blocked(x: np.ndarray, y: np.ndarray, same: bool) -> tuple[float, float]:
    total = total_sq = 0.0
    pairs = 0
    for start in range(0, len(x), BLOCK):
        cos = x[start:start + BLOCK] @ y.T
        if same:  # the diagonal (a prompt with itself) is left out, as in the command
            rows = np.arange(cos.shape[0])
            cos[rows, start + rows] = 0.0
            pairs -= cos.shape[0]
        total += float(cos.sum())
        total_sq += float((cos * cos).sum())
        pairs += cos.size
    mean = total / pairs
    return mean, float(np.sqrt(max(0.0, total_sq / pairs - mean * mean)))


def by_pairs(a: np.ndarray, b: np.ndarray) -> list[tuple[float, float]]:
    return [_blocked(a, b, False), _blocked(a, a, True), _blocked(b, b, True)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    n, m, d = (4_000 if args.quick else 40_000), 800, 384
    rng = np.random.default_rng(0)
    a = rng.normal(size=(n, d)) + 0.3  # a shared offset, so the means are not all ~0
    b = rng.normal(size=(m, d)) + 0.3
    a /= np.linalg.norm(a, axis=1, keepdims=True)
    b /= np.linalg.norm(b, axis=1, keepdims=True)
    start = time.perf_counter()
    fast = by_sums(a, b)
    t_sums = time.perf_counter() - start
    start = time.perf_counter()
    slow = by_pairs(a, b)
    t_pairs = time.perf_counter() - start
    worst = max(abs(x - y) for f, s in zip(fast, slow) for x, y in zip(f, s))
    print(f"{n:,} x {m:,} prompts, {d} dimensions: {n * m:,} cross pairs, {n * (n - 1) + m * (m - 1):,} within pairs")
    print(f"enumerated pairs (baseline): {t_pairs:8.2f} s")
    print(f"per-set sums (slca):         {t_sums:8.2f} s   ratio {t_pairs / t_sums:.1f}x faster; largest difference {worst:.1e}")
    for name, (mean, std) in zip(("cross", "within A", "within B"), fast):
        print(f"  {name:9s} mean {mean:.4f} std {std:.4f}")


if __name__ == "__main__":
    main()
