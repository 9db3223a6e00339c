"""A report appears whole or not at all: written beside its target, then renamed over it."""

from __future__ import annotations

import grp
import os
import stat
from pathlib import Path

import pytest

from payflow.atomic import created, replaced, replaced_together


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


def test_files_that_belong_together_replace_their_targets_only_when_all_are_written(
    tmp_path: Path,
) -> None:
    csv_file, xlsx_file = tmp_path / "b-rejects.csv", tmp_path / "b-rejects.xlsx"
    csv_file.write_text("old csv\n", encoding="utf-8")
    with pytest.raises(OSError), replaced_together(csv_file, xlsx_file) as (csv_part, _):
        csv_part.write_text("new csv\n", encoding="utf-8")
        raise OSError(28, "No space left on device")  # the XLSX could not be written
    assert csv_file.read_text(encoding="utf-8") == "old csv\n"  # not a new CSV beside no XLSX
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b-rejects.csv"]


def test_a_new_file_never_replaces_one_and_is_owner_only_from_the_start(tmp_path: Path) -> None:
    target = tmp_path / "claims.csv"
    with created(target, 0o600) as part:
        assert stat.S_IMODE(part.stat().st_mode) == 0o600
        part.write_text("url\n", encoding="utf-8")
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    with pytest.raises(FileExistsError), created(target, 0o600) as part:
        part.write_text("other\n", encoding="utf-8")
    assert target.read_text(encoding="utf-8") == "url\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["claims.csv"]
