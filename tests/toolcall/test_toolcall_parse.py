"""Parsers: hermes blocks (docs/method.md#format-check minus allowed tools), pythonic calls, thinking removal, caps."""

from __future__ import annotations

import json
import os
import re

import pytest

from slca.toolcall import Block, ParseResult, ToolCall, parse_hermes, parse_pythonic, strip_thinking
from tests.reference import SAMPLES as REFERENCE_SAMPLES
from tests.scaling import assert_linear

SAMPLES = REFERENCE_SAMPLES


def tc(name, **args):
    return ToolCall(name, args)


# ----------------------------------------------------------------------------- strip_thinking

REF_THINK = re.compile(r"<think>.*?</think>|<thinking>.*?</thinking>", re.DOTALL)


@pytest.mark.parametrize(
    "text",
    [
        "a<think>x</think>b",
        "<think>\nmulti\nline\n</think>answer",
        "<thinking>t</thinking><think>u</think>v",
        "<think>unclosed answer",
        "<think>a<think>b</think>c</think>d",
        "<thinking>x</think>y</thinking>z",
        "</think>stray<think>",
        "no tags at all",
    ],
)
def test_strip_thinking_matches_reference_regex(text):
    assert strip_thinking(text) == REF_THINK.sub("", text)


def test_strip_thinking_random_against_regex():
    import random

    rng = random.Random(7)
    pieces = ["<think>", "</think>", "<thinking>", "</thinking>", "a", "\n", "<tool_call>"]
    for _ in range(3000):
        s = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 14)))
        assert strip_thinking(s) == REF_THINK.sub("", s), s


# ----------------------------------------------------------------------------- hermes


def test_single_call_dict():
    r = parse_hermes('<tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call>')
    assert r.calls == [tc("f", a=1)]
    assert (r.n_open, r.n_close, r.n_valid, r.denom, r.first_error, r.error) == (1, 1, 1, 1, None, None)
    assert r.blocks[0].raw == '{"name": "f", "arguments": {"a": 1}}'


def test_parallel_list_block_is_one_step():
    text = '<tool_call>[{"name": "a", "arguments": {"x": 1}}, {"name": "b", "arguments": {}}]</tool_call>'
    r = parse_hermes(text)
    assert len(r.blocks) == 1
    assert r.calls_by_block == [(tc("a", x=1), tc("b"))]


def test_blocks_of_one_turn_share_a_step_and_each_tool_response_starts_the_next():
    call = '<tool_call>{"name": "f"}</tool_call>'
    text = call + "\n" + call + "<tool_response>r</tool_response><tool_response>s</tool_response>" + call + "<tool_response>t"
    r = parse_hermes(text + "</tool_response>" + call)
    assert [b.step for b in r.blocks] == [0, 0, 2, 3]


def test_multiple_blocks_and_invalid_skipped():
    text = (
        '<tool_call>{"name": "a"}</tool_call> text '
        "<tool_call>not json</tool_call>"
        '<tool_call>[{"name": "b"}, {"name": "c", "parameters": {"y": 2}}]</tool_call>'
    )
    r = parse_hermes(text)
    assert [b.valid for b in r.blocks] == [True, False, True]
    assert r.calls == [tc("a"), tc("b"), tc("c", y=2)]
    assert r.calls_by_block == [(tc("a"),), (tc("b"), tc("c", y=2))]
    assert r.n_valid == 2 and r.denom == 3 and r.first_error == "json_error"


def test_arguments_vs_parameters_first_truthy():
    cases = {
        '{"name": "f", "parameters": {"p": 1}}': {"p": 1},
        '{"name": "f", "arguments": {}, "parameters": {"p": 1}}': {"p": 1},
        '{"name": "f", "arguments": {"a": 1}, "parameters": {"p": 1}}': {"a": 1},
        '{"name": "f", "arguments": null}': {},
        '{"name": "f", "arguments": ""}': {},
        '{"name": "f"}': {},
        '{"name": "f", "arguments": "{\\"s\\": [1, 2]}"}': {"s": [1, 2]},
    }
    for body, expected in cases.items():
        r = parse_hermes(f"<tool_call>{body}</tool_call>")
        assert r.calls == [ToolCall("f", expected)], body


@pytest.mark.parametrize(
    "body,kind",
    [
        ("", "empty"),
        ("   \n ", "empty"),
        ("{bad json", "json_error"),
        ('"just a string"', "not_call"),
        ("42", "not_call"),
        ('[{"name": "a"}, 3]', "not_call"),
        ('{"arguments": {}}', "missing_name"),
        ('{"name": ""}', "missing_name"),
        ('{"name": 7}', "missing_name"),
        ('[{"name": "a"}, {"nam": "b"}]', "missing_name"),
        ('{"name": "a", "arguments": [1, 2]}', "bad_arguments"),
        ('{"name": "a", "arguments": 5}', "bad_arguments"),
        ('{"name": "a", "arguments": "not json"}', "bad_arguments"),
        ('{"name": "a", "arguments": "[1]"}', "bad_arguments"),
        ('[{"name": "a"}, {"name": "b", "parameters": "x"}]', "bad_arguments"),
    ],
)
def test_invalid_block_kinds_invalidate_whole_block(body, kind):
    r = parse_hermes(f"<tool_call>{body}</tool_call>")
    assert r.blocks == (Block(body.strip(), None, kind),)
    assert r.calls == [] and r.n_valid == 0 and r.denom == 1 and r.first_error == kind


def test_string_arguments_switch():
    text = '<tool_call>{"name": "f", "arguments": "{\\"a\\": 1}"}</tool_call>'
    assert parse_hermes(text).calls == [tc("f", a=1)]
    assert parse_hermes(text, string_arguments=False).first_error == "bad_arguments"


def test_error_kinds_are_listed():
    from slca.toolcall.parse import ERROR_KINDS

    texts = ["<tool_call></tool_call>", "<tool_call>{</tool_call>", "<tool_call>1</tool_call>", "<tool_call>{}</tool_call>"]
    kinds = {parse_hermes(t).first_error for t in texts} | {parse_pythonic(t).first_error for t in ["f(1)", "f()()", "1 +"]}
    assert kinds <= set(ERROR_KINDS) and len(kinds) == 7


def test_empty_list_block_is_valid_with_no_calls():
    r = parse_hermes("<tool_call>[]</tool_call>")
    assert r.n_valid == 1 and r.calls == [] and r.calls_by_block == [()]


def test_think_stripped_before_counting():
    text = '<think>maybe <tool_call>{"name": "x"}</tool_call></think><tool_call>{"name": "y"}</tool_call>'
    r = parse_hermes(text)
    assert (r.n_open, r.n_close) == (1, 1) and r.calls == [tc("y")]
    r2 = parse_hermes('<thinking><tool_call>{"name": "x"}</tool_call></thinking>no call')
    assert (r2.n_open, r2.n_close, r2.blocks) == (0, 0, ())


def test_unbalanced_tags_counts_and_blocks():
    r = parse_hermes('<tool_call>{"name": "a"}</tool_call><tool_call>{"name": "b"}')
    assert (r.n_open, r.n_close, r.denom, r.n_valid) == (2, 1, 2, 1)
    r = parse_hermes('{"name": "a"}</tool_call></tool_call>')
    assert (r.n_open, r.n_close, r.denom, r.n_valid, r.blocks) == (0, 2, 2, 0, ())
    # An inner open tag belongs to the first block's text (non-greedy open…first close).
    r = parse_hermes('<tool_call><tool_call>{"name": "a"}</tool_call>')
    assert (r.n_open, r.n_close) == (2, 1)
    assert r.blocks[0].error == "json_error"


def test_no_tool_call_at_all():
    r = parse_hermes("Just an answer.")
    assert r == ParseResult((), 0, 0, None) and r.denom == 0 and r.first_error is None


def test_too_large_and_too_deep_are_error_kinds():
    r = parse_hermes("x" * 101, max_chars=100)
    assert r.error == "too_large" and r.blocks == () and r.calls == []
    deep = '{"name": "f", "arguments": {"a": ' + "[" * 40 + "]" * 40 + "}}"
    assert parse_hermes(f"<tool_call>{deep}</tool_call>").first_error == "too_deep"
    ok = '{"name": "f", "arguments": {"a": ' + "[" * 10 + "]" * 10 + "}}"
    assert parse_hermes(f"<tool_call>{ok}</tool_call>").n_valid == 1
    # Brackets inside strings do not count towards depth.
    in_str = json.dumps({"name": "f", "arguments": {"re": "[" * 100 + "{" * 100}})
    assert parse_hermes(f"<tool_call>{in_str}</tool_call>").n_valid == 1
    # A double-encoded deep arguments string is guarded as well.
    enc = json.dumps({"name": "f", "arguments": "{\"a\": " + "[" * 50 + "]" * 50 + "}"})
    assert parse_hermes(f"<tool_call>{enc}</tool_call>").first_error == "too_deep"


def test_very_deep_nesting_never_raises():
    for body in ["[" * 100_000, "[" * 50_000 + "]" * 50_000, '{"a":' * 30_000]:
        r = parse_hermes(f"<tool_call>{body}</tool_call>")
        assert r.n_valid == 0 and r.first_error in ("too_deep", "json_error")


@pytest.mark.parametrize("text", [
    lambda m: "<tool_call>" * m, lambda m: "<think>" * m, lambda m: "<thinking>" * m + "</think>", lambda m: "<tool_call>" + "a" * (10 * m),
], ids=["open-calls", "open-thinks", "open-thinkings", "one-long-call"])
def test_pathological_inputs_are_parsed_in_linear_time(text):
    assert_linear(lambda m: parse_hermes(text(m)), 2_500)


def test_non_string_input_is_an_error_kind():
    assert parse_hermes(None).error == "not_text"  # type: ignore[arg-type]
    assert parse_pythonic(b"[f()]").error == "not_text"  # type: ignore[arg-type]


def test_toolcall_key_is_canonical():
    assert ToolCall("f", {"a": 1, "b": 2}).key() == ToolCall("f", {"b": 2, "a": 1}).key()
    assert ToolCall("f", {"a": 1}).key() != ToolCall("f", {"a": "1"}).key()


def test_sample_rl_rows_assistant_calls_parse():
    """Assistant tool-call turns in the reference RL preview all parse as valid hermes blocks."""
    path = SAMPLES / "toucan_toolcall_rl.preview.jsonl"
    n_blocks = 0
    for line in path.read_text().splitlines():
        for msg in json.loads(line)["prompt"]:
            if msg["role"] == "assistant" and "<tool_call>" in msg["content"]:
                r = parse_hermes(msg["content"])
                assert r.error is None and r.n_valid == r.denom == len(r.blocks) >= 1
                n_blocks += len(r.blocks)
    assert n_blocks > 0


# ----------------------------------------------------------------------------- pythonic


def test_pythonic_list_dotted_and_literals():
    r = parse_pythonic("[f(a=1, b='x'), mod.sub.g(c=[1, -2.5, {'k': None}], d=(1, 2), e=True)]")
    assert r.calls == [tc("f", a=1, b="x"), tc("mod.sub.g", c=[1, -2.5, {"k": None}], d=[1, 2], e=True)]
    assert (r.n_open, r.n_close, r.n_valid) == (1, 1, 1) and len(r.calls_by_block) == 1


def test_pythonic_bare_call_thinking_and_fence():
    assert parse_pythonic("  f(x=1)  ").calls == [tc("f", x=1)]
    assert parse_pythonic("<think>hmm [g()]</think>[h(y='z')]").calls == [tc("h", y="z")]
    assert parse_pythonic("```python\n[f(a=1)]\n```").calls == [tc("f", a=1)]
    assert parse_pythonic("[f()]").calls == [tc("f")]


def test_pythonic_no_call():
    for text in ["", "   ", "[]", "<think>x</think>"]:
        r = parse_pythonic(text)
        assert (r.blocks, r.n_open, r.n_close, r.error) == ((), 0, 0, None)


@pytest.mark.parametrize(
    "text,kind",
    [
        ("f(1)", "positional_args"),
        ("[f(a=1), g(2, b=3)]", "positional_args"),
        ("f(**kw)", "bad_arguments"),
        ("f(a=1, a=2)", "bad_arguments"),
        ("f(a=x)", "bad_arguments"),
        ("f(a=g())", "bad_arguments"),
        ("f(a=1+2)", "bad_arguments"),
        ("f(a={1, 2})", "bad_arguments"),
        ("f(a=b'x')", "bad_arguments"),
        ("f(a={**d})", "bad_arguments"),
        ("f(a=[i for i in y])", "bad_arguments"),
        ("f(a=lambda: 1)", "bad_arguments"),
        ("[1, 2]", "not_call"),
        ("[f(), 'x']", "not_call"),
        ("f()()", "bad_name"),
        ("x[0](a=1)", "bad_name"),
        ("The answer is 42.", "syntax_error"),
        ("[f(a=1)", "syntax_error"),
    ],
)
def test_pythonic_rejections(text, kind):
    r = parse_pythonic(text)
    assert r.n_valid == 0 and r.first_error == kind and r.calls == []


def test_pythonic_never_executes_payload(tmp_path):
    marker = tmp_path / "pwned"
    payloads = [
        f"[__import__('os').system('touch {marker}')]",
        f"[f(a=__import__('os').system('touch {marker}'))]",
        f"[f(a=open('{marker}', 'w').write('x'))]",
        f"__import__('pathlib').Path('{marker}').touch()",
        f"[os.system(cmd='touch {marker}')]",
    ]
    for p in payloads:
        r = parse_pythonic(p)
        assert not marker.exists(), p
        assert all(c.name != "__import__" for c in r.calls)
    # The dotted form parses as a plain (inert) call description; nothing ran.
    assert parse_pythonic(f"[os.system(cmd='touch {marker}')]").calls == [tc("os.system", cmd=f"touch {marker}")]
    assert not os.path.exists(marker)


def test_pythonic_caps():
    assert parse_pythonic("f()" + " " * 200, max_chars=100).error == "too_large"
    deep = "f(a=" + "[" * 40 + "]" * 40 + ")"
    assert parse_pythonic(deep).first_error == "too_deep"
    ok = "f(a=" + "[" * 5 + "]" * 5 + ")"
    assert parse_pythonic(ok).calls == [tc("f", a=[[[[[]]]]])]
    assert parse_pythonic("f(a='" + "(" * 100 + "')").n_valid == 1
    for text in ["-" * 100_000 + "1", "1+" * 60_000 + "1", "a." * 60_000 + "b()", "not " * 40_000 + "x"]:
        r = parse_pythonic(text)
        assert r.n_valid == 0 and r.first_error is not None
