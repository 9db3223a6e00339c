"""A command line checks the ledger's service binding once, and the flows it runs in its own
process take it as checked (`binding_checked_here`): `payflow pay` asked GET
/v1/merchants/balance twice for one check, `payflow run` once per flow. Any other run (another
ledger, URL or token; a flow started outside the block: a worker, the console) checks again."""

from __future__ import annotations

import pytest
from pydantic import SecretStr
from support.stats import sandbox_stats

from payflow.api.errors import AuthError
from payflow.connections import binding_checked_here, run_target
from payflow.settings import Settings


def _settings(tmp_path, url: str, token: str, ledger: str = "ledger") -> Settings:
    return Settings(
        api_url=url,
        api_token=SecretStr(token),
        ledger_url=f"sqlite:///{tmp_path / f'{ledger}.sqlite3'}",
    )


def _reads(url: str) -> int:
    return int(sandbox_stats(url)["balanceReads"])


def test_a_flow_inside_the_command_lines_block_does_not_ask_again(tmp_path, make_sandbox):
    sandbox = make_sandbox()
    settings = _settings(tmp_path, sandbox.url, sandbox.token)
    with binding_checked_here(settings, sandbox=False):
        assert _reads(sandbox.url) == 1  # the command line's own check
        for _ in range(2):  # an intake flow, then a pay flow, as `payflow run` runs them
            with run_target(settings, sandbox.url + "/", sandbox=False) as target:
                assert not target.sandbox
        assert _reads(sandbox.url) == 1
        # Another ledger, or the same service with another token, is another check.
        with run_target(_settings(tmp_path, sandbox.url, sandbox.token, "other")):
            pass
        assert _reads(sandbox.url) == 2
        # Refused before the route counts it: the AuthError is the proof it asked.
        wrong = _settings(tmp_path, sandbox.url, "not-the-token")
        with pytest.raises(AuthError), run_target(wrong, sandbox.url, sandbox=False):
            pass
    # Once the block is left (a later flow of a long-lived process: the console), it checks.
    with run_target(settings, sandbox.url, sandbox=False):
        pass
    assert _reads(sandbox.url) == 3


def test_a_refused_check_marks_nothing(tmp_path, make_sandbox):
    sandbox = make_sandbox()
    wrong = _settings(tmp_path, sandbox.url, "not-the-token")
    with pytest.raises(AuthError), binding_checked_here(wrong, sandbox=False):
        pass
    with pytest.raises(AuthError), run_target(wrong, sandbox.url, sandbox=False):
        pass
