"""An `--out` folder no report can be written in is one line naming it, exit 2, before any work
(issue 36, item 7): a 300-character folder name read "unexpected error (OSError)", and a line
break in the name split the `report:` line in two."""

from __future__ import annotations

from pathlib import Path

import pytest

from payflow.cli import main

DATA = Path(__file__).resolve().parents[2] / "data"


@pytest.fixture(autouse=True)
def _sandbox_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PAYFLOW_API_URL", raising=False)
    monkeypatch.setenv("PAYFLOW_HOME", str(tmp_path / "home"))


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("a" * 300, "a name in the path is longer than the file system allows"),
        ("march\nreports", "has a line break or another control character in its name"),
        ("march\x1b[31mreports", "has a line break or another control character in its name"),
    ],
    ids=["300-characters", "line-break", "escape"],
)
def test_an_out_folder_that_cannot_be_named_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, words: str
) -> None:
    with pytest.raises(SystemExit) as ended:
        main(["validate", str(DATA / "batch_clean.csv"), "--out", str(tmp_path / name)])
    assert ended.value.code == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("payflow: ") and words in lines[0], lines
    assert "\n" not in lines[0] and "\x1b" not in lines[0]
    assert captured.out == ""
    assert list(tmp_path.iterdir()) == [tmp_path / "home"] or not (tmp_path / name).exists()
