"""How a test makes a command count as one person's act: the one place to change when the
identity mechanism changes (issue 35: `payflow login NAME` instead of the OS user).

Today payflow records the OS user as a batch's maker and as an approver, unless PAYFLOW_USER
names someone else; a test that runs each person as their own OS user (support.os_users)
therefore only has to make sure PAYFLOW_USER does not speak for them.
"""

from __future__ import annotations


def acting_as(env: dict[str, str], os_user: str) -> dict[str, str]:
    """`env` for a command that `os_user` (running it through runuser) does as themselves."""
    return {key: value for key, value in env.items() if key != "PAYFLOW_USER"}
