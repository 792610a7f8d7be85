"""Every fenced code block of README.md is run or checked (issue #30 item 10); the mechanism is
`tests/docs/doc_blocks.py`, shared with the documentation's pages (`tests/docs/test_docs_examples.py`)."""

from __future__ import annotations

import pytest

from tests.docs.doc_blocks import (
    ROOT,
    Block,
    blocks,
    check_block_usage,
    check_contract,
    check_program,
    check_usage,
    commands,
    kind,
    kind_or_error,
    run_block,
    same_output,
    split_assignments,
    workdir,
)

README = ROOT / "README.md"

# --- the tests --------------------------------------------------------------------------------------------

README_BLOCKS = blocks(README.read_text(encoding="utf-8"))


def test_every_block_has_a_kind():
    problems = [k for k in map(kind_or_error, README_BLOCKS) if k.startswith("error:")]
    assert not problems, "\n".join(problems)


RUN = [b for b in README_BLOCKS if kind_or_error(b) in ("commands", "contract", "python", "output")]
USAGE = [b for b in README_BLOCKS if kind_or_error(b) in ("help-only", "synopsis")]


def test_commands_and_options_of_help_only_and_synopsis_blocks_exist():
    """One test for all such blocks, so each command's --help is read once."""
    problems = [p for block in USAGE for p in check_block_usage(block)]
    assert not problems, "\n".join(problems)


@pytest.mark.e2e
@pytest.mark.parametrize("block", RUN, ids=[f"line{b.line}-{kind(b)}" for b in RUN])
def test_block(block: Block, tmp_path, monkeypatch):
    run_block(block, README_BLOCKS, workdir(tmp_path), monkeypatch)


# --- the checker itself can fail ----------------------------------------------------------------------------

PLANTED = """
<!-- readme-test: verify --board 24 -->
```
contract "old-sample" {
  game ctbench
  parties { red: P-Red  blue: P-Blue }
  cover {
    (1,2): red pays for blue with red chip
    (2,0): blue pays for red
  }
}
```

```
contract "no-board" {
  game ctbench
  cover { (0,1): red pays for blue }
}
```

<!-- readme-test: wished -->
```
anything
```

```text
free prose that is neither a command nor a contract
```

```bash
contractlang ctbench sweep --boards 0 --no-such-option
contractlang ctbench nowhere --json
contractlang check examples/*.contract | head
```

```
CI=true bash .ci/run
```

* in a list item:

  ```bash
  contractlang check examples/*.contract
  ```
"""


def test_the_classifier_refuses_what_it_cannot_run():
    planted = blocks(PLANTED)
    kinds = [kind_or_error(b) for b in planted]
    assert kinds[:2] == ["contract", "contract"] and kinds[4] == "commands"
    assert "unknown readme-test directive 'wished'" in kinds[2]
    assert "a ```text block the test cannot run" in kinds[3]
    with pytest.raises(ValueError, match="only `&&` is supported"):
        commands(planted[4].text)
    assert kinds[5] == "commands" and split_assignments(commands(planted[5].text)[0]) == (
        {"CI": "true"},
        ["bash", ".ci/run"],
    )
    assert kinds[6] == "commands" and commands(planted[6].text) == [["contractlang", "check", "examples/*.contract"]]


SHOW_24 = """```bash
contractlang ctbench show 24
```

<!-- readme-test: illustration -->
```
contractlang ctbench show ID
```

<!-- readme-test: output -->
```
Board 24 (mutually_dependent, key 487)
     c0  c1  c2  c3
r0   GS  R*  Rr  Br
r1   R   Bb  Bb  R*
r2   B   R   R   B*
r3   B   R   B   GG
Legend: first letter the tile's colour (R red, B blue, G green); then S start, G goal, r on P-Red's best path, b on P-Blue's, * on both.
P-Red best path (0, 0) (0, 1) (0, 2) (0, 3) (1, 3) (2, 3) (3, 3), shortfall 2
P-Blue best path (0, 0) (0, 1) (1, 1) (1, 2) (1, 3) (2, 3) (3, 3), shortfall 2
```
"""


def test_an_output_block_is_compared_with_the_commands_above(tmp_path, monkeypatch):
    """The nearest commands block above, past the illustration between them, supplies the output."""
    planted = blocks(SHOW_24)
    run_block(planted[2], planted, workdir(tmp_path), monkeypatch)
    wrong = planted[2]._replace(text=planted[2].text.replace("shortfall 2", "shortfall 3", 1))
    with pytest.raises(AssertionError, match="is not what README.md:1 prints"):
        run_block(wrong, [*planted[:2], wrong], tmp_path, monkeypatch)


def test_the_checks_fail_on_planted_errors(tmp_path):
    planted = blocks(PLANTED)
    with pytest.raises(AssertionError, match=r"coverage\.path': \('refuted', 'red cannot get home on board 24"):
        check_contract(planted[0], tmp_path)
    with pytest.raises(AssertionError, match="verified on its board"):
        check_contract(planted[1], tmp_path)
    with pytest.raises(AssertionError, match="has no option --no-such-option"):
        check_usage(["ctbench", "sweep", "--boards", "0", "--no-such-option"])
    with pytest.raises(AssertionError, match="needs one of its commands"):
        check_usage(["ctbench", "nowhere", "--json"])
    with pytest.raises(AssertionError, match="no extra nonesuch"):
        check_program(["pip", "install", "-e", ".[test,nonesuch]"])
    with pytest.raises(AssertionError, match="not in the repository"):
        check_program(["python3", "bench/nonesuch.py"])
    with pytest.raises(AssertionError, match="not in the repository"):
        check_program(["bash", ".ci/nonesuch"])
    assert same_output("a  \nb\n\n", "a\nb") and not same_output("a\nb", "a\nc")


# --- the README's test command ------------------------------------------------------------------------------


def test_the_readme_test_command_is_what_ci_runs():
    """The set-up block's last command is the README's test command; .ci/run runs exactly that line."""
    setup = next(b for b in README_BLOCKS if "pip install -e ." in b.text)
    test_command = [line for line in setup.text.splitlines() if line and not line.startswith("#")][-1]
    assert test_command == "bash scripts/test-deps && python3 -m pytest"
    assert test_command in (ROOT / ".ci" / "run").read_text().splitlines()


def test_the_test_command_installs_what_is_missing_then_runs_pytest(tmp_path):
    """On a machine without nvim and chromium, the README's test command installs Debian's packages, then the
    extras, then runs pytest (apt-get and python3 are stand-ins that record their calls)."""
    import os
    import shutil
    import subprocess

    bin_dir, calls = tmp_path / "bin", tmp_path / "calls"
    bin_dir.mkdir()
    for tool in ("dirname", "id", "cat", "bash"):
        (bin_dir / tool).symlink_to(shutil.which(tool))
    for fake in ("apt-get", "python3", "sudo"):
        (bin_dir / fake).write_text(
            f'#!/bin/sh\necho "{fake} $*" >> {calls}\n' + ('exec "$@"\n' if fake == "sudo" else "")
        )
        (bin_dir / fake).chmod(0o755)
    env = {"PATH": str(bin_dir), "HOME": str(tmp_path)}
    proc = subprocess.run(
        ["/bin/bash", "-c", "bash scripts/test-deps && python3 -m pytest"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    lines = calls.read_text().splitlines()
    if os.geteuid() != 0:
        lines = [line for line in lines if not line.startswith("sudo ")]
    assert lines == [
        "apt-get update -qq",
        "apt-get install -y -qq neovim chromium",
        "python3 -m pip install -q -e .[test,docs]",
        "python3 -m pytest",
    ]
    assert "installing Debian's neovim chromium" in proc.stderr
