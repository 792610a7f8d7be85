"""MkDocs hook: the CLI reference page, generated from the typer app itself so that it cannot drift."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

PLACEHOLDER = "<!-- cli-reference -->"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _param_rows(command, ctx) -> list[str]:
    rows = []
    for param in command.get_params(ctx):
        if getattr(param, "hidden", False) or "--help" in getattr(param, "opts", ()):
            continue
        if param.param_type_name == "argument":
            name = f"`{param.human_readable_name}`"
            kind = "argument" + ("" if param.required else ", optional") + (", repeatable" if param.nargs == -1 else "")
            help_text = getattr(param, "help", None) or ""
        else:
            name = ", ".join(f"`{o}`" for o in [*param.opts, *param.secondary_opts])
            kind = "flag" if param.is_flag else param.type.name.lower()
            if param.multiple:
                kind += ", repeatable"
            help_text = param.help or ""
            default = param.default
            if param.show_default is not False and default not in (None, False, (), []) and not callable(default):
                help_text += f" (default: `{default}`)"
        rows.append(f"| {name} | {kind} | {_cell(help_text)} |")
    return rows


def _document(command, ctx, out: list[str]) -> None:
    """`command`'s section (none for the root), then its subcommands'. Typer carries its own copy of click,
    so commands are told apart by what they have, not by click's classes."""
    if ctx.parent is not None:
        out += [f"## `{ctx.command_path}`", ""]
        out += [command.help.strip() if command.help else "", ""]
        pieces = " ".join(command.collect_usage_pieces(ctx))
        out += ["```text", f"{ctx.command_path} {pieces}".rstrip(), "```", ""]
        rows = _param_rows(command, ctx)
        if rows:
            out += ["| name | kind | what it does |", "|---|---|---|", *rows, ""]
    if hasattr(command, "list_commands"):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                _document(sub, sub.context_class(sub, info_name=name, parent=ctx), out)


def cli_reference() -> str:
    """Every command of `contractlang`, its usage line and its options, in the order the app lists them."""
    import typer.main

    from contractlang.cli import app

    root = typer.main.get_command(app)
    out: list[str] = []
    _document(root, root.context_class(root, info_name="contractlang"), out)
    return "\n".join(out)


def on_page_markdown(markdown: str, page, config, files) -> str:
    if PLACEHOLDER in markdown:
        return markdown.replace(PLACEHOLDER, cli_reference())
    return markdown
