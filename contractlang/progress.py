"""Progress of long runs (sweeps, experiments) on stderr.

On a terminal it is a live bar per phase. A run of hours is usually started in the background with stderr going
to a log, where a live bar prints nothing until the end; there it writes a plain line as jobs finish (at most
one every `LINE_EVERY` seconds, and the last) with the time elapsed and an estimate of the time left, so
`tail -f LOG` shows where the run stands.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

LINE_EVERY = 30.0
"""Seconds between progress lines in a log: a job of an experiment takes minutes, a sweep's game a second."""

Advance = Callable[..., None]
"""(phase, jobs finished, jobs in the phase[, note]): called before the phase's first job and after every one
(the job runner's progress callback too); a run of LLM games adds a note (spend, tokens, requests in flight and
their current limit)."""


def clock(seconds: float) -> str:
    """H:MM:SS, to the second."""
    return str(timedelta(seconds=round(seconds)))


def time_left(elapsed: float, finished_now: int, remaining: int) -> float | None:
    """Seconds left if the jobs still to run take as long on average as those this run finished; None before
    the first one finishes."""
    return elapsed / finished_now * remaining if finished_now else None


@contextmanager
def job_progress(
    quiet: bool, console: Console | None = None, now: Callable[[], float] = time.monotonic
) -> Iterator[Advance]:
    """Yields the callback a run calls as jobs finish; `quiet` (under --json) shows nothing. rich is imported
    here, not with the module: the job runner's worker processes import this module for `Advance` only."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = console or Console(stderr=True)
    lines = not quiet and not console.is_terminal
    phases: dict[str, tuple[int, float, int]] = {}  # phase → (bar task, when its first call came, jobs done before)
    printed: dict[str, float] = {}  # phase → when its last line was written
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[left]}"),
        console=console,
        transient=True,
        disable=quiet or lines,
    ) as bar:

        def advance(phase: str, done: int, total: int, note: str = "") -> None:
            t = now()
            if phase not in phases:
                phases[phase] = (bar.add_task(phase, total=total, completed=done, left=""), t, done)
                if lines and done and done < total:
                    console.print(
                        f"{phase}: {done} of {total} done before this run; {total - done} to run",
                        highlight=False,
                        soft_wrap=True,
                    )
            task, since, before = phases[phase]
            left = time_left(t - since, done - before, total - done)
            left_text = "" if left is None or done == total else f"about {clock(left)} left"
            left_text = ", ".join(t for t in (left_text, note) if t)
            bar.update(task, completed=done, left=left_text)
            if lines and done > before and (done == total or t - printed.get(phase, since) >= LINE_EVERY):
                printed[phase] = t
                console.print(
                    f"{phase}: {done}/{total} done, {clock(t - since)} elapsed"
                    + (f", {left_text}" if left_text else ""),
                    highlight=False,
                    soft_wrap=True,
                )

        yield advance
