"""An emulator of the payments service: same endpoints, state machine, signed webhooks, faults.

Imports nothing from `payflow.api`, so the client and the sandbox check each other.
"""

from payflow.sandbox.app import create_app
from payflow.sandbox.config import FaultSettings, SandboxConfig
from payflow.sandbox.server import SandboxServer

__all__ = ["FaultSettings", "SandboxConfig", "SandboxServer", "create_app"]
