"""payflow: bulk payouts through the payments service, each row paid exactly once."""

__version__ = "0.1.0"
