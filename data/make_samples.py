# ruff: noqa: E501  (one sample row per line reads as a table)
"""Write the sample batches in data/ (run: python data/make_samples.py).

`batch_clean.csv` / `batch_clean.xlsx`: a valid mixed batch (SBP, SIM in XOF and KES,
BANK_ACCOUNT). `batch_errors.csv`: one broken rule per row; each row's `note` names the rule it
breaks (`expect <rule>`), so tests can check every row against its own expectation.
"""

from __future__ import annotations

import csv
from pathlib import Path

from openpyxl import Workbook

HERE = Path(__file__).resolve().parent
HEADER = [
    "externalId", "amount", "currency", "paymentType", "requisites", "bankName", "name",
    "userId", "serviceId", "bik", "userEmail", "userIp", "callbackUrl", "note",
]  # fmt: skip
BIK = "044525225"
ACCOUNT = (
    "40817810899910004312"  # check key fitted to BIK by payflow.schemas.requisites.account_with_key
)

CLEAN = [
    ["ok-sbp-1", "1500", "RUB", "SBP", "79161234567", "100000000111", "Иванов Иван", "u-1", "", "", "ivan@example.com", "", "", ""],
    ["ok-sbp-2", "2750.50", "RUB", "SBP", "79031112233", "Т-Банк", "Петрова Анна", "u-2", "", "", "", "", "", ""],
    ["ok-xof-1", "15000", "XOF", "SIM", "2250700001234", "", "Kouadio Yao", "u-3", "201", "", "yao@example.com", "196.28.0.1", "", ""],
    ["ok-kes-1", "2500", "KES", "SIM", "254712345678", "", "Wanjiru Kamau", "u-4", "", "", "", "", "https://merchant.example/hook", ""],
    ["ok-acct-1", "10000.25", "RUB", "BANK_ACCOUNT", ACCOUNT, "", "Сидоров Пётр", "u-5", "", BIK, "", "", "", ""],
]  # fmt: skip

ERRORS = [
    ["e-1", "", "XOF", "SIM", "2250700001234", "", "A", "u1", "", "", "", "", "", "expect amount_present"],
    ["e-2", "1 500", "XOF", "SIM", "2250700001234", "", "A", "u2", "", "", "", "", "", "expect amount_format"],
    ["e-3", "0", "XOF", "SIM", "2250700001234", "", "A", "u3", "", "", "", "", "", "expect amount_positive"],
    ["e-4", "100", "XYZ", "SIM", "2250700001234", "", "A", "u4", "", "", "", "", "", "expect currency_iso4217"],
    ["e-5", "100", "XOF", "CARD", "2250700001234", "", "A", "u5", "", "", "", "", "", "expect payment_type_known"],
    ["e-6", "100", "XOF", "SIM", "", "", "A", "u6", "", "", "", "", "", "expect requisites_present"],
    ["e-7", "100", "XOF", "SIM", "2250700001234", "", "", "u7", "", "", "", "", "", "expect name_present"],
    ["e-8", "100", "XOF", "SIM", "2250700001234", "", "A", "", "", "", "", "", "", "expect user_id_present"],
    ["e-9", "100", "XOF", "SIM", "2250700001234", "", "A", "u" * 256, "", "", "", "", "", "expect user_id_length"],
    ["e" * 256, "100", "XOF", "SIM", "2250700001234", "", "A", "u10", "", "", "", "", "", "expect external_id_length"],
    ["e-dup", "100", "XOF", "SIM", "2250700001234", "", "A", "u11", "", "", "", "", "", "expect external_id_unique"],
    ["e-dup", "105", "XOF", "SIM", "2250700001234", "", "A", "u12", "", "", "", "", "", "expect external_id_unique"],
    ["e-13", "100", "XOF", "SIM", "2250700001234", "", "A", "u13", "2O1", "", "", "", "", "expect service_id_integer"],
    ["e-14", "100", "XOF", "SIM", "2250700001234", "", "A", "u14", "", "", "mail@", "", "", "expect user_email_format"],
    ["e-15", "100", "XOF", "SIM", "2250700001234", "", "A", "u15", "", "", "", "10.0.0.300", "", "expect user_ip_format"],
    ["e-16", "100", "XOF", "SIM", "2250700001234", "", "A", "u16", "", "", "", "", "ftp://x", "expect callback_url_format"],
    ["e-17", "100", "RUB", "BANK_ACCOUNT", ACCOUNT, "", "A", "u17", "", "4452522", "", "", "", "expect bik_format"],
    ["e-18", "100", "XOF", "SIM", "2250700001234", "", "Line\nbreak", "u18", "", "", "", "", "", "expect no_control_characters"],
    ["e-19", "100", "USD", "SIM", "2250700001234", "", "A", "u19", "", "", "", "", "", "expect currency_for_destination"],
    ["e-20", "100", "XOF", "SIM", "+2250700001234", "", "A", "u20", "", "", "", "", "", "expect requisites_intl_wallet_phone"],
    ["e-21", "100", "RUB", "SBP", "+7 916 123-45-67", "100000000111", "A", "u21", "", "", "", "", "", "expect requisites_ru_mobile_phone"],
    ["e-22", "100", "RUB", "BANK_ACCOUNT", "40702810099910004312", "", "A", "u22", "", "", "", "", "", "expect requisites_ru_individual_account"],
    ["e-23", "100", "USD", "EMAIL", "not-an-email", "", "A", "u23", "", "", "", "", "", "expect requisites_email_address"],
    ["e-24", "100", "KES", "SIM", "2250700001234", "", "A", "u24", "", "", "", "", "", "expect wallet_country_code"],
    ["e-25", "102", "XOF", "SIM", "2250700001234", "", "A", "u25", "", "", "", "", "", "expect amount_step"],
    ["e-26", "100.50", "KES", "SIM", "254712345678", "", "A", "u26", "", "", "", "", "", "expect amount_step"],
    ["e-27", "100", "RUB", "SBP", "79161234567", "", "A", "u27", "", "", "", "", "", "expect bank_name_required"],
    ["e-28", "100", "RUB", "BANK_ACCOUNT", "40817810199910004312", "", "A", "u28", "", BIK, "", "", "", "expect account_check_key"],
    ["e-29", "100", "RUB", "SBP", "79161234567", "Банк Которого Нет", "A", "u29", "", "", "", "", "", "expect sbp_bank_not_found"],
    ["e-30", "100", "RUB", "SBP", "79160000000", "100000000111", "A", "u30", "", "", "", "", "", "expect sbp_no_bank_for_phone"],
    ["e-31", "100", "XOF", "SIM", "2250700001234", "", "A", "u31", "999", "", "", "", "", "expect service_unknown"],
    ["e-32", "100", "XOF", "SIM", "2250700001234", "", "A", "u32", "205", "", "", "", "", "expect service_mismatch"],
]  # fmt: skip


def _write_csv(path: Path, rows: list[list[str]]) -> None:
    with path.open("w", encoding="utf-8", newline="") as handle:
        csv.writer(handle).writerows([HEADER, *rows])


def _write_xlsx(path: Path, rows: list[list[str]]) -> None:
    workbook = Workbook()
    sheet = workbook.active
    assert sheet is not None
    sheet.title = "payouts"
    for row in [HEADER, *rows]:
        sheet.append(row)
    workbook.save(path)


def main() -> None:
    """Write every sample file."""
    _write_csv(HERE / "batch_clean.csv", CLEAN)
    _write_xlsx(HERE / "batch_clean.xlsx", CLEAN)
    _write_csv(HERE / "batch_errors.csv", ERRORS)


if __name__ == "__main__":
    main()
