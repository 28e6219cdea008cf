"""slca reads YAML with its aliases bounded: PyYAML's own safe_load results, but a document that
expands past the node cap (a "billion laughs" alias bomb) or contains itself is refused before
anything expands it."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import yaml

from slca.safe_yaml import MAX_YAML_NODES, YamlTooLarge, load_yaml
from tests.badinput import assert_refused, run_cli


def alias_bomb(levels: int = 9, width: int = 9) -> str:
    lines = ["a0: &a0 [" + ",".join(['"lol"'] * width) + "]"]
    lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * width) + "]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


PLAIN_DOCUMENTS = [
    "",
    "3",
    "a: 1\nb: [x, y, {c: null}]\n",
    "base: &base {lr: 1.0e-6, n: 4}\nrun:\n  <<: *base\n  n: 8\nboth: [*base, *base]\n",
    "seeds: !!set {1, 2}\nwhen: 2024-01-02\nraw: !!binary aGk=\n",
    "- &x hello\n- *x\n- *x\n",
]


@pytest.mark.parametrize("text", PLAIN_DOCUMENTS)
def test_a_document_within_the_cap_loads_as_pyyaml_safe_load_reads_it(text: str) -> None:
    assert load_yaml(text) == yaml.safe_load(text)


def test_an_alias_bomb_is_refused_in_milliseconds_naming_where_it_starts() -> None:
    text = alias_bomb()
    assert len(text.encode()) < 500
    started = time.monotonic()
    with pytest.raises(YamlTooLarge) as info:
        load_yaml(text)
    assert time.monotonic() - started < 0.5
    assert f"more than {MAX_YAML_NODES} YAML nodes" in info.value.problem
    assert isinstance(info.value, yaml.YAMLError)  # readers that report invalid YAML report this too
    assert info.value.problem_mark is not None and info.value.problem_mark.line >= 1


def test_the_cap_counts_every_node_an_alias_repeats() -> None:
    # Oracle: 3 aliases of a 4-node list (the list and its 3 items) in a 2-key mapping:
    # mapping 1 + key "a" 1 + list 4 + key "b" 1 + list of 3 aliases (1 + 3 * 4) = 20 nodes.
    text = "a: &l [1, 2, 3]\nb: [*l, *l, *l]\n"
    assert load_yaml(text, max_nodes=20) == {"a": [1, 2, 3], "b": [[1, 2, 3]] * 3}
    with pytest.raises(YamlTooLarge):
        load_yaml(text, max_nodes=19)


def test_a_document_that_contains_itself_is_refused() -> None:
    with pytest.raises(YamlTooLarge, match="contains itself"):
        load_yaml("a: &a [1, *a]\n")
    with pytest.raises(YamlTooLarge, match="contains itself"):
        load_yaml("&m {self: *m}\n")


def test_a_large_document_without_aliases_is_refused_too() -> None:
    text = "[" + ",".join(["1"] * 1000) + "]"  # 1001 nodes
    assert load_yaml(text, max_nodes=1001) == [1] * 1000
    with pytest.raises(YamlTooLarge):
        load_yaml(text, max_nodes=1000)


def test_a_sweep_file_alias_bomb_is_one_line_naming_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bomb_sweep.yaml"
    path.write_text("name: bomb\nexperiment: embedded_smoke\n" + alias_bomb(), encoding="utf-8")
    result = run_cli(["sweep", path, "--dir", tmp_path / "sweep"], capsys)
    assert_refused(result, str(path), "aliases are expanded")
    assert not (tmp_path / "sweep").exists()
