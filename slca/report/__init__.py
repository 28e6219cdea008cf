"""`slca report`: a static HTML page (index.html + PNG plots) of one run directory or a sweep of them.

`runs` finds and reads run directories, `series` turns metric lines into per-step series and the
all-correct stability curves, `figures` draws the plots, `tables` the evaluation tables, `page` the
HTML, and `build` puts them together in one atomically written directory (docs/report.md).
"""

from __future__ import annotations

from slca.report.build import build_report
from slca.report.runs import ReportInputError

__all__ = ["ReportInputError", "build_report"]
