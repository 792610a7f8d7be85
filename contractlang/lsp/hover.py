"""Hover text: what a product, a week, a clause or a CT-Bench tile means in the contract under the cursor."""

from __future__ import annotations

from contractlang import ast
from contractlang.formatter import money
from contractlang.ir import CheckedContract, ContractSimIR, CTBenchIR
from contractlang.lsp.analysis import Analysis, nodes_at
from contractlang.lsp.text import Position, Range, span_range
from contractlang.render.prose import (
    CLAUSE_LABELS,
    VERBS,
    clause_sentences,
    coverage_sentence,
    points_sentence,
    quantities,
)
from contractlang.vocab import PAYMENT_WEEKS, PRODUCTION_WEEKS, SETTING_BY_GAME_ID, SETTINGS, Frozen

CONTINGENCY_KEYS = {
    ast.Substitution: "substitution",
    ast.PaymentDeduction: "payment_deduction",
    ast.Rollover: "rollover",
    ast.OnBreach: "on_breach",
}
NOT_CHECKED = "_The contract has errors; its terms show here once it checks._"


class Hover(Frozen):
    markdown: str
    range: Range


EXPECTATIONS = {
    ast.ExpectBreach: "the first breach of that party: its week and, after `by`, the clause it broke",
    ast.ExpectNoBreach: "no breach (by anyone, or by the party named)",
    ast.ExpectOwed: "what the party still owes of its last closed week: unpaid money, or units short",
    ast.ExpectDue: "what fell due in the week: the payment after deduction, or the units required",
    ast.ExpectCarried: "the deficits rollover carries out of the week",
    ast.ExpectTerminated: "whether `on breach: terminate` ended the engagement, and in which week",
    ast.ExpectChip: "a chip transfer a cover entry made",
    ast.ExpectForfeit: "a forfeit: the giver lacked the chip an entry needed",
    ast.ExpectPoints: "points an `on goal` entry moved at the game's end",
    ast.ExpectNothing: "no enforcement at all",
    ast.ExpectUtility: (
        "the party's realised utility over the whole game, in the setting's dollars, compared exactly (ContractSim "
        "paper, eqs. 31–33): the Customer's budget plus the value delivered less its payments; the Supplier's "
        "payments less what its inputs cost. `contractlang test` plays it on the game's engine"
    ),
    ast.ExpectScore: (
        "the player's final score on the test's board after the contract's transfers ([CT-27]): 20 plus 5 per "
        "chip held on the goal, else 0; 0 after a forfeit; then the points `on goal` moves"
    ),
}

WORLD = {
    "order": "the Supplier's input order this production week, bought at the week's prices whatever arrives "
    "([CS-07]); a week with no `order` buys the inputs its delivery needs beyond the stock",
    "prices": "this production week's input prices, each one the environment's price law can draw ([CS-11]); an "
    "input left out costs the environment's lowest price",
    "receive": "what arrived of the week's order, at least the environment's low bound and at most the order "
    "([CS-11]); an input left out arrives in full",
    "spoil": "the spoilage shock at the start of the production week: the stock of each input loses the smaller "
    "of it and what it holds ([CS-06]); an input left out loses nothing",
}


PLAY_LINES = {
    ast.GivenTrade: "**trade**: an executed trade, chips handed both ways between the players ([CT-16]).",
    ast.GivenMode: "**mode**: `pfp` plays the test in Pay-for-Partner mode, where the players promise to pay for "
    "each other's tiles instead of trading chips ([CT-17]); `trade` (the default) plays it with chip trades "
    "([CT-16]).",
    ast.GivenArrangement: "**Pay-for-Partner arrangement**: the first player offers to pay for the partner's tiles "
    "of the colours and counts given, asking the partner to pay for those after `asks`, and the partner accepts "
    "([CT-17]); each covered move then asks the payer for the chip, and the payer honours it unless the test "
    "says it defects ([CT-18]).",
    ast.GivenDefect: "**defects**: the next time this player is asked to pay for a covered move of the partner's "
    "it refuses; the promise stays owed and the mover pays with its own chip if it can, else the move fails "
    "([CT-18]).",
}


def _test_hover(test: ast.ScenarioTest, pos: Position) -> Hover | None:
    """A scenario test's name, or one of its expectations: what it checks, and how to run it."""
    for e in test.expect:
        if e.span.line <= pos.line + 1 <= e.span.end_line:
            return Hover(markdown=f"**expect**: {EXPECTATIONS[type(e)]}.", range=span_range(e.span))
    for g in test.given:
        if g.span.line == pos.line + 1 and isinstance(g, ast.GivenEnv):
            text = (
                f"**env {g.env.value}**: the test is played in ContractSim environment {g.env.value} (ContractSim "
                "paper, App. A.3): its budget, capital, values and price, receipt and spoilage laws. All 11 weeks "
                "play, those not given as agreed, and the players' utilities can be expected."
            )
            return Hover(markdown=text, range=span_range(g.span))
        if g.span.line == pos.line + 1 and isinstance(g, ast.GivenBoard):
            text = (
                f"**board {g.board.value}**: the test is played on CT-Bench benchmark board {g.board.value} "
                "([CT-31]) by the game's engine: the tiles' colours, the chips dealt and spent, the players passing "
                "where the test says nothing of them, and the game played out to its end ([CT-13]); the players' "
                "scores can be expected."
            )
            return Hover(markdown=text, range=span_range(g.span))
        if g.span.line == pos.line + 1 and type(g) in PLAY_LINES:
            return Hover(markdown=PLAY_LINES[type(g)], range=span_range(g.span))
        if g.span.line == pos.line + 1 and isinstance(g, ast.GivenWeek) and g.action in WORLD:
            return Hover(markdown=f"**{g.action}**: {WORLD[g.action]}.", range=span_range(g.span))
    if test.name_span.line == pos.line + 1:
        steps = len(test.given)
        text = (
            f"**Scenario test** “{test.name}”: {steps} `given` line{'s' * (steps != 1)}, "
            f"{len(test.expect)} expectation{'s' * (len(test.expect) != 1)}; weeks it leaves out go as agreed. "
            f'Run it with the code lens, or `contractlang test FILE --name "{test.name}"`.'
        )
        return Hover(markdown=text, range=span_range(test.name_span))
    return None


def hover(analysis: Analysis, pos: Position) -> Hover | None:
    """The hover for the innermost meaningful node at `pos`, or None where there is nothing to say."""
    test = analysis.test_at(pos.line + 1)
    found = _test_hover(test, pos) if test is not None else None
    if found is not None:
        return found
    contract = analysis.contract_at(pos.line + 1)
    if contract is None:
        return None
    path = nodes_at(contract, pos)
    checked = analysis.checked(contract)
    for depth in range(len(path) - 1, 0, -1):
        node, parent = path[depth], path[depth - 1]
        text = _describe(node, parent, contract, checked, analysis)
        if text is not None:
            return Hover(markdown=text, range=span_range(node.span))
    return None


def _describe(
    node: ast.Node, parent: ast.Node, contract: ast.Contract, checked: CheckedContract | None, analysis: Analysis
) -> str | None:
    if isinstance(node, ast.Name) and not isinstance(parent, (ast.CoverEntry, ast.GoalEntry, ast.PartyEntry)):
        return _product(node.value, contract, checked)
    if isinstance(node, ast.Tile):
        return _tile(node, analysis)
    if isinstance(node, ast.IntLit) and isinstance(parent, ast.WeekSpec):
        return _weeks([node.value], checked)
    if isinstance(node, ast.WeekSpec):
        block = "deliver" if isinstance(parent, ast.DeliveryEntry) else "pay"
        weeks = (
            []
            if checked is None
            else [
                w
                for w in (PRODUCTION_WEEKS if block == "deliver" else PAYMENT_WEEKS)
                if checked.spans.get(f"{block}.{w}") == parent.span
            ]
        )
        return _weeks(weeks, checked)
    if type(node) in CONTINGENCY_KEYS:
        return _clause(CONTINGENCY_KEYS[type(node)], checked)
    if isinstance(node, (ast.CoverEntry, ast.GoalEntry)):
        return _ctbench_entry(node, parent, checked)
    return None


def _product(name: str, contract: ast.Contract, checked: CheckedContract | None) -> str | None:
    setting = SETTING_BY_GAME_ID.get(contract.game.game_id)
    idx = setting.product_index(name) if setting else None
    if idx is None:
        return None
    head = f"**{name}** ({setting.product_titles[idx]}, {setting.title})"
    if checked is None or not isinstance(checked.ir, ContractSimIR):
        return f"{head}\n\n{NOT_CHECKED}"
    ir = checked.ir
    weekly = ", ".join(f"week {w}: {ir.delivery(w)[idx]}" for w in PRODUCTION_WEEKS)
    total = sum(ir.delivery(w)[idx] for w in PRODUCTION_WEEKS)
    return f"{head}\n\nPrice {money(ir.prices[idx])} each. Deliveries: {weekly} ({total} in all)."


def _weeks(weeks: list[int], checked: CheckedContract | None) -> str | None:
    if checked is None or not isinstance(checked.ir, ContractSimIR):
        return NOT_CHECKED
    if not weeks:
        return None
    ir = checked.ir
    sentences = clause_sentences(ir)
    relevant = [k for k in sentences if weeks[0] in PRODUCTION_WEEKS or k in ("payment_deduction", "on_breach")]
    return "\n\n".join([week_due(ir, w) for w in weeks] + [f"{CLAUSE_LABELS[k]}: {sentences[k]}" for k in relevant])


def week_due(ir: ContractSimIR, week: int) -> str:
    """What falls due in `week`: its delivery or payment and the contingencies that touch it ([CS-13]–[CS-16])."""
    s = SETTINGS[ir.setting]
    c = ir.contingencies
    if week in PRODUCTION_WEEKS:
        text = (
            f"**Week {week}** (production): the {s.supplier_title} {VERBS[ir.setting]} "
            f"{quantities(s, ir.delivery(week))}"
        )
        if c.payment_deduction:
            text += f"; a shortfall lowers the week {week + 1} payment"
        if c.rollover:
            text += (
                "; nothing may remain outstanding after it"
                if week == PRODUCTION_WEEKS[-1]
                else f"; missed items may be made up in week {week + 2}"
            )
        return text + "."
    text = f"**Week {week}** (payment): the {s.customer_title} pays {money(ir.payment(week))}"
    if c.payment_deduction and week - 1 in PRODUCTION_WEEKS:
        text += f", less the contract price of anything missing from the week {week - 1} delivery"
    return text + "."


def _clause(key: str, checked: CheckedContract | None) -> str:
    if checked is None or not isinstance(checked.ir, ContractSimIR):
        return f"**{CLAUSE_LABELS[key]}**\n\n{NOT_CHECKED}"
    return f"**{CLAUSE_LABELS[key]}**: {clause_sentences(checked.ir)[key]}"


def _tile(tile: ast.Tile, analysis: Analysis) -> str:
    where = (tile.row.value, tile.col.value)
    board = analysis.board
    if board is None:
        return (
            f"Tile {where}: no board chosen; set `board` (a CT-Bench board ID 0..79) in the server's "
            "settings to see its colour."
        )
    if not all(0 <= v < len(board.colours) for v in where):
        return f"Tile {where} is off board {board.id}."
    return f"Tile {where} is **{board.colour(where)}** on board {board.id}."


def _ctbench_entry(entry, block, checked: CheckedContract | None) -> str:
    if checked is None or not isinstance(checked.ir, CTBenchIR):
        return NOT_CHECKED
    index = list(block.entries).index(entry)
    if isinstance(entry, ast.CoverEntry):
        return coverage_sentence(checked.ir.coverage[index])
    return points_sentence(checked.ir.points[index])
