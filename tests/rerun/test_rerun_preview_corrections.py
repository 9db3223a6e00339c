"""`payflow rerun BATCH --corrections FILE` without --reviewed checks the corrections as the
rerun itself would and shows what they change, so a broken file is found before anyone sends;
a bik column checks a corrected account number."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli.cli_support import payflow_env, run_payflow
from paying_support import register, row

from payflow.intake import RawBatch, ValidationReport
from payflow.ledger import Ledger
from payflow.model import PayoutInstruction
from payflow.redact import mask_requisites
from payflow.rerun import RerunRefused, apply_corrections, read_corrections
from payflow.schemas.validation import validate_rows


@pytest.fixture
def failed_batch(ledger: Ledger) -> str:
    batch_id = register(ledger, [row("fix-3", 3, last4="2222")])
    ledger.claim_for_submit(batch_id, "w", 10)
    ledger.mark_created("fix-3", "p-fix-3", "FAILED", "Recipient not found")
    return batch_id


def _preview(tmp_path: Path, ledger_url: str, batch_id: str, corrections: str):
    path = tmp_path / "fix.csv"
    path.write_text(corrections, encoding="utf-8")
    env = payflow_env(tmp_path / "home", tmp_path / "prefect", PAYFLOW_LEDGER_URL=ledger_url)
    return run_payflow(
        ["rerun", batch_id, "--rows", "3", "--corrections", str(path)], env, tmp_path
    )


def test_the_preview_shows_what_the_corrections_change(
    tmp_path: Path, ledger: Ledger, ledger_url: str, failed_batch: str
) -> None:
    before = ledger.payout_instruction("fix-3")
    assert before is not None

    done = _preview(
        tmp_path, ledger_url, failed_batch, "externalId,requisites\nfix-3,2250700030009\n"
    )

    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[-2:] == [
        "  corrected: row 3 (fix-3): requisites *********0009"
        f" (was {mask_requisites(before.requisites)})",
        "nothing was sent; add --reviewed to send them",
    ]
    assert "2250700030009" not in done.stdout + done.stderr  # requisites masked


@pytest.mark.parametrize(
    ("corrections", "said"),
    [
        (
            "externalId,requisites\nfix-3,+225 07 abc\n",
            "payflow: corrections break the batch rules: fix-3: requisites",
        ),
        (
            "externalId,requisites,amount\nfix-3,2250700030009,99\n",
            "payflow: fix-3: a rerun cannot change the amount;",
        ),
        (
            "externalId,requisites\nnot-chosen,2250700030009\n",
            "payflow: corrections name 'not-chosen', which is not among the rows rerun",
        ),
    ],
)
def test_a_broken_corrections_file_is_refused_by_the_preview(
    tmp_path: Path, ledger_url: str, failed_batch: str, corrections: str, said: str
) -> None:
    done = _preview(tmp_path, ledger_url, failed_batch, corrections)

    assert done.returncode == 2, done.stdout
    assert done.stdout == ""
    assert done.stderr.startswith(said), done.stderr
    assert "Traceback" not in done.stderr


def test_a_bik_column_checks_a_corrected_account_number(tmp_path: Path) -> None:
    # The ledger keeps no bik, so only a bik given beside the correction can catch a mistyped
    # account: with it the key is checked, as in a batch file; without it the account passes.
    original = row("acc-1", 2)._replace(
        currency="RUB", payment_type="BANK_ACCOUNT", requisites="40817810299910000042"
    )

    def validate(raw: RawBatch) -> ValidationReport:
        return validate_rows(raw, services=None, banks_for_phones=None)

    def apply(text: str) -> dict[str, PayoutInstruction]:
        path = tmp_path / "fix.csv"
        path.write_text(text, encoding="utf-8")
        return apply_corrections({"acc-1": original}, read_corrections(path), {}, validate)

    with pytest.raises(RerunRefused, match=r"acc-1: requisites: .*\(account_check_key\)"):
        apply("externalId,requisites,bik\nacc-1,40817810299910000043,044525225\n")
    fixed = apply("externalId,requisites,bik\nacc-1,40817810899910001111,044525225\n")
    assert fixed["acc-1"].requisites == "40817810899910001111"
    unchecked = apply("externalId,requisites\nacc-1,40817810299910000043\n")
    assert unchecked["acc-1"].requisites == "40817810299910000043"
