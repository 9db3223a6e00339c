"""`payflow policy show|set|confirm`: the approval policy is ledger data with versions; only an
admin changes it, and a change that loosens a limit waits for a second admin."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from payflow.cli.app import app, fail
from payflow.cli.setup import prepare, readable_file
from payflow.runtime import open_ledger

policy_app = typer.Typer(
    help="The approval policy in the ledger: show it, set a new version, confirm one.",
    no_args_is_help=True,
)
app.add_typer(policy_app, name="policy")


@policy_app.command("show")
def show_command(
    versions: Annotated[
        bool, typer.Option("--versions", help="List every version, who set and confirmed it.")
    ] = False,
) -> None:
    """Print the active policy (its version, who set it and when) and any proposal waiting."""
    from payflow.approvals.store import active_policy, policy_versions

    settings = prepare()
    with open_ledger(settings) as ledger:
        active = active_policy(ledger)
        every = policy_versions(ledger)
    if versions:
        for one in every:
            state = (
                f"confirmed by {one.confirmed_by} {one.confirmed_at:%Y-%m-%d %H:%M} UTC"
                if one.confirmed_at
                else "waiting for a second admin"
            )
            mark = " (active)" if one.version == active.version else ""
            typer.echo(
                f"version {one.version}{mark}: proposed by {one.proposed_by} "
                f"{one.proposed_at:%Y-%m-%d %H:%M} UTC, {state}"
            )
        return
    typer.echo(
        f"# approval policy version {active.version}, set by {active.proposed_by}"
        + (
            f", confirmed by {active.confirmed_by}"
            if active.confirmed_by != active.proposed_by
            else ""
        )
        + f" {active.proposed_at:%Y-%m-%d %H:%M} UTC"
    )
    typer.echo(active.body.rstrip("\n"))
    for waiting in (v for v in every if not v.confirmed and v.version > active.version):
        typer.echo(
            f"# version {waiting.version}, proposed by {waiting.proposed_by}, waits for a "
            f"second admin: payflow policy confirm {waiting.version}",
            err=True,
        )


@policy_app.command("set")
def set_command(
    file: Annotated[Path, typer.Argument(help="The new policy (YAML, as approvals.yaml).")],
) -> None:
    """Show the difference and store FILE as the next version (admins only); a version that
    loosens a limit waits for a second admin's `payflow policy confirm`."""
    from payflow.acts import NotAllowed, set_policy
    from payflow.approvals import PolicyError
    from payflow.cli.signin import acting

    settings = prepare()
    readable_file(file)
    body = file.read_text(encoding="utf-8")
    with open_ledger(settings) as ledger:
        admin = acting(settings, ledger, "admin", "changes the approval policy")
        try:
            change = set_policy(ledger, admin, body)
        except (NotAllowed, PolicyError) as exc:
            fail(f"{exc}; the policy is unchanged")
    if change.version is None:
        typer.echo("the file is the active policy already; nothing was recorded")
        return
    for line in change.diff:
        typer.echo(line)
    if change.loosened:
        print("this loosens the policy:", file=sys.stderr)
        for line in change.loosened:
            print(f"  {line}", file=sys.stderr)
        typer.echo(
            f"recorded as version {change.version.version}, proposed by {admin.name}: it takes "
            f"effect once another admin runs `payflow policy confirm {change.version.version}`"
        )
        return
    typer.echo(
        f"approval policy version {change.version.version} is active, set by {admin.name}; "
        "batches submitted before keep the version they were submitted under"
    )


@policy_app.command("confirm")
def confirm_command(
    version: Annotated[int, typer.Argument(help="The proposed version to make active.")],
) -> None:
    """Confirm another admin's proposed version (one that loosens a limit): it becomes active."""
    from payflow.acts import NotAllowed, confirm_policy
    from payflow.approvals import PolicyError
    from payflow.cli.signin import acting

    settings = prepare()
    with open_ledger(settings) as ledger:
        admin = acting(settings, ledger, "admin", "confirms an approval policy")
        try:
            confirmed = confirm_policy(ledger, admin, version)
        except (NotAllowed, PolicyError) as exc:
            fail(f"{exc}; the policy is unchanged")
    typer.echo(
        f"approval policy version {confirmed.version} is active: proposed by "
        f"{confirmed.proposed_by}, confirmed by {admin.name}"
    )
