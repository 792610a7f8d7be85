"""Cross-play tournaments (docs/explanation/tournaments.md): every agent against every other in each seat it
plays, on common random numbers, every game a job of `games.runner`, scored against the exact optimum.

`contractsim` and `ctbench` adapt each game to `SeatOutcome` outcomes (the one place that knows a game); `stats`
ranks agents from those outcomes alone, so a third game is one more adapter.
"""
