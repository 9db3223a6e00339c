"""The tests' quiet period: how long their pay runs wait after a payout's last news before
polling it (`PAYFLOW_TRACK_QUIET_PERIOD`, 5 s by default).

A test sandbox (`support.sandbox`, and the `payflow sandbox` of the deployment tests) finishes a
payout in well under a second and sends no webhook unless a test gives it a receiver, so the
default made every pay run sit 5 s idle before its first poll. At 1 s the first poll still
finds the payout final (in `support.sandbox` a 6666 payout's correction too, 0.4 s after it
completed), and the embedded sandbox's webhooks (within its 0.7 s of delays) still come before
any poll of `payflow run` in the command-line tests.

Given to in-process pay runs by tests/conftest.py (their flows read `Settings()` from the
environment), to the command line by `cli.cli_support.payflow_env`, and to the deployment tests'
workers in their environments. Tests about tracking's patience call `track_batch` or build
`Settings` with their own value, which this does not reach.
"""

from __future__ import annotations

TRACK_QUIET_PERIOD = "1"
