"""A package's names loaded on first use (PEP 562's module `__getattr__`): a command that needs
one small module of a package does not import the package's heavy ones with its init."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping


def names_loader(package: str, homes: Mapping[str, str]) -> Callable[[str], object]:
    """The `__getattr__` of `package`: each name of `homes` from its home module, imported on
    first use; any other name is no attribute. No name may be spelled like a module of the
    package (that module would shadow it once imported: tests/test_exported_members.py)."""

    def __getattr__(name: str) -> object:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{home}"), name)

    return __getattr__
