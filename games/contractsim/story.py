"""Person-facing ContractSim output: the week-by-week story of a run and the metrics table."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from contractlang.formatter import money
from contractlang.ir import ContractSimIR
from games.contractsim.run import RunRecord


def story(run: RunRecord, ir: ContractSimIR) -> str:
    s = ir.setting_info
    m = s.multiplier
    lines = [f'"{ir.name}" in environment {run.env}: {s.customer_title} ({run.customer}) vs '
             f"{s.supplier_title} ({run.supplier}), seed {run.seed}"]
    for e in run.log:
        w = e.get("week")
        if e["type"] == "payment":
            lines.append(f"week {w:>2}: pays {money(e['amount'])}")
        elif e["type"] == "week_end" and "due" in e:
            lines[-1] += f" (due {money(e['due'])}{'' if e['compliant'] else ', BREACH'})"
        elif e["type"] == "shocks":
            lines.append(f"week {w:>2}: spoilage {e['spoiled']}, input prices {[money(p * m) for p in e['prices']]}")
        elif e["type"] == "order":
            lines.append(f"         orders {e['order']} for {money(e['cost'])}, receives {e['received']}, "
                         f"inventory {e['inventory']}")
        elif e["type"] == "week_end" and "required" in e:
            got = [x["qty"] for x in run.log if x["type"] == "delivery" and x["week"] == w]
            lines.append(f"         delivers {got} against {e['required']} required"
                         f"{'' if e['compliant'] else ' — BREACH'}")
    lines.append(f"utilities: {s.customer_title} {money(run.u_customer * m)}, {s.supplier_title} "
                 f"{money(run.u_supplier * m)}")
    return "\n".join(lines)


def print_metrics(summaries, console: Console | None = None) -> None:
    console = console or Console(width=170)
    table = Table(title="ContractSim performance, base units (mean ± SD; micro, week-weighted, in brackets)")
    for col in ("role", "runs", "Utility", "Compl. utility", "Regret", "Compl. regret", "Compliance", "Conditional",
                "Exploited", "TFT", "Defection", "Unilateral", "Reciprocal"):
        table.add_column(col)
    for s in summaries:
        def pct(stat, micro=None):
            text = stat.text(100)
            return text if micro is None or micro.mean is None else f"{text} [{micro.text(100)}]"

        table.add_row(s.role, str(s.runs), s.utility.text(), s.compliant_utility.text(),
                      s.regret.text() if s.regret else "–",
                      s.compliant_regret.text() if s.compliant_regret else "–", pct(s.compliance, s.compliance_micro),
                      pct(s.conditional, s.conditional_micro), pct(s.exploited, s.exploited_micro),
                      pct(s.tft, s.tft_micro), s.defection.text(100), s.unilateral.text(100), s.reciprocal.text(100))
    console.print(table)
