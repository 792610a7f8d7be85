"""Reinforcement-learning environments of both games under a contract (extra `[rl]`): PettingZoo AEC and
Parallel environments, single-agent gymnasium environments against a built-in opponent. See docs/how-to/rl.md."""

from __future__ import annotations

try:
    import gymnasium  # noqa: F401
    import pettingzoo  # noqa: F401
except ImportError as exc:  # pragma: no cover - the extra is missing
    raise ImportError("contractlang.api.rl needs gymnasium and PettingZoo: pip install 'contractlang[rl]'") from exc

from contractlang.api.rl.aec import ContractAEC, contractsim_env, ctbench_env
from contractlang.api.rl.checks import ActionError, EnvInputError
from contractlang.api.rl.cores import CTBENCH_ACTIONS, Feature
from contractlang.api.rl.ctbench_vector import CTBenchVectorEnv, ctbench_vector_env
from contractlang.api.rl.parallel import ContractParallel, contractsim_parallel_env, ctbench_parallel_env
from contractlang.api.rl.regret import PolicyValue, evaluate_policy
from contractlang.api.rl.sb3 import MaskedVecEnv, sb3_vec_env
from contractlang.api.rl.single import ContractGym, contractsim_gym, ctbench_gym
from contractlang.api.rl.vector import ContractSimVectorEnv, contractsim_vector_env

__all__ = [
    "CTBENCH_ACTIONS",
    "ActionError",
    "ContractAEC",
    "ContractGym",
    "ContractParallel",
    "ContractSimVectorEnv",
    "CTBenchVectorEnv",
    "EnvInputError",
    "Feature",
    "MaskedVecEnv",
    "PolicyValue",
    "contractsim_env",
    "contractsim_gym",
    "contractsim_parallel_env",
    "contractsim_vector_env",
    "ctbench_env",
    "ctbench_gym",
    "ctbench_parallel_env",
    "ctbench_vector_env",
    "evaluate_policy",
    "sb3_vec_env",
]
