"""`slca data similarity A B`: the efficiency paper's Table 7 for any two prompt sets (docs/eval.md#table-7-traintest-similarity).

A set is a split file (parquet, jsonl or json rows of any split: the user messages of `prompt` or
`messages`) or BFCL categories (`bfcl:simple,multiple`, `bfcl_multi_turn` for all four multi-turn
categories, `bfcl_multi_turn:base`), read through one registry of prompt sources. The prompts
are embedded by a local sentence-transformers model and folded, batch by batch, into per-set sums
(slca.data.similarity), so every pair statistic is exact over the embedded prompts; `max_prompts`
only bounds the encoding time, and the output says whether and how a set was sampled.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from slca.config.similarity import SimilarityOptions
from slca.data.errors import DataInputError
from slca.data.similarity import PairStats, PromptTextError, SetMoments, TextMode, cross_stats, prompt_text, sample_indices, user_text, within_stats
from slca.registry import Registry


class SimilarityInputError(DataInputError):
    """A prompt set or the encoder cannot be used; str() is the one line for the user."""


@dataclass(frozen=True)
class PromptSet:
    """The texts of one set, the rows read and the rows without text (where, why)."""

    source: str
    texts: list[str]
    rows: int
    bad: list[str]


# A source kind reads `categories` (None: all of its own) into a PromptSet.
Source = Callable[[str, "tuple[str, ...] | None", TextMode], PromptSet]
SOURCES: Registry[Source] = Registry("prompt source")


@SOURCES.register("file")
def _split_file(source: str, categories: tuple[str, ...] | None, mode: TextMode) -> PromptSet:
    from slca.data.io import read_rows

    texts, bad, rows = [], [], 0
    for index, row in enumerate(read_rows(source, allow_empty=False)):
        rows += 1
        try:
            texts.append(prompt_text(row, mode))
        except PromptTextError as exc:
            bad.append(f"{source}: row {index}: {exc}")
    return PromptSet(source, texts, rows, bad)


@SOURCES.register("bfcl")
def _bfcl(source: str, categories: tuple[str, ...] | None, mode: TextMode) -> PromptSet:
    from slca.evaluation.bfcl.data import ORDER, load_category

    texts, bad, rows = [], [], 0
    for name in categories or ORDER:
        for entry in load_category(name):
            rows += 1
            try:
                texts.append(user_text(list(entry.messages), mode, entry.id))
            except PromptTextError as exc:
                bad.append(f"bfcl {name}: {exc}")
    return PromptSet(source, texts, rows, bad)


@SOURCES.register("bfcl_multi_turn")
def _bfcl_multi_turn(source: str, categories: tuple[str, ...] | None, mode: TextMode) -> PromptSet:
    from slca.evaluation.bfcl.multi_turn.data import CATEGORIES, load_category

    texts, bad, rows = [], [], 0
    for name in categories or CATEGORIES:
        loaded = load_category(name)
        rows += len(loaded.entries) + len(loaded.bad)
        bad += [str(b) for b in loaded.bad]
        for entry in loaded.entries:
            try:
                texts.append(user_text([m for turn in entry.turns for m in turn], mode, entry.id))
            except PromptTextError as exc:
                bad.append(f"bfcl_multi_turn {name}: {exc}")
    return PromptSet(source, texts, rows, bad)


def read_prompts(source: str, mode: TextMode) -> PromptSet:
    """The prompts `source` names: an existing file, else `kind` or `kind:cat1,cat2` of SOURCES."""
    if Path(source).is_file():
        kind, categories = "file", None
    else:
        kind, _, listed = source.partition(":")
        if kind not in SOURCES or kind == "file":
            raise SimilarityInputError(f"{source}: neither a file nor a prompt source ({', '.join(k for k in SOURCES if k != 'file')}, "
                                       "optionally with :category,category)")
        categories = tuple(c for c in listed.split(",") if c) or None
    try:
        return SOURCES.get(kind)(source, categories, mode)
    except DataInputError:
        raise
    except (KeyError, ValueError) as exc:  # an unknown category, unreadable BFCL data: one line from the loader
        raise SimilarityInputError(f"{source}: {exc.args[0] if exc.args else exc}") from None


@dataclass(frozen=True)
class SetSummary:
    """What one set contributed: rows read, rows without text, prompts embedded and how they were chosen."""

    source: str
    rows: int
    rows_without_text: int
    prompts: int
    embedded: int
    sampled: bool
    zero_vectors: int

    def phrase(self, seed: int) -> str:
        chosen = (f"{self.embedded:,} of {self.prompts:,} drawn uniformly without replacement (seed {seed})" if self.sampled
                  else f"all {self.embedded:,}")
        extra = f"; {self.rows_without_text:,} rows without text skipped" if self.rows_without_text else ""
        zero = f"; {self.zero_vectors:,} zero embeddings left out" if self.zero_vectors else ""
        return f"{self.source}: {self.rows:,} rows, prompts embedded: {chosen}{extra}{zero}"


@dataclass(frozen=True)
class SimilarityReport:
    """Table 7 for one pair of sets, with everything it was computed under."""

    encoder: str
    encoder_sha256: str | None
    options: SimilarityOptions
    a: SetSummary
    b: SetSummary
    cross: PairStats
    within_a: PairStats
    within_b: PairStats

    def sampling_note(self) -> str:
        sets = [s for s in (self.a, self.b) if s.sampled]
        drawn = "; ".join(f"{s.source}: {s.embedded:,} of {s.prompts:,} prompts" for s in sets)
        how = (f"sampled: {drawn}, drawn uniformly without replacement (seed {self.options.seed}, max_prompts {self.options.max_prompts})"
               if sets else "no sampling: every prompt of both sets embedded")
        return (f"{how}; pair statistics exact over every pair of the embedded prompts "
                "(from per-set sums of embeddings and their outer products; within a set, a prompt with itself is left out)")

    def as_dict(self) -> dict[str, Any]:
        return {
            "encoder": self.encoder, "encoder_sha256": self.encoder_sha256, "options": self.options.model_dump(mode="json"),
            "a": vars(self.a), "b": vars(self.b),
            "cross": self.cross.as_dict(), "within_a": self.within_a.as_dict(), "within_b": self.within_b.as_dict(),
            "sampling": self.sampling_note(),
        }

    def table(self) -> str:
        def cell(value: PairStats) -> list[str]:
            if not value.pairs:
                return ["n/a", "n/a", "0 (fewer than two prompts)"]
            return [f"{value.mean:.4f}", f"{value.std:.4f}", f"{value.pairs:,}"]

        lines = [f"Mean pairwise cosine similarity (encoder {self.encoder}, weights sha256 {(self.encoder_sha256 or 'none')[:12]}, "
                 f"text {self.options.text})", "",
                 "| pairs | mean | std | ordered pairs |", "|---|---|---|---|",
                 "| " + " | ".join(["cross A ↔ B", *cell(self.cross)]) + " |",
                 "| " + " | ".join(["within A", *cell(self.within_a)]) + " |",
                 "| " + " | ".join(["within B", *cell(self.within_b)]) + " |", "",
                 f"A = {self.a.phrase(self.options.seed)}",
                 f"B = {self.b.phrase(self.options.seed)}",
                 f"Sampling: {self.sampling_note()}"]
        return "\n".join(lines)


def load_encoder(opts: SimilarityOptions) -> Any:
    """The sentence-transformers model in `opts.encoder`, from local files only."""
    root = Path(opts.encoder)
    if not (root / "modules.json").is_file():
        raise SimilarityInputError(f"--encoder {opts.encoder}: not a sentence-transformers model directory (no modules.json)")
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as hf_logging

    from slca.device import select_device

    hf_logging.disable_progress_bar()  # its weight-loading bar would garble stderr, where skipped rows are listed
    model = SentenceTransformer(str(root), device=str(select_device(opts.device)), local_files_only=True)
    if opts.max_seq_length is not None:
        model.max_seq_length = opts.max_seq_length
    return model


def embed_into(model: Any, texts: Sequence[str], opts: SimilarityOptions, *, progress: Any = None) -> SetMoments:
    """`texts` embedded in chunks and folded into their sums (one chunk of embeddings in memory at a time)."""
    moments = SetMoments(int(model.get_embedding_dimension()))
    chunk = opts.batch_size * 16
    for start in range(0, len(texts), chunk):
        part = list(texts[start:start + chunk])
        moments.add(model.encode(part, batch_size=opts.batch_size, convert_to_numpy=True, normalize_embeddings=False,
                                 show_progress_bar=False))
        if progress is not None:
            progress(len(part))
    return moments


def _chosen(prompts: PromptSet, opts: SimilarityOptions, salt: int) -> tuple[list[str], bool]:
    # Each set gets its own stream of the seed, so sampling A never shifts which prompts of B are drawn.
    picked = sample_indices(len(prompts.texts), opts.max_prompts, opts.seed + salt)
    return (prompts.texts, False) if picked is None else ([prompts.texts[i] for i in picked], True)


def similarity(source_a: str, source_b: str, opts: SimilarityOptions, *, progress: bool = True,
               on_bad: Callable[[str], None] | None = None) -> SimilarityReport:
    """Table 7 for the prompts of `source_a` and `source_b` embedded by `opts.encoder`."""
    from slca.evaluation.card import weights_sha256
    from slca.terminal import progress_bar

    sets = [read_prompts(source_a, opts.text), read_prompts(source_b, opts.text)]
    for s in sets:
        if not s.texts:
            raise SimilarityInputError(f"{s.source}: no prompt with text in {s.rows:,} rows" + (f" (first: {s.bad[0]})" if s.bad else ""))
        for line in s.bad if on_bad is not None else ():
            on_bad(line)
    model = load_encoder(opts)
    chosen = [_chosen(s, opts, salt) for salt, s in enumerate(sets)]
    moments = []
    with progress_bar(enabled=progress) as bar:
        task = bar.add_task("embedding", total=sum(len(texts) for texts, _ in chosen))
        for texts, _ in chosen:
            moments.append(embed_into(model, texts, opts, progress=lambda k: bar.advance(task, k)))
    summaries = [SetSummary(s.source, s.rows, len(s.bad), len(s.texts), m.n, sampled, m.dropped)
                 for s, (_, sampled), m in zip(sets, chosen, moments)]
    return SimilarityReport(str(Path(opts.encoder).resolve()), weights_sha256(opts.encoder), opts, summaries[0], summaries[1],
                            cross_stats(moments[0], moments[1]), within_stats(moments[0]), within_stats(moments[1]))
