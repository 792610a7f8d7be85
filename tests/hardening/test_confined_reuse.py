"""A closed in-process agent's thread serves the next agent of the process, unless its call never returned
(games/confined.py)."""

from __future__ import annotations

import threading

import pytest

from games.confined import AgentTimeout, Confined


def test_a_closed_agent_s_thread_serves_the_next_agent():
    first = Confined("first", seconds=30)
    thread = first.call(threading.current_thread)
    assert thread is not threading.current_thread()
    first.end()
    second = Confined("second", seconds=30)
    assert second.call(threading.current_thread) is thread
    second.end()


def test_a_thread_whose_call_never_returned_is_not_reused_and_stops_once_it_returns():
    stuck = Confined("stuck", seconds=0.2)
    release = threading.Event()
    with pytest.raises(AgentTimeout):
        stuck.call(release.wait)
    thread = stuck.thread
    stuck.end()
    fresh = Confined("fresh", seconds=30)
    assert fresh.call(threading.current_thread) is not thread
    fresh.end()
    release.set()
    thread.join(30)
    assert not thread.is_alive()
