"""store/files.py: the one home of file mechanics. A file is read only when it is a regular file
(never through a link unless asked, never waiting on a FIFO, a device not even opened, a size
limit kept); a file is written whole or not at all, its folder flushed after the rename."""

import fcntl
import os
import re
import stat
import threading
from pathlib import Path

import pytest

from auto_dream.errors import StoreError
from auto_dream.store import files
from auto_dream.store.files import (
    DIR_MODE,
    FILE_MODE,
    NotRegular,
    TooLarge,
    kind_at,
    kind_of,
    make_dirs,
    mode_of,
    read_file,
    read_regular,
    read_regular_status,
    refuse_link,
    remove_temporary,
    write_atomic,
    write_temporary,
)


@pytest.fixture
def regular(tmp_path) -> Path:
    path = tmp_path / "note.md"
    path.write_bytes(b"- the staging cluster lives in eu-west-1\n")
    return path


@pytest.fixture
def fifo(tmp_path) -> Path:
    path = tmp_path / "fifo.md"
    os.mkfifo(path)
    return path


# ---------------------------------------------------------------- looking


def test_kind_of_names_what_is_not_a_regular_file(tmp_path, regular, fifo):
    link = tmp_path / "link.md"
    link.symlink_to(regular)
    kinds = {name: kind_of(os.lstat(path).st_mode) for name, path in
             [("regular", regular), ("folder", tmp_path), ("link", link), ("fifo", fifo),
              ("device", Path("/dev/null"))]}
    assert kinds == {"regular": None, "folder": "a folder", "link": "a symbolic link", "fifo": "a FIFO",
                     "device": "a device"}


def test_kind_at_does_not_follow_a_link_and_is_none_for_nothing(tmp_path, regular):
    link = tmp_path / "link.md"
    link.symlink_to(regular)
    assert (kind_at(regular), kind_at(link), kind_at(tmp_path / "absent.md")) == (None, "a symbolic link", None)


def test_refuse_link_refuses_a_link_and_what_is_not_the_kind_asked_for(tmp_path, regular, fifo):
    link = tmp_path / "link.md"
    link.symlink_to(regular)
    with pytest.raises(StoreError, match=r"^the note is a symlink \(to '.*note.md'\).*put the real file there$"):
        refuse_link(link, "the note", folder=False)
    with pytest.raises(StoreError, match="^the logs should be a folder, and is not$"):
        refuse_link(regular, "the logs", folder=True)
    with pytest.raises(StoreError, match="^the index is not a regular file"):
        refuse_link(fifo, "the index", folder=False)
    refuse_link(tmp_path / "absent.md", "nothing", folder=False)  # nothing there is fine
    refuse_link(regular, "the note", folder=False)
    refuse_link(tmp_path, "the store", folder=True)


# ---------------------------------------------------------------- reading


def test_read_file_gives_the_bytes_and_the_status_they_were_read_with(regular):
    data, status = read_file(regular)
    assert data == regular.read_bytes() and status.st_ino == regular.stat().st_ino
    assert status.st_size == len(data)


def test_read_file_refuses_a_link_unless_it_follows_links(tmp_path, regular):
    link = tmp_path / "link.md"
    link.symlink_to(regular)
    with pytest.raises(NotRegular) as refused:
        read_file(link)
    assert refused.value.kind == "a symbolic link" and refused.value.path == link
    assert read_file(link, follow=True)[0] == regular.read_bytes()


def test_read_file_never_waits_on_a_fifo(fifo):
    with pytest.raises(NotRegular) as refused:  # it would hang here if it opened the FIFO for reading
        read_file(fifo)
    assert refused.value.kind == "a FIFO"
    with pytest.raises(NotRegular):
        read_file(fifo, follow=True)


def test_read_file_does_not_even_open_a_device(monkeypatch):
    opened = []
    real_open = os.open
    monkeypatch.setattr(files.os, "open", lambda path, *rest: opened.append(path) or real_open(path, *rest))
    with pytest.raises(NotRegular) as refused:
        read_file(Path("/dev/null"))
    assert refused.value.kind == "a device" and opened == []


def test_read_file_refuses_a_folder(tmp_path):
    with pytest.raises(NotRegular) as refused:
        read_file(tmp_path)
    assert refused.value.kind == "a folder"


def test_read_file_refuses_a_file_larger_than_its_limit_and_reads_one_at_the_limit(regular):
    size = regular.stat().st_size
    assert read_file(regular, size)[0] == regular.read_bytes()
    with pytest.raises(TooLarge) as large:
        read_file(regular, size - 1)
    assert (large.value.size, large.value.limit) == (size, size - 1)


def test_read_file_refuses_a_file_that_grew_past_its_limit_after_its_size_was_looked_at(regular, monkeypatch):
    real_fstat = os.fstat
    size = regular.stat().st_size

    def fstat_then_grow(fd):
        status = real_fstat(fd)
        with open(regular, "ab") as handle:  # an agent appends between the look and the read
            handle.write(b"- one more fact\n")
        return status
    monkeypatch.setattr(files.os, "fstat", fstat_then_grow)
    with pytest.raises(TooLarge) as large:
        read_file(regular, size)
    assert large.value.size == size + 1  # what was read: one byte past the limit, no more


def test_a_file_that_becomes_a_link_between_the_look_and_the_open_is_not_followed(tmp_path, regular, monkeypatch):
    secret = tmp_path / "secret.txt"
    secret.write_text("hunter2\n")
    real_lstat = os.lstat

    def swapped(path, *args, **kwargs):
        status = real_lstat(path, *args, **kwargs)
        if Path(path) == regular:
            regular.unlink()
            regular.symlink_to(secret)
        return status
    monkeypatch.setattr(files.os, "lstat", swapped)
    with pytest.raises(NotRegular) as refused:
        read_file(regular)
    assert refused.value.kind == "a symbolic link"


def test_read_file_with_the_shared_lock_waits_for_a_writer_that_holds_the_lock(regular):
    """An append holds flock's exclusive lock while it writes: the reader sees all of it or none."""
    read: list[bytes] = []
    fd = os.open(regular, os.O_WRONLY | os.O_APPEND)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        reader = threading.Thread(target=lambda: read.append(read_file(regular, shared_lock=True)[0]))
        reader.start()
        reader.join(0.3)
        assert reader.is_alive() and read == []  # waiting on the writer
        os.write(fd, b"- the second half of the append\n")
    finally:
        os.close(fd)  # closing releases the lock
    reader.join(10)
    assert read == [regular.read_bytes()] and read[0].endswith(b"append\n")


def test_a_file_that_grows_while_it_is_read_is_read_to_its_end_or_its_limit(regular, monkeypatch):
    """The first read is sized by the file's size when it was opened; what was appended since
    comes in further reads, up to the limit."""
    real_fstat = os.fstat
    grown = b"- appended while it was read\n" * 10_000  # past one block of the reads that follow

    def fstat_then_grow(fd):
        status = real_fstat(fd)
        with open(regular, "ab") as handle:
            handle.write(grown)
        return status
    monkeypatch.setattr(files.os, "fstat", fstat_then_grow)
    before = regular.read_bytes()
    assert read_file(regular)[0] == before + grown
    assert read_regular(regular, len(before) + 100) == (before + grown + grown)[:len(before) + 100]


def test_read_file_raises_the_system_error_for_nothing_there(tmp_path):
    with pytest.raises(FileNotFoundError):
        read_file(tmp_path / "absent.md")


def test_read_regular_is_none_for_nothing_and_one_store_error_line_for_a_link_or_a_fifo(tmp_path, regular, fifo):
    link = tmp_path / "link.md"
    link.symlink_to(regular)
    assert read_regular(tmp_path / "absent.md") is None
    with pytest.raises(StoreError, match=r"link.md is a symbolic link: auto-dream does not follow it$"):
        read_regular(link)
    with pytest.raises(StoreError, match=r"fifo.md is not a regular file$"):
        read_regular(fifo)
    with pytest.raises(StoreError, match=r"fifo.md is not a lock file$"):
        read_regular_status(fifo, kind="a lock file")


def test_read_regular_reads_at_most_its_limit_and_gives_the_status(regular):
    assert read_regular(regular, 5) == regular.read_bytes()[:5]
    found = read_regular_status(regular)
    assert found is not None and found[0] == regular.read_bytes() and found[1].st_size == len(found[0])


def test_read_regular_says_why_a_file_cannot_be_read(regular):
    with pytest.raises(StoreError, match=r"^cannot read .*note.md/inside.md: Not a directory$"):
        read_regular(regular / "inside.md")


# ---------------------------------------------------------------- writing


def test_write_atomic_writes_owner_only_and_leaves_no_temporary_files(tmp_path):
    target = tmp_path / "store" / "memories" / "project" / "20260312_x.md"
    write_atomic(target, "---\nname: x\n---\n内容\n".encode())
    assert target.read_bytes() == "---\nname: x\n---\n内容\n".encode()
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert os.listdir(target.parent) == ["20260312_x.md"]


def test_write_atomic_replaces_an_existing_file(tmp_path):
    folder = tmp_path / "memories"
    folder.mkdir()
    target = folder / "m.md"
    target.write_bytes(b"old content that is longer than the new one")
    target.chmod(0o644)
    write_atomic(target, b"new")
    assert target.read_bytes() == b"new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o644  # a person's file keeps its mode
    assert os.listdir(folder) == ["m.md"]


def test_write_atomic_flushes_the_file_then_its_folder(tmp_path, monkeypatch):
    flushed: list[str] = []
    real_fsync = os.fsync

    def fsync(fd):
        flushed.append("folder" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file")
        real_fsync(fd)
    monkeypatch.setattr(files.os, "fsync", fsync)
    write_atomic(tmp_path / "m.md", b"new")
    assert flushed == ["file", "folder"]


def test_a_write_atomic_whose_rename_fails_leaves_the_file_as_it_was_and_no_temporary(tmp_path, monkeypatch):
    (tmp_path / "store").mkdir()
    target = tmp_path / "store" / "m.md"
    target.write_bytes(b"what a person wrote")

    def full_disk(source, destination):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(files.os, "replace", full_disk)
    with pytest.raises(OSError):
        write_atomic(target, b"new")
    assert target.read_bytes() == b"what a person wrote" and os.listdir(target.parent) == ["m.md"]


def test_write_atomic_replaces_a_link_with_a_file_and_leaves_what_it_named(tmp_path, regular):
    link = tmp_path / "link.md"
    link.symlink_to(regular)
    before = regular.read_bytes()
    write_atomic(link, b"new")
    assert not link.is_symlink() and link.read_bytes() == b"new" and regular.read_bytes() == before
    assert stat.S_IMODE(link.stat().st_mode) == FILE_MODE  # a link's mode is not kept


def test_mode_of_is_the_regular_files_mode_else_owner_only(tmp_path, regular):
    regular.chmod(0o640)
    link = tmp_path / "link.md"
    link.symlink_to(regular)
    assert (mode_of(regular), mode_of(link), mode_of(tmp_path / "absent.md"), mode_of(tmp_path)) == (
        0o640, FILE_MODE, FILE_MODE, FILE_MODE)


def test_write_temporary_is_a_hidden_file_beside_the_target_with_the_mode_given(tmp_path):
    temporary = Path(write_temporary(tmp_path / "sub" / "m.md", b"staged", 0o644))
    assert temporary.parent == tmp_path / "sub" and re.fullmatch(r"\.m\.md\.[a-z0-9_]{8}\.tmp", temporary.name)
    assert temporary.read_bytes() == b"staged" and stat.S_IMODE(temporary.stat().st_mode) == 0o644
    remove_temporary(str(temporary))
    remove_temporary(str(temporary))  # gone already: nothing to do
    assert os.listdir(tmp_path / "sub") == []


def test_make_dirs_makes_each_missing_folder_owner_only_and_leaves_those_there(tmp_path):
    tmp_path.chmod(0o755)
    make_dirs(tmp_path / "a" / "b" / "c")
    modes = [stat.S_IMODE((tmp_path / part).stat().st_mode) for part in ("a", "a/b", "a/b/c")]
    assert modes == [DIR_MODE] * 3 and stat.S_IMODE(tmp_path.stat().st_mode) == 0o755
    make_dirs(tmp_path / "a" / "b" / "c")  # all there: nothing to do
    assert [p.name for p in (tmp_path / "a").rglob("*")] == ["b", "c"]
