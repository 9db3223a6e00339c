"""Two real OS users and a group, made for one test run (as root) and removed at its end.

`two_os_users` is a session fixture: `useradd` a maker and a checker, `groupadd` the group
they share the ledger through, and a folder tree every one of them can reach (pytest's own
tmp folders are root's 0700). `OsUsers.run(user, args, env)` runs `payflow ARGS` as that user
through `runuser`, with exactly `env` (nothing of root's environment leaks in).
"""

from __future__ import annotations

import os
import secrets
import shutil
import stat
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest


@dataclass(frozen=True)
class OsUsers:
    """The run's users, their group and the folders made for them."""

    maker: str
    checker: str
    group: str
    base: Path  # 0711 root: each user's own folder and the shared one are inside

    def home_of(self, user: str) -> Path:
        """The user's own folder (their HOME; PAYFLOW_HOME and PREFECT_HOME go inside)."""
        return self.base / user

    def shared(self) -> Path:
        """The shared folder as docs/multi-user.md sets it up: group-owned, 2770."""
        return self.base / "shared"

    python: str  # an interpreter every user may run (the venv's may live under /root)

    def run(
        self,
        user: str,
        args: list[str],
        env: dict[str, str],
        timeout: float = 240,
        answer: str | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """`payflow ARGS` run as the OS user `user`, in their folder, with only `env`; `answer`
        is its standard input (a password), else none."""
        variables = [f"{key}={value}" for key, value in env.items()]
        command = ["runuser", "-u", user, "--", "env", "-i", *variables, self.python]
        return subprocess.run(
            [*command, "-c", _PAYFLOW_WITH_THIS_VENV, *args],
            cwd=self.home_of(user),
            capture_output=True,
            text=True,
            timeout=timeout,
            input=answer,
            stdin=None if answer is not None else subprocess.DEVNULL,
            check=False,
        )


# This test process's packages (payflow's editable install included) on any Python of its version.
_PAYFLOW_WITH_THIS_VENV = (
    "import site, sys; "
    f"site.addsitedir({sysconfig.get_paths()['purelib']!r}); "
    "sys.argv[0] = 'payflow'; "
    "from payflow.cli import main; main()"
)


def _runnable_by_anyone(path: Path) -> bool:
    """Whether every user may run `path`: world-executable, in folders anyone may enter."""
    resolved = path.resolve()
    folders = [folder for folder in resolved.parents if folder != folder.parent]
    return resolved.is_file() and all(
        os.stat(place).st_mode & stat.S_IXOTH for place in (resolved, *folders)
    )


def _shared_python() -> str | None:
    """This Python, or the system's of the same version, when another user may run it."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    for candidate in (sys.executable, f"/usr/bin/{version}", f"/usr/local/bin/{version}"):
        if Path(candidate).exists() and _runnable_by_anyone(Path(candidate)):
            return str(Path(candidate).resolve())
    return None


def _run(*command: str) -> None:
    subprocess.run(command, check=True, capture_output=True, timeout=60)


@pytest.fixture(scope="session")
def two_os_users() -> Iterator[OsUsers]:
    """A maker, a checker and their group, unique to this run; removed at the end."""
    if os.geteuid() != 0 or shutil.which("useradd") is None or shutil.which("runuser") is None:
        pytest.skip("needs root with useradd and runuser to create two OS users (CI runs as root)")
    python = _shared_python()
    if python is None:
        pytest.skip(f"no Python {sys.version_info[:2]} that other OS users may run")
    tag = f"{os.getpid() % 100000}{secrets.token_hex(2)}"
    maker, checker, group = f"pfm{tag}", f"pfc{tag}", f"pfg{tag}"
    base = Path(tempfile.mkdtemp(prefix="payflow-users-"))
    made: list[tuple[str, ...]] = []
    try:
        os.chmod(base, 0o711)
        _run("groupadd", group)
        made.append(("groupdel", group))
        for user in (maker, checker):
            _run("useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", "-G", group, user)
            made.append(("userdel", user))
            home = base / user
            home.mkdir(mode=0o700)
            shutil.chown(home, user, user)
        shared = base / "shared"
        shared.mkdir()
        shutil.chown(shared, "root", group)
        os.chmod(shared, 0o2770)  # as docs/multi-user.md says: install -d -m 2770 -g GROUP
        yield OsUsers(maker, checker, group, base, python)
    finally:
        for command in reversed(made):
            subprocess.run(command, check=False, capture_output=True, timeout=60)
        shutil.rmtree(base, ignore_errors=True)
