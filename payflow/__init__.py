"""payflow: bulk payouts through the payments service, each row paid exactly once."""

from payflow.exiting import skip_exit_collections

__version__ = "0.1.0"

# Here, so that every process that loads payflow ends without the collector's passes over
# what is alive (payflow.exiting): each command, and each flow run a worker starts, whichever
# entrypoint file it loads (some, such as flows/watchdog.py, import no payflow.flows module).
skip_exit_collections()
