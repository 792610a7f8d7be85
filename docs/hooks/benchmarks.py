"""MkDocs hook: the latest committed benchmark figures, read from `bench/results/*.json` when the site is
built, so the page shows what the benchmarks last wrote."""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PLACEHOLDER = "<!-- benchmark-figures -->"
SKIPPED = {"machine", "python", "cpus", "note"}


def _value(value) -> str:
    if isinstance(value, float):
        return f"{value:,.4g}"
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)


def benchmark_figures() -> str:
    """One table per results file: its scalar figures, then its `summary` when it has one."""
    out = []
    for path in sorted((ROOT / "bench" / "results").glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            continue
        figures = {
            **{k: v for k, v in data.items() if not isinstance(v, (dict, list)) and k not in SKIPPED},
            **{f"summary.{k}": v for k, v in (data.get("summary") or {}).items() if not isinstance(v, (dict, list))},
        }
        if not figures:
            continue
        out += [f"### `{path.name}`", "", "| figure | value |", "|---|---|"]
        out += [f"| `{k}` | {_value(v)} |".replace("\n", " ") for k, v in figures.items()]
        out.append("")
    return "\n".join(out)


def on_page_markdown(markdown: str, page, config, files) -> str:
    if PLACEHOLDER in markdown:
        return markdown.replace(PLACEHOLDER, benchmark_figures())
    return markdown
