"""Scenario tests of contracts: running them through the monitor, clause coverage, and generated tests."""
