"""The docs site's generated blocks: every command (from the typer app), every setting (from
`Settings`) and the batch columns (from the rules table), so none can drift from the code.

Each block sits in its page between `<!-- NAME:start -->` and `<!-- NAME:end -->`; the text
around it is written by hand. `python -m payflow.docs_pages` rewrites the blocks in place;
tests/test_docs_pages.py fails while one is stale.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DOCS = Path(__file__).resolve().parents[1] / "docs"
# A shell block the tests run (tests/cli/test_docs_runnable.py): the marker on the line before
# its fence, with the exit status the block ends with when it is not 0.
RUNNABLE = re.compile(r"^<!-- runnable(?:: exit (\d+))? -->\n```bash\n(.*?)^```", re.M | re.S)
RUNNABLE_MARKER = re.compile(r"^<!-- runnable\b", re.M)
HELP_WIDTH = 80  # a terminal's width, and what fits the page without scrolling


@dataclass(frozen=True)
class Block:
    """A generated block: its name in the markers, its page under docs/, how to build it."""

    name: str
    page: str
    build: Callable[[], str]


def commands_markdown() -> str:
    """Each command's `--help`, as `payflow CMD --help` prints it, in the order of the CLI's
    command list; a group's subcommands follow it."""
    import typer

    from payflow.cli import COMMAND_MODULES, _register_commands, command_summaries
    from payflow.cli.app import app

    _register_commands()
    root = typer.main.get_command(app)
    assert isinstance(root, typer.core.TyperGroup)
    top = typer.core.TyperGroup.context_class(
        root, info_name="payflow", max_content_width=HELP_WIDTH, terminal_width=HELP_WIDTH
    )
    # `payflow --help` lists each command's whole summary in the CLI's order; the app's own
    # list follows the order its modules were imported in, which differs between processes.
    listing = typer.core.TyperGroup(name="payflow", help=root.help, rich_markup_mode=None)
    for name, summary in command_summaries().items():
        listing.add_command(typer.core.TyperCommand(name, help=summary, short_help=summary))
    listed = type(top)(listing, info_name="payflow", max_content_width=HELP_WIDTH)
    parts = ["### `payflow`", "", "```text", listing.get_help(listed).rstrip(), "```", ""]
    for name in dict.fromkeys(COMMAND_MODULES):
        parts += _command_help(root.commands[name], name, top)
    return "\n".join(parts)


def _command_help(command: Any, name: str, parent: Any) -> list[str]:
    context = type(parent)(command, info_name=name, parent=parent)
    path = context.command_path
    text = command.get_help(context).rstrip()
    lines = [f"### `{path}`", "", "```text", text, "```", ""]
    for sub_name, sub in getattr(command, "commands", {}).items():
        lines += _command_help(sub, sub_name, context)
    return lines


def settings_markdown() -> str:
    """One row per `Settings` field: its variable, default, limits and description."""
    from payflow.settings import Settings

    lines = ["| variable | default | meaning |", "|---|---|---|"]
    for name, field in Settings.model_fields.items():
        default = field.get_default(call_default_factory=True)
        meaning = (field.description or "").strip()
        limits = _limits(field.metadata)
        if limits:
            meaning += f" Accepted: {limits}."
        lines.append(f"| `PAYFLOW_{name.upper()}` | {_shown(default)} | {meaning} |")
    return "\n".join(lines) + "\n"


def _shown(default: object) -> str:
    if default is None:
        return "unset"
    if isinstance(default, dict):
        return f"`{json.dumps(default)}`"
    if isinstance(default, float) and default.is_integer():
        return f"`{int(default)}`"
    return f"`{default}`"


def _limits(metadata: list[Any]) -> str:
    words = {"ge": "at least", "gt": "more than", "le": "at most", "lt": "less than"}
    found = [
        f"{word} {getattr(item, key)}"
        for item in metadata
        for key, word in words.items()
        if getattr(item, key, None) is not None
    ]
    return ", ".join(found)


def columns_markdown() -> str:
    """The batch columns table, from the destination rules table."""
    from payflow.schemas.columns_doc import columns_markdown as table
    from payflow.schemas.rules import load_rules

    return table(load_rules())


BLOCKS = (
    Block("commands", "reference/commands.md", commands_markdown),
    Block("settings", "reference/settings.md", settings_markdown),
    Block("columns", "columns.md", columns_markdown),
)


def runnable_blocks(page_text: str) -> list[tuple[str, int]]:
    """Each runnable block of a page, in order, with the exit status it ends with."""
    return [(body, int(code or 0)) for code, body in RUNNABLE.findall(page_text)]


def with_block(page_text: str, block: Block) -> str:
    """The page with its block replaced by what the code says now."""
    start, end = f"<!-- {block.name}:start -->\n", f"<!-- {block.name}:end -->"
    if start not in page_text or end not in page_text:
        raise ValueError(f"docs/{block.page} has no {start.strip()} ... {end} markers")
    before, rest = page_text.split(start, 1)
    after = rest.split(end, 1)[1]
    return f"{before}{start}{block.build()}{end}{after}"


def stale_pages(docs: Path = DOCS) -> list[str]:
    """The pages whose generated block is not what the code says now."""
    return [
        block.page
        for block in BLOCKS
        if (text := (docs / block.page).read_text("utf-8")) != with_block(text, block)
    ]


def write_pages(docs: Path = DOCS) -> list[str]:
    """Rewrite every stale block in place; the pages rewritten."""
    written = []
    for block in BLOCKS:
        page = docs / block.page
        text = page.read_text("utf-8")
        fresh = with_block(text, block)
        if fresh != text:
            page.write_text(fresh, "utf-8")
            written.append(block.page)
    return written


if __name__ == "__main__":
    changed = write_pages()
    print("\n".join(f"rewrote docs/{page}" for page in changed) or "docs: every block is current")
    sys.exit(0)
