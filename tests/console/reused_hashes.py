"""One argon2 hash per password for a test module's operators.

Every console test adds its operators (mia, carl, mark; the approval tests' alice, bob, carol)
with one password, and each `add_operator` hashed it again: a quarter of a CPU second a person,
most of a page test's own CPU. A hash made once is as true a hash of that password (salted once,
not per person), so sign-in still verifies it in full: only the making is shared. Import the
fixture into a module (`from reused_hashes import one_hash_per_password  # noqa: F401`).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from payflow.console import operators


class _OneHashPerPassword:
    """Stands in for the module's `PasswordHasher`: `hash` remembers, the rest is the real one."""

    def __init__(self, real: object) -> None:
        self._real = real
        self._made: dict[str, str] = {}

    def hash(self, password: str) -> str:
        if password not in self._made:
            self._made[password] = self._real.hash(password)  # type: ignore[attr-defined]
        return self._made[password]

    def __getattr__(self, name: str) -> object:
        return getattr(self._real, name)


@pytest.fixture(scope="module", autouse=True)
def one_hash_per_password() -> Iterator[None]:
    """For the module: `add_operator` hashes each distinct password once."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(operators, "_HASHER", _OneHashPerPassword(operators._HASHER))
        yield
