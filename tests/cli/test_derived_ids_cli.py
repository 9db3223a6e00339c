"""End to end through `payflow run` against the sandbox (issue 7, item 1): a file without
externalIds, edited, reordered and saved again with CRLF line endings, pays nobody twice; a
repeat under another externalId is held until the maker's `--allow-repeat`, and is then paid
only once a second person approved it (`payflow approve --acknowledge-warnings`, `payflow pay`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_support import payflow_env, run_payflow
from paid_here import run_paid_here
from support.operators import as_person
from support.stats import sandbox_stats

HEADER = "amount,currency,paymentType,requisites,name,userId"
ROWS = [
    "1000,XOF,SIM,2250700000101,Awa Kone,u-1",
    "2000,XOF,SIM,2250700000202,Yao Kouadio,u-2",
    "3000,XOF,SIM,2250700000303,Kofi Mensah,u-3",
]


@pytest.fixture(scope="module")
def prefect_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("prefect-home")


def _write(path: Path, lines: list[str], newline: str = "\n") -> Path:
    path.write_bytes(newline.join(lines).encode() + newline.encode())
    return path


def _posts(url: str) -> dict[str, int]:
    attempts: dict[str, int] = sandbox_stats(url)["createAttempts"]  # type: ignore[assignment]
    return attempts


# Each test runs `payflow run` (a Prefect flow in a subprocess) once to three times.
pytestmark = pytest.mark.timeout(900)


def test_an_edited_reordered_crlf_copy_pays_nobody_twice(tmp_path, prefect_home, make_sandbox):
    sandbox = make_sandbox()
    env = payflow_env(
        tmp_path / "home",
        prefect_home,
        PAYFLOW_API_URL=sandbox.url,
        PAYFLOW_API_TOKEN=sandbox.token,
    )
    # Set-up: the file paid under its derived ids, as `payflow run --yes` leaves it.
    run_paid_here(_write(tmp_path / "a.csv", [HEADER, *ROWS]), env, sandbox)
    paid = _posts(sandbox.url)
    assert len(paid) == 3 and set(paid.values()) == {1}
    assert all(external_id.startswith("pf-") for external_id in paid)

    # The same rows, reordered, one extra row added and the file saved with CRLF line endings.
    edited = [HEADER, ROWS[2], "4000,XOF,SIM,2250700000404,Ama Owusu,u-4", ROWS[0], ROWS[1]]
    second = run_payflow(
        ["run", str(_write(tmp_path / "b.csv", edited, "\r\n")), "--yes", "--json"], env, tmp_path
    )
    assert second.returncode == 0, second.stderr
    summary = json.loads(second.stdout)
    assert summary["statuses"] == {"COMPLETED": 4}
    after = _posts(sandbox.url)
    assert len(after) == 4 and set(after.values()) == {1}, after
    assert set(paid) < set(after)


def test_a_repeat_under_another_external_id_is_held_until_allowed(
    tmp_path, prefect_home, make_sandbox
):
    sandbox = make_sandbox()
    env = payflow_env(
        tmp_path / "home",
        prefect_home,
        PAYFLOW_API_URL=sandbox.url,
        PAYFLOW_API_TOKEN=sandbox.token,
    )
    header = "externalId," + HEADER
    first_file = _write(tmp_path / "march.csv", [header, "mar-1," + ROWS[0]])
    run_paid_here(first_file, env, sandbox)  # set-up: mar-1 paid, as `payflow run` leaves it
    assert _posts(sandbox.url) == {"mar-1": 1}

    again = _write(tmp_path / "april.csv", [header, "apr-1," + ROWS[0], "apr-2," + ROWS[1]])
    held = run_payflow(["run", str(again), "--yes"], env, tmp_path)

    assert held.returncode == 1, held.stderr
    assert "1 row held" in held.stdout and "row 2 apr-1: repeats mar-1" in held.stdout
    # The figures add up to the file's rows: the held one is named beside the new one.
    assert "0 rejected, 0 pending, 1 new, 1 held" in held.stdout
    assert "--allow-repeat" in held.stdout
    assert _posts(sandbox.url) == {"mar-1": 1, "apr-2": 1}

    allowed = run_payflow(["run", str(again), "--yes", "--allow-repeat", "--json"], env, tmp_path)
    assert allowed.returncode == 1, allowed.stderr
    waiting = json.loads(allowed.stdout)
    batch_id = waiting["batch_id"]
    assert waiting["waiting_for_approvals"] == 1
    assert f"waiting for approval by 1 person: payflow approve {batch_id}" in allowed.stderr
    assert _posts(sandbox.url) == {"mar-1": 1, "apr-2": 1}, "the maker alone paid a repeat"

    checker = as_person(env, "checker", "checker")
    unacknowledged = run_payflow(["approve", batch_id], checker, tmp_path)
    assert unacknowledged.returncode == 2 and "acknowledge these warnings" in unacknowledged.stderr
    # It named no way to acknowledge them.
    assert unacknowledged.stderr.rstrip().endswith(
        "nothing was recorded: once read, approve with --acknowledge-warnings"
    ), unacknowledged.stderr
    approved = run_payflow(["approve", batch_id, "--acknowledge-warnings"], checker, tmp_path)
    assert approved.returncode == 0, approved.stderr
    assert f"nothing is paying it yet: pay it with `payflow pay {batch_id}`" in approved.stdout
    paid = run_payflow(["pay", batch_id, "--json"], env, tmp_path)
    assert paid.returncode == 0, paid.stderr
    assert json.loads(paid.stdout)["statuses"] == {"COMPLETED": 2}
    assert _posts(sandbox.url) == {"mar-1": 1, "apr-1": 1, "apr-2": 1}


def test_an_amount_edited_after_its_row_was_paid_waits_for_a_second_person(
    tmp_path, prefect_home, make_sandbox
):
    # Found by hand: 110.00 paid, the cell edited to 115.00, the file run again: a second
    # payout to the same person, no hold and no word about it.
    sandbox = make_sandbox()
    env = payflow_env(
        tmp_path / "home",
        prefect_home,
        PAYFLOW_API_URL=sandbox.url,
        PAYFLOW_API_TOKEN=sandbox.token,
    )
    # Set-up: the row paid under its derived id, as `payflow run` leaves it.
    run_paid_here(_write(tmp_path / "a.csv", [HEADER, ROWS[0]]), env, sandbox)
    assert len(_posts(sandbox.url)) == 1
    edited = _write(tmp_path / "a.csv", [HEADER, ROWS[0].replace("1000,", "1005,", 1)])
    second = run_payflow(["run", str(edited), "--yes"], env, tmp_path)
    assert second.returncode == 1, second.stderr
    assert "waiting for approval by 1 person" in second.stderr
    assert "pays 1005 XOF to a recipient paid 1000 XOF by pf-" in second.stderr
    assert "if the amount was corrected, that payout already went" in second.stderr
    assert len(_posts(sandbox.url)) == 1, "the edited row was paid by the maker alone"
    # Its status said `payflow pay` sends the row, and that pay refused: waiting for approval.
    batch_id = second.stderr.split("payflow: batch ", 1)[1].split(" ", 1)[0]
    status = run_payflow(["status", batch_id, "--no-refresh"], env, tmp_path)
    assert status.stdout.splitlines()[-1] == (
        "rows not sent (VALIDATED) or left being sent (SUBMITTING): the batch is waiting for "
        f"approval by 1 person, never its maker: `payflow approve {batch_id}`, then `payflow pay "
        f"{batch_id}` sends each once"
    )
