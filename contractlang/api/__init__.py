"""The library's face beside the CLI: functions that wire `contractlang`, `games` and `solver` together and return
typed results (the one layer besides `contractlang/cli/` allowed to import all three)."""
