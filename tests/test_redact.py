"""The service's text as payflow keeps and shows it: every account, card, phone and email masked
to its last four characters whatever its grouping, and an amount the operator needs kept as the
service wrote it (`payflow.redact.service_text`). When unsure, it masks."""

from __future__ import annotations

import pytest

from payflow.redact import mask_rejected, service_text

KEPT = [
    # The sandbox's 409 for a payout or refund the balance does not cover.
    "balance RUB 1249999900.00 does not cover the payout",
    "balance RUB 1250000000 does not cover the refund",
    "insufficient balance: needed 1250000000.00 RUB",
    "needed 1250000000.5 RUB, available 12.00 RUB",
    "amount 1250000000.00 exceeds the limit",
    "Amount: 99999999999.99",
    "total=1250000000.000 KWD",
    "needed 1500000000 XOF",  # a whole currency: the word and the code name it an amount
    "needed XOF 1500000000 in all",
    "short by RUB 1 250 000 000.00",
    "needed 1 250 000 000,00 RUB",
    "needed 1.250.000.000,00 EUR",
    "сумма 1 250 000 000,00 руб. превышает остаток",
    "баланс: 1250000000,50 ₽",
    "drift -1250000000.00 RUB",
    "€1250000000.00 held",
    "needed 1\u00a0250\u00a0000\u00a0000.00 RUB",
    # Fewer than ten digits before the point were never requisites, with or without a word.
    "amount must be between 1 and 99999999.99",
    "paid 12 500 000.50 yesterday",
    "rate 0.035 applied",
    # A time is not requisites.
    "unknown at 2026-11-27 10:03:04",
    "unknown at 27.11.2026 10:03:04",
    "at 2026-11-27T10:03:04.123456789Z",
]


@pytest.mark.parametrize("message", KEPT)
def test_an_amount_the_operator_needs_is_kept_as_written(message):
    assert service_text(message) == message


MASKED = [
    # Accounts, cards, phones and wallets, whatever their grouping.
    ("account 40817810099910004312 blocked", "account ****************4312 blocked"),
    ("card 4111 1111 1111 1234 declined", "card ***************1234 declined"),
    ("card 4111-1111-1111-1234", "card ***************1234"),
    ("card 4111.1111.1111.1234", "card ***************1234"),
    ("card 4111\u00a01111\u00a01111\u00a01234", "card ***************1234"),
    ("card 4111\u20091111\u20091111\u20091234", "card ***************1234"),
    ("card 4111  1111  1111  1234", "card ******************1234"),
    ("card 4111/1111/1111/1234", "card ***************1234"),
    ("card 4111_1111_1111_1234", "card ***************1234"),
    ("card 4111\u20131111\u20131111\u20131234", "card ***************1234"),
    ("phone +79161234567 unknown", "phone +*******4567 unknown"),
    ("phone 8 (912) 345-67-89", "phone *************7-89"),
    ("phone +7 (912) 345-67-89", "phone +*************7-89"),
    ("phone 912.345.6789", "phone ********6789"),
    ("phone 8.912.345.67.89", "phone ***********7.89"),
    ("wallet 225 07 00 00 12 34", "wallet **************2 34"),
    ("wallet 2250700001234", "wallet *********1234"),
    ("IBAN RU12 3456 7890 1234 5678", "IBAN ********************5678"),
    ("mail awa.kone@example.com", "mail ****************.com"),
    # Letters glued before the digits do not hide them.
    ("acct40817810099910004312 blocked", "acct****************4312 blocked"),
    ("IBAN GB82WEST12345698765432", "IBAN GB82WE************5432"),
    ("IBAN FR1420041010050500013M02606", "IBAN *****************0013M02606"),
    ("ref 1234567890123ABC", "ref *********0123ABC"),
    ("card_4111111111111111", "card_************1111"),
    ("No.40817810099910004312", "No.****************4312"),
    # A number beside an amount word or a currency that is not plainly an amount stays masked.
    ("balance of 40817810099910004312", "balance of ****************4312"),
    ("balance 40817810099910004312.00 RUB", "balance *******************2.00 RUB"),
    ("RUB 4111111111111111.00", "RUB ***************1.00"),
    ("RUB account 40817810099910004312", "RUB account ****************4312"),
    ("account 40817810099910004312 RUB", "account ****************4312 RUB"),
    ("balance RUB 4111 1111 1111 1234", "balance RUB ***************1234"),
    ("balance +7 912 345 67 89", "balance +***********7 89"),
    ("amount 0712345678.00 XOF", "amount *********8.00 XOF"),  # a leading zero: a phone
    ("needed 912.345.678.90 RUB", "needed **********8.90 RUB"),  # dots both ways: a phone
    ("needed 1250000000", "needed ******0000"),  # a whole number needs its currency too
    (
        "needed 1250000000 to 4081 7810 0999 1000 4312",
        "needed ******0000 to ********************4312",
    ),
    ("payout 1250000000.00", "payout *********0.00"),  # neither a word nor a currency
    (
        "accounts 4081781009991000431,40817810099910004312 RUB",
        "accounts ***************0431,****************4312 RUB",
    ),
    ("needed 1250000000.00 4111111111111111 RUB", "needed **************************1111 RUB"),
    # An amount beside requisites does not carry them along.
    (
        "needed 1250000000.00 RUB for card 4111 1111 1111 1234",
        "needed 1250000000.00 RUB for card ***************1234",
    ),
]


@pytest.mark.parametrize(("message", "shown"), MASKED)
def test_requisites_are_masked_whatever_their_grouping_or_neighbours(message, shown):
    assert service_text(message) == shown


def test_the_token_is_replaced_and_control_characters_escaped():
    assert service_text("token tk-9 bad\x1b[2J", "tk-9") == "token [token] bad\\x1b[2J"


@pytest.mark.parametrize(
    ("cell", "shown"),
    [
        ("+2250700009876", "+*********9876"),
        ("7935 123 0106", "**** *** 0106"),
        ("2250700001234", "*********1234"),
        ("+7ab", "+***"),  # four or fewer: all masked, as mask_requisites masks them
        ("", ""),
    ],
)
def test_a_rejected_cell_keeps_the_marks_that_caused_its_reject(cell: str, shown: str) -> None:
    assert mask_rejected(cell) == shown
