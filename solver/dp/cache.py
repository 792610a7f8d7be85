"""Solved tables on disk, keyed by a hash of (contract terms in base units, environment, cash cover, solver
version), results kept in base units: the same terms in another setting read the same entry.

A table is written whole (`write_atomically`) only after the solve finished, so an interrupted or failed solve
never leaves a partial entry behind. Each file carries an HMAC-SHA-256 of its key, result and policies under a
secret kept outside the cache (`key_file`), so a table cannot be forged by editing the cache alone; a file read
back must also be a regular file of bounded size whose probabilities lie in [0, 1] and whose orders are orders
the state can afford. A file that fails any of this (or cannot be read at all) is solved afresh and replaced,
never trusted.
"""

from __future__ import annotations

import hashlib
import hmac
import io
import json
import math
import os
import secrets
import stat
import zipfile
import zlib
from pathlib import Path
from typing import Literal

import numpy as np
from numba import njit

from contractlang.files import FileError, make_folder, read_capped, write_atomically
from contractlang.interpreter.rounds import RoundRules
from contractlang.ir import ContractSimIR
from contractlang.memo import ByteLru
from solver.dp.induction import (
    POLICY_DTYPE,
    UNSOLVED,
    OrderTable,
    Progress,
    SolveResult,
    in_setting,
    policy_shape,
    solve_in_base_units,
)
from solver.dp.problem import ORDER_GRID, ROUNDS, Cover, DPProblem, build_problem
from solver.environment import SupplyEnvironment

SOLVER_VERSION = "dp-4"  # bump whenever a change could alter a table (files without a digest are re-solved)
DEFAULT_DIR = Path(".contractlang-cache") / "dp"
MAX_RESULT_BYTES = 2**22  # a result's JSON or a digest: a few kB, kept as a UTF-32 string
MAX_TABLE_BYTES = 2**30  # a compressed table is kilobytes to a few megabytes; /dev/zero or a runaway file is not one
KEY_ENV = "CONTRACTLANG_DP_CACHE_KEY"
TABLE_BYTES = 192 * 2**20  # the solved tables one cache keeps in memory: those of the last few contracts played


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
    blob = json.dumps(
        [SOLVER_VERSION, terms, env.model_dump(mode="json", exclude={"floors"}), cover, *default], sort_keys=True
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


def key_file() -> Path:
    """The secret every cached table's digest is keyed with: $CONTRACTLANG_DP_CACHE_KEY when set, else
    contractlang/dp-cache.key in $XDG_CONFIG_HOME (~/.config) — outside the cache, so that whoever can write the
    cache alone cannot make a table it would believe."""
    if os.environ.get(KEY_ENV):
        return Path(os.environ[KEY_ENV])
    return Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "contractlang" / "dp-cache.key"


def cache_secret(path: Path) -> bytes:
    """The secret at `path`, made (32 random bytes, hex, mode 0600) when there is none yet: created under a
    temporary name and linked into place, so two processes starting at once agree on one."""
    if not path.exists() and not path.is_symlink():
        fresh = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
        try:
            make_folder(path.parent)
            fd = os.open(fresh, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "w") as handle:
                handle.write(secrets.token_hex(32) + "\n")
            os.link(fresh, path)
        except FileExistsError:
            pass  # another process made it first: theirs is the one
        except (OSError, FileError) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            raise FileError(
                f"cannot make the DP cache's key {path} ({why}); set {KEY_ENV} to a file that can be written"
            ) from None
        finally:
            fresh.unlink(missing_ok=True)
    text = read_capped(path, 256).decode("ascii", "replace").strip()
    if len(text) != 64 or any(ch not in "0123456789abcdef" for ch in text):
        raise FileError(f"{path}: not a DP cache key (64 hex digits); delete it to have a new one made")
    return bytes.fromhex(text)


def table_digest(secret: bytes, key: str, result_json: str, policies) -> str:
    """What a cached file must reproduce to be believed: its key, its result and every policy entry, under the
    secret."""
    h = hmac.new(secret, key.encode(), hashlib.sha256)
    h.update(result_json.encode())
    for policy in policies:
        h.update(repr((policy.dtype.str, policy.shape)).encode())
        h.update(memoryview(np.ascontiguousarray(policy)).cast("B"))  # its bytes, not a copy of them
    return h.hexdigest()


def _consistent(result: SolveResult, policies: tuple[np.ndarray, ...], problem: DPProblem) -> bool:
    """A table's invariants: probabilities in [0, 1], values finite, and every entry either unsolved or an order
    of the grid that its price scenario's prices and the entry's cash can pay for."""
    probabilities = (result.p_sat, result.p_sat_forward, result.completeness, *result.survival)
    values = (
        result.v_supplier,
        result.v_supplier_forward,
        *(u for u in (result.u_customer, result.u_supplier) if u is not None),
    )
    if not all(0.0 <= p <= 1.0 for p in probabilities) or not all(math.isfinite(v) for v in values):
        return False
    return all(
        _orders_affordable(np.ascontiguousarray(p).reshape(-1, *p.shape[-2:]), problem.order_cost, len(ORDER_GRID))
        for p in policies
    )


@njit(cache=True)
def _orders_affordable(policy: np.ndarray, order_cost: np.ndarray, orders: int) -> bool:
    """Whether every entry of `policy` (…, cash, price scenario) is UNSOLVED or one of the `orders` of the grid
    whose cost in its scenario (`order_cost[scenario, order]`) its cash covers: one pass, where whole-array
    checks made a large table's read take seconds."""
    for i in range(policy.shape[0]):
        for cash in range(policy.shape[1]):
            for scenario in range(policy.shape[2]):
                order = policy[i, cash, scenario]
                if order == UNSOLVED:
                    continue
                if order < 0 or order >= orders or order_cost[scenario, order] > cash:
                    return False
    return True


def _open_table(path: Path):
    """A reader of the cached file, or None unless it is a regular file (not a link, a pipe or a device) within
    MAX_TABLE_BYTES."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except OSError:
        return None
    status = os.fstat(fd)
    if not stat.S_ISREG(status.st_mode) or status.st_size > MAX_TABLE_BYTES:
        os.close(fd)
        return None
    return os.fdopen(fd, "rb")


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
        self._memory = ByteLru(self._load_or_solve, TABLE_BYTES)
        # held here rather than passed through, so a progress callback never becomes part of the cache key
        self._progress: Progress = None
        self._key: bytes | None = None  # the digests' secret, read when the disk is first used

    def solve(
        self, ir: ContractSimIR, env: SupplyEnvironment, cover: Cover = "schedule", progress: Progress = None
    ) -> tuple[SolveResult, OrderTable, bool]:
        """(result, table, hit): hit is True when the table came from disk or memory."""
        self._progress = progress
        before = self._memory.hits
        result, table, from_disk = self._memory(ir, env, cover)
        return result, table, from_disk or self._memory.hits > before

    def holds(self, ir: ContractSimIR, env: SupplyEnvironment, cover: Cover = "schedule") -> bool:
        """Whether a solved table for these terms is on disk (not checked against its digest: a hint only)."""
        return self.directory is not None and self._path(table_key(ir, env, cover)).exists()

    def _path(self, key: str) -> Path:
        assert self.directory is not None
        return self.directory / f"{key}.npz"

    def _secret(self) -> bytes:
        if self._key is None:
            self._key = cache_secret(key_file())
        return self._key

    def _load_or_solve(self, ir: ContractSimIR, env: SupplyEnvironment, cover: Cover):
        key = table_key(ir, env, cover)
        problem = build_problem(ir, env, cover)
        if self.directory is not None:
            loaded = self._read(key, problem)
            if loaded is not None:
                result, policies = loaded
                return in_setting(result, problem), OrderTable(problem=problem, policies=policies), True
        result, table = solve_in_base_units(problem, self._progress)
        if self.directory is not None:
            self._write(key, result, table)
        return in_setting(result, problem), table, False

    def _read(self, key: str, problem: DPProblem) -> tuple[SolveResult, tuple[np.ndarray, ...]] | None:
        """The cached table if it is there and its digest and invariants hold; None for a missing, corrupt,
        truncated, altered, forged or oversized file, or one that is not a regular file."""
        handle = _open_table(self._path(key))
        if handle is None:
            return None
        secret = self._secret()
        try:
            with handle:
                with zipfile.ZipFile(handle) as archive:
                    if not _members_fit(archive, problem):
                        return None
                handle.seek(0)
                with np.load(handle) as data:
                    result_json = str(data["result"])
                    policies = tuple(data[f"round{t}"] for t in range(ROUNDS))
                    digest = str(data["digest"])
            if not hmac.compare_digest(digest, table_digest(secret, key, result_json, policies)):
                return None
            result = SolveResult.model_validate_json(result_json)
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, zlib.error):
            return None
        return (result, policies) if _consistent(result, policies, problem) else None

    def _write(self, key: str, result: SolveResult, table: OrderTable) -> None:
        """The table as a new file in the cache (never through a link); a cache that cannot be written is one
        line naming it."""
        secret = self._secret()
        buffer = io.BytesIO()
        result_json = result.model_dump_json()
        np.savez_compressed(
            buffer,
            result=np.array(result_json),
            digest=np.array(table_digest(secret, key, result_json, table.policies)),
            **{f"round{t}": p for t, p in enumerate(table.policies)},
        )
        try:
            make_folder(self.directory)
            write_atomically(self._path(key), buffer.getvalue(), entry=True)
        except FileError as exc:
            raise FileError(
                f"{self.directory}: cannot keep solved DP tables there ({exc}); choose another "
                "directory (CONTRACTLANG_DP_CACHE, `solve --cache-dir` or `--no-cache`)"
            ) from None
