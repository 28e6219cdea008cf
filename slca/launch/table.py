"""Plain-text tables sized to the terminal, for `slca status` and `slca runs`.

Cells longer than their column's cap are cut with "…" (paths keep their end, where the file name
is); when the table is still wider than the terminal, the columns marked droppable go first, most
droppable first, and the caller names them (`--json` has every field).
"""

from __future__ import annotations

from dataclasses import dataclass

GAP = "  "


@dataclass(frozen=True)
class Column:
    """One column: its header, the widest a cell may be, whether a cut keeps the cell's end, and
    when it is dropped to fit (0: never; higher numbers go first)."""

    name: str
    cap: int = 40
    keep_end: bool = False
    drop: int = 0


def cut(text: str, width: int, keep_end: bool = False) -> str:
    """`text` in at most `width` characters, "…" marking what was cut."""
    if len(text) <= width:
        return text
    if width <= 1:
        return "…"[:width]
    return "…" + text[-(width - 1):] if keep_end else text[:width - 1] + "…"


def render(columns: list[Column], rows: list[list[str]], width: int) -> tuple[str, list[str]]:
    """(the table's lines joined, the names of the columns left out to fit `width`)."""
    keep = list(range(len(columns)))
    cells = [[cut(row[i], columns[i].cap, columns[i].keep_end) for i in range(len(columns))] for row in rows]
    widths = [max([len(columns[i].name), *(len(r[i]) for r in cells)]) for i in range(len(columns))]

    def total() -> int:
        return sum(widths[i] for i in keep) + len(GAP) * (len(keep) - 1)

    dropped = []
    for i in sorted((i for i, c in enumerate(columns) if c.drop), key=lambda i: -columns[i].drop):
        if total() <= width:
            break
        keep.remove(i)
        dropped.append(columns[i].name)
    # Still too wide: the widest kept column gives way, down to its header's width (or 8).
    while total() > width:
        widest = max(keep, key=lambda i: widths[i] - max(len(columns[i].name), 8))
        floor = max(len(columns[widest].name), 8)
        if widths[widest] <= floor:
            break
        widths[widest] = max(floor, widths[widest] - (total() - width))
    lines = [GAP.join(columns[i].name.ljust(widths[i]) for i in keep).rstrip()]
    for row in cells:
        lines.append(GAP.join(cut(row[i], widths[i], columns[i].keep_end).ljust(widths[i]) for i in keep).rstrip())
    return "\n".join(lines), dropped
