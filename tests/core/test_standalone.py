"""A clone with nothing beside it is complete: no file reaches outside the repository, and every
`docs/<page>.md#<anchor>` cited in code, configs or docs names a heading that exists."""

from __future__ import annotations

import hashlib
import re
import subprocess
from pathlib import Path

from tests.reference import DATASET_INFO, RL_PREVIEW, SFT_PREVIEW

ROOT = Path(__file__).resolve().parents[2]
# Built from parts so this file does not match itself.
OUTSIDE = ("../" + "shared", "shared/" + "reference", "DESIGN" + ".md", "SP" + "EC §")
DOC_REF = re.compile(r"docs/([\w-]+\.md)(?:#([\w-]+))?")


def tracked_files() -> list[Path]:
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-co", "--exclude-standard"], capture_output=True, text=True)
    if listed.returncode == 0 and listed.stdout.strip():
        names = listed.stdout.split("\n")
    else:  # an exported tree without .git
        names = [str(p.relative_to(ROOT)) for p in ROOT.rglob("*") if p.is_file() and ".venv" not in p.parts]
    return [ROOT / n for n in names if n and (ROOT / n).is_file()]


def text_of(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError):
        return None


def github_anchor(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading: lower case, punctuation dropped, spaces to hyphens."""
    slug = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return slug.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    found = set()
    for line in page.read_text(encoding="utf-8").splitlines():
        if m := re.match(r"#{1,6}\s+(.*)", line):
            found.add(github_anchor(m.group(1)))
    return found


def test_no_tracked_file_reads_or_names_anything_beside_the_checkout() -> None:
    offenders = []
    for path in tracked_files():
        text = text_of(path)
        if text is None:
            continue
        for needle in OUTSIDE:
            if needle in text:
                offenders.append(f"{path.relative_to(ROOT)}: {needle!r}")
    assert not offenders, "files that depend on the surroundings:\n" + "\n".join(offenders)


def test_every_docs_reference_resolves_to_a_page_and_heading_in_the_repository() -> None:
    cache: dict[str, set[str]] = {}
    broken = []
    for path in tracked_files():
        text = text_of(path)
        if text is None:
            continue
        for m in DOC_REF.finditer(text):
            page, anchor = m.groups()
            target = ROOT / "docs" / page
            if not target.is_file():
                broken.append(f"{path.relative_to(ROOT)}: docs/{page} does not exist")
                continue
            if anchor and anchor not in cache.setdefault(page, anchors(target)):
                broken.append(f"{path.relative_to(ROOT)}: docs/{page}#{anchor} names no heading")
    assert not broken, "\n".join(sorted(set(broken)))


def test_the_reference_fixtures_are_the_published_rows_byte_for_byte() -> None:
    expected = {
        RL_PREVIEW: "7f0ada274817676ed42d3713a37bc8cf5843b314cc4b3a1c25defb65392431eb",
        SFT_PREVIEW: "60350eb64743a57b742be53480de07d296e8daf737ba45e6cf8a14352af74662",
        DATASET_INFO: "ec0466c69f29bf1a8d986883dbc930633e7c303436617ca8f16ba03bdd6f9366",
    }
    for path, digest in expected.items():
        assert hashlib.sha256(path.read_bytes()).hexdigest() == digest, path.name


def test_github_anchor_matches_githubs_slug_rules() -> None:
    assert github_anchor("SLCA-GRPO") == "slca-grpo"
    assert github_anchor("Presence-filtered group normaliser") == "presence-filtered-group-normaliser"
    assert github_anchor("How to add an estimator (`grpo` as the example)") == "how-to-add-an-estimator-grpo-as-the-example"
