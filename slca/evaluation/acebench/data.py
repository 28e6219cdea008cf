"""ACEBench's English normal and special entries from the vendored copy (docs/eval.md#table-3-acebench).

Each category is one JSON-lines file of entries under third_party/acebench/data_all/data_en/ and one
of ground truths under its possible_answer/, paired by id in the same order. An entry is a
conversation transcript (`question`), the candidate functions (JSON-schema-like dicts, sometimes
`"type": "dict"`; some distractors in the atom categories name their schema `arguments`, never a
gold function) and, for normal entries, a time line or, for the preference category, a user
profile; both go into ACEBench's system prompt. A malformed line is refused in one line naming the
file, line and field: the copy is vendored, so a bad line means a damaged checkout.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from slca.config.benchmarks import ACEBENCH_CATEGORIES
from slca.evaluation.bfcl.data import to_json_schema
from slca.evaluation.entry_lines import read_entry_lines
from slca.toolcall.acebench_prompts import kind_of, system_prompt, user_prompt

ROOT = Path(__file__).resolve().parents[3] / "third_party" / "acebench"
DATA_DIR = ROOT / "data_all" / "data_en"
NORMAL = tuple(c for c in ACEBENCH_CATEGORIES if c.startswith("normal_"))
SPECIAL = tuple(c for c in ACEBENCH_CATEGORIES if c.startswith("special_"))
MULTI_TURN = ("normal_multi_turn_user_adjust", "normal_multi_turn_user_switch")


class AceBenchDataError(ValueError):
    """The ACEBench data cannot be read; str(exc) is one line naming the file, line and field."""


@dataclass(frozen=True)
class Entry:
    """One ACEBench entry with its ground truth.

    truth: for a normal entry the possible answers (each {function name: {param: value}}; ACEBench
    writes one as a dict, several as a list), for special_incomplete {function: [missing params]},
    for special_error_param {param: [wrong values]}, for special_irrelevant ACEBench's sentence.
    """

    id: str
    category: str
    question: str
    functions: tuple[dict[str, Any], ...]
    time: str
    profile: str
    truth: Any

    @property
    def system_prompt(self) -> str:
        return system_prompt(kind_of(self.category), self.functions, time=self.time, profile=self.profile)

    @property
    def conversation(self) -> str:
        """The transcript's conversation index (ACEBench's `<category>_<conversation>_<turn>` ids in the
        multi-turn categories; the entry's own index elsewhere)."""
        return self.id.split("_")[-2] if self.category in MULTI_TURN else self.id.split("_")[-1]

    def row(self) -> dict[str, Any]:
        """A verl-native RL row for slca's rollout loop: ACEBench's own system and user turns (the
        system turn shows the functions; `tools` carries them for prompts that do not)."""
        return {
            "data_source": f"acebench/{self.category}",
            "prompt": [{"role": "system", "content": self.system_prompt}, {"role": "user", "content": user_prompt(self.question)}],
            "tools": [to_tool(f) for f in self.functions],
            "extra_info": {"acebench_id": self.id, "category": self.category},
        }


def to_tool(function: Mapping[str, Any]) -> dict[str, Any]:
    """One ACEBench function as an OpenAI-style tool (its name, description and parameter schema)."""
    params = function.get("parameters", function.get("arguments", {}))
    fn = {"name": function["name"], "description": function.get("description", ""), "parameters": to_json_schema(params)}
    return {"type": "function", "function": fn}


def category_files(name: str, root: Path = DATA_DIR) -> tuple[Path, Path]:
    """(entries file, ground-truth file) of one category."""
    return root / f"data_{name}.json", root / "possible_answer" / f"data_{name}.json"


def read_lines(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """(line number, object) of every entry of one ACEBench data file."""
    return read_entry_lines(path, AceBenchDataError)


def checked_functions(where: str, functions: Any) -> tuple[dict[str, Any], ...]:
    # ACEBench's inference wraps a lone dict into a list; every vendored entry already has a list.
    functions = [functions] if isinstance(functions, Mapping) else functions
    if not isinstance(functions, list) or not functions:
        raise AceBenchDataError(f"{where}: function: expected a non-empty list of function schemas")
    for i, f in enumerate(functions):
        params = f.get("parameters", f.get("arguments")) if isinstance(f, Mapping) else None
        if not isinstance(f, Mapping) or not isinstance(f.get("name"), str) or not isinstance(params, Mapping):
            raise AceBenchDataError(f"{where}: function[{i}]: expected {{name: str, parameters (or arguments): {{...}}}}")
    return tuple(dict(f) for f in functions)


def _truth(where: str, category: str, truth: Any) -> Any:
    if category == "special_irrelevant":
        ok = isinstance(truth, str)
    elif category in SPECIAL:
        ok = isinstance(truth, Mapping) and all(isinstance(v, list) and all(isinstance(x, str) for x in v) for v in truth.values())
    else:
        alternatives = truth if isinstance(truth, list) else [truth]
        ok = bool(alternatives) and all(isinstance(a, Mapping) and a and all(isinstance(p, Mapping) for p in a.values())
                                        for a in alternatives)
    if not ok:
        raise AceBenchDataError(f"{where}: ground_truth: not the shape a {category} answer has")
    return truth


def load_category(name: str, *, root: Path = DATA_DIR, limit: int | None = None) -> list[Entry]:
    """The entries of one category (the first `limit` when given), each paired with its ground truth."""
    if name not in ACEBENCH_CATEGORIES:
        raise AceBenchDataError(f"unknown ACEBench category {name!r}; known: {', '.join(ACEBENCH_CATEGORIES)}")
    qpath, apath = category_files(name, Path(root))
    rows = read_lines(qpath)
    answers = {obj["id"]: (n, obj) for n, obj in read_lines(apath)}
    entries = []
    for n, obj in rows[:limit] if limit is not None else rows:
        where = f"{qpath}:{n}"
        if obj["id"] not in answers:
            raise AceBenchDataError(f"{where}: id: {obj['id']!r} has no ground truth in {apath}")
        question = obj.get("question")
        if not isinstance(question, str):
            raise AceBenchDataError(f"{where}: question: expected a string")
        an, ans = answers[obj["id"]]
        extra = {k: obj.get(k) or "" for k in ("time", "profile")}
        if not all(isinstance(v, str) for v in extra.values()):
            raise AceBenchDataError(f"{where}: time/profile: expected strings")
        entries.append(Entry(obj["id"], name, question, checked_functions(where, obj.get("function")), extra["time"],
                             extra["profile"], _truth(f"{apath}:{an}", name, ans.get("ground_truth"))))
    return entries
