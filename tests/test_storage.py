"""payflow.storage on S3 (moto on 127.0.0.1): a failed write sends nothing and leaves the earlier
objects; a place is a URL with no credential in it; a folder keeps payflow's file modes."""

from __future__ import annotations

import stat

import pytest

from payflow.storage import StorageError, open_place, place_name, storage_at


@pytest.fixture
def bucket(s3_server, monkeypatch):
    for name, value in s3_server.env.items():
        monkeypatch.setenv(name, value)
    return s3_server.new_bucket()


def test_a_write_that_fails_midway_sends_nothing_and_keeps_the_earlier_objects(s3_server, bucket):
    reports = storage_at(f"s3://{bucket}/reports")
    with reports.writing("b.csv", "b.xlsx") as (csv_part, xlsx_part):
        csv_part.write_text("first\n")
        xlsx_part.write_bytes(b"PK first")

    with pytest.raises(OSError, match="disk full"), reports.writing("b.csv", "b.xlsx") as parts:
        parts[0].write_text("second, half written")
        raise OSError("disk full")  # as a full local disk would, while writing the second file

    assert open_place(reports.place("b.csv")).read() == b"first\n"
    assert open_place(reports.place("b.xlsx")).read() == b"PK first"
    listed = s3_server.client().list_objects_v2(Bucket=bucket)["Contents"]
    assert sorted(item["Key"] for item in listed) == ["reports/b.csv", "reports/b.xlsx"]
    assert reports.place("b.csv") == f"s3://{bucket}/reports/b.csv"
    assert place_name(reports.place("b.csv")) == "b.csv"


def test_storage_that_refuses_says_so_in_one_line_naming_the_url_and_no_key(s3_server, bucket):
    missing = storage_at("s3://no-such-bucket-here/reports")

    with pytest.raises(StorageError) as refused, missing.writing("x.csv") as (part,):
        part.write_text("x\n")

    said = str(refused.value)
    assert said.startswith("cannot write s3://no-such-bucket-here/reports/x.csv: ")
    assert "\n" not in said
    assert s3_server.env["AWS_SECRET_ACCESS_KEY"] not in said
    assert s3_server.env["AWS_ACCESS_KEY_ID"] not in said


def test_a_local_folder_keeps_owner_only_files_and_leaves_no_part_on_failure(tmp_path):
    reports = storage_at(str(tmp_path / "reports"))
    with reports.writing("a.csv") as (part,):
        part.write_text("kept\n")
    with pytest.raises(RuntimeError), reports.writing("a.csv") as (part,):
        part.write_text("lost\n")
        raise RuntimeError("stopped")

    assert (tmp_path / "reports" / "a.csv").read_text() == "kept\n"
    assert sorted(p.name for p in (tmp_path / "reports").iterdir()) == ["a.csv"]
    assert stat.S_IMODE((tmp_path / "reports" / "a.csv").stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "reports").stat().st_mode) == 0o700
