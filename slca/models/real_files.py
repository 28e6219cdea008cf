"""The real-model files fetched by `scripts/fetch_real_models.sh`, located and checked before use.

The script fetches Qwen's tokenizers (with their official chat templates) and SmolLM2's GGUF by exact
version into `.cache/real-models/` of the checkout; `scripts/real_models.sha256` is the one list of
their digests, read by the script and here. A file that is missing or differs from its digest is one
line naming the file and the command that fetches it; nothing is downloaded at run time.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

FETCH_COMMAND = "make real-models (scripts/fetch_real_models.sh)"
CACHE_SUBDIR = Path(".cache") / "real-models"
DIGESTS_FILE = Path("scripts") / "real_models.sha256"
MARKER = ".fetched"
# Qwen's tokenizers, each a folder of the cache that `AutoTokenizer.from_pretrained` loads.
QWEN_TOKENIZERS: tuple[str, ...] = ("qwen2.5", "qwen3")
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json")


class MissingArtefact(RuntimeError):
    """A real-model file that is absent or differs from its pinned digest (one line)."""


def checkout_root() -> Path:
    """The checkout slca runs from, or that a launched job's code snapshot came from (the cache and the
    digest list live in it)."""
    from slca.config.codebase import checkout_root as root

    return root()


def cache_dir(root: Path | None = None) -> Path:
    """Where the fetch script puts the real models."""
    return (root or checkout_root()) / CACHE_SUBDIR


def fetched(root: Path | None = None) -> bool:
    """Whether the fetch script has completed in this checkout (its marker is there)."""
    return (cache_dir(root) / MARKER).is_file()


def pinned_digests(root: Path | None = None) -> dict[str, str]:
    """{path relative to the cache: sha256} from the committed digest list (sha256sum's format)."""
    digests = {}
    for line in ((root or checkout_root()) / DIGESTS_FILE).read_text(encoding="utf-8").splitlines():
        if line.strip():
            digest, name = line.split(maxsplit=1)
            digests[name.lstrip("*")] = digest
    return digests


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def verified_file(relpath: str, root: Path | None = None) -> Path:
    """The cached file `relpath` after checking its sha256; MissingArtefact names it and the fetch command."""
    expected = pinned_digests(root).get(relpath)
    if expected is None:
        raise MissingArtefact(f"{relpath}: not a pinned real-model file (see {DIGESTS_FILE})")
    path = cache_dir(root) / relpath
    if not path.is_file():
        raise MissingArtefact(f"{path}: missing; fetch it with {FETCH_COMMAND}")
    if _sha256(path) != expected:
        raise MissingArtefact(f"{path}: sha256 differs from the pinned digest; fetch it again with {FETCH_COMMAND}")
    return path


def qwen_tokenizer_dir(name: str, root: Path | None = None) -> Path:
    """The checked folder of Qwen's tokenizer `name` (qwen2.5, qwen3) for `AutoTokenizer.from_pretrained`."""
    if name not in QWEN_TOKENIZERS:
        raise ValueError(f"unknown Qwen tokenizer {name!r}; known: {sorted(QWEN_TOKENIZERS)}")
    for file in TOKENIZER_FILES:
        verified_file(f"{name}/{file}", root)
    return cache_dir(root) / name
