"""The public surface of payflow.api and payflow.ledger is pinned: a change here is deliberate.

As httpx's tests/test_exported_members.py: `__all__` is exactly the list below, every name in it
is importable, and a star import brings in those names and nothing else.
"""

from __future__ import annotations

import importlib

import pytest

EXPORTED = {
    "payflow.api": ["AsyncPayoutsClient", "PayoutsClient", "RetryPolicy", "Throttle"],
    "payflow.ledger": [
        "DEFAULT_LEASE_SECONDS",
        "FINAL_STATUSES",
        "NOT_PAID_STATES",
        "NOT_SENT_PREFIX",
        "PAID_OUTCOMES",
        "PENDING_STATES",
        "REPEAT_WINDOW",
        "RERUNNABLE_STATES",
        "SENT_STATES",
        "TERMINAL_STATES",
        "TO_SEND_STATES",
        "TRANSITIONS",
        "UNSENT_WORDS",
        "ApprovalRecord",
        "AttemptView",
        "AttemptsOutcome",
        "BalanceLine",
        "BatchCounts",
        "BatchFacts",
        "BulkOutcome",
        "ClaimedPayout",
        "ClaimedRefund",
        "ConflictRow",
        "CreatedPayout",
        "CreatedRefund",
        "CurrencyTotal",
        "Detected",
        "Disposition",
        "EventSource",
        "FindingEventView",
        "FindingKind",
        "FindingState",
        "FindingView",
        "FindingsSync",
        "HeldRow",
        "IllegalTransition",
        "IntakeWarning",
        "KnownRow",
        "LeaseLost",
        "Ledger",
        "LedgerError",
        "MessageTotal",
        "Movement",
        "NewAttempt",
        "OutcomeTotal",
        "PaidTotal",
        "ParentView",
        "PayoutRef",
        "RefundBook",
        "RefundRef",
        "RefundRegisterOutcome",
        "RefundRowView",
        "RegisterOutcome",
        "RejectedRefund",
        "RejectedRow",
        "ReportLine",
        "RowOutcome",
        "RowState",
        "RowView",
        "ServiceView",
        "StatusEventView",
        "StatusUpdate",
        "UnknownFinding",
        "UnknownPayout",
        "UnknownRefund",
        "UnsentReason",
        "UnsentTotal",
        "WordSource",
        "utc_now",
    ],
}


@pytest.mark.parametrize("module_name", sorted(EXPORTED))
def test_all_is_the_pinned_list(module_name):
    module = importlib.import_module(module_name)
    assert sorted(module.__all__) == sorted(EXPORTED[module_name])
    assert len(set(module.__all__)) == len(module.__all__), "a name is listed twice"


@pytest.mark.parametrize("module_name", sorted(EXPORTED))
def test_every_exported_name_is_importable(module_name):
    module = importlib.import_module(module_name)
    missing = [name for name in EXPORTED[module_name] if not hasattr(module, name)]
    assert missing == []
    namespace: dict[str, object] = {}
    exec(f"from {module_name} import *", namespace)
    namespace.pop("__builtins__")
    assert sorted(namespace) == sorted(EXPORTED[module_name])


LAZY_PACKAGES = ["payflow.api", "payflow.paying", "payflow.reconcile", "payflow.reporting"]


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_a_lazy_package_names_no_name_after_one_of_its_modules(package: str) -> None:
    # A package that loads its names on first use (`_HOMES`) hands out a submodule instead of
    # the name once that submodule is imported, when both are spelled alike (acts' `decide`).
    import pkgutil

    module = importlib.import_module(package)
    modules = {name for _, name, _ in pkgutil.iter_modules(module.__path__)}
    assert set(module._HOMES) <= set(module.__all__)
    assert not modules & set(module._HOMES)
    for name, home in module._HOMES.items():
        assert getattr(module, name) is getattr(importlib.import_module(f"{package}.{home}"), name)
