"""The HTML report (``report.html``): one self-contained page (CSS inline, figures as embedded
PNGs): the run's settings, the tables, and per table its statistics, every section and its
figures.
"""

import html
from pathlib import Path

from ...analysis.statistics import CONFIDENCE, PERCENTILES
from ..columns import STAT_COLUMNS, cell, interval_text, stat_cell, statistics_note
from ..headline import TITLE, headline_grid
from ..results import TABLE_SECTIONS
from ..run_description import settings_items
from ..section import Grid, Link, Paragraph
from .base import ResultsFormat

__all__ = ["HtmlFormat"]

_CSS = """
body { font-family: sans-serif; max-width: 62em; margin: 1.5em auto; padding: 0 1em;
       color: #222; line-height: 1.35; }
h1 { font-size: 1.5em; border-bottom: 2px solid #446; padding-bottom: .2em; }
h2 { font-size: 1.2em; margin-top: 1.6em; color: #335; }
h3 { font-size: 1.05em; margin: 1.4em 0 .3em; }
table { border-collapse: collapse; margin: .4em 0 1em; font-size: .92em; }
th, td { border: 1px solid #ccd; padding: .25em .6em; }
th { background: #eef; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.settings { display: grid; grid-template-columns: repeat(auto-fit, minmax(26em, 1fr));
            gap: 0 1.5em; }
.settings th { font-weight: normal; color: #555; background: #f6f6fa; width: 45%; }
.note { color: #555; font-size: .9em; }
.test { border-top: 1px solid #ccd; margin-top: 1.5em; }
img { max-width: 100%; }
"""


def _cell(value, numeric):
    text = (
        f"<a href='{html.escape(value.href)}'>{html.escape(value.text)}</a>"
        if isinstance(value, Link)
        else html.escape(str(value))
    )
    return f"<td{' class=num' if numeric else ''}>{text}</td>"


def _block(block):
    """A section's piece (:mod:`latscope.report.section`) as HTML."""
    if isinstance(block, Paragraph):
        return f"<p>{html.escape(block.text)}</p>"
    head = f"<table class={block.name}>" if block.name else "<table>"
    out = [head + "<tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in block.header) + "</tr>"]
    out += [
        "<tr>" + "".join(_cell(value, n in block.numeric) for n, value in enumerate(row)) + "</tr>"
        for row in block.rows
    ]
    return "\n".join(out) + "</table>"


def _table(header, rows, numeric_from=1, link_first=False):
    """A table of text cells, numeric from column ``numeric_from``; ``link_first``: the
    first column links to the section of that name."""
    if link_first:
        rows = [[Link(str(row[0]), f"#{row[0]}")] + row[1:] for row in rows]
    return _block(Grid(header, rows, numeric=set(range(numeric_from, len(header)))))


class HtmlFormat(ResultsFormat):
    name = "html"
    help = "one self-contained page: settings, tables, worst samples, figures"
    report_file = "report.html"

    def text(self, document, figures=None):
        inline = figures.png if figures else {}
        title = f"latscope report: {Path(document['capture']['path']).name}"
        body = [
            f"<h1>{html.escape(title)}</h1>",
            f"<p class=note>{html.escape(document['generator'])}, results schema version "
            f"{document['version']}. Latencies in nanoseconds, measured by the appliance's "
            f"time stamps (corrected for pin latency). A sample is exact or absent: pairs "
            f"with a loss between them are discarded and counted.</p>",
            "<h2>Run, device and settings</h2><div class=settings>",
        ]
        for section, items in settings_items(document):
            rows = "".join(
                f"<tr><th>{html.escape(str(label))}</th>"
                f"<td>{html.escape('' if value is None else str(value))}</td></tr>"
                for label, value in items
            )
            body.append(f"<div><h3>{html.escape(section)}</h3><table>{rows}</table></div>")
        body.append("</div><h2>Results</h2>")
        grid = headline_grid(document)
        if grid is not None:
            body += [f"<p>Headline: the {html.escape(TITLE)}.</p>", _block(grid)]
        header = ["test"] + [t for _, t, _ in STAT_COLUMNS]
        rows = [
            [r["name"]] + [stat_cell(r, k, f) for k, _, f in STAT_COLUMNS]
            for r in document["tables"]
        ]
        body.append(
            _table(header, rows, link_first=bool(inline))
            if rows
            else "<p>No test of the suite was found in this capture.</p>"
        )
        body.append(f"<p class=note>{html.escape(statistics_note().capitalize())}.</p>")
        if figures and figures.families:
            body.append("<h2>Cumulative distributions</h2>")
            body += [
                f"<img alt='{html.escape(kind)} cdf' src='data:image/png;base64,{png}'>"
                for kind, png in figures.families.items()
            ]
        percentiles = {key for key, _, _ in PERCENTILES}
        for row in document["tables"]:
            params = row["parameters"]
            about = row["description"]
            if params:
                about += f" (test {params.get('test')}, N = {params.get('n')})"
            body.append(
                f"<section class=test id='{html.escape(row['name'])}'>"
                f"<h3>{html.escape(row['name'])}</h3><p>{html.escape(about)}</p>"
            )
            body.append(
                _table(
                    ["samples", "min (ns)", "max (ns)", "avg (ns)"],
                    [[cell(row[k], f) for k, _, f in STAT_COLUMNS[:4]]],
                    numeric_from=0,
                )
            )
            body.append(
                _table(
                    ["percentile", "value (ns)", f"{CONFIDENCE:.0%} interval (ns)", "samples"],
                    [
                        [
                            title.removesuffix(" (ns)"),
                            cell(row[key], fmt),
                            interval_text(row, key),
                            row["samples"],
                        ]
                        for key, title, fmt in STAT_COLUMNS
                        if key in percentiles
                    ],
                )
            )
            for section in TABLE_SECTIONS:
                body += [_block(block) for block in section.blocks(row)]
            for kind, png in inline.get(row["name"], {}).items():
                body.append(
                    f"<img alt='{html.escape(row['name'])} {kind}' "
                    f"src='data:image/png;base64,{png}'>"
                )
            body.append("</section>")
        return (
            f"<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
            f"<title>{html.escape(title)}</title><style>{_CSS}</style></head>\n<body>\n"
            + "\n".join(body)
            + "\n</body></html>\n"
        )
