"""Solved tables on disk, keyed by a hash of (contract terms in base units, environment, cash cover, solver
version), results kept in base units: the same terms in another setting read the same entry.

A table is written to a temporary file and renamed into place only after the solve finished, so an
interrupted or failed solve never leaves a partial entry behind. Each file carries a SHA-256 digest of
its key, result and policies; a file that fails it (or cannot be read at all) is solved afresh and
replaced, never trusted.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import tempfile
import zipfile
from functools import lru_cache
from pathlib import Path
from typing import Literal

import numpy as np

from contractlang.interpreter.rounds import RoundRules
from contractlang.ir import ContractSimIR
from solver.dp.induction import (POLICY_DTYPE, OrderTable, Progress, SolveResult, in_setting, policy_shape,
                                 solve_in_base_units)
from solver.dp.problem import ROUNDS, Cover, DPProblem, build_problem
from solver.environment import SupplyEnvironment

SOLVER_VERSION = "dp-4"  # bump whenever a change could alter a table (files without a digest are re-solved)
DEFAULT_DIR = Path(".contractlang-cache") / "dp"
MAX_RESULT_BYTES = 2**22  # a result's JSON or a digest: a few kB, kept as a UTF-32 string


def default_dir() -> Path:
    """Where every command keeps solved tables: $CONTRACTLANG_DP_CACHE when set, so that runs from different
    working directories (a `synth` and the `experiment` after it) read one cache; else DEFAULT_DIR in the working
    directory."""
    return Path(os.environ.get("CONTRACTLANG_DP_CACHE") or DEFAULT_DIR)


def table_key(ir: ContractSimIR, env: SupplyEnvironment, cover: Cover) -> str:
    """Only the terms that change the game count, money in base units: not the contract's name, parties,
    stated relations or setting (a table solved for Catering serves the same terms relabelled as Hotel). The
    floor rule set counts by what it makes of this contract's minimums ([CS-14a]): a variant that floors
    the same minimums shares the default's entry, any other has its own."""
    base = ir.base_units()
    terms = base.model_dump(mode="json", exclude={"name", "parties", "asserts", "setting"})
    floors = RoundRules.from_ir(base, env.floors).floor_min
    default = [] if floors == RoundRules.from_ir(base).floor_min else [floors]
    blob = json.dumps([SOLVER_VERSION, terms, env.model_dump(mode="json", exclude={"floors"}), cover, *default],
                      sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


def table_digest(key: str, result_json: str, policies) -> str:
    """What a cached file must reproduce to be believed: its key, its result and every policy entry."""
    h = hashlib.sha256(key.encode())
    h.update(result_json.encode())
    for policy in policies:
        h.update(repr((policy.dtype.str, policy.shape)).encode())
        h.update(np.ascontiguousarray(policy).tobytes())
    return h.hexdigest()


def _members_fit(archive: zipfile.ZipFile, problem: DPProblem) -> bool:
    """Every member is one `_write` writes, declaring the size it would have: a header claiming a huge array,
    or a small member that inflates to gigabytes (a zip bomb), is never allocated or inflated. Reading a member
    stops at its declared size, so checking the declarations bounds the load."""
    shapes = {f"round{t}.npy": policy_shape(problem, t) for t in range(ROUNDS)}
    infos = {info.filename: info for info in archive.infolist()}
    if set(infos) != {*shapes, "result.npy", "digest.npy"}:
        return False
    for name, info in infos.items():
        with archive.open(info) as member:
            header = np.lib.format.read_magic(member)
            if header != (1, 0):
                return False
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(member)
            body = math.prod(shape) * dtype.itemsize
            if fortran or info.file_size != member.tell() + body:
                return False
            if name in shapes and (shape != shapes[name] or dtype != POLICY_DTYPE):
                return False
            if name not in shapes and (shape != () or dtype.kind != "U" or body > MAX_RESULT_BYTES):
                return False
    return True


class TableCache:
    """`solve` through a directory of finished tables (None: memory only)."""

    def __init__(self, directory: Path | None | Literal["default"] = "default"):
        self.directory = default_dir() if directory == "default" else directory
        self._memory = lru_cache(maxsize=16)(self._load_or_solve)
        # held here rather than passed through, so a progress callback never becomes part of the cache key
        self._progress: Progress = None

    def solve(self, ir: ContractSimIR, env: SupplyEnvironment, cover: Cover = "schedule",
              progress: Progress = None) -> tuple[SolveResult, OrderTable, bool]:
        """(result, table, hit): hit is True when the table came from disk or memory."""
        self._progress = progress
        before = self._memory.cache_info().hits
        result, table, from_disk = self._memory(ir, env, cover)
        return result, table, from_disk or self._memory.cache_info().hits > before

    def holds(self, ir: ContractSimIR, env: SupplyEnvironment, cover: Cover = "schedule") -> bool:
        """Whether a solved table for these terms is on disk (not checked against its digest: a hint only)."""
        return self.directory is not None and self._path(table_key(ir, env, cover)).exists()

    def _path(self, key: str) -> Path:
        assert self.directory is not None
        return self.directory / f"{key}.npz"

    def _load_or_solve(self, ir: ContractSimIR, env: SupplyEnvironment, cover: Cover):
        key = table_key(ir, env, cover)
        problem = build_problem(ir, env, cover)
        if self.directory is not None and self._path(key).exists():
            loaded = self._read(key, problem)
            if loaded is not None:
                result, policies = loaded
                return in_setting(result, problem), OrderTable(problem=problem, policies=policies), True
        result, table = solve_in_base_units(problem, self._progress)
        if self.directory is not None:
            self._write(key, result, table)
        return in_setting(result, problem), table, False

    def _read(self, key: str, problem) -> tuple[SolveResult, tuple[np.ndarray, ...]] | None:
        """The cached table if its digest holds; None for a corrupt, truncated, altered or oversized file."""
        path = self._path(key)
        try:
            with zipfile.ZipFile(path) as archive:
                if not _members_fit(archive, problem):
                    return None
            with np.load(path) as data:
                result_json = str(data["result"])
                policies = tuple(data[f"round{t}"] for t in range(ROUNDS))
                digest = str(data["digest"])
            if digest != table_digest(key, result_json, policies):
                return None
            return SolveResult.model_validate_json(result_json), policies
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
            return None

    def _write(self, key: str, result: SolveResult, table: OrderTable) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.directory, suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as handle:
                result_json = result.model_dump_json()
                np.savez_compressed(handle, result=np.array(result_json),
                                    digest=np.array(table_digest(key, result_json, table.policies)),
                                    **{f"round{t}": p for t, p in enumerate(table.policies)})
            os.replace(tmp, self._path(key))
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
