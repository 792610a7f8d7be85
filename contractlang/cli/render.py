"""Terminal output of the commands for people: rich tables, aligned lines and plots."""

from __future__ import annotations

import io
import sys

from rich.console import Console
from rich.table import Table

from contractlang.files import write_atomically
from contractlang.ir import ContractIR, ContractSimIR
from contractlang.vocab import PRODUCTION_WEEKS, WEEKS


def stdout_console() -> Console:
    """Rich output for stdout: wrapped to a terminal's width, whole lines into a pipe or file (so `file:line`
    stays greppable)."""
    return Console() if sys.stdout.isatty() else Console(soft_wrap=True, width=100_000)


def _triple(v) -> str:
    return "—" if v is None else "/".join(str(x) for x in v)


def _yes(flag: bool) -> str:
    return "yes" if flag else "NO"


def print_trace(report: dict, ir: ContractIR, console: Console | None = None) -> None:
    console = console or stdout_console()
    if isinstance(ir, ContractSimIR):
        products = "/".join(ir.setting_info.products)
        table = Table(title=f'Trace of "{ir.name}" (quantities as {products})')
        for col in (
            "week",
            "party",
            "due",
            "done",
            "credited",
            "compliant",
            "prefix",
            "D",
            "memory",
            "deduction",
            "enforcement",
        ):
            table.add_column(col)
        for w in report["weeks"]:
            if w["role"] == "customer":
                due, done, credited = f"${w['due']:,}", f"${w['paid']:,}", "—"
            else:
                due, done, credited = _triple(w["required"]), _triple(w["delivered"]), _triple(w["credited"])
            compliant = "excluded" if w["excluded"] else _yes(w["compliant"])
            table.add_row(
                str(w["week"]),
                w["role"],
                due,
                done,
                credited,
                compliant,
                "ok" if w["prefix_ok"] else "broken",
                "1" if w["observed_breach"] else "0",
                _triple(w["memory_after"]),
                f"${w['deduction']:,}" if w["deduction"] else "",
                "; ".join(w["enforcement"]),
            )
        console.print(table)
        v = report["verdict"]
        if not report["complete"]:
            console.print(f"[yellow]The log stops before week 11 ({len(report['weeks'])} weeks closed).[/yellow]")
        head = (
            "No breach"
            if v["first_breach"] is None
            else f"{v['first_breach'].capitalize()} breached first, in week {v['week']}"
        )
        console.print(f"[bold]{head}[/bold]: {v['reason']}")
        return
    table = Table(title=f'Trace of "{ir.name}"')
    for col in ("line", "event", "enforcement"):
        table.add_column(col)
    for s in report["steps"]:
        e = s["event"]
        what = e["type"] + " " + " ".join(f"{k}={v}" for k, v in e.items() if k not in ("type", "holdings"))
        enf = "; ".join(a["text"] for a in s["enforcement"])  # each enforcement in its own words
        table.add_row(str(s["line"]), what, enf)
    console.print(table)
    forfeits = ", ".join(report["forfeited"]) or "none"
    console.print(
        f"[bold]Forfeits[/bold] (final score 0): {forfeits}; finished: {', '.join(report['finished']) or 'none'}"
    )


_MARK = {"proved": "[green]proved[/green] ", "refuted": "[red]refuted[/red]", "unknown": "[yellow]unknown[/yellow]"}


def print_verification(report, file: str, source: str, console: Console | None = None) -> None:
    """One line per check: status, name, message and the clause's location."""
    console = console or stdout_console()
    console.print(f'[bold]Verification of "{report.contract}"[/bold]')
    for c in report.checks:
        where = f"{file}:{c.span.line}:{c.span.column}" if c.span is not None else file
        console.print(f"  {_MARK[c.status]}  {c.name:<22} {c.message}  [dim]({where})[/dim]", highlight=False)
    counts = {s: sum(c.status == s for c in report.checks) for s in ("proved", "refuted", "unknown")}
    console.print(f"  {counts['proved']} proved, {counts['refuted']} refuted, {counts['unknown']} unknown")


def _dollars(amount: float) -> str:
    return f"{'-' if amount < 0 else ''}${abs(amount):,.2f}"


def print_solution(result, ir: ContractSimIR, cached: bool) -> None:
    """`contractlang solve`: the DP's figures for one contract in one environment (money in setting dollars).
    Plain aligned lines, so the output never wraps and reads the same in a pipe."""
    c = ir.contingencies
    mode = c.mode + (" + substitution" if c.substitution else "")
    threshold = "meets" if result.p_sat >= 0.95 - 1e-9 else "misses"
    rows = [
        ("P_sat", f"{result.p_sat:.6f}  ({threshold} the 0.95 threshold; forward check {result.p_sat_forward:.6f})"),
        (
            "U customer",
            "not computed" if result.u_customer is None else f"{_dollars(result.u_customer)}  (both players RCC)",
        ),
        (
            "U supplier",
            ("not computed" if result.u_supplier is None else _dollars(result.u_supplier))
            + f"  (DP value V_1 {_dollars(result.v_supplier)} with an RC Customer)",
        ),
        ("completeness", f"{result.completeness:.4f}"),
        ("survival S_1..S_5", "  ".join(f"{s:.4f}" for s in result.survival)),
        (
            "table",
            f"{result.states:,} states, solved in {result.seconds:.2f} s"
            + ("  (loaded from the cache)" if cached else ""),
        ),
    ]
    print(f"{result.contract} in environment {result.env} ({mode})")
    for name, value in rows:
        print(f"  {name:<18} {value}")
    if result.note:
        print(f"  note: {result.note}")


def plot_survival(result, path) -> None:
    """The survival curve S_t (ContractSim paper, App. C.5) as a PNG at `path` (`survival_figure`)."""
    fig = survival_figure(result)
    buffer = io.BytesIO()
    fig.savefig(buffer, dpi=120, format="png")
    import matplotlib.pyplot as plt

    plt.close(fig)
    write_atomically(path, buffer.getvalue())


def survival_figure(result):
    """S_t (ContractSim paper, App. C.5) against the production week it follows: S_1 at week 2 to S_5 at week 10, each held until
    the next production week and the last to the end of the game (week 11), a marker at every value; the
    legend under the axes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 3.6), layout="constrained")
    weeks = list(PRODUCTION_WEEKS)
    survival = list(result.survival)
    ax.step(weeks + [WEEKS[-1]], survival + survival[-1:], where="post", color="C0")
    ax.plot(weeks, survival, "o", color="C0", label="S_t after the production week")
    ax.axhline(0.95, linestyle=":", color="grey", label="0.95 threshold")
    ax.set_xticks(weeks)
    ax.set_xlim(weeks[0] - 0.5, WEEKS[-1] + 0.5)
    ax.set_xlabel("production week")
    ax.set_ylabel("P(no Supplier violation yet)")
    ax.set_ylim(min(0.0, min(survival)) - 0.02, 1.05)
    ax.set_title(f"{result.contract}\nenvironment {result.env}: P_sat {result.p_sat:.4f}", fontsize=10)
    fig.legend(loc="outside lower center", ncol=2, fontsize=8, frameon=False)  # under the axes, over no data
    return fig


def usage_line(usage) -> str:
    """One line of LLM usage: calls, tokens, cost and the prompt cache's tokens."""
    cost = "cost unknown for this model" if usage.cost_usd is None else f"${usage.cost_usd:.4f}"
    return (
        f"LLM: {usage.calls} call(s) ({usage.replayed} replayed, {usage.failed} failed), "
        f"{usage.input_tokens:,} input and {usage.output_tokens:,} output tokens, {cost}; prompt cache "
        f"{usage.cache_read_tokens:,} tokens read, {usage.cache_write_tokens:,} written"
    )
