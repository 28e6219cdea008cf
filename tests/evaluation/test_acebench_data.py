"""ACEBench's vendored English data is read whole, its rows carry ACEBench's own prompts, and a damaged
file is refused in one line naming the file, line and field (docs/eval.md#table-3-acebench)."""

from __future__ import annotations

import ast
import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from slca.config.benchmarks import ACEBENCH_CATEGORIES
from slca.evaluation.acebench.data import ROOT, AceBenchDataError, load_category
from slca.toolcall.prompts import get_system_prompt
from slca.toolcall.templates import prompt_messages

# Entries per category, counted in the upstream files (one JSON object per line).
COUNTS = {
    "normal_single_turn_single_function": 100, "normal_single_turn_parallel_function": 100,
    "normal_multi_turn_user_adjust": 123, "normal_multi_turn_user_switch": 100, "normal_similar_api": 50,
    "normal_preference": 50, "normal_atom_bool": 50, "normal_atom_enum": 50, "normal_atom_number": 50,
    "normal_atom_list": 50, "normal_atom_object_deep": 50, "normal_atom_object_short": 50,
    "special_incomplete": 50, "special_error_param": 50, "special_irrelevant": 50,
}


def _upstream_prompts() -> dict[str, str]:
    """The string constants of ACEBench's prompt_en.py, read with ast (the module is not imported)."""
    tree = ast.parse((ROOT / "model_inference" / "prompt_en.py").read_text(encoding="utf-8"))
    return {n.targets[0].id: n.value.value for n in tree.body
            if isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant) and isinstance(n.targets[0], ast.Name)}


def test_every_category_is_read_whole_in_acebenchs_order() -> None:
    assert tuple(COUNTS) == ACEBENCH_CATEGORIES
    for name, count in COUNTS.items():
        entries = load_category(name)
        assert len(entries) == count, name
        assert all(e.id.startswith(name + "_") for e in entries)
    assert [e.id for e in load_category("normal_atom_bool", limit=3)] == [f"normal_atom_bool_{i}" for i in range(3)]


def test_the_vendored_files_are_the_ones_vendored_md_lists() -> None:
    listed = re.findall(r"^([0-9a-f]{64})  (\S+)$", (ROOT / "VENDORED.md").read_text(encoding="utf-8"), re.M)
    assert len(listed) == 52
    for digest, path in listed:
        assert hashlib.sha256((ROOT / path).read_bytes()).hexdigest() == digest, path


def test_no_vendored_python_file_calls_eval_or_exec() -> None:
    called = []
    for path in sorted(ROOT.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("eval", "exec"):
                called.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert called == []


@pytest.mark.parametrize("text", ["[f(x=1+2)]", "[f(x=lambda: 0)]", "[f(x=__import__('os').getpid()+1)]"])
def test_acebenchs_patched_decoder_refuses_what_upstream_would_evaluate(text: str) -> None:
    # ACEBench's decoder, run from the vendored tree in a plain interpreter (it imports only ast and json).
    code = f"import sys; sys.path.insert(0, {str(ROOT)!r}); from model_inference.utils import ast_parse; ast_parse({text!r})"
    proc = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert "Exception: Unsupported AST type: <class 'ast." in proc.stderr


@pytest.mark.parametrize(("category", "template"), [
    ("normal_atom_enum", "SYSTEM_PROMPT_FOR_NORMAL_DATA_EN"),
    ("normal_preference", "SYSTEM_PROMPT_FOR_PREFERENCE_DATA_EN"),
    ("special_incomplete", "SYSTEM_PROMPT_FOR_SPECIAL_DATA_EN"),
])
def test_a_row_carries_the_system_and_user_turns_acebenchs_inference_writes(category: str, template: str) -> None:
    upstream = _upstream_prompts()
    line = (ROOT / "data_all" / "data_en" / f"data_{category}.json").read_text(encoding="utf-8").splitlines()[4]
    raw = json.loads(line)
    entry = load_category(category, limit=5)[4]
    row = entry.row()
    # ACEBench's generate.py: str.format with the function list itself, the time ("" for preference) and profile.
    time = "" if "preference" in category else raw["time"]
    assert row["prompt"][0] == {"role": "system", "content": upstream[template].format(
        time=time, profile=raw.get("profile", ""), function=raw["function"])}
    assert row["prompt"][1] == {"role": "user", "content": upstream["USER_PROMPT_EN"].format(question=raw["question"])}
    assert [t["function"]["name"] for t in row["tools"]] == [f["name"] for f in raw["function"]]


def test_the_acebench_default_prompt_keeps_an_acebench_rows_prompt_and_gives_others_acebenchs_normal_prompt() -> None:
    upstream = _upstream_prompts()
    row = load_category("special_irrelevant", limit=1)[0].row()
    messages, tools = prompt_messages(row["prompt"], row["tools"], system_prompt="acebench_default")
    assert messages == row["prompt"] and tools is None  # the prompt shows the functions itself
    schema = {"name": "f", "description": "d", "parameters": {"type": "object", "properties": {}}}
    text = get_system_prompt("acebench_default", [{"type": "function", "function": schema}], dataset_prompt="You are helpful.")
    assert text == upstream["SYSTEM_PROMPT_FOR_NORMAL_DATA_EN"].format(time="", function=[schema])


def _copy(tmp_path: Path, category: str) -> Path:
    src = ROOT / "data_all" / "data_en"
    (tmp_path / "possible_answer").mkdir()
    for rel in (f"data_{category}.json", f"possible_answer/data_{category}.json"):
        (tmp_path / rel).write_text((src / rel).read_text(encoding="utf-8"), encoding="utf-8")
    return tmp_path


def _edit_line(path: Path, n: int, change) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[n - 1] = change(lines[n - 1])
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.mark.parametrize(("rel", "change", "message"), [
    ("data_normal_atom_bool.json", lambda line: line[:40], r"data_normal_atom_bool\.json:2: invalid JSON"),
    ("data_normal_atom_bool.json", lambda line: json.dumps({**json.loads(line), "function": []}),
     r"data_normal_atom_bool\.json:2: function: expected a non-empty list"),
    ("data_normal_atom_bool.json", lambda line: json.dumps({**json.loads(line), "question": 3}),
     r"data_normal_atom_bool\.json:2: question: expected a string"),
    ("possible_answer/data_normal_atom_bool.json", lambda line: json.dumps({**json.loads(line), "ground_truth": "yes"}),
     r"possible_answer/data_normal_atom_bool\.json:2: ground_truth: not the shape a normal_atom_bool answer has"),
    ("possible_answer/data_normal_atom_bool.json", lambda line: json.dumps({**json.loads(line), "id": "other"}),
     r"data_normal_atom_bool\.json:2: id: 'normal_atom_bool_1' has no ground truth"),
])
def test_a_damaged_line_is_refused_naming_its_file_line_and_field(tmp_path: Path, rel: str, change, message: str) -> None:
    root = _copy(tmp_path, "normal_atom_bool")
    _edit_line(root / rel, 2, change)
    with pytest.raises(AceBenchDataError, match=message) as info:
        load_category("normal_atom_bool", root=root)
    assert "\n" not in str(info.value)


def test_an_unknown_category_is_refused_naming_the_known_ones() -> None:
    with pytest.raises(AceBenchDataError, match=r"unknown ACEBench category 'agent_multi_step'; known: normal_single_turn_single_function, "):
        load_category("agent_multi_step")
