"""The `payflow` command line: `main` wraps the typer app so no traceback reaches an operator.

Commands load lazily: `payflow CMD ...` imports only CMD's module, and `payflow --help` imports
none (each command's one-line help is read from its module's source), so asking for help never
pays for pandas, SQLAlchemy or Prefect.
"""

from __future__ import annotations

import ast
import importlib
import logging
import sys
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

import typer

# typer 0.29 carries its own click and exports none of its usage errors by a public name.
from typer._click.exceptions import NoArgsIsHelpError, UsageError

from payflow import collecting
from payflow.cli.app import CommandError, app

if TYPE_CHECKING:
    from payflow.file_access import FileAccess

# Each module registers its commands on `app` when imported; the key is the command's name.
COMMAND_MODULES = {
    "validate": "validate",
    "run": "run",
    "status": "status",
    "batches": "batches",
    "reconcile": "reconcile",
    "findings": "reconcile",
    "refund": "refund",
    "links": "links",
    "sandbox": "sandbox",
    "webhooks": "webhooks",
    "template": "template",
    "rerun": "rerun",
    "approve": "approve",
    "pay": "pay",
    "console": "console",
    "submit": "approve",
    "login": "signin",
    "logout": "signin",
    "whoami": "signin",
    "policy": "policy",
    "watchdog": "watchdog",
    "stop": "stop",
}


def _import_command(module: str) -> bool:
    try:
        importlib.import_module(f"payflow.cli.{module}")
    except ModuleNotFoundError as exc:
        if exc.name != f"payflow.cli.{module}":
            raise
        return False
    return True


def _register_commands() -> None:
    """Import every command module (tests and tools that want the whole app)."""
    for module in dict.fromkeys(COMMAND_MODULES.values()):
        _import_command(module)


def _command_name(function: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """ "run" for `@app.command("run")`, the function's name for `@app.command()`, else None."""
    for decorator in function.decorator_list:
        if not (isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Attribute)):
            continue
        if decorator.func.attr != "command":
            continue
        if not decorator.args:
            return function.name.replace("_", "-")
        first = decorator.args[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            return first.value
    return None


@cache
def command_summaries() -> dict[str, str]:
    """Each command's one-line help, from its function's docstring, without importing it."""
    summaries: dict[str, str] = {}
    here = Path(__file__).parent
    for name, module in COMMAND_MODULES.items():
        source = here / f"{module}.py"
        if not source.exists():
            continue
        tree = ast.parse(source.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and (
                _command_name(node) == name
            ):
                summaries[name] = _first_paragraph(ast.get_docstring(node) or "")
        # A sub-app (`payflow links`): the help given to its `typer.Typer(help=...)`.
        for node in ast.walk(tree):
            if name in summaries or not isinstance(node, ast.Call):
                continue
            for keyword in node.keywords:
                value = keyword.value
                if keyword.arg == "help" and isinstance(value, ast.Constant):
                    summaries[name] = _first_paragraph(str(value.value))
    return summaries


def _first_paragraph(docstring: str) -> str:
    # A docstring's first sentence may wrap: the summary is its first paragraph, on one line.
    return " ".join(docstring.split("\n\n")[0].split())


def _requested_command(args: list[str]) -> str | None:
    """The command named on the line (the first word that is not an option), if any."""
    for arg in args:
        if not arg.startswith("-"):
            return arg if arg in COMMAND_MODULES else None
    return None


def _command_group(loaded: set[str]) -> typer.core.TyperGroup:
    """The click group of `app`, with a placeholder (name and help) for each unloaded command.

    A command that loaded runs alone: the placeholders are for the command list of `--help` and
    of a mistyped command, and reading their summaries parses every command's source (70 ms)."""
    group = typer.main.get_command(app)
    assert isinstance(group, typer.core.TyperGroup)
    if loaded:
        return group
    for name, summary in command_summaries().items():
        if name not in group.commands:
            group.add_command(typer.core.TyperCommand(name, help=summary, short_help=summary))
    return group


def _home() -> Path:
    return _home_and_access()[0]


def _home_and_access() -> tuple[Path, FileAccess]:
    """PAYFLOW_HOME and the access new files get (PAYFLOW_SHARED_GROUP's, else owner-only)."""
    from pydantic import ValidationError
    from pydantic_settings import SettingsError

    from payflow.file_access import FileAccess, shared_group_id
    from payflow.settings import Settings

    try:
        settings = Settings()
    except (ValidationError, SettingsError):  # the command itself says which setting, in a line
        return Settings.model_fields["home"].default, FileAccess()
    group = settings.shared_group
    return settings.home, FileAccess(shared_group_id(group) if group else None)


def _start(wanted: str, loaded: set[str]) -> None:
    """The command's settings and its module's imports (added to `loaded` once imported)."""
    from payflow.file_access import use_umask
    from payflow.quiet import quiet_prefect

    home, access = _home_and_access()
    # Files others create for this process (Prefect's, SQLite's) get no more than ours.
    use_umask(access)
    # Before any command module imports Prefect: its logging is configured once, at import.
    quiet_prefect(home, access)
    if _import_command(COMMAND_MODULES[wanted]):
        loaded.add(wanted)


def _usage_line(exc: UsageError) -> str:
    """A usage error in one line, with where the command's options are listed."""
    where = f" (see `{exc.ctx.command_path} --help`)" if exc.ctx is not None else ""
    return f"{exc.format_message()}{where}"


def main(argv: list[str] | None = None) -> None:
    """Entry point of the `payflow` console script. Called with `argv` (a test, a tool), it
    freezes none of its caller's objects (`collecting.settle`)."""
    args = list(sys.argv[1:] if argv is None else argv)
    wanted = _requested_command(args)
    loaded: set[str] = set()
    try:
        # Inside the try: Ctrl-C during the seconds a command's module imports (pandas,
        # Prefect) printed a KeyboardInterrupt traceback.
        if wanted is not None:
            with collecting.paused():
                _start(wanted, loaded)
            if argv is None:  # the process's own command: not a test's or a tool's call
                collecting.settle()
        # Not standalone: click's own handling printed a usage error as four lines (usage, a
        # hint, a blank line, the error); each is one line here, as every other refusal is.
        code = _command_group(loaded).main(args=args, prog_name="payflow", standalone_mode=False)
        raise SystemExit(code if isinstance(code, int) else 0)
    except NoArgsIsHelpError as exc:  # `payflow` alone: the help, as before
        exc.show()
        raise SystemExit(exc.exit_code) from None
    except UsageError as exc:
        print(f"payflow: {_usage_line(exc)}", file=sys.stderr)
        raise SystemExit(exc.exit_code) from None
    except typer.TyperException as exc:  # the other errors of click's parsing
        print(f"payflow: {exc.format_message()}", file=sys.stderr)
        raise SystemExit(exc.exit_code) from None
    except typer.Abort:  # end of input at a question (Ctrl-C there ends in exit 130)
        print("payflow: no answer; nothing was done", file=sys.stderr)
        raise SystemExit(1) from None
    except CommandError as exc:
        print(f"payflow: {exc}", file=sys.stderr)
        raise SystemExit(exc.exit_code) from None
    except KeyboardInterrupt:
        print("payflow: interrupted", file=sys.stderr)
        raise SystemExit(130) from None
    except Exception as exc:
        from payflow.file_access import FileAccessRefused
        from payflow.quiet import log_to_file
        from payflow.runtime import ConfigurationError

        # A setting to fix, or a file another OS user keeps (docs/multi-user.md): one line.
        if isinstance(exc, ConfigurationError | FileAccessRefused):
            print(f"payflow: configuration: {exc}", file=sys.stderr)
            raise SystemExit(2) from None
        from payflow.prefect_server import slow_start_line

        if (slow := slow_start_line(exc)) is not None:  # a busy machine: the setting to raise
            print(f"payflow: {slow}", file=sys.stderr)
            raise SystemExit(2) from None
        # A bug or a surprise: the operator gets one line, the log file gets the traceback.
        log = log_to_file(_home())
        logging.getLogger("payflow").exception("unexpected error")
        print(
            f"payflow: unexpected error ({type(exc).__name__}); details in {log}",
            file=sys.stderr,
        )
        raise SystemExit(2) from None
