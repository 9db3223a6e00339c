"""A workbook whose sheet must be chosen is kept while its maker chooses: the choice finishes
the upload. The kept file is the session's only, owner-only, never served, read once, and
gone after its time, at sign-out or past the cap."""

from __future__ import annotations

import os
import re
import stat
import time
from pathlib import Path

import httpx
from console_support import CLEAN_ROWS, Console, csrf_of, signed_in, workbook

from payflow.console.kept_uploads import KEEP_SECONDS, KeptUploads

JANUARY = [(f"kj-{ext}", *rest) for ext, *rest in CLEAN_ROWS[:2]]
FEBRUARY = [(f"kf-{ext}", *rest) for ext, *rest in CLEAN_ROWS[:3]]


def _kept_files(console: Console) -> list[Path]:
    return sorted(console.ctx.kept_uploads_dir().iterdir())


def _offered(maker: httpx.Client, data: bytes) -> tuple[httpx.Response, str]:
    """Upload the two-sheet workbook: the refusal with its Sheet choice, and the kept token."""
    token = csrf_of(maker.get("/upload").text)
    refused = maker.post("/upload", files={"file": ("months.xlsx", data)}, data={"csrf": token})
    assert refused.status_code == 400
    found = re.search(r'name="kept" value="([^"]+)"', refused.text)
    assert found, "the form keeps no file"
    return refused, found.group(1)


def _choose(maker: httpx.Client, page: str, kept: str, sheet: str) -> httpx.Response:
    """Choose a sheet on the form, with no file in it."""
    return maker.post("/upload", data={"csrf": csrf_of(page), "kept": kept, "sheet": sheet})


def test_choosing_the_sheet_finishes_the_upload(console: Console) -> None:
    # Found by use: after choosing the sheet the maker had to choose the file again; the form
    # said so, and a sheet chosen without it read "Choose a file first."
    maker = signed_in(console, "mia")
    data = workbook({"January": JANUARY, "February": FEBRUARY})
    refused, kept = _offered(maker, data)
    assert "payout rows on 2 sheets" in refused.text and "the file again" not in refused.text
    assert "months.xlsx is kept for 15 minutes" in refused.text
    assert re.findall(r"<option>([^<]+)</option>", refused.text) == ["January", "February"]
    assert 'id="kept-file">File: <strong>months.xlsx</strong>' in refused.text
    assert not re.search(r'<input type="file"[^>]* required', refused.text)

    [path] = _kept_files(console)
    assert path.read_bytes() == data
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700

    chosen = _choose(maker, refused.text, kept, "February")
    assert chosen.status_code == 303, chosen.text
    result = maker.get(chosen.headers["location"]).text
    assert '<h2 id="source">months.xlsx, sheet February</h2>' in result
    assert "<strong>3</strong> rows" in result
    assert _kept_files(console) == []  # deleted once used

    # Read once: the same form posted again (Back, then the button) registers nothing.
    again = _choose(maker, refused.text, kept, "January")
    assert again.status_code == 400 and "no longer kept" in again.text
    assert "Choose the file again" in again.text
    assert len(console.ctx.ledger.newest_batches(10)) == 1


def test_the_kept_file_is_the_sessions_only_and_ends_with_its_time(console: Console) -> None:
    mia = signed_in(console, "mia")
    data = workbook({"January": JANUARY, "February": FEBRUARY})
    refused, kept = _offered(mia, data)

    # Another maker's session holding the token has no file kept: refused, and mia's stays.
    mark = signed_in(console, "mark")
    stolen = _choose(mark, mark.get("/upload").text, kept, "January")
    assert stolen.status_code == 400 and "no longer kept" in stolen.text
    assert len(_kept_files(console)) == 1
    # Never served back: no route holds the folder.
    for url in (f"/static/{kept}", f"/upload/{kept}", f"/static/../console-uploads/{kept}"):
        shown = mia.get(url)
        assert shown.status_code in (404, 303) and data not in shown.content

    # Past its time the file is gone, whoever looks first, and the maker is told to choose it.
    [path] = _kept_files(console)
    past = time.time() - KEEP_SECONDS - 5
    os.utime(path, (past, past))
    late = _choose(mia, refused.text, kept, "January")
    assert late.status_code == 400
    assert "months.xlsx was kept for 15 minutes while you chose its sheet" in late.text
    assert _kept_files(console) == [] and console.ctx.ledger.newest_batches(10) == []

    # Signing out deletes it; a new file chosen on the form replaces it.
    refused, kept = _offered(mia, data)
    replaced = mia.post(
        "/upload",
        files={"file": ("months.xlsx", data)},
        data={"csrf": csrf_of(refused.text), "kept": kept, "sheet": "January"},
    )
    assert replaced.status_code == 303 and _kept_files(console) == []
    _offered(mia, data)
    assert len(_kept_files(console)) == 1
    mia.post("/logout", data={"csrf": csrf_of(mia.get("/upload").text)})
    assert _kept_files(console) == []


def test_past_the_cap_nothing_is_kept_and_the_form_says_to_choose_the_file_again(
    console: Console,
) -> None:
    assert console.ctx.kept_uploads is not None
    console.ctx.kept_uploads.max_bytes = 1024  # the workbook is larger
    maker = signed_in(console, "mia")
    token = csrf_of(maker.get("/upload").text)
    data = workbook({"January": JANUARY, "February": FEBRUARY})
    refused = maker.post("/upload", files={"file": ("months.xlsx", data)}, data={"csrf": token})
    assert refused.status_code == 400 and 'name="kept"' not in refused.text
    assert "Choose the sheet below and the file again" in refused.text
    assert _kept_files(console) == []


def test_a_console_starting_deletes_files_older_than_their_time(tmp_path: Path) -> None:
    folder = tmp_path / "kept"
    folder.mkdir()
    old, fresh = folder / "old", folder / "fresh"
    old.write_bytes(b"left by a console that stopped")
    fresh.write_bytes(b"another console's, kept a minute ago")
    past = time.time() - KEEP_SECONDS - 5
    os.utime(old, (past, past))
    KeptUploads(folder)
    assert sorted(p.name for p in folder.iterdir()) == ["fresh"]
