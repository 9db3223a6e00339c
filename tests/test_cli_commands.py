"""The `payflow` command line loads only the command it runs; help still lists every command.

payflow.cli imports a command's module only when that command is named (payflow/cli/__init__.py):
`--help` and a mistyped command show the others from placeholders built from their sources.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from cli.cli_support import sim_instruction

from payflow.cli import COMMAND_MODULES, command_summaries
from payflow.ledger import Ledger

HEAVY = ("prefect", "pandas", "pandera", "openpyxl", "numpy", "httpx")
SHOW_LOADED = f"""
import sys
from payflow.cli import main
try:
    main(sys.argv[1:])
finally:
    print("loaded:", sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r})))
"""


def _payflow(args: list[str], home: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PAYFLOW_", "PREFECT_"))}
    env["PAYFLOW_HOME"] = str(home)
    return subprocess.run(
        [sys.executable, "-c", SHOW_LOADED, *args],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def test_help_lists_every_command_with_its_summary_and_loads_nothing_heavy(tmp_path):
    shown = _payflow(["--help"], tmp_path)
    assert shown.returncode == 0, shown.stderr
    listed = " ".join(shown.stdout.split())  # help wraps long summaries over lines
    for name, summary in command_summaries().items():
        assert f" {name} " in listed
        assert " ".join(summary.split()[:4]) in listed, name
    assert set(command_summaries()) == set(COMMAND_MODULES)
    assert "loaded: []" in shown.stdout


def test_a_mistyped_command_is_one_suggestion_not_a_traceback(tmp_path):
    shown = _payflow(["valdate", "batch.csv"], tmp_path)
    assert shown.returncode == 2
    assert "No such command 'valdate'. Did you mean 'validate'?" in shown.stderr
    assert "Traceback" not in shown.stderr


def test_a_usage_error_is_one_line_naming_the_command_s_help(tmp_path):
    # click printed four lines: the usage, a hint, a blank line and then the error.
    for args, line in (
        (["sandbox", "--json"], "No such option: --json (see `payflow sandbox --help`)"),
        (["validate"], "Missing argument 'file'. (see `payflow validate --help`)"),
    ):
        shown = _payflow(args, tmp_path)
        assert shown.returncode == 2, shown.stderr
        assert shown.stderr.splitlines() == [f"payflow: {line}"]


def test_a_named_command_runs_with_its_own_help(tmp_path):
    shown = _payflow(["validate", "--help"], tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "Usage: payflow validate" in shown.stdout
    assert "Check every row of a batch" in shown.stdout
    links = _payflow(["links", "--help"], tmp_path)
    assert links.returncode == 0, links.stderr
    assert "Usage: payflow links" in links.stdout


def test_approving_and_paying_a_batch_load_no_file_reader(tmp_path):
    # pandas and pandera read batch files; an approval or a pay run reads none, and each
    # `payflow approve` and each pay-batch flow process paid about 0.5 s of CPU to load them.
    approve = _payflow(["approve", "no-such-batch"], tmp_path)
    assert approve.returncode == 2, approve.stderr
    assert "'pandas'" not in approve.stdout.splitlines()[-1]
    pay_run = subprocess.run(
        [sys.executable, "-c", "import sys, payflow.flows.pay_batch; print(sorted(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert "'pandas'" not in pay_run.stdout
    assert "'pandera'" not in pay_run.stdout


def test_the_commands_that_read_the_ledger_load_no_file_reader_prefect_or_api_client(tmp_path):
    # `payflow status BATCH` loaded pandas, numpy and openpyxl (for a report's file name and a
    # line about past sandboxes), `batches` numpy and `approve` Prefect's client: 0.5-0.8 s of
    # CPU per call for what none of them reads or resumes on its common path. Each also loaded
    # the API client (httpx) through the reconcile and api packages' inits, and `findings` the
    # reconciliation and openpyxl through its module's imports: 0.1-0.4 s more.
    rows = [sim_instruction("b1", n) for n in (1, 2)]
    with Ledger.open(f"sqlite:///{tmp_path / 'ledger.sqlite3'}") as ledger:
        ledger.register_batch("b1", "b1.csv", rows, [])
    for args, code in (
        (["status", "b1"], 1),  # rows not sent yet
        (["batches"], 0),
        (["policy", "show"], 0),
        (["approve", "b1"], 2),  # nobody signed in: refused before any decision
        (["findings", "b1"], 0),
        (["reconcile", "b1"], 2),  # the embedded sandbox is gone: nobody to ask
    ):
        shown = _payflow(args, tmp_path)
        assert shown.returncode == code, (args, shown.stderr)
        assert shown.stdout.splitlines()[-1] == "loaded: []", (args, shown.stdout)
    assert "b1-1" in _payflow(["status", "b1"], tmp_path).stdout


CTRL_C_WHILE_LOADING = """
import importlib, sys
from payflow.cli import main
real = importlib.import_module
def interrupted(name, package=None):
    if name == "payflow.cli.run":
        raise KeyboardInterrupt  # Ctrl-C in the seconds the command's module imports
    return real(name, package)
importlib.import_module = interrupted
main(["run", "batch.csv"])
"""


def test_ctrl_c_while_a_command_loads_is_one_line_not_a_traceback(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PAYFLOW_", "PREFECT_"))}
    env["PAYFLOW_HOME"] = str(tmp_path)
    shown = subprocess.run(
        [sys.executable, "-c", CTRL_C_WHILE_LOADING],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert (shown.returncode, shown.stderr) == (130, "payflow: interrupted\n")


VALIDATE_ON_THE_SANDBOX = """
import sys
from pathlib import Path
from payflow.cli.validate import validate_file
from payflow.settings import Settings
report, sandbox = validate_file(Path(sys.argv[1]), settings=Settings())
assert sandbox and report.valid == 2, (sandbox, report.as_json())
from payflow.intake.report_files import write_rejects_report
write_rejects_report(report, Path(sys.argv[2]))
print(sorted({m.split('.')[0] for m in sys.modules} & {"sqlalchemy", "alembic"}))
print(sorted(m for m in sys.modules if m.startswith(("payflow.ledger", "payflow.reconcile"))))
"""


def test_validating_on_the_embedded_sandbox_loads_no_ledger(tmp_path):
    # The embedded sandbox's validation opens no ledger: the ledger's modules and SQLAlchemy
    # (about 0.5 s of CPU) came in through the kept lists, the reports package's init and the
    # rejects report's heading row (it lived in the reconciliation workbook's module).
    batch = tmp_path / "batch.csv"
    batch.write_text(
        "externalId,amount,currency,paymentType,requisites,bankName,name,userId\n"
        "v-1,1000,XOF,SIM,2250700000001,,Kouadio Yao,u1\n"
        "v-2,100.50,RUB,SBP,79000000002,100000000111,Иван,u2\n",
        encoding="utf-8",
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PAYFLOW_", "PREFECT_"))}
    env["PAYFLOW_HOME"] = str(tmp_path)
    shown = subprocess.run(
        [sys.executable, "-c", VALIDATE_ON_THE_SANDBOX, str(batch), str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines()[-2:] == ["[]", "[]"], shown.stdout
