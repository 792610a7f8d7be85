"""The experiments' figures: a PNG drawn with matplotlib beside the JSON of the numbers it shows, each written
whole (`write_atomically`) and byte-reproducible, so a resumed run writes the same bytes as an uninterrupted
one."""

from __future__ import annotations

import io
from pathlib import Path

from contractlang.files import write_atomically
from contractlang.vocab import Frozen


def pyplot():
    """matplotlib's pyplot on the Agg backend: the figures are files, never windows."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_png(fig, path: Path) -> None:
    """`fig` as PNG at `path`, then closed. No 'Software' metadata: it names matplotlib's version, and the bytes
    would change with it."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", metadata={"Software": None})
    pyplot().close(fig)
    write_atomically(path, buffer.getvalue())


def write_json(path: Path, data: Frozen) -> None:
    write_atomically(path, data.model_dump_json(indent=1) + "\n")
