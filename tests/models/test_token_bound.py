"""slca.rollout.token_bound on real tokenizers (Qwen2.5's, Qwen3's, the tiny one; SmolLM2's in test_smollm2.py):
the bound is never under the ids the tokenizer gives, is exact where one byte is one token, and is
refused for pipelines that may add characters."""

from __future__ import annotations

import unicodedata

import pytest
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers
from transformers import PreTrainedTokenizerFast

from slca.rollout.chat import encode_texts
from slca.rollout.token_bound import nfc_bytes_bound, token_bound, utf8_bytes
from tests.models.bound_checks import assert_bounds, hostile_texts


def tiny_tokenizer():
    from slca.config.groups.backbone import TinyBackbone
    from slca.models.tiny import train_tokenizer

    return train_tokenizer(hostile_texts()[:40] * 3, TinyBackbone(vocab_size=600))


def byte_tokenizer(normalizer=None) -> PreTrainedTokenizerFast:
    """Byte-level BPE with no merge: one token per byte of the normalised text, the bound's worst case."""
    vocab = {ch: i for i, ch in enumerate(sorted(pre_tokenizers.ByteLevel.alphabet()))}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    if normalizer is not None:
        tok.normalizer = normalizer
    return PreTrainedTokenizerFast(tokenizer_object=tok)


def test_no_code_point_grows_past_three_times_its_utf8_bytes_under_nfc():
    worst = max(len(unicodedata.normalize("NFC", chr(c)).encode("utf-8")) / len(chr(c).encode("utf-8"))
                for c in range(0x110000) if not 0xD800 <= c < 0xE000)
    assert worst == 3.0  # reached (U+1D160 and the like): the factor the NFC bound relies on, no more


@pytest.mark.parametrize("name", ["qwen2.5", "qwen3", "tiny"])
def test_the_bound_is_never_under_the_ids_of_qwens_tokenizers_and_the_tiny_one(name, qwen_tokenizers):
    tokenizer = tiny_tokenizer() if name == "tiny" else qwen_tokenizers[name]
    assert_bounds(tokenizer, utf8_bytes if name == "tiny" else nfc_bytes_bound)  # Qwen normalises to NFC


def test_the_bound_is_exact_where_each_byte_is_one_token():
    texts = hostile_texts()
    plain, nfc = byte_tokenizer(), byte_tokenizer(normalizers.NFC())
    assert token_bound(plain) is utf8_bytes and token_bound(nfc) is nfc_bytes_bound
    assert [len(ids) for ids in encode_texts(plain, texts)] == [utf8_bytes(t) for t in texts]
    ascii_texts = [t for t in texts if t.isascii()]
    assert len(ascii_texts) > 5 and [len(ids) for ids in encode_texts(nfc, ascii_texts)] == [len(t) for t in ascii_texts]


@pytest.mark.parametrize("change", ["metaspace", "prefix_space", "lowercase", "wordpiece", "no_backend"])
def test_a_pipeline_that_may_add_characters_gets_no_bound(change):
    if change == "no_backend":
        assert token_bound(object()) is None
        return
    if change == "wordpiece":
        tok = Tokenizer(models.WordPiece(vocab={"[UNK]": 0, "a": 1}, unk_token="[UNK]"))
    else:
        tok = byte_tokenizer().backend_tokenizer
    if change == "metaspace":
        tok.pre_tokenizer = pre_tokenizers.Metaspace()
    elif change == "prefix_space":
        tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Digits(), pre_tokenizers.ByteLevel(add_prefix_space=True)])
    elif change == "lowercase":  # "İ" lowercases to two code points, three bytes from two
        tok.normalizer = normalizers.Sequence([normalizers.NFC(), normalizers.Lowercase()])
    assert token_bound(PreTrainedTokenizerFast(tokenizer_object=tok)) is None
