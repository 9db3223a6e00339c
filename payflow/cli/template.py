"""`payflow template`: an empty batch to fill in, with one example row per destination."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from payflow.cli.app import app, fail
from payflow.intake.template_files import write_template_csv, write_template_xlsx
from payflow.opening import UnwritablePath, check_new_file
from payflow.redact import printable
from payflow.schemas.column_rules import TEMPLATE_EXAMPLE_PREFIX
from payflow.schemas.columns_doc import EXAMPLES, column_docs, example_rows
from payflow.schemas.rules import ANY_CURRENCY, load_rules
from payflow.wording import counted

EMAIL_CURRENCIES = ("USD", "EUR")


@app.command("template")
def template_command(
    as_csv: Annotated[bool, typer.Option("--csv", help="Write a CSV (default: XLSX).")] = False,
    as_xlsx: Annotated[bool, typer.Option("--xlsx", help="Write an XLSX (the default).")] = False,
    types: Annotated[
        str, typer.Option("--type", help="Destinations with an example row, comma-separated.")
    ] = ",".join(EXAMPLES),
    out: Annotated[Path | None, typer.Option("--out", help="File to write.")] = None,
) -> None:
    """Write a batch template: the header, one example row per destination that validates."""
    if as_csv and as_xlsx:
        fail("choose one of --csv and --xlsx")
    wanted = [t.strip().upper() for t in types.split(",") if t.strip()]
    unknown = [t for t in wanted if t not in EXAMPLES]
    if unknown or not wanted:
        fail(f"--type takes some of {', '.join(EXAMPLES)}; not {', '.join(unknown) or 'nothing'}")
    if out is not None and not as_csv and not as_xlsx:
        as_csv = out.suffix.lower() == ".csv"  # `--out t.csv` alone asks for a CSV
    name = "payflow-template.csv" if as_csv else "payflow-template.xlsx"
    path = out or Path(name)
    try:  # never written over: perhaps a template already filled in
        check_new_file(path, name)
    except UnwritablePath as exc:
        fail(str(exc))
    wanted_suffix = Path(name).suffix
    if path.suffix.lower() != wanted_suffix:
        # A CSV named t.xlsx (or the reverse) is opened by Excel as a broken workbook.
        fail(
            f"{printable(str(path))} does not end in {wanted_suffix}, the kind of file asked for: "
            f"name it {printable(str(path.with_suffix(wanted_suffix)))}"
        )
    rows = example_rows(wanted)
    try:
        if as_csv:
            write_template_csv(rows, path)
        else:
            table = load_rules()
            notes = [["column", "required", "accepted headers", "rules"]] + [
                [d.name, "yes" if d.required else "no", d.headers.replace("`", ""), d.rules]
                for d in column_docs(table)
            ]
            # EMAIL takes any ISO code: the list offers the usual ones and only warns on others.
            named = [d.currency for d in table.destinations if d.currency != ANY_CURRENCY]
            choices = {
                "currency": list(dict.fromkeys([*named, *EMAIL_CURRENCIES])),
                "paymentType": sorted(table.payment_types),
            }
            write_template_xlsx(rows, notes, choices, path)
    except OSError as exc:
        fail(f"cannot write {path}: {exc.strerror or exc}")
    print(
        f"template: {path} ({counted(len(rows) - 1, 'example row')}: {', '.join(wanted)}); "
        f"replace them with your rows: a row whose externalId starts {TEMPLATE_EXAMPLE_PREFIX} "
        "is never paid"
    )
