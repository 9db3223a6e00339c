"""A refund or links batch id given to a command about payout batches is named for what it is:
`payflow reconcile` read a refund batch as a payout batch with nothing to check and exited 0,
`payflow approve` called it "already approved", and `payflow status` of a links batch said there
was no such batch. (`payflow approve` and `payflow status` now act on every kind.)"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
from cli_support import payflow_env, run_payflow

from payflow.cli.app import CommandError
from payflow.cli.batch_kinds import require_batch, require_payout_batch
from payflow.ledger import Ledger
from payflow.links.records import LinkRow
from payflow.links.store import LinkStore
from payflow.model import PayoutInstruction, RefundInstruction
from payflow.settings import Settings

ORDER = "0b8f3c2e-5a1d-4e6b-9f7a-1000000000aa"


def _ledger_with_each_kind(home: Path) -> str:
    """A ledger holding the payout batch `pay`, the refund batch `back` and the links batch
    `gifts`; its URL."""
    url = f"sqlite:///{home / 'ledger.sqlite3'}"
    home.mkdir(parents=True, exist_ok=True)
    with Ledger.open(url) as ledger:
        payout = PayoutInstruction(2, "p-1", Decimal(100), "XOF", "SIM", "22507000001", "Awa", "u")
        ledger.register_batch("pay", "pay.csv", [payout], [])
        refund = RefundInstruction(2, "r-1", ORDER, Decimal("10.00"), "RUB")
        ledger.refunds.register_batch("back", "back.csv", [refund], [])
    store = LinkStore.open(url)
    store.register("gifts", "gifts.csv", [LinkRow(2, "gift-1", "anna", Decimal("10"))])
    store.close()
    return url


def _refusal(settings: Settings, ledger: Ledger, batch_id: str) -> str:
    with pytest.raises(CommandError) as refused:
        require_payout_batch(settings, ledger, batch_id)
    assert refused.value.exit_code == 2
    return str(refused.value)


def test_each_kind_of_batch_is_named_for_what_it_is(tmp_path, monkeypatch):
    home = tmp_path / "home"
    url = _ledger_with_each_kind(home)
    monkeypatch.setenv("PAYFLOW_HOME", str(home))
    settings = Settings()
    with Ledger.open(url) as ledger:
        require_payout_batch(settings, ledger, "pay")  # a payout batch goes on
        assert _refusal(settings, ledger, "back") == (
            "back is a refund batch, not a payout batch: `payflow status back` shows its refunds"
        )
        assert _refusal(settings, ledger, "gifts") == (
            "gifts is a links batch, not a payout batch: `payflow links report gifts` shows it"
        )
        assert _refusal(settings, ledger, "nope") == f"no batch 'nope' in the ledger at {home}"
        require_batch(settings, ledger, "gifts", "links")
        with pytest.raises(CommandError) as refused:
            require_batch(settings, ledger, "pay", "links")
        assert str(refused.value) == (
            "pay is a payout batch, not a links batch: `payflow status pay` shows it"
        )


def test_reconcile_of_a_refund_batch_and_status_of_a_links_batch_say_so(tmp_path):
    home = tmp_path / "home"
    _ledger_with_each_kind(home)
    env = payflow_env(home, tmp_path / "prefect", PAYFLOW_API_URL="http://127.0.0.1:9")
    reconciled = run_payflow(["reconcile", "back"], env, tmp_path)
    assert (reconciled.returncode, reconciled.stdout) == (2, "")
    assert reconciled.stderr.startswith("payflow: back is a refund batch, not a payout batch")
    assert not list(home.glob("reports/back-reconciliation.*"))
    # A links batch's status is its own: rows by payout state, its approval, where its claims
    # are shown (it said "no such batch", then only which command shows it).
    status = run_payflow(["status", "gifts"], env, tmp_path)
    assert status.returncode == 1, status.stderr
    assert status.stdout.startswith("links batch gifts\n")
    assert "`payflow links report gifts` shows its claims and payouts" in status.stdout
