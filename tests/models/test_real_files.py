"""Real-model files are used only after their sha256 matches the committed digest list."""

from __future__ import annotations

from pathlib import Path

import pytest

from slca.models.real_files import MissingArtefact, pinned_digests, qwen_tokenizer_dir, verified_file

# sha256(b"abc"), FIPS 180-2 appendix B.1: an oracle independent of hashlib.
ABC_SHA256 = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


def _checkout(tmp_path: Path, content: bytes | None) -> Path:
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "real_models.sha256").write_text(f"{ABC_SHA256}  qwen3/tokenizer.json\n")
    if content is not None:
        folder = tmp_path / ".cache" / "real-models" / "qwen3"
        folder.mkdir(parents=True)
        (folder / "tokenizer.json").write_bytes(content)
    return tmp_path


def test_a_file_matching_its_pinned_digest_is_handed_out(tmp_path):
    root = _checkout(tmp_path, b"abc")
    assert verified_file("qwen3/tokenizer.json", root) == root / ".cache/real-models/qwen3/tokenizer.json"


@pytest.mark.parametrize("content, words", [(None, "missing"), (b"abd", "sha256 differs")])
def test_a_missing_or_altered_file_is_one_line_naming_it_and_the_fetch_command(tmp_path, content, words):
    root = _checkout(tmp_path, content)
    with pytest.raises(MissingArtefact) as err:
        verified_file("qwen3/tokenizer.json", root)
    line = str(err.value)
    assert "\n" not in line and words in line
    assert str(root / ".cache/real-models/qwen3/tokenizer.json") in line and "make real-models" in line


def test_every_pinned_file_is_a_sha256_digest_of_a_file_under_a_model_folder():
    digests = pinned_digests()
    assert {"qwen2.5/tokenizer.json", "qwen3/tokenizer_config.json"} <= set(digests)
    assert all(len(d) == 64 and int(d, 16) >= 0 and "/" in name for name, d in digests.items())


def test_an_unknown_qwen_tokenizer_name_is_refused_with_the_known_ones():
    with pytest.raises(ValueError, match="qwen2.5"):
        qwen_tokenizer_dir("qwen4")
