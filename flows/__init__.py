"""Prefect flows. A flow-run process (a deployment's, on a worker) imports this package first."""

from payflow.exiting import skip_exit_collections

# A worker starts a process for each flow run: its end skips the collector's passes as a
# `payflow` command's does (payflow.exiting).
skip_exit_collections()
