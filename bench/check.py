"""Benchmark: parse + type-check a 5,000-line file (issue #2 target: under 1 s).

Baseline measured in the same run: lark's bare parse of the same text (no AST, no checking),
so the ratio shows what the AST and the checker add on top of tokenising and parsing.
"""

from __future__ import annotations

import sys

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent))

from _common import ROOT, best_of, write_result  # noqa: E402
from lark import Lark  # noqa: E402

from contractlang import check_source  # noqa: E402
from contractlang.parser import grammar_text  # noqa: E402


def big_file(lines: int = 5000) -> str:
    examples = sorted((ROOT / "examples").glob("*.contract"))
    chunks, total, k = [], 0, 0
    while total < lines:
        for path in examples:
            text = path.read_text()
            for part in text.split('contract "')[1:]:
                chunk = f'contract "bench-{k}-' + part
                chunks.append(chunk)
                total += chunk.count("\n")
                k += 1
    return "\n".join(chunks)


def main() -> None:
    text = big_file()
    n_lines = text.count("\n") + 1
    result = check_source(text, "big.contract")
    assert result.ok, result.diagnostics[:3]
    check_s = best_of(lambda: check_source(text, "big.contract"))
    bare = Lark(grammar_text(), parser="lalr")
    lark_s = best_of(lambda: bare.parse(text))
    payload = {
        "lines": n_lines,
        "contracts": len(result.contracts),
        "check_seconds": round(check_s, 4),
        "lark_parse_seconds": round(lark_s, 4),
        "ratio_check_to_lark_parse": round(check_s / lark_s, 2),
        "target_seconds": 1.0,
        "meets_target": check_s < 1.0,
    }
    path = write_result("check", payload)
    print(
        f"check: {n_lines} lines, {payload['contracts']} contracts in {check_s:.3f} s "
        f"({payload['ratio_check_to_lark_parse']}x a bare lark parse of {lark_s:.3f} s); target < 1 s -> {path}"
    )


if __name__ == "__main__":
    main()
