"""An agent that raises ends the game in one line naming it; with CONTRACTLANG_DEBUG=1 the line is followed by
the frames of the user's own code, so the failing line can be found, and by none of this project's."""

from __future__ import annotations

import os

from tests.helpers import run_cli

BROKEN = """class Broken:
    name = "broken"

    def act(self, observation):
        return self.helper(observation)

    def helper(self, observation):
        return 1 / 0
"""


def test_a_raising_agent_shows_its_own_frames_under_debug(tmp_path):
    (tmp_path / "broken.py").write_text(BROKEN)
    args = ("run", "examples/worked-example-1.contract", "--env", "1", "--customer", f"py:{tmp_path}/broken.py:Broken")
    quiet = run_cli(*args, env={k: v for k, v in os.environ.items() if k != "CONTRACTLANG_DEBUG"})
    first = f"error: agent 'py:{tmp_path}/broken.py:Broken' (customer) raised ZeroDivisionError: division by zero"
    assert quiet.returncode == 1 and quiet.stderr.splitlines() == [first]
    debug = run_cli(*args, env={**os.environ, "CONTRACTLANG_DEBUG": "1"})
    lines = debug.stderr.splitlines()
    assert debug.returncode == 1 and lines[0] == first and "Traceback" not in debug.stderr
    assert lines[1] == f'  File "{tmp_path}/broken.py", line 5, in act'
    assert lines[4] == f'  File "{tmp_path}/broken.py", line 8, in helper' and lines[5].strip() == "return 1 / 0"
    assert not any("contractlang/" in line or "games/" in line for line in lines[1:])
