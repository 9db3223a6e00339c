"""A report appears whole or not at all: written beside its target, then renamed over it."""

from __future__ import annotations

import grp
import os
import stat
from pathlib import Path

import pytest

from payflow.atomic import replaced


def test_the_new_content_replaces_the_file_and_nothing_is_left_beside_it(tmp_path: Path) -> None:
    target = tmp_path / "b-reconciliation.csv"
    target.write_text("old\n", encoding="utf-8")
    with replaced(target) as part:
        part.write_text("new\n", encoding="utf-8")
        assert target.read_text(encoding="utf-8") == "old\n"  # readers see the old file meanwhile
    assert target.read_text(encoding="utf-8") == "new\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b-reconciliation.csv"]


def test_a_failure_while_writing_keeps_the_old_file_and_removes_the_part(tmp_path: Path) -> None:
    target = tmp_path / "b-reconciliation.xlsx"
    target.write_bytes(b"old")
    with pytest.raises(RuntimeError), replaced(target) as part:
        part.write_bytes(b"half")
        raise RuntimeError("disk full")
    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b-reconciliation.xlsx"]


def test_the_file_is_its_owners_only_whatever_the_umask_or_its_groups_when_shared(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A report holds requisites: 0o666 less the umask made it readable by every local user.
    previous = os.umask(0)
    try:
        with replaced(tmp_path / "r.csv") as part:
            part.write_text("x\n", encoding="utf-8")
        monkeypatch.setenv("PAYFLOW_SHARED_GROUP", grp.getgrgid(os.getegid()).gr_name)
        with replaced(tmp_path / "shared.csv") as part:
            part.write_text("x\n", encoding="utf-8")
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "r.csv").stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "shared.csv").stat().st_mode) == 0o660
