"""The verbs that need the solvers, with the CLI's defaults: verify (CT-Bench rules `authors`) and solve (the
CLI's disk cache of DP tables); `load_one` for a file of one contract."""

from __future__ import annotations

from pathlib import Path

from contractlang.ir import CheckedContract


def load_one(path: str | Path) -> CheckedContract:
    """The one contract of a file, parsed and checked; `ContractError` (with diagnostics) if anything is wrong."""
    from contractlang.source import load as load_all

    contracts = load_all(path)
    if len(contracts) > 1:
        raise ValueError(f"{path}: holds {len(contracts)} contracts; contractlang.load reads them all")
    return contracts[0]


def as_checked(contract) -> CheckedContract:
    """A checked contract, from a file (one contract) or as given."""
    if isinstance(contract, CheckedContract):
        return contract
    if isinstance(contract, (str, Path)):
        return load_one(contract)
    raise TypeError(f"expected a contract file or a checked contract, not {type(contract).__name__}")


def verify(
    contract,
    env: int | None = None,
    board: int | str | None = None,
    rules: str = "authors",
    timeout_ms: int = 5000,
    floors: str = "cs14",
):
    """z3's verdict on every check of the contract (a file or a checked contract), against ContractSim
    environment `env` (its plans under the floor rule set `floors`, [CS-14a]) or CT-Bench board `board` (ID or
    SET:ID) when given; CT-Bench entries are enforced by `rules` (the authors' engine by default, as
    `contractlang verify`)."""
    from contractlang.interpreter import Rules
    from games.contractsim.environments import environment
    from games.ctbench.board import board_ref
    from games.ctbench.verify_board import board_spec
    from solver.verify import verify as run_verify

    checked = as_checked(contract)
    spec = None
    if board is not None:
        bench = board_ref(str(board), header=getattr(checked.ir, "board_set", None))
        spec = board_spec(bench.board, f"board {bench.ref}")
    return run_verify(
        checked,
        env=environment(env, floors) if env is not None else None,
        board=spec,
        timeout_ms=timeout_ms,
        rules=Rules.named(rules),
    )


def solve(contract, env: int, cache_dir: str | Path | None = None, cache: bool = True, floors: str = "cs14"):
    """The `SolveResult` (P_sat, expected utilities, completeness) of a ContractSim contract in environment `env`
    under the floor rule set `floors` ([CS-14a]) (the exact DP, ContractSim paper, App. C.1), with the CLI's
    disk cache: `$CONTRACTLANG_DP_CACHE`, else .contractlang-cache/dp (`cache_dir` to choose, `cache=False` to
    keep nothing)."""
    from games.contractsim.environments import environment
    from solver.dp import TableCache
    from solver.dp.cache import default_dir

    checked = as_checked(contract)
    if checked.ir.kind != "contractsim":
        raise ValueError(f"{checked.ir.name}: solve needs a ContractSim contract; this one is for CT-Bench")
    tables = TableCache((Path(cache_dir) if cache_dir else default_dir()) if cache else None)
    return tables.solve(checked.ir, environment(env, floors))[0]
