"""Issue #48: a synthetic set is checked on load. Its manifest names each contract by its place inside the set
and its SHA-256 and is sealed by a digest; links, traversal, swapped or garbage contracts, duplicate entries,
tampered figures and a plan that contradicts the contracts stop `experiment rational/performance/frontier` in
one line, and no error shows the content of a file the user did not name as a contract."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from games.experiments.synth import SHIPPED, Manifest
from tests.helpers import run_cli

SECRET = "ANTHROPIC_API_KEY=sk-ant-secret-value-never-shown"
BASE = "synth-env1-rho0.9-base"


@pytest.fixture
def copy(tmp_path) -> Path:
    """The shipped set's contracts, manifest and solve store (no games), beside a secret file outside it."""
    out = tmp_path / "set"
    shutil.copytree(SHIPPED / "contracts", out / "contracts")
    shutil.copy(SHIPPED / "manifest.json", out / "manifest.json")
    (out / "jobs").mkdir()
    shutil.copy(SHIPPED / "jobs" / "solve.jsonl", out / "jobs" / "solve.jsonl")
    (tmp_path / "secret.contract").write_text(SECRET + "\n")
    return out


def _manifest() -> dict:
    """The manifest as `synth` wrote it (before any edit a test made)."""
    return json.loads((SHIPPED / "manifest.json").read_text())


def _write(out: Path, manifest: dict, reseal: bool = True) -> None:
    """The manifest as edited; resealed, as a forger who knows the format would (the digest alone is no lock)."""
    if reseal:
        manifest = json.loads(Manifest.model_validate(manifest).sealed().model_dump_json())
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")


def _fails(out: Path, message: str, command: tuple[str, ...] = ("experiment", "rational")) -> None:
    done = run_cli(*command, out, "--json", cwd=out.parent)
    assert done.returncode == 1, done.stdout + done.stderr
    error = json.loads(done.stdout)["error"]
    assert message in error, error
    assert len(error.splitlines()) == 1 and "Traceback" not in done.stderr
    assert "sk-ant-secret" not in done.stdout + done.stderr


def _entry(manifest: dict, name: str) -> dict:
    return next(e for e in manifest["contracts"] if e["name"] == name)


def test_the_shipped_manifest_names_every_contract_inside_the_set_with_its_hash():
    manifest = Manifest.model_validate_json((SHIPPED / "manifest.json").read_bytes())
    assert manifest.digest == manifest.content_digest()
    assert all(e.path == f"contracts/{e.name}/contract.contract" and len(e.sha256) == 64 for e in manifest.contracts)


@pytest.mark.parametrize(
    "command", [("experiment", "rational"), ("experiment", "frontier"), ("experiment", "performance", "--agent", "rcc")]
)
def test_a_manifest_pointing_outside_the_set_is_refused_without_reading_it(copy, command):
    manifest = _manifest()
    _entry(manifest, BASE)["path"] = "../../secret.contract"
    _write(copy, manifest, reseal=False)
    _fails(copy, "its digest does not match its content", command)
    for path in ("../../secret.contract", str(copy.parent / "secret.contract"), "/proc/self/environ"):
        _entry(manifest, BASE)["path"] = path
        _write(copy, manifest)
        _fails(copy, f"its path {path[:80]!r} is not 'contracts/{BASE}/contract.contract'", command)


def test_links_in_the_set_are_refused(copy):
    secret = copy.parent / "secret.contract"
    contract = copy / "contracts" / BASE / "contract.contract"
    contract.unlink()
    contract.symlink_to(secret)
    _fails(copy, f"{contract}: a symbolic link")
    contract.unlink()
    shutil.move(copy / "contracts" / BASE, copy.parent / "moved")
    (copy / "contracts" / BASE).symlink_to(copy.parent / "moved")
    _fails(copy, f"{copy / 'contracts' / BASE}: a symbolic link")
    (copy / "manifest.json").rename(copy.parent / "manifest.json")
    (copy / "manifest.json").symlink_to("/proc/self/environ")
    _fails(copy, f"{copy / 'manifest.json'}: a symbolic link")


def test_a_changed_or_garbage_contract_is_named_and_never_shown(copy):
    contract = copy / "contracts" / BASE / "contract.contract"
    contract.write_text(SECRET + "\n")
    for command in (("experiment", "rational"), ("experiment", "frontier")):
        _fails(copy, f"{contract}: not the contract the manifest names (its SHA-256 differs", command)
    manifest = _manifest()  # a forger who also rewrites the hash: the file is still not a contract
    _entry(manifest, BASE)["sha256"] = hashlib.sha256(contract.read_bytes()).hexdigest()
    _write(copy, manifest)
    _fails(copy, f"{contract}: not one ContractSim contract that checks")


def test_a_swapped_contract_is_refused_even_with_its_hash_rewritten(copy):
    folder = copy / "contracts"
    base, s = folder / BASE / "contract.contract", folder / "synth-env1-rho0.9-s" / "contract.contract"
    a, b = base.read_bytes(), s.read_bytes()
    base.write_bytes(b)
    s.write_bytes(a)
    _fails(copy, "not the contract the manifest names")
    manifest = _manifest()
    first, second = _entry(manifest, BASE), _entry(manifest, "synth-env1-rho0.9-s")
    first["sha256"], second["sha256"] = second["sha256"], first["sha256"]
    _write(copy, manifest)
    _fails(copy, f"{base}: not the base variant of its base's terms")


def test_duplicate_and_foreign_entries_are_refused(copy):
    manifest = _manifest()
    manifest["contracts"] = manifest["contracts"] + [_entry(manifest, BASE)] * 5000
    _write(copy, manifest)
    _fails(copy, "contracts: Env 1, ρ 0.9, variant base is listed more than once")
    manifest = _manifest()
    manifest["contracts"][0] = manifest["contracts"][0] | {"env": 9}
    _write(copy, manifest)
    _fails(copy, "contracts: Env 9, ρ 0.9, variant base is not a contract of its plan and E14 rows")


def test_tampered_figures_env_and_plan_are_refused(copy):
    manifest = _manifest()
    _entry(manifest, "synth-env1-rho0.9-s")["p_sat"] = 0.25
    _write(copy, manifest, reseal=False)
    _fails(copy, "its digest does not match its content")
    _write(copy, manifest)
    _fails(copy, "synth-env1-rho0.9-s's figures are not its solve record's")
    _entry(manifest, "synth-env1-rho0.9-s")["p_sat"] = 1.5
    _write(copy, manifest)
    _fails(copy, "P_sat and completeness must be in [0, 1]")
    manifest = _manifest()
    row = next(r for r in manifest["e14"] if (r["env"], r["rho"]) == (3, 0.9))
    row["p_sat"] = 0.9
    _write(copy, manifest)
    _fails(copy, "entry 'synth-env3-rho0.9-base': its figures differ from its E14 row's")
    manifest = _manifest()
    _entry(manifest, "synth-env1-rho0.9-s")["env"] = 2
    _write(copy, manifest)
    _fails(copy, "out of the order")
    manifest = _manifest()
    manifest["plan"]["rhos"] = [0.9, 0.8, 0.7, 0.6]
    _write(copy, manifest)
    _fails(copy, "its E14 rows are not one per searched environment and ρ of its plan")
    manifest = _manifest()
    manifest["plan"]["search_envs"] = [3, 4, 5, 6, 7]
    _write(copy, manifest)
    _fails(copy, "its plan is not one `synth` takes")


def test_figures_are_checked_against_the_solve_store_only_when_it_is_there(copy):
    """Without the solve store a resealed p_sat that breaks no rule is not caught (what is not checked);
    with it, it is."""
    manifest = _manifest()
    _entry(manifest, "synth-env1-rho0.9-s")["p_sat"] = 0.5
    _write(copy, manifest)
    os.unlink(copy / "jobs" / "solve.jsonl")
    done = run_cli("experiment", "frontier", copy, "--envs", "1", "--json", cwd=copy.parent)
    assert done.returncode == 0, done.stdout + done.stderr
    shutil.copy(SHIPPED / "jobs" / "solve.jsonl", copy / "jobs" / "solve.jsonl")
    _fails(copy, "synth-env1-rho0.9-s's figures are not its solve record's", ("experiment", "frontier"))


def test_entries_dropped_from_the_manifest_are_missed_when_the_solve_store_is_there(copy):
    manifest = _manifest()
    manifest["contracts"] = [e for e in manifest["contracts"] if e["env"] != 6]
    _write(copy, manifest)
    _fails(copy, "Env 6, ρ 0.9, variant base is solved in")
    shutil.copy(copy / "jobs" / "solve.jsonl", copy.parent / "solve.jsonl")
    (copy / "jobs" / "solve.jsonl").unlink()
    (copy / "jobs" / "solve.jsonl").symlink_to(copy.parent / "solve.jsonl")
    _fails(copy, "solve.jsonl: a symbolic link")


def test_a_manifest_listing_no_contract_has_nothing_to_play(copy):
    manifest = _manifest()
    manifest["contracts"] = []
    _write(copy, manifest)
    (copy / "jobs" / "solve.jsonl").unlink()  # without the store, dropping entries is not caught (said above)
    _fails(copy, "lists no contract")
