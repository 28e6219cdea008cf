"""Score one raw model output on one BFCL entry (docs/bfcl.md#matching-rules)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from slca.evaluation.bfcl.checker import CHECKS, schemas_by_name
from slca.evaluation.bfcl.data import CATEGORIES
from slca.evaluation.bfcl.decode import Decoded, decode

PARSE_PREFIX = "parse:"


def check(
    functions: Sequence[Mapping[str, Any]],
    model_output: Any,
    possible_answer: Sequence[Mapping[str, Any]] | None,
    category: str,
) -> tuple[bool, str | None]:
    """Whether the raw `model_output` answers a BFCL entry correctly, and if not, why.

    functions: the entry's function list (BFCL's schemas or OpenAI-style tools); possible_answer:
    its gold list [{name: {param: [possible answers]}}] (None or [] for the (ir)relevance
    categories); category: one of CATEGORIES. The error kind is None when valid, `parse:<kind>`
    when the output could not be read, else the checker's kind. Unreadable output counts as no
    call, which is correct only for the irrelevance categories (BFCL scores it the same way).
    Never raises on model output; an unknown category is a KeyError.
    """
    return check_decoded(functions, decode(model_output), possible_answer, category)


def check_decoded(
    functions: Sequence[Mapping[str, Any]],
    decoded: Decoded,
    possible_answer: Sequence[Mapping[str, Any]] | None,
    category: str,
) -> tuple[bool, str | None]:
    """`check` of an output already decoded (slca.evaluation.bfcl.decode), for a caller that reads the calls too."""
    rule = CHECKS.get(CATEGORIES.get(category).rule)
    schemas = schemas_by_name(functions)
    gold = list(possible_answer or ())
    err = rule(decoded.calls, gold, schemas)
    if err is not None and not decoded.ok:
        err = PARSE_PREFIX + str(decoded.error)
    return err is None, err
