"""The efficiency paper's own system prompts (its Figure 10 and Table 6 variants), kept under conf/prompts/."""

from __future__ import annotations

import json
from pathlib import Path

from slca.config.compose import compose_spec
from slca.toolcall.prompts import BFCL_SYSTEM_PROMPT_WITHOUT_FUNC_DOC, get_system_prompt

TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "Weather.",
                                           "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}},
         {"name": "add", "parameters": {"type": "object", "properties": {"a": {"type": "number"}}}}]
PAPER_FILE = Path(__file__).resolve().parents[2] / "conf" / "prompts" / "stronger.md"
# The first words of the paper's four Important Notes (Figure 10).
NOTES = {1: "1. If a tool call completes the user's request, return a concise plain-text summary and stop.",
         2: "2. During each tool invocation, it is important to carefully examine the corresponding tool's description",
         3: "3. For complex requests requiring multiple function calls",
         4: "4. When encountering errors in multi-turn conversations, analyze the tool feedback"}


def test_stronger_is_the_papers_text_with_the_tools_where_the_paper_shows_them() -> None:
    text = get_system_prompt("stronger", TOOLS)
    listing = "[\n" + ",\n".join(json.dumps(t.get("function", t)) for t in TOOLS) + "\n]"
    assert text == PAPER_FILE.read_text(encoding="utf-8").replace("{tools}", listing)
    assert text.startswith("**Important Notes**") and all(note in text for note in NOTES.values())
    assert "<tools>\n\n" + listing + "\n\n</tools>" in text and "The current time is Unknown." in text


def test_stronger_notes_1_2_drops_notes_3_and_4_and_nothing_else() -> None:
    full, short = get_system_prompt("stronger", TOOLS), get_system_prompt("stronger_notes_1_2", TOOLS)
    assert NOTES[1] in short and NOTES[2] in short and NOTES[3] not in short and NOTES[4] not in short
    kept = [p for p in full.split("\n\n") if not p.startswith(("3. ", "4. "))]
    assert short == "\n\n".join(kept) and len(short) < len(full)


def test_bfcl_default_copied_repeats_the_instructions_but_not_the_functions() -> None:
    default, copied = get_system_prompt("bfcl_default", TOOLS), get_system_prompt("bfcl_default_copied", TOOLS)
    assert copied == BFCL_SYSTEM_PROMPT_WITHOUT_FUNC_DOC + default
    assert copied.count("You are an expert in composing functions.") == 2 and copied.count("'name': 'get_weather'") == 1


def test_the_length_against_content_study_is_one_grid() -> None:
    prompts = ["bfcl_default", "bfcl_default_copied", "stronger_notes_1_2", "stronger"]
    assert compose_spec([f"eval.system_prompts=[{','.join(prompts)}]"]).eval.system_prompts == prompts
