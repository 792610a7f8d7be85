"""The papers' ContractSim experiments, beside the engines they run: the synthetic contract set (synth) and its
shipped data, the rational baselines (rational), an agent's performance against them (performance), the Pareto
frontiers (frontier), LLM negotiations (negotiate), the batch engine and the DP cross-check, and the published
rows (paper)."""
