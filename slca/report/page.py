"""The report's HTML: one static page, inline CSS, no script, every text escaped."""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from html import escape
from pathlib import Path

from slca.report.tables import Table

GENERATOR = "slca report"  # marks a directory as a report, so a rebuild may replace it

STYLE = """
body { font-family: "DejaVu Sans", Helvetica, Arial, sans-serif; margin: 0 auto; max-width: 1400px;
       padding: 0 24px 48px; color: #222; line-height: 1.45; }
header { border-bottom: 2px solid #4c72b0; margin-bottom: 12px; }
h1 { font-size: 1.6em; margin: 18px 0 4px; }
h2 { font-size: 1.25em; margin-top: 32px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
h3 { font-size: 1em; margin: 18px 0 6px; }
.meta { color: #666; font-size: 0.9em; margin: 0 0 10px; }
nav { font-size: 0.9em; margin: 8px 0; }
nav a { margin-right: 14px; color: #4c72b0; text-decoration: none; }
.caption { max-width: 980px; }
img.plot { max-width: 100%; height: auto; display: block; border: 1px solid #eee; }
.nodata { background: #fff6e0; border-left: 4px solid #e0a800; padding: 6px 10px; max-width: 980px; }
.missing { color: #777; font-size: 0.85em; }
table { border-collapse: collapse; font-size: 0.85em; margin: 6px 0 14px; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f3f5f9; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.scroll { overflow-x: auto; }
"""


@dataclass
class PageSection:
    anchor: str
    title: str
    caption: str
    image: Path | None = None  # relative to the page
    alt: str = ""
    nodata: str = ""
    missing: list[str] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)


def png_size(path: Path) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk, so the page reserves the space before loading."""
    with open(path, "rb") as fh:
        head = fh.read(24)
    return struct.unpack(">II", head[16:24])


def render_table(table: Table) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in table.header)
    body = "".join(
        "<tr>" + "".join(f'<td class="num">{escape(c)}</td>' if _numeric(c) else f"<td>{escape(c)}</td>" for c in row) + "</tr>"
        for row in table.rows
    )
    note = f'<p class="missing">{escape(table.note)}</p>' if table.note else ""
    return f'<h3>{escape(table.title)}</h3><div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>{note}'


def _numeric(cell: str) -> bool:
    first = cell.split(" ", 1)[0].lstrip("+-−")
    return first.replace(".", "", 1).isdigit() or first == "n/a"


def render_page(title: str, meta: str, sections: list[PageSection], out_dir: Path) -> str:
    nav = "".join(f'<a href="#{escape(s.anchor)}">{escape(s.title)}</a>' for s in sections)
    parts = []
    for s in sections:
        body = [f'<section id="{escape(s.anchor)}"><h2>{escape(s.title)}</h2>']
        if s.caption:
            body.append(f'<p class="caption">{escape(s.caption)}</p>')
        if s.image is not None:
            width, height = png_size(out_dir / s.image)
            body.append(
                f'<img class="plot" src="{escape(s.image.as_posix())}" alt="{escape(s.alt or s.title)}" width="{width}" height="{height}">'
            )
        if s.nodata:
            body.append(f'<p class="nodata">{escape(s.nodata)}</p>')
        if s.missing:
            body.append(f'<p class="missing">Not logged by any run: {escape("; ".join(s.missing))}.</p>')
        body += [render_table(t) for t in s.tables]
        body.append("</section>")
        parts.append("".join(body))
    return (
        "<!doctype html>\n"
        f'<html lang="en"><head><meta charset="utf-8"><meta name="generator" content="{GENERATOR}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<link rel="icon" href="data:,">'
        f"<title>{escape(title)}</title><style>{STYLE}</style></head>\n"
        f'<body><header><h1>{escape(title)}</h1><p class="meta">{escape(meta)}</p><nav>{nav}</nav></header>\n'
        + "\n".join(parts)
        + "\n</body></html>\n"
    )
