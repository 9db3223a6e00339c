"""Where reports and the daily inbox live: a folder on this machine, or storage every machine
reaches named by URL (`s3://bucket/prefix`, through fsspec and s3fs).

A folder behaves as it always did: files appear whole by a rename beside their target, with
payflow.file_access's modes. A remote object appears whole or not at all: it is written to a
local file first (owner-only, in a private temporary folder), then sent in one PUT (a multipart
upload above s3fs's block size, which S3 also shows only once complete); a failure sends nothing.
The files of one report are sent one after the other once all were written, so a failure while
writing leaves the earlier versions in place; a failure between two PUTs can leave a new CSV
beside the earlier XLSX (never a partial object).

S3's endpoint and credentials come from the standard AWS settings (AWS_ENDPOINT_URL_S3 or
AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_PROFILE, AWS_DEFAULT_REGION, an
instance role), never from a URL: a location payflow records or prints holds no secret.
"""

from __future__ import annotations

import shutil
import tempfile
from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, Any

from payflow.atomic import replaced, replaced_together
from payflow.file_access import create_file, make_folder, write_new_text

# A written file's place: a local path, or the URL of a remote object (`s3://bucket/key`).
Place = Path | str

REMOTE_SCHEMES = ("s3", "s3a", "memory")


class StorageError(OSError):
    """Remote storage refused or could not be reached: `cannot write s3://b/x.csv: why`, never
    a credential. An OSError whose strerror is the why alone, so that "report not written"
    lines (payflow.opening.why_not_written) read as they do for a folder."""

    def __init__(self, what: str, why: str) -> None:
        super().__init__(f"cannot {what}: {why}")
        self.strerror = why

    def __str__(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True)
class Entry:
    """One file of a storage folder: its name, size and last change (seconds since the epoch)."""

    name: str
    size: int
    modified: float


def is_remote(where: str) -> bool:
    """True when `where` is a URL of remote storage rather than a local path."""
    scheme, sep, _ = where.partition("://")
    return bool(sep) and scheme.lower() in REMOTE_SCHEMES


def place_name(place: Place) -> str:
    """The file name of a place (`x-reconciliation.xlsx`), local or remote."""
    return PurePosixPath(str(place)).name


class Storage(ABC):
    """A folder of files, local or remote; names are relative to it (`a.csv`, `console/b/x`)."""

    url: str  # what a message shows: a path or a URL, never a credential

    @abstractmethod
    def place(self, name: str) -> Place:
        """Where `name` is (recorded in the ledger, printed, served by the console)."""

    @abstractmethod
    def child(self, folder: str) -> Storage:
        """The storage of the subfolder `folder`."""

    @abstractmethod
    @contextmanager
    def writing(self, *names: str) -> Iterator[tuple[Path, ...]]:
        """Local files to fill for `names`; on success each appears whole, else none does."""

    @abstractmethod
    def exists(self, name: str) -> bool:
        """True when a file `name` is there."""

    @abstractmethod
    def copy(self, source: str, target: str) -> None:
        """Copy file `source` to `target` (which appears whole)."""

    @abstractmethod
    def entries(self) -> list[Entry]:
        """The files directly in this folder (not in its subfolders)."""

    @abstractmethod
    def move(self, source: str, target: str) -> None:
        """Move file `source` to `target` (a name in this folder or a subfolder)."""

    @abstractmethod
    def write_new_text(self, name: str, text: str) -> None:
        """Write `text` (UTF-8) as the file `name`."""

    @abstractmethod
    def fetch(self, name: str, local: Path) -> None:
        """Copy the file `name` to the local file `local` (made owner-only or the group's)."""


class LocalStorage(Storage):
    """A folder on this machine, with payflow.file_access's modes and atomic renames."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.url = str(root)

    def place(self, name: str) -> Path:
        return self.root / name

    def child(self, folder: str) -> LocalStorage:
        return LocalStorage(self.root / folder)

    @contextmanager
    def writing(self, *names: str) -> Iterator[tuple[Path, ...]]:
        make_folder(self.root)
        with replaced_together(*(self.root / name for name in names)) as parts:
            yield parts

    def exists(self, name: str) -> bool:
        return (self.root / name).exists()

    def copy(self, source: str, target: str) -> None:
        with replaced(self.root / target) as part:
            shutil.copyfile(self.root / source, part)

    def entries(self) -> list[Entry]:
        found = []
        for path in self.root.iterdir():
            try:
                stat = path.stat()
            except FileNotFoundError:  # moved away by another run meanwhile
                continue
            if path.is_file():
                found.append(Entry(path.name, stat.st_size, stat.st_mtime))
        return found

    def move(self, source: str, target: str) -> None:
        make_folder((self.root / target).parent)
        (self.root / source).replace(self.root / target)

    def write_new_text(self, name: str, text: str) -> None:
        make_folder((self.root / name).parent)
        write_new_text(self.root / name, text)

    def fetch(self, name: str, local: Path) -> None:
        with (self.root / name).open("rb") as source, open(create_file(local), "wb") as target:
            shutil.copyfileobj(source, target)


class RemoteStorage(Storage):
    """A prefix in an fsspec file system (s3fs for `s3://`): one PUT per file."""

    def __init__(self, url: str, fs: Any | None = None) -> None:
        import fsspec

        self.url = url.rstrip("/")
        scheme, _, rest = self.url.partition("://")
        self._scheme = scheme.lower()
        self._root = rest.strip("/")
        self.fs = fs if fs is not None else fsspec.filesystem(self._scheme)

    def _key(self, name: str) -> str:
        return f"{self._root}/{name}"

    def place(self, name: str) -> str:
        return f"{self._scheme}://{self._key(name)}"

    def child(self, folder: str) -> RemoteStorage:
        return RemoteStorage(self.place(folder.strip("/")), self.fs)

    @contextmanager
    def writing(self, *names: str) -> Iterator[tuple[Path, ...]]:
        with tempfile.TemporaryDirectory(prefix="payflow-put-") as folder:  # 0700
            parts = tuple(Path(folder) / f"{n}.part".replace("/", "_") for n in names)
            for part in parts:
                open(create_file(part), "wb").close()
            yield parts
            for part, name in zip(parts, names, strict=True):
                self._do(f"write {self.place(name)}", self.fs.put_file, str(part), self._key(name))

    def exists(self, name: str) -> bool:
        return bool(self._do(f"read {self.place(name)}", self.fs.exists, self._key(name)))

    def copy(self, source: str, target: str) -> None:
        self._do(
            f"copy to {self.place(target)}", self.fs.copy, self._key(source), self._key(target)
        )

    def entries(self) -> list[Entry]:
        self.fs.invalidate_cache(self._root)
        try:
            listed = self.fs.ls(self._root, detail=True)
        except FileNotFoundError:  # no object under the prefix yet: an empty folder
            return []
        except Exception as exc:
            raise StorageError(f"list {self.url}", _why(exc)) from exc
        return [
            Entry(PurePosixPath(item["name"]).name, int(item.get("size") or 0), _modified(item))
            for item in listed
            if item.get("type") == "file"
        ]

    def move(self, source: str, target: str) -> None:
        # Copy, then delete: a crash in between leaves the file in place as well, and the next
        # daily run takes it again, which pays nothing twice (its batch id is its content hash).
        self.copy(source, target)
        self._do(f"remove {self.place(source)}", self.fs.rm_file, self._key(source))

    def write_new_text(self, name: str, text: str) -> None:
        with self.writing(name) as (part,):
            part.write_text(text, encoding="utf-8")

    def fetch(self, name: str, local: Path) -> None:
        source = self._do(f"read {self.place(name)}", self.fs.open, self._key(name), "rb")
        with source, open(create_file(local), "wb") as target:
            self._do(f"read {self.place(name)}", shutil.copyfileobj, source, target)

    def open(self, name: str) -> IO[bytes]:
        """The remote file `name`, open for reading."""
        handle: IO[bytes] = self._do(f"read {self.place(name)}", self.fs.open, self._key(name))
        return handle

    def _do(self, what: str, call: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return call(*args, **kwargs)
        except Exception as exc:  # botocore's and aiohttp's errors alike: one line, no secret
            raise StorageError(what, _why(exc)) from exc


def _modified(item: dict[str, Any]) -> float:
    """An object's last change in seconds since the epoch (S3's LastModified is a datetime)."""
    when = item.get("LastModified") or item.get("mtime") or item.get("created") or 0.0
    return float(when.timestamp()) if hasattr(when, "timestamp") else float(when)


def _why(exc: BaseException) -> str:
    """A few words from a storage error: its first line, or its class when it says nothing;
    never a credential (botocore's messages name the operation and the bucket, not the keys)."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return text[:300] or type(exc).__name__


def storage_at(where: Storage | Path | str) -> Storage:
    """The storage named by `where`: itself, a local folder, or a remote URL."""
    if isinstance(where, Storage):
        return where
    if isinstance(where, str) and is_remote(where):
        return RemoteStorage(where)
    return LocalStorage(Path(where))


def open_place(place: Place) -> IO[bytes]:
    """A written file (a recorded report version's place), open for reading."""
    text = str(place)
    if is_remote(text):
        parent, _, name = text.rpartition("/")
        return RemoteStorage(parent).open(name)
    return Path(text).open("rb")


def place_exists(place: Place) -> bool:
    """True when the file at `place` is there."""
    text = str(place)
    if is_remote(text):
        parent, _, name = text.rpartition("/")
        return RemoteStorage(parent).exists(name)
    return Path(text).is_file()
