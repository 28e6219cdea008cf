"""System prompts as named registry entries (`bfcl_default`, `bfcl_default_copied`, `stronger`,
`stronger_notes_1_2`, `acebench_default`, `none`, `dataset`, `dataset_template`) or a file.

A prompt is built from the tool list and, optionally, the row's own system prompt. Each entry
declares whether its text already shows the tools, so a renderer knows whether to hand the tools
to the chat template as well.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from slca.data import hermes
from slca.registry import Registry
from slca.toolcall.acebench_prompts import is_acebench_prompt
from slca.toolcall.acebench_prompts import system_prompt as acebench_system_prompt

# BFCL prompting-mode system prompt (gorilla, berkeley-function-call-leaderboard,
# `bfcl/constants/default_prompts.py`: DEFAULT_SYSTEM_PROMPT). Quoted exactly: it is data.
BFCL_SYSTEM_PROMPT_WITHOUT_FUNC_DOC = (
    "You are an expert in composing functions. You are given a question and a set of possible functions. "
    "Based on the question, you will need to make one or more function/tool calls to achieve the purpose.\n"
    "If none of the functions can be used, point it out. If the given question lacks the parameters "
    "required by the function, also point it out.\n"
    "You should only return the function calls in your response.\n"
    "\n"
    "If you decide to invoke any of the function(s), you MUST put it in the format of "
    "[func_name1(params_name1=params_value1, params_name2=params_value2...), func_name2(params)]\n"
    "You SHOULD NOT include any other text in the response.\n"
    "\n"
    "At each turn, you should try your best to complete the tasks requested by the user within the "
    "current turn. Continue to output functions to call until you have fulfilled the user's request "
    "to the best of your ability. Once you have no more functions to call, the system will consider "
    "the current turn complete and proceed to the next turn or task.\n"
)
BFCL_SYSTEM_PROMPT = (
    BFCL_SYSTEM_PROMPT_WITHOUT_FUNC_DOC
    + "\nHere is a list of functions in JSON format that you can invoke.\n{functions}\n\n"
)
# BFCL appends this hint to every function description before formatting (Python categories).
BFCL_PYTHON_HINT = " Note that the provided function is in Python 3 syntax."

# The efficiency paper's own "stronger" prompt (its Figure 10) and its Table 6 variants are kept as
# text under conf/prompts/ (see the README there); `{tools}` marks where the tool list goes.
PROMPT_DIR = Path(__file__).resolve().parents[2] / "conf" / "prompts"


@functools.lru_cache(maxsize=None)
def paper_prompt(name: str) -> str:
    """The text of conf/prompts/<name>.md."""
    return (PROMPT_DIR / f"{name}.md").read_text(encoding="utf-8")


def _tools_json_list(tools: Sequence[Any]) -> str:
    """The tools as the JSON list the paper's `<tools>[ ... ]</tools>` shows, one schema per line."""
    return "[\n" + ",\n".join(json.dumps(unwrap_tool(t), ensure_ascii=False) for t in tools) + "\n]"


def stronger_prompt(tools: Sequence[Any], notes: Sequence[int] = (1, 2, 3, 4)) -> str:
    """The paper's stronger prompt keeping only the Important Notes numbered in `notes` (Table 6)."""
    dropped = tuple(f"{i}. " for i in range(1, 5) if i not in notes)
    paragraphs = [p for p in paper_prompt("stronger").split("\n\n") if not (dropped and p.startswith(dropped))]
    return "\n\n".join(paragraphs).replace("{tools}", _tools_json_list(tools))


def unwrap_tool(tool: Any) -> dict[str, Any]:
    """A tool schema without the OpenAI envelope: {"type": "function", "function": {...}} → {...}."""
    if isinstance(tool, str):
        tool = json.loads(tool)
    if isinstance(tool, dict) and isinstance(tool.get("function"), dict):
        return tool["function"]
    return tool


def tools_for_template(tools: Sequence[Any] | None) -> list[dict[str, Any]]:
    """The tools as SFT, RL and evaluation all hand them to a chat template: each schema in the OpenAI
    envelope {"type": "function", "function": {...}}, whichever form it arrives in (enveloped, bare or
    as JSON text); an enveloped schema is kept as it is.

    The one place tools are normalised, so a conversation's system turn renders to the same tokens in
    training and at rollout. Why the envelope: Qwen's templates print each tool exactly as given
    (`tool | tojson`), and Qwen's documented prompts, transformers' `apply_chat_template(tools=...)`
    and LLaMA-Factory's Qwen formatter all show it; the RL rows store it (slca.data.prepare).
    """
    return [hermes.envelope(json.loads(t) if isinstance(t, str) else t) for t in tools or ()]


def tool_names(tools: Sequence[Any] | None) -> list[str]:
    return [str(unwrap_tool(t).get("name", "")) for t in tools or ()]


def tools_block(tools: Sequence[Any] | None) -> str:
    """Tools as one compact JSON object per line inside <tools></tools> (our own wording around it)."""
    lines = "\n".join(json.dumps(unwrap_tool(t), ensure_ascii=False) for t in tools or ())
    return f"Available functions (JSON schemas, one per line):\n<tools>\n{lines}\n</tools>"


@dataclass(frozen=True)
class PromptSpec:
    """A named system prompt.

    build(tools, dataset_prompt) -> text or None (no system prompt).
    includes_tools: True/False when fixed; None = decide per row (every tool name appears in the text).
    """

    name: str
    build: Callable[[Sequence[Any], str | None], str | None]
    includes_tools: bool | None
    description: str = ""

    def shows_tools(self, text: str | None, tools: Sequence[Any] | None) -> bool:
        """Whether `text` (this prompt's output) already presents the tools to the model."""
        if self.includes_tools is not None:
            return self.includes_tools and bool(text)
        names = [n for n in tool_names(tools) if n]
        return bool(text) and bool(names) and all(n in text for n in names)


PROMPTS: Registry[PromptSpec] = Registry("system prompt")


def register_prompt(spec: PromptSpec) -> PromptSpec:
    """Add a prompt to the registry under `spec.name`; a duplicate name is an error."""
    return PROMPTS.register(spec.name)(spec)


def split_system_tools(system_text: str) -> tuple[str | None, list[dict[str, Any]]]:
    """Separate a hermes system turn into (its text without the tools block, the tools).

    The removed part runs from a `# Tools` heading before `<tools>` (else from `<tools>`) to the end
    of the call-format example `<tool_call>…</tool_call>` that closely follows `</tools>` (else to
    `</tools>`), so a chat template can render the tools in its own style. Raises ValueError when
    the `<tools>` block is missing or malformed.
    """
    tools = hermes.tools_from_system(system_text)
    s = system_text.find(hermes.TOOLS_OPEN)
    e = system_text.rfind(hermes.TOOLS_CLOSE) + len(hermes.TOOLS_CLOSE)
    head = system_text.rfind("# Tools", 0, s)
    start = head if head >= 0 else s
    end = e
    # The example block sits on its own lines; inline mentions of the tags are prose.
    ex_open = system_text.find(hermes.CALL_OPEN + "\n", e)
    if 0 <= ex_open - e <= 400:
        ex_close = system_text.find(hermes.CALL_CLOSE, ex_open)
        if ex_close >= 0:
            end = ex_close + len(hermes.CALL_CLOSE)
    before, after = system_text[:start].strip(), system_text[end:].strip()
    base = "\n\n".join(p for p in (before, after) if p)
    return (base or None), tools


def _dataset_without_tools(tools: Sequence[Any], dataset_prompt: str | None) -> str | None:
    if not dataset_prompt or "<tools>" not in dataset_prompt:
        return dataset_prompt or None
    try:
        return split_system_tools(dataset_prompt)[0]
    except ValueError:
        return dataset_prompt  # a malformed block stays as written rather than losing the prompt


def _bfcl_default(tools: Sequence[Any], dataset_prompt: str | None, copies: int = 1) -> str:
    docs = []
    for t in tools:
        doc = dict(unwrap_tool(t))
        doc["description"] = str(doc.get("description", "")) + BFCL_PYTHON_HINT
        docs.append(doc)
    # Quirks kept on purpose: the list is inserted with Python's str() (not JSON) although the text
    # says "JSON format", and a row's own system prompt is appended after a blank line.
    # `copies` > 1 repeats the instructions, not the functions: the paper's Table 6 "copying default".
    text = BFCL_SYSTEM_PROMPT_WITHOUT_FUNC_DOC * (copies - 1) + BFCL_SYSTEM_PROMPT.format(functions=docs)
    return text + "\n\n" + dataset_prompt if dataset_prompt else text


register_prompt(PromptSpec("bfcl_default", _bfcl_default, True, "BFCL prompting-mode prompt, exact text"))
register_prompt(PromptSpec("bfcl_default_copied", lambda tools, ds: _bfcl_default(tools, ds, copies=2), True,
                           "BFCL's instructions twice, functions once (efficiency paper, Table 6)"))
register_prompt(PromptSpec("stronger", lambda tools, ds: stronger_prompt(tools), True,
                           "efficiency paper's stronger prompt (Figure 10): four notes + tools"))
register_prompt(PromptSpec("stronger_notes_1_2", lambda tools, ds: stronger_prompt(tools, notes=(1, 2)), True,
                           "the stronger prompt with notes 1 and 2 only (efficiency paper, Table 6)"))


def _acebench_default(tools: Sequence[Any], dataset_prompt: str | None) -> str:
    # An ACEBench row already carries ACEBench's prompt for its category (its time or profile filled
    # in, which the tools alone cannot give); any other row gets ACEBench's normal-data prompt.
    if is_acebench_prompt(dataset_prompt):
        return dataset_prompt  # type: ignore[return-value]
    return acebench_system_prompt("normal", [unwrap_tool(t) for t in tools])


register_prompt(PromptSpec("acebench_default", _acebench_default, True,
                           "ACEBench's default prompt: an ACEBench row's own, else ACEBench's normal-data prompt over the tools"))
register_prompt(PromptSpec("none", lambda tools, ds: None, False, "no system prompt"))
register_prompt(PromptSpec("dataset", lambda tools, ds: ds or None, None, "the row's own system prompt"))
register_prompt(
    PromptSpec(
        "dataset_template", _dataset_without_tools, False,
        "the row's own system text without its tools block; the chat template renders the tools",
    )
)


def _file_spec(path: Path) -> PromptSpec:
    template = path.read_text(encoding="utf-8")
    # `{tools}` in the file is replaced by the tools block; plain replace so other braces are literal.
    has_slot = "{tools}" in template
    return PromptSpec(
        str(path),
        lambda tools, ds: template.replace("{tools}", tools_block(tools)) if has_slot else template,
        True if has_slot else None,
        "user file",
    )


def resolve_prompt(name_or_path: str | PromptSpec) -> PromptSpec:
    """A registered prompt by name, a PromptSpec as is, or a text file (optional `{tools}` slot)."""
    if isinstance(name_or_path, PromptSpec):
        return name_or_path
    if name_or_path in PROMPTS:
        return PROMPTS[name_or_path]
    path = Path(name_or_path)
    if path.is_file():
        return _file_spec(path)
    raise KeyError(f"unknown system prompt {name_or_path!r}: not one of {sorted(PROMPTS)} and not a file")


def get_system_prompt(
    name_or_path: str | PromptSpec, tools: Sequence[Any] | None, *, dataset_prompt: str | None = None
) -> str | None:
    """The system prompt text for these tools (None = no system message)."""
    return resolve_prompt(name_or_path).build(list(tools or ()), dataset_prompt)
