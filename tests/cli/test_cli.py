"""CLI behaviour: golden outputs, JSON shapes and exit codes (0 ok, 1 bad input, 2 usage)."""

import json

from tests.helpers import GOLDEN, ROOT, compare_golden, run_cli


def test_check_examples_ok():
    examples = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "examples").glob("*.contract"))
    proc = run_cli("check", *examples)
    assert proc.returncode == 0, proc.stderr
    compare_golden(GOLDEN / "check-examples.txt", proc.stdout)


def test_check_json_terms_golden():
    proc = run_cli("check", "--json", "examples/catering-env5-a.contract")
    assert proc.returncode == 0
    payload = json.loads(proc.stdout)
    assert payload["ok"] is True
    assert payload["terms"]["payments"] == {"1": 15, "3": 25, "5": 25, "7": 25, "9": 25, "11": 10}
    assert payload["terms"]["params"]["mode"] == "PDRO"
    compare_golden(GOLDEN / "check-env5a.json", json.dumps(payload, indent=2) + "\n")


def test_check_json_ctbench_and_diagnostics():
    proc = run_cli(
        "check", "--json", "examples/ctbench-board-24-swap.contract", "tests/invalid/tile-off-board.contract"
    )
    assert proc.returncode == 1
    ok, bad = [json.loads(line) for line in proc.stdout.splitlines()]
    assert ok["terms"]["coverage"][0] == {"tile": [0, 1], "giver": "red", "receiver": "blue", "color": "red"}
    assert ok["terms"]["coverage"][3]["color"] is None
    assert bad["ok"] is False
    assert [d["code"] for d in bad["diagnostics"]] == ["E601"]
    compare_golden(GOLDEN / "check-ctbench.jsonl", proc.stdout)


def test_check_human_errors_golden():
    proc = run_cli("check", "tests/invalid/many-errors.contract")
    assert proc.returncode == 1
    assert proc.stdout == ""
    compare_golden(GOLDEN / "check-many-errors.txt", proc.stderr)


def test_fmt_check_write(tmp_path):
    messy = tmp_path / "messy.contract"
    messy.write_text('contract "m" { game ctbench on goal { blue : blue transfers 3 points to red } }\n')
    assert run_cli("fmt", "--check", str(messy)).returncode == 1
    out = run_cli("fmt", str(messy))
    assert out.returncode == 0
    assert out.stdout == (
        'contract "m" {\n  game ctbench\n  on goal {\n    blue: blue transfers 3 points to red\n  }\n}\n'
    )
    assert run_cli("fmt", "--write", str(messy)).returncode == 0
    assert messy.read_text() == out.stdout
    assert run_cli("fmt", "--check", str(messy)).returncode == 0
    assert not list(tmp_path.glob(".*.tmp"))


def test_exit_codes():
    assert run_cli("check", "no-such-file.contract").returncode == 1
    assert run_cli("check", "--no-such-flag").returncode == 2
    assert run_cli("check").returncode == 2
    helped = run_cli("--help")
    assert helped.returncode == 0 and "check" in helped.stdout and "fmt" in helped.stdout


def test_progress_in_a_log_is_a_line_per_job_with_the_time_left():
    """Where stderr is not a terminal (a background run writing a log), progress is plain lines: the jobs a
    resumed run found done, then elapsed time and the time left as jobs finish, at most one line per 30 s
    and always the last; under --json nothing."""
    import io

    from rich.console import Console

    from contractlang.progress import job_progress

    def lines(quiet: bool) -> list[str]:
        out = io.StringIO()
        ticks = iter([0.0, 60.0, 120.0, 125.0, 180.0])
        with job_progress(quiet, Console(file=out, width=200), now=lambda: next(ticks)) as advance:
            for done in (2, 3, 4, 5, 6):
                advance("search", done, 6)
        return out.getvalue().splitlines()

    assert lines(quiet=False) == [
        "search: 2 of 6 done before this run; 4 to run",
        "search: 3/6 done, 0:01:00 elapsed, about 0:03:00 left",
        "search: 4/6 done, 0:02:00 elapsed, about 0:02:00 left",
        "search: 6/6 done, 0:03:00 elapsed",
    ]
    assert lines(quiet=True) == []
