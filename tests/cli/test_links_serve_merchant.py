"""`payflow links serve` asks the merchantId before it answers a claim: a service whose
merchantId the widget refuses is said in one line at start, not as an error page later."""

from __future__ import annotations

from pathlib import Path

from cli_support import payflow_env, run_payflow
from support.servers import free_port


def test_links_serve_refuses_in_one_line_a_merchant_id_that_is_no_uuid(
    tmp_path: Path, make_sandbox
) -> None:
    sandbox = make_sandbox(merchant_id="m-1")
    env = payflow_env(
        tmp_path / "home",
        tmp_path / "prefect",
        PAYFLOW_API_URL=sandbox.url,
        PAYFLOW_API_TOKEN=sandbox.token,
        PAYFLOW_WIDGET_URL=sandbox.url,
    )
    done = run_payflow(["links", "serve", "--port", str(free_port())], env, tmp_path, timeout=60)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last == (
        "payflow: cannot answer claims: the balance response gives merchantId 'm-1', not a UUID:"
        " the widget refuses links signed for it"
    ), done.stderr
