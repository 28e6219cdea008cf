"""YAML read without the "billion laughs" hang: aliases are bounded before anything expands them.

PyYAML composes an alias as a second reference to the anchored node, so parsing stays linear in the
text; it is whoever walks the result afterwards (Hydra's OmegaConf copy, pydantic, a diff) that
expands every reference, exponentially in a chain of anchors. `load_yaml` composes the node graph,
counts the nodes it holds once every alias is expanded (without expanding them), and refuses a
document over `MAX_YAML_NODES` or one that contains itself, before constructing any Python object.
"""

from __future__ import annotations

from typing import Any

import yaml

# A resolved spec has a few hundred nodes and a sweep file fewer; 100,000 leaves room for any
# hand-written file while a 400-byte alias bomb (10**9 nodes) is refused in microseconds.
MAX_YAML_NODES = 100_000
# libyaml's parser where PyYAML was built with it: ~5x faster, and it refuses nesting deeper than 1,000
# levels with a YAMLError where the pure-Python composer would recurse into a RecursionError.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class YamlTooLarge(yaml.MarkedYAMLError):
    """A document that expands beyond the node cap through its aliases, or that refers to itself.

    A `yaml.YAMLError`, so every reader that already reports invalid YAML reports this too;
    `problem` is the one-line reason and `problem_mark` where in the text it starts.
    """

    def __str__(self) -> str:
        at = f" (line {self.problem_mark.line + 1})" if self.problem_mark is not None else ""
        return f"{self.problem}{at}"  # one line: PyYAML's own rendering quotes the text over several


def load_yaml(text: str, max_nodes: int = MAX_YAML_NODES) -> Any:
    """`yaml.safe_load(text)`, refusing a document of more than `max_nodes` nodes once aliases are
    expanded (`YamlTooLarge`); other errors are PyYAML's own."""
    loader = _LOADER(text)
    try:
        root = loader.get_single_node()
        if root is None:
            return None
        _check_expanded_size(root, max_nodes)
        return loader.construct_document(root)
    finally:
        loader.dispose()


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [item for pair in node.value for item in pair]
    return []


def _check_expanded_size(root: yaml.Node, max_nodes: int) -> None:
    """Expanded node counts, memoised per node (aliases share nodes), by an iterative depth-first
    walk: a stack entry (node, True) is a node whose children are done, so those entries are
    exactly the current path and a child found on it is a cycle."""
    sizes: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if children_done:
            on_path.discard(key)
            size = 1 + sum(sizes[id(child)] for child in _children(node))
            if size > max_nodes:
                raise YamlTooLarge(
                    problem=f"holds more than {max_nodes} YAML nodes once its aliases are expanded (an alias bomb?); refused before expanding them",
                    problem_mark=node.start_mark,
                )
            sizes[key] = size
            continue
        if key in sizes:
            continue
        if key in on_path:
            raise YamlTooLarge(problem="contains itself through an alias (a recursive YAML document)", problem_mark=node.start_mark)
        on_path.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node) if id(child) not in sizes)
