"""`slca data similarity A B` with a tiny sentence-transformers encoder built here (random weights, the real
library): its numbers against every pair enumerated over the library's own embeddings, BFCL categories as a
set, the sampling stated, and its refusals."""

from __future__ import annotations

import json
import string
from pathlib import Path

import numpy as np
import pytest

from slca.data.similarity import brute_force
from tests.badinput import assert_refused, run_cli

pytestmark = pytest.mark.slow

TRAIN = [f"Book a table for {n} people at {place} tonight" for n, place in zip(range(2, 8), ["Luigi's", "Noma", "Sushi Bar", "Ivy", "Dishoom", "Nopi"])]
TRAIN += [f"What is the weather in {city} tomorrow?" for city in ("Paris", "Lisbon", "Oslo", "Cairo", "Lima")]
BENCH = ["Move the file report.txt into the archive folder", "List every file in the current directory",
         "Send a message to Bob saying the meeting moved", "Sort the lines of notes.txt", "What is the weather in Paris tomorrow?"]


def build_tiny_encoder(out: Path) -> Path:
    """A two-layer BERT with random weights and a character-level WordPiece vocabulary, mean-pooled, saved as a
    sentence-transformers model directory."""
    import torch
    from sentence_transformers import SentenceTransformer, models
    from transformers import BertConfig, BertModel, BertTokenizer

    chars = list(string.ascii_lowercase + string.digits)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *chars, *string.punctuation, *(f"##{c}" for c in chars)]
    bert = out / "bert"
    bert.mkdir(parents=True)
    (bert / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    torch.manual_seed(0)
    BertModel(BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                         max_position_embeddings=256)).save_pretrained(bert)
    BertTokenizer(str(bert / "vocab.txt")).save_pretrained(bert)
    word = models.Transformer(str(bert), max_seq_length=128)
    pool = models.Pooling(word.get_embedding_dimension(), pooling_mode="mean")
    encoder = out / "encoder"
    SentenceTransformer(modules=[word, pool], device="cpu").save(str(encoder))
    return encoder


@pytest.fixture(scope="module")
def encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_encoder(tmp_path_factory.mktemp("st"))


def rows_file(path: Path, texts: list[str], *extra: dict) -> Path:
    rows = [{"prompt": [{"role": "system", "content": "You call tools."}, {"role": "user", "content": t}]} for t in texts]
    path.write_text("".join(json.dumps(r) + "\n" for r in [*rows, *extra]), encoding="utf-8")
    return path


def library_embeddings(encoder: Path, texts: list[str]) -> np.ndarray:
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(encoder), device="cpu", local_files_only=True).encode(texts, convert_to_numpy=True)


def test_the_numbers_equal_every_pair_enumerated_over_the_librarys_own_embeddings(encoder: Path, tmp_path: Path,
                                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    a = rows_file(tmp_path / "train.jsonl", TRAIN, {"prompt": [{"role": "system", "content": "no user here"}]})
    b = rows_file(tmp_path / "bench.jsonl", BENCH)
    out = tmp_path / "table7.json"
    result = run_cli(["data", "similarity", a, b, "--encoder", encoder, "--no-progress", "--batch-size", "4", "--out", out], capsys)
    assert result.code == 0, result.err
    # The row without a user message is named on stderr and counted, not embedded.
    assert [line for line in result.err.splitlines() if line.strip()] == [
        f"slca data similarity: skipped {a}: row {len(TRAIN)}: prompt: no user message with text"]
    record = json.loads(out.read_text())
    ea, eb = library_embeddings(encoder, TRAIN), library_embeddings(encoder, BENCH)
    for key, oracle in (("cross", brute_force(ea, eb)), ("within_a", brute_force(ea)), ("within_b", brute_force(eb))):
        assert record[key]["pairs"] == oracle.pairs
        assert record[key]["mean"] == pytest.approx(oracle.mean, abs=1e-5) and record[key]["std"] == pytest.approx(oracle.std, abs=1e-5)
    assert record["cross"]["pairs"] == 11 * 5 and record["within_a"]["pairs"] == 11 * 10
    assert record["a"] == {"source": str(a), "rows": 12, "rows_without_text": 1, "prompts": 11, "embedded": 11, "sampled": False,
                           "zero_vectors": 0}
    assert record["sampling"].startswith("no sampling: every prompt of both sets embedded")
    # The table printed on stdout carries the same numbers and says how they were computed.
    assert f"| cross A ↔ B | {record['cross']['mean']:.4f} |" in result.out
    assert "exact over every pair of the embedded prompts" in result.out


def test_a_bfcl_category_is_a_set_and_sampling_a_set_is_stated_in_the_output(encoder: Path, tmp_path: Path,
                                                                             capsys: pytest.CaptureFixture[str]) -> None:
    a = rows_file(tmp_path / "train.jsonl", TRAIN)
    result = run_cli(["data", "similarity", a, "bfcl_multi_turn:base", "--encoder", encoder, "--max-prompts", "11", "--seed", "2",
                      "--text", "first_user", "--no-progress", "--json"], capsys)
    assert result.code == 0, result.err
    record = json.loads(result.out)
    assert record["b"]["source"] == "bfcl_multi_turn:base" and record["b"]["rows"] == 200 and record["b"]["prompts"] == 200
    assert record["b"]["sampled"] and record["b"]["embedded"] == 11 and record["within_b"]["pairs"] == 110
    assert not record["a"]["sampled"] and record["a"]["embedded"] == len(TRAIN) == 11  # at the cap: all of it, not a draw
    assert "sampled: bfcl_multi_turn:base: 11 of 200 prompts, drawn uniformly without replacement (seed 2, max_prompts 11)" in record["sampling"]


@pytest.mark.parametrize(("args", "mentions"), [
    (["{a}", "{a}", "--encoder", "{tmp}"], ["--encoder", "modules.json"]),
    (["{a}", "bfcl_multi_turn:nope", "--encoder", "{enc}"], ["bfcl_multi_turn:nope", "nope"]),
    (["{a}", "no_such_source", "--encoder", "{enc}"], ["no_such_source", "neither a file nor a prompt source"]),
    (["{a}", "{a}", "--encoder", "{enc}", "--max-prompts", "1"], ["--max-prompts"]),
])
def test_a_bad_set_encoder_or_option_is_refused_in_one_line(args: list[str], mentions: list[str], encoder: Path, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    a = rows_file(tmp_path / "train.jsonl", TRAIN)
    argv = [x.format(a=a, tmp=tmp_path, enc=encoder) for x in args]
    assert_refused(run_cli(["data", "similarity", *argv, "--no-progress"], capsys), "slca data similarity", *mentions)
