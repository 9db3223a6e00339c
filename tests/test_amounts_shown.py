"""Every amount an operator reads carries its currency's decimals (RUB 2, XOF 0, KWD 3), from one
helper, `schemas.iso4217.amount_text`: the command line, the approval form, the rerun preview,
the console and the balance check said "250" where the report's cells said 250.00."""

from __future__ import annotations

from decimal import Decimal

import pytest

from payflow.cli.run import totals_lines
from payflow.console.pages import totals_text
from payflow.ledger.counts import BatchCounts, CurrencyTotal
from payflow.paying.balance import compare_balance
from payflow.rerun.preview import PreviewGroup, group_lines
from payflow.schemas.iso4217 import amount_text, money_words


@pytest.mark.parametrize(
    ("amount", "currency", "shown"),
    [
        ("250", "RUB", "250.00"),
        ("2750.5", "RUB", "2750.50"),
        ("1500", "XOF", "1500"),
        ("1500.00", "XOF", "1500"),
        ("1.25", "KWD", "1.250"),
        ("0", "RUB", "0.00"),
        ("-12.5", "EUR", "-12.50"),
        ("1E+3", "RUB", "1000.00"),
        ("250", "rub", "250.00"),
        ("250", None, "250.00"),  # unknown: two decimals, as ISO 4217's default
        # More decimals than the currency has are shown as they are, never rounded away.
        ("10.005", "RUB", "10.005"),
        ("2.5", "XOF", "2.5"),
        # Paid in whole units by every destination of the rules table (issue 36): "7300.00" read
        # as if cents were possible; a real fraction still shows.
        ("7300", "KES", "7300"),
        ("7300.00", "GHS", "7300"),
        ("7300", "TZS", "7300"),
        ("7300.5", "TZS", "7300.50"),
    ],
)
def test_an_amount_carries_its_currencys_decimals_and_is_never_rounded(amount, currency, shown):
    assert amount_text(Decimal(amount), currency) == shown


def test_money_words_and_amount_text_agree():
    assert money_words(Decimal(250), "RUB") == "250.00 RUB"
    assert money_words(Decimal(1500), "XOF") == "1500 XOF"
    assert money_words(None, None) == "? ?"


def test_the_run_commands_to_pay_table_shows_whole_rubles_with_kopecks():
    to_pay = (
        CurrencyTotal("RUB", "SBP", 1, Decimal("250")),
        CurrencyTotal("XOF", "SIM", 2, Decimal("1500.00")),
    )
    rub, xof = totals_lines(BatchCounts("b1", {"VALIDATED": 3}, to_pay))[2:]
    assert rub.endswith(" 250.00") and xof.endswith(" 1500")
    assert len(rub) == len(xof)


def test_the_balance_shortfall_names_amounts_with_the_currencys_decimals():
    check = compare_balance({"RUB": Decimal(250), "XOF": Decimal(1500)}, {"RUB": Decimal(100)})
    assert check.message == (
        "balance too low, nothing submitted: RUB needs 250.00, balance 100.00 (short 150.00); "
        "XOF needs 1500, balance 0 (short 1500)"
    )


def test_the_rerun_preview_and_the_console_totals_show_the_currencys_decimals():
    group = PreviewGroup("Recipient not found", "fix_details", "check the details")
    group.totals = {"RUB": Decimal(250), "XOF": Decimal(1500)}
    assert group_lines(group)[0].endswith(": 250.00 RUB, 1500 XOF")
    totals = [CurrencyTotal("RUB", "SBP", 1, Decimal(250)), CurrencyTotal("RUB", "SBP", 1, 5)]
    assert totals_text(totals) == "255.00 RUB"
