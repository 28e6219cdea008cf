"""System prompts as named registry entries (`bfcl_default`, `stronger`, `none`, `dataset`) or a file.

A prompt is built from the tool list and, optionally, the row's own system prompt. Each entry
declares whether its text already shows the tools, so a renderer knows whether to hand the tools
to the chat template as well.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from slca.registry import Registry

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

# The efficiency paper's (arXiv 2606.00135) Appendix A "stronger" prompt could not be retrieved;
# these four instructions are our own wording of its intent (think, exact schema use, one JSON-list
# block for parallel calls, answer from tool results / say when no tool applies).
STRONGER_INSTRUCTIONS = (
    "You are a careful assistant that solves the user's request with the functions listed below.\n"
    "\n"
    "1. Before acting, reason step by step inside <think></think> tags about what the user needs "
    "and which functions, if any, can provide it.\n"
    "2. Call only functions from the list, spelled exactly as given, and fill their parameters from "
    "the conversation according to each schema. Never invent parameter names or values; if a required "
    "value is missing, ask the user for it instead of guessing.\n"
    "3. Put every call of a step in ONE <tool_call></tool_call> block holding a JSON list, one object "
    '{"name": <function-name>, "arguments": <args-json-object>} per call; independent calls go in the '
    "same list so they run in parallel.\n"
    "4. When the tool results suffice, stop calling functions and answer the user directly, grounded in "
    "those results. If no function fits the request, say so and answer without calling any."
)


def unwrap_tool(tool: Any) -> dict[str, Any]:
    """A tool schema without the OpenAI envelope: {"type": "function", "function": {...}} → {...}."""
    if isinstance(tool, str):
        tool = json.loads(tool)
    if isinstance(tool, dict) and isinstance(tool.get("function"), dict):
        return tool["function"]
    return tool


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
    from slca.data import hermes

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


def _bfcl_default(tools: Sequence[Any], dataset_prompt: str | None) -> str:
    docs = []
    for t in tools:
        doc = dict(unwrap_tool(t))
        doc["description"] = str(doc.get("description", "")) + BFCL_PYTHON_HINT
        docs.append(doc)
    # Quirks kept on purpose: the list is inserted with Python's str() (not JSON) although the text
    # says "JSON format", and a row's own system prompt is appended after a blank line.
    text = BFCL_SYSTEM_PROMPT.format(functions=docs)
    return text + "\n\n" + dataset_prompt if dataset_prompt else text


def _stronger(tools: Sequence[Any], dataset_prompt: str | None) -> str:
    return STRONGER_INSTRUCTIONS + "\n\n" + tools_block(tools)


register_prompt(PromptSpec("bfcl_default", _bfcl_default, True, "BFCL prompting-mode prompt, exact text"))
register_prompt(PromptSpec("stronger", _stronger, True, "efficiency paper App. A style: 4 instructions + tools"))
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
