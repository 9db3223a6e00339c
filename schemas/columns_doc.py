"""The batch columns as an operator reads them: the docs' table (docs/columns.md) and the
template's example rows, both built from the rules table so neither can drift from what
validation checks.

`python -m payflow.schemas.columns_doc` prints the table; `python -m payflow.docs_pages` writes
it into docs/columns.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from payflow.intake.columns import ALL_COLUMNS, REQUIRED_COLUMNS
from payflow.schemas.column_rules import MAX_LENGTHS, TEMPLATE_EXAMPLE_PREFIX
from payflow.schemas.recipients import CANONICAL_FORMS
from payflow.schemas.requisites import REQUISITES_RULES, account_with_key
from payflow.schemas.rules import ANY_CURRENCY, RulesTable, load_rules

BIK = "044525225"
GENERAL = {
    "amount": "digits with a point, at most 2 decimals (`1500.50`); positive; in a `;` file also "
    "`1 500,50`",
    "currency": "ISO 4217 code in capitals; the pair with paymentType must be enabled "
    "(GET /v1/payouts/services)",
    "paymentType": "one of",
    "requisites": "sent exactly as written; no spaces",
    "name": "recipient name",
    "userId": "your id of the recipient, as the service knows it; no space at either end",
    "serviceId": "whole number from the services list; must pay this paymentType and currency",
    "bankName": "",
    "externalId": "your payout id: Latin letters, digits, `. _ ~ - ! $ & ' ( ) * + , ; = : @`; "
    "unique in the file",
    "note": "free text",
    "userEmail": "e-mail address",
    "userPhone": "recipient phone",
    "userIp": "IPv4 or IPv6 address",
    "callbackUrl": "http(s) URL for this payout's webhooks",
    "bik": "",
}
EXAMPLES = {
    "SBP": {"amount": "1500.00", "currency": "RUB", "requisites": "79161234567",
            "bankName": "Сбербанк"},
    "SIM": {"amount": "15000", "currency": "XOF", "requisites": "2250700001234"},
    "BANK_ACCOUNT": {"amount": "2500.50", "currency": "RUB",
                     "requisites": account_with_key(BIK, "40817810099910004312"), "bik": BIK},
    "EMAIL": {"amount": "10.00", "currency": "USD", "requisites": "who@example.com"},
}  # fmt: skip


@dataclass(frozen=True)
class ColumnDoc:
    """One row of the columns table."""

    name: str
    required: bool
    headers: str
    rules: str


def accepted_headers(column: str) -> str:
    """Spellings the header matcher accepts (case, spaces, `_`, `-` and `.` are ignored)."""
    words = "".join(f" {c}" if c.isupper() else c for c in column).split()
    return ", ".join(
        dict.fromkeys(
            [
                f"`{column}`",
                f"`{'_'.join(w.lower() for w in words)}`",
                f"`{' '.join(words).title()}`",
            ]
        )
    )


def column_docs(table: RulesTable) -> list[ColumnDoc]:
    """Every batch column with its rules, the destination-specific ones read from `table`."""
    by_destination: dict[str, list[str]] = {}
    for d in table.destinations:
        currency = "any currency" if d.currency == ANY_CURRENCY else d.currency
        by_destination.setdefault(f"{d.payment_type}", []).append(currency)
    rules = dict(GENERAL)
    steps = [
        f"{d.currency} {_step(d.amount_step_cents)}"
        for d in table.destinations
        if d.amount_step_cents > 1
    ]
    rules["amount"] += "; " + ", ".join(steps) + "; whole in any currency without cents (JPY)"
    rules["paymentType"] += " " + "; ".join(
        f"{t} ({', '.join(c)})" for t, c in sorted(by_destination.items())
    )
    requisites = {
        d.payment_type: REQUISITES_RULES[d.requisites_rule].message for d in table.destinations
    }
    rules["requisites"] += "; " + "; ".join(f"{t}: {m}" for t, m in sorted(requisites.items()))
    forms = sorted((t, CANONICAL_FORMS[t]) for t in requisites if t in CANONICAL_FORMS)
    rules["requisites"] += (
        "; compared in canonical form (derived externalId, repeat check, report), never sent so: "
        + "; ".join(f"{t} {form}" for t, form in forms)
    )
    banks = sorted({d.payment_type for d in table.destinations if d.bank_id_required})
    rules["bankName"] = f"required for {', '.join(banks)}: a bank id or the exact bank name"
    rules["bik"] = "9 digits starting 04; checks the account's key for BANK_ACCOUNT"
    docs = []
    for column in ALL_COLUMNS:
        text = rules[column]
        if column in MAX_LENGTHS:
            text += f"; at most {MAX_LENGTHS[column]} characters"
        docs.append(ColumnDoc(column, column in REQUIRED_COLUMNS, accepted_headers(column), text))
    return docs


def _step(cents: int) -> str:
    return "whole" if cents == 100 else f"a multiple of {(Decimal(cents) / 100).normalize():f}"


def columns_markdown(table: RulesTable) -> str:
    """The columns table of docs/columns.md."""
    lines = ["| column | required | accepted headers | rules |", "|---|---|---|---|"]
    for doc in column_docs(table):
        required = "yes" if doc.required else "no"
        lines.append(f"| `{doc.name}` | {required} | {doc.headers} | {doc.rules} |")
    return "\n".join(lines) + "\n"


def example_rows(payment_types: list[str]) -> list[list[str]]:
    """Header and one example row per destination: each passes every rule but the one that
    keeps a template's example row from being paid (`template_example`)."""
    rows = [list(ALL_COLUMNS)]
    for n, payment_type in enumerate(payment_types, start=1):
        cells = {
            "paymentType": payment_type,
            "name": "Иванов Иван" if payment_type in ("SBP", "BANK_ACCOUNT") else "Kouadio Yao",
            "userId": f"user-{n}",
            "externalId": f"{TEMPLATE_EXAMPLE_PREFIX}{payment_type.lower()}-{n}",
            "note": f"example {payment_type} payout",
            **EXAMPLES[payment_type],
        }
        rows.append([cells.get(column, "") for column in ALL_COLUMNS])
    return rows


if __name__ == "__main__":
    print(columns_markdown(load_rules()), end="")
