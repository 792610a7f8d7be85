"""The CLI over the Python face: every command's options default as the facade verb it calls, `--version` and
`cl.__version__` agree, `dir(cl)` lists the face, and the face's verbs refuse wrong arguments with
`BadArgument` naming the parameter."""

from __future__ import annotations

import inspect
from importlib.metadata import version
from pathlib import Path

import pytest

import contractlang as cl
from contractlang.api import ctbench, experiments, language
from contractlang.cli import contractsim as cli_contractsim
from contractlang.cli import ctbench as cli_ctbench
from contractlang.cli import experiments as cli_experiments
from contractlang.cli import language as cli_language
from contractlang.cli import solve as cli_solve
from contractlang.cli import verify as cli_verify
from tests.helpers import ROOT, run_cli

CONTRACT = ROOT / "examples" / "worked-example-1.contract"

COMMANDS = [
    (cli_language.trace, language.trace, {}),
    (cli_language.render, language.render, {}),
    (cli_language.translate, language.translate, {"no_verify": "verify"}),
    (cli_verify.verify, language.verify_all, {}),
    (cli_solve.solve, language.solve, {"no_cache": "cache"}),
    (cli_contractsim.metrics, experiments.metrics, {}),
    (
        cli_contractsim.negotiate,
        experiments.negotiations,
        {"customer": "customers", "supplier": "suppliers", "candidates": "candidates", "setting": "settings"},
    ),
    (cli_experiments.synth, experiments.synth, {}),
    (cli_experiments.experiment_rational, experiments.rational, {}),
    (cli_experiments.experiment_performance, experiments.performance, {"setting": "settings"}),
    (cli_experiments.experiment_frontier, experiments.frontier, {}),
    (cli_ctbench.ctbench_boards, ctbench.boards, {}),
    (cli_ctbench.ctbench_show, ctbench.show, {}),
    (cli_ctbench.ctbench_sweep, ctbench.sweep, {"agents": "pairs"}),
    (cli_ctbench.ctbench_replay, ctbench.replay, {}),
    (cli_ctbench.ctbench_report, ctbench.report, {}),
]
"""Each command, the facade verb it calls, and its options named otherwise there."""

NEGATED = {"no_verify", "no_cache"}
"""Flags that say the opposite of the facade's parameter (`--no-cache` is `cache=False`)."""


def as_facade(name: str, value, facade_default):
    """A CLI option's default in the facade's terms: a comma-separated list as a tuple of its items, `A:B` pairs
    as tuples, a negated flag negated, a repeatable option left out (None) as the facade's own default."""
    if name in NEGATED:
        return not value
    if isinstance(value, str) and isinstance(facade_default, tuple):
        items = [x.strip() for x in value.split(",")]
        if facade_default and isinstance(facade_default[0], tuple):
            return tuple(tuple(x.split(":")) for x in items)
        kind = type(facade_default[0]) if facade_default else str
        return tuple(kind(x) for x in items)
    if value is None and isinstance(facade_default, tuple):
        return facade_default  # a repeatable option given no value: the command passes the verb's own default
    return value


def test_every_command_defaults_as_the_facade_verb_it_calls():
    compared = 0
    for command, verb, renamed in COMMANDS:
        options = inspect.signature(command).parameters
        params = inspect.signature(verb).parameters
        for name, option in options.items():
            target = params.get(renamed.get(name, name))
            if target is None or target.default is inspect.Parameter.empty or option.default is inspect.Parameter.empty:
                continue
            given = as_facade(name, option.default, target.default)
            expected = target.default
            if isinstance(expected, Path) or isinstance(given, Path):
                given, expected = str(given), str(expected)
            assert given == expected, f"{command.__name__} --{name}: {option.default!r} vs {verb.__name__} {expected!r}"
            compared += 1
    assert compared >= 60


def test_a_changed_default_is_found():
    """The comparison itself: a facade default other than the CLI's is reported."""
    assert as_facade("modes", "pfp,trade", ("pfp",)) != ("pfp",)
    assert as_facade("no_cache", False, True) is True
    assert as_facade("agents", "planner:planner", (("a", "b"),)) == (("planner", "planner"),)


def test_version_from_the_package_metadata():
    assert cl.__version__ == version("contractlang")
    done = run_cli("--version")
    assert done.returncode == 0 and done.stdout == f"contractlang {cl.__version__}\n"


def test_dir_lists_the_face_with_the_verbs_loaded_on_first_use():
    names = dir(cl)
    for name in ("fmt", "trace", "render", "translate", "metrics", "synth", "verify", "play", "experiments"):
        assert name in names
    for name in ("CustomerObservation", "SupplierObservation", "CTBenchObservation", "Pay", "Order", "Move"):
        assert name in names and inspect.isclass(getattr(cl, name))
    assert set(cl.FACE) <= set(names) and all(hasattr(cl, n) for n in cl.__all__)
    assert names == sorted(cl.__all__) and "__version__" in names
    internals = {"sys", "Path", "PackageNotFoundError", "annotations", "Face", "FACE", "checked", "Flag", "Text"}
    assert not internals & set(names) and all(hasattr(cl, n) for n in internals)  # there, just not the face
    assert {"frontier", "negotiations", "rational", "performance"} <= set(dir(cl.experiments))
    assert {"boards", "show", "sweep", "import_logs", "replay", "report"} <= set(dir(cl.ctbench))


def test_the_facade_verbs_answer_as_the_commands():
    source = CONTRACT.read_text()
    assert cl.fmt(source) == run_cli("fmt", CONTRACT).stdout
    assert cl.render(CONTRACT) + "\n" == run_cli("render", CONTRACT).stdout
    picture = cl.ctbench.show(24)
    assert picture.ref == "24" and set(picture.best_paths) == {"red", "blue"}
    assert {r["player"] for r in picture.rows()} == {"red", "blue"}


BAD_CALLS = [
    (cl.load, (None,), {}, "path"),
    (cl.load, (3,), {}, "path"),
    (cl.check, (None,), {}, "source"),
    (cl.verify, (CONTRACT,), {"timeout_ms": "x"}, "timeout_ms"),
    (cl.verify, (CONTRACT,), {"timeout": "x"}, "timeout"),
    (cl.verify, (CONTRACT,), {"timeout_ms": -1}, "timeout_ms"),
    (cl.verify, (CONTRACT,), {"env": True}, "env"),
    (cl.solve, (CONTRACT,), {"env": True}, "env"),
    (cl.play, (CONTRACT,), {"env": 1, "agents": "rcc"}, "agents"),
    (cl.play, (CONTRACT,), {"env": 1, "guidance": "text"}, "guidance"),
    (cl.experiments.rational, (), {"limit": "2"}, "limit"),
    (cl.experiments.performance, (), {"agent": "rcc", "seeds": "1"}, "seeds"),
    (cl.experiments.performance, (), {"agent": "rcc", "seeds": []}, "seeds"),
    (cl.experiments.negotiate, (1,), {"offers": []}, "offers"),
    (cl.experiments.negotiate, (1,), {"guidance": "text"}, "guidance"),
    (cl.experiments.negotiate, (True,), {}, "env"),
    (cl.ctbench.sweep, (), {"out": None}, "out"),
    (cl.ctbench.sweep, (), {"boards": "24"}, "boards"),
    (cl.translate, ("text",), {"timeout": -1.0}, "timeout"),
    (cl.test, (), {"paths": None}, "paths"),
    (cl.test, (CONTRACT,), {"coverage": "yes"}, "coverage"),
    (cl.test, (CONTRACT,), {"only": 3}, "only"),
    (cl.generate_tests, (None,), {}, "contract"),
    (cl.generate_tests, (CONTRACT,), {"write": 0}, "write"),
    (cl.coverage, (3,), {}, "path"),
    (cl.register_agent, (3,), {"game": "contractsim"}, "name"),
    (cl.register_agent, (None,), {"game": "contractsim"}, "name"),
    (cl.model_of, (3.5,), {}, "agent"),
    (cl.model_of, (None,), {}, "agent"),
    (cl.model_of, ("rcc",), {"game": 3}, "game"),
    (cl.tournament, (["rcc"],), {"seeds": "1", "estimate": True}, "seeds"),
    (cl.tournament, (["rcc"],), {"seeds": 10**30, "estimate": True}, "seeds"),
    (cl.tournament, ("rcc",), {"estimate": True}, "agents"),
    (cl.tournament, ([],), {"estimate": True}, "agents"),
    (cl.tournament, (["rcc"],), {"alpha": float("nan"), "estimate": True}, "alpha"),
    (cl.tournament, (["rcc"],), {"max_errors": 2.0, "estimate": True}, "max_errors"),
    (cl.tournament, (["rcc"],), {"workers": 10**30, "estimate": True}, "workers"),
    (cl.tournament, (["rcc"],), {"workers": 0, "estimate": True}, "workers"),
    (cl.experiments.performance, (), {"agent": "rcc", "workers": 10**30, "estimate": True}, "workers"),
    (cl.ctbench.sweep, (), {"workers": 10**30, "estimate": True}, "workers"),
]


@pytest.mark.parametrize("verb, args, kwargs, parameter", BAD_CALLS)
def test_a_wrong_argument_is_a_bad_argument_naming_it(verb, args, kwargs, parameter):
    with pytest.raises(cl.BadArgument) as caught:
        verb(*args, **kwargs)
    assert (f"({parameter}=" in str(caught.value) or f": {parameter}: " in str(caught.value)) and "\n" not in str(
        caught.value
    )
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, TypeError)
    assert isinstance(caught.value, cl.ContractlangError)


def public_verbs():
    """Every function of the face: `cl`'s own, the facade's, and those of its namespaces and RL environments."""
    from contractlang.api import rl

    found = {f"cl.{n}": getattr(cl, n) for n in ("load", "check", "check_source", "parse")}
    for name in cl.FACE:
        value = getattr(cl, name)
        if inspect.isfunction(value):  # wherever it is defined: `model_of` and `register_agent` are the games'
            found[f"cl.{name}"] = value
    for space in (cl.experiments, cl.ctbench, language):
        for name in space.__all__:
            value = getattr(space, name)
            if inspect.isfunction(value):
                found[f"{space.__name__}.{name}"] = value
    found |= {f"rl.{n}": getattr(rl, n) for n in rl.__all__ if inspect.isfunction(getattr(rl, n))}
    return found


OTHERS = {
    "rl.contractsim_vector_env": {"num_envs": 1},
    "rl.ctbench_vector_env": {"num_envs": 1},
    "rl.evaluate_policy": {"contract": CONTRACT, "policy": abs},
    "cl.register_agent": {"game": "contractsim"},
}
"""The other arguments a verb cannot be called without."""


class Wrong:
    """An argument no annotation of the face admits."""


def test_every_public_verb_refuses_a_wrong_typed_argument():
    from contractlang.api import rl

    verbs = public_verbs()
    assert len(verbs) >= 30
    for label, verb in verbs.items():
        params = [p for p in inspect.signature(verb).parameters.values() if p.name != "self"]
        typed = [p for p in params if p.annotation not in ("Any", inspect.Parameter.empty)]
        assert typed, label
        # an environment is made of a contract of its game; its settings are refused as gymnasium's are
        contract = {"rl.ct": ("examples/ctbench-board-24-swap.contract",), "rl.co": (CONTRACT,)}.get(label[:5], ())
        with pytest.raises((cl.BadArgument, rl.EnvInputError), match=typed[0].name):
            verb(*contract, **OTHERS.get(label, {}), **{typed[0].name: Wrong()})


def test_the_default_offers_are_every_bundled_catering_contract():
    """A file of the bundled catering examples holds two contracts (the portfolio): each is an offer."""
    offers = experiments.offered(None)
    files = sorted((ROOT / "examples").glob("catering*.contract"))
    assert len(offers) == sum(len(cl.load(f)) for f in files) > len(files)
    assert {ir.kind for ir in offers} == {"contractsim"} and len({ir.setting for ir in offers}) == 1


@pytest.mark.e2e
def test_negotiate_plays_with_its_own_defaults():
    run = cl.experiments.negotiate(env=1)
    assert run.negotiation.outcome in ("agreed", "terminated", "exhausted") and run.env == 1


def test_a_text_of_boards_is_refused_not_read_letter_by_letter(tmp_path):
    with pytest.raises(cl.BadArgument, match="boards"):
        cl.ctbench.sweep(tmp_path / "s", boards="24")
    assert not (tmp_path / "s").exists()


def test_the_reference_page_documents_every_public_class_field_and_verb():
    """docs/reference/python-api.md is generated from these docstrings (mkdocstrings): none may be missing."""
    import griffe

    pages = (
        "contractlang.api.language",
        "contractlang.api.experiments",
        "contractlang.api.ctbench",
        "contractlang.errors",
    )
    undocumented = []
    for name in pages:
        module = griffe.load(name, search_paths=[str(ROOT)], allow_inspection=False)
        public = (
            {str(n).strip("'\"") for n in module.members["__all__"].value.elements}
            if "__all__" in module.members
            else None
        )
        for member_name, member in module.members.items():
            if member.is_alias or member_name.startswith("_") or (public is not None and member_name not in public):
                continue
            if not member.docstring:
                undocumented.append(f"{name}.{member_name}")
            if member.is_class:
                undocumented += [
                    f"{name}.{member_name}.{field}"
                    for field, part in member.members.items()
                    if not part.is_alias
                    and not field.startswith("_")
                    and field != "model_config"
                    and not part.docstring
                ]
    assert undocumented == []
    text = (ROOT / "docs" / "reference" / "python-api.md").read_text()
    assert all(f"::: {name}" in text for name in pages)
