"""Counts read as sentences: one row is "1 row", never "1 rows", and the to-pay table stays
aligned whatever the count."""

from decimal import Decimal

from payflow.cli.run import totals_lines
from payflow.ledger.counts import BatchCounts, CurrencyTotal
from payflow.wording import counted, plural


def test_one_is_singular_and_every_other_count_plural():
    assert [counted(n, "row") for n in (0, 1, 2, 11)] == ["0 rows", "1 row", "2 rows", "11 rows"]
    assert plural(1, "payout") == "payout" and plural(21, "payout") == "payouts"
    assert counted(2, "batch") == "2 batches" and counted(1, "batch") == "1 batch"
    assert counted(2, "person") == "2 people" and counted(1, "person") == "1 person"


def test_the_to_pay_table_says_1_row_and_keeps_its_columns():
    to_pay = (
        CurrencyTotal("KES", "SIM", 1, Decimal("15000")),
        CurrencyTotal("XOF", "SIM", 12, Decimal("6000")),
    )
    lines = totals_lines(BatchCounts("b1", {"VALIDATED": 13}, to_pay))
    assert lines[0].startswith("in the ledger: 13 rows: ")
    kes, xof = lines[2], lines[3]
    assert "      1 row   " in kes and "     12 rows  " in xof
    assert len(kes) == len(xof) and kes.endswith(" 15000") and xof.endswith(" 6000")


def test_the_links_summary_says_1_claim_url(capsys):
    from payflow.cli.links import _print
    from payflow.flows.links import LinksResult
    from payflow.links.report import LinksFigures

    figures = LinksFigures(claims={"OPEN": 1}, statuses={"VALIDATED": 1}, unpaid=[])
    result = LinksResult("b1", "issue", "r.csv", "r.xlsx", figures, rows=1)
    result.claims_issued, result.claims_file = 1, "/reports/b1-claims.csv"
    _print(result, as_json=False, sandbox=False)
    assert "claims: 1 claim URL in /reports/b1-claims.csv (owner-only)" in capsys.readouterr().out


def test_conflicting_rows_are_not_called_rejected_beside_a_summary_of_0_rejected():
    # "2 rows, 2 valid, 0 rejected" was followed by "in the ledger: ... 2 rejected".
    [line] = totals_lines(BatchCounts("b1", {"CONFLICT": 2, "REJECTED": 1}))
    assert line == (
        "in the ledger: 3 rows: 0 already paid, 0 failed, 1 rejected, 2 refused as conflicts, "
        "0 pending, 0 new"
    )


def test_a_webhook_url_without_the_receivers_path_is_named():
    # Set without /webhooks, every delivery failed and nothing said so.
    from payflow.cli.run import _receiver_path

    assert _receiver_path("https://pay.example.com/webhooks")
    assert _receiver_path("https://pay.example.com/payflow/webhooks/")
    assert not _receiver_path("https://pay.example.com")
    assert not _receiver_path("https://pay.example.com/hooks")


def test_row_states_read_in_an_operators_words():
    # Found by use: a batch waiting for approval, declined or expired read "3 VALIDATED".
    from payflow.wording import state_words, unsent_words

    assert state_words("VALIDATED") == "not sent yet"
    assert state_words("VALIDATED", unsent_words(waiting=True)) == "waiting for approval"
    assert state_words("VALIDATED", unsent_words(declined_by="carl")) == "declined by carl"
    assert state_words("VALIDATED", unsent_words(expired=True, waiting=True)) == (
        "approval expired"
    )
    assert state_words("SUBMITTING", "declined by carl") == "being sent"
    assert state_words("COMPLETED") == "COMPLETED"  # the service's statuses keep their names
    assert unsent_words() is None
