"""The history index is an untrusted file (issue 32, class 1): real SQLite,
hostile set-ups made here -- planted links, another user's index, a
group-writable one, damaged pages, a writer holding the lock in another
process, dangling links and loops in the folder, an index whose figures no
longer say what the file says, and a full disk (a small tmpfs)."""
import errno
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import textwrap

import pytest

from sealing import reseal
from test_history import night
from tkperf import store
from tkperf.cli import main
from tkperf.errors import EXIT_OK, EXIT_OUTPUT
from tkperf.history import INDEX_NAME, collect, indexfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "examples", "example-ssd.xml")
FIGURE = "rnd_4k_write_iops"


def _strict(text):
    def refuse(token):
        raise AssertionError(f"{token} in JSON")
    return json.loads(text, parse_constant=refuse)


@pytest.fixture(scope="module")
def example():
    return store.load(EXAMPLE)


@pytest.fixture
def results(tmp_path, example):
    """A folder with three nights of one drive."""
    folder = tmp_path / "nights"
    folder.mkdir()
    for i in range(3):
        store.save(night(example, i, 1.0 + i / 10), str(folder / f"n{i}.xml"))
    return folder


def _history(capsys, folder):
    rc = main(["history", str(folder), "--json"])
    out, err = capsys.readouterr()
    assert rc == EXIT_OK, err
    return _strict(out), [line for line in err.splitlines() if line]


def _last(doc, figure=FIGURE):
    trend = next(t for t in doc["devices"][0]["trends"] if t["figure"] == figure)
    return [p["value"] for p in trend["points"]]


def _truth(folder):
    """The figure as the files say, the index out of the way (files named one by one: in memory)."""
    devices, where, _ = collect(sorted(str(p) for p in folder.glob("*.xml")))
    assert where is None
    trend = next(t for t in devices[0].trends if t.figure == FIGURE)
    return [p.value for p in trend.points]


def test_a_new_index_is_the_callers_own_file_mode_0600(results, capsys):
    doc, err = _history(capsys, results)
    assert err == [] and doc["index"] == str(results / INDEX_NAME)
    st = os.lstat(results / INDEX_NAME)
    assert st.st_uid == os.geteuid() and (st.st_mode & 0o777) == 0o600
    assert sorted(os.listdir(results)) == [INDEX_NAME, "n0.xml", "n1.xml", "n2.xml"]  # no temporary left
    with sqlite3.connect(results / INDEX_NAME) as db:
        assert db.execute("SELECT COUNT(*) FROM files WHERE length(sha256) = 64").fetchone() == (3,)


def test_a_planted_link_to_another_path_is_not_followed(results, tmp_path, capsys):
    target = tmp_path / "elsewhere" / "created-by-root"
    target.parent.mkdir()
    os.symlink(target, results / INDEX_NAME)
    doc, err = _history(capsys, results)
    assert len(err) == 1 and "symbolic link" in err[0] and err[0].startswith("tkperf: warning:")
    assert doc["index"] is None and _last(doc) == _truth(results)
    assert not target.exists() and os.readlink(results / INDEX_NAME) == str(target)
    assert os.listdir(target.parent) == []


def test_a_planted_link_to_another_database_writes_nothing_into_it(results, tmp_path, capsys):
    other = tmp_path / "precious.sqlite"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE accounts(name TEXT)")
        db.execute("INSERT INTO accounts VALUES ('alice')")
    before = other.read_bytes()
    os.symlink(other, results / INDEX_NAME)
    doc, err = _history(capsys, results)
    assert len(err) == 1 and "symbolic link" in err[0]
    assert other.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["nights", "precious.sqlite"]  # no journal beside it either
    assert _last(doc) == _truth(results)


@pytest.mark.parametrize("suffix", ["-journal", "-wal", "-shm"])
def test_links_planted_as_the_journal_or_wal_are_never_touched(results, tmp_path, capsys, suffix):
    """SQLite names its journal and WAL after the database; it never sees
    the index's path, so links planted there lead nowhere."""
    target = tmp_path / "victim"
    target.write_bytes(b"precious")
    os.symlink(target, results / (INDEX_NAME + suffix))
    for i in range(2):  # a new index, then an update of it
        store.save(store.load(str(results / "n0.xml")), str(results / f"x{i}.xml"))
        doc, err = _history(capsys, results)
        assert err == [] and doc["index"] == str(results / INDEX_NAME)
    assert target.read_bytes() == b"precious" and os.path.islink(results / (INDEX_NAME + suffix))


def test_a_directory_that_cannot_be_written_keeps_the_index_in_memory(results, capsys):
    _history(capsys, results)
    before = (results / INDEX_NAME).read_bytes()
    store.save(store.load(str(results / "n0.xml")), str(results / "n3.xml"))
    os.chmod(results, 0o555)
    try:
        if os.access(results, os.W_OK) and os.geteuid() == 0:
            ro = subprocess.run(["mount", "--bind", "-o", "ro", str(results), str(results)],
                                capture_output=True)
            if ro.returncode != 0:
                pytest.skip("root writes any directory and a read-only bind mount is not possible here")
        try:
            doc, err = _history(capsys, results)
            assert err == [] and doc["index"] is None and doc["update"]["added"] == 1
            assert (results / INDEX_NAME).read_bytes() == before
        finally:
            if os.geteuid() == 0:
                subprocess.run(["umount", str(results)], capture_output=True)
    finally:
        os.chmod(results, 0o755)


def _forged_index(results, capsys, factor=1000.0):
    """An index built for ``results`` whose stored figures are then forged."""
    _history(capsys, results)
    with sqlite3.connect(results / INDEX_NAME) as db:
        db.execute("UPDATE figures SET value = value * ?", (factor,))
    return (results / INDEX_NAME).read_bytes()


def test_another_users_index_is_not_trusted(results, capsys):
    forged = _forged_index(results, capsys)
    os.chown(results / INDEX_NAME, 12345, 12345)
    doc, err = _history(capsys, results)
    assert len(err) == 1 and "owned by uid 12345" in err[0]
    assert _last(doc) == _truth(results) and doc["index"] is None
    assert (results / INDEX_NAME).read_bytes() == forged and os.lstat(results / INDEX_NAME).st_uid == 12345


@pytest.mark.parametrize("mode", [0o620, 0o602, 0o666])
def test_a_group_or_world_writable_index_is_not_trusted(results, capsys, mode):
    forged = _forged_index(results, capsys)
    os.chmod(results / INDEX_NAME, mode)
    doc, err = _history(capsys, results)
    assert len(err) == 1 and "writable by group or others" in err[0]
    assert _last(doc) == _truth(results)
    assert (results / INDEX_NAME).read_bytes() == forged


def test_a_hard_link_is_not_trusted(results, tmp_path, capsys):
    _history(capsys, results)
    os.link(results / INDEX_NAME, tmp_path / "second-name")
    _, err = _history(capsys, results)
    assert len(err) == 1 and "2 hard links" in err[0]


def test_a_changed_file_is_read_again_though_size_and_time_match(results, capsys):
    """The index is a cache: a file edited in place to the same size, its
    time set back, is read again (its hash differs); figures forged into the
    index (by its owner) for a changed file are never shown."""
    _forged_index(results, capsys, factor=1.0)
    path = results / "n1.xml"
    st = os.stat(path)
    data = path.read_bytes()

    def other_digit(m):
        return m.group(1) + bytes([ord("1") + (m.group(2)[0] - ord("0")) % 9])

    edited, n = re.subn(rb'(<write iops=")(\d)', other_digit, data)
    edited = reseal(edited)  # sealed again, as one who edits the file knowing its format would
    assert n > 10 and len(edited) == len(data) and edited != data
    path.write_bytes(edited)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (os.stat(path).st_size, os.stat(path).st_mtime_ns) == (st.st_size, st.st_mtime_ns)
    doc, err = _history(capsys, results)
    assert err == [] and doc["update"]["changed"] == 1 and doc["update"]["unchanged"] == 2
    assert _last(doc) == _truth(results)


def test_a_damaged_page_is_rebuilt_once(results, capsys):
    _history(capsys, results)
    path = results / INDEX_NAME
    data = bytearray(path.read_bytes())
    page = int.from_bytes(data[16:18], "big") or 65536
    assert len(data) >= 3 * page
    data[page + 8:2 * page] = b"\xa5" * (page - 8)  # the second page's cells: garbage
    path.write_bytes(bytes(data))
    os.chmod(path, 0o600)
    doc, err = _history(capsys, results)
    assert len(err) == 1 and "not a readable index" in err[0] and "rebuilt" in err[0]
    assert _last(doc) == _truth(results) and doc["index"] == str(path)
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA quick_check").fetchall() == [("ok",)]
    doc, err = _history(capsys, results)  # and only once
    assert err == [] and doc["update"]["unchanged"] == 3


@pytest.mark.parametrize("content", [b"not a database", b"SQLite format 3\x00" + b"\xff" * 200, "schema"])
def test_not_an_index_is_rebuilt(results, capsys, content):
    path = results / INDEX_NAME
    if content == "schema":
        with sqlite3.connect(path) as db:
            db.execute("CREATE TABLE files(path TEXT, evil TEXT)")
            db.execute("CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    else:
        path.write_bytes(content)
    os.chmod(path, 0o600)
    doc, err = _history(capsys, results)
    assert len(err) == 1 and "rebuilt" in err[0]
    assert doc["update"]["added"] == 3 and _last(doc) == _truth(results)
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT COUNT(*) FROM files").fetchone() == (3,)


def test_an_older_tkperfs_index_is_rebuilt_without_a_word(results, capsys):
    with sqlite3.connect(results / INDEX_NAME) as db:  # layout version 1: no hash of the file
        db.executescript("""
            CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
            CREATE TABLE files(path TEXT PRIMARY KEY, mtime_ns INTEGER NOT NULL, size INTEGER NOT NULL,
                               error TEXT NOT NULL);
            INSERT INTO meta VALUES ('index_version', '1'), ('tkperf_version', '0.1');
            INSERT INTO files VALUES ('n0.xml', 1, 2, '');""")
    os.chmod(results / INDEX_NAME, 0o600)
    doc, err = _history(capsys, results)
    assert err == [] and doc["update"]["added"] == 3 and doc["index"] == str(results / INDEX_NAME)


LOCKER = textwrap.dedent("""
    import sqlite3, sys
    db = sqlite3.connect(sys.argv[1], isolation_level=None)
    db.execute("BEGIN EXCLUSIVE")
    db.execute("INSERT INTO meta VALUES ('held', 'by another history')")
    print("locked", flush=True)
    sys.stdin.readline()
    db.execute("ROLLBACK")
""")


@pytest.fixture
def locker(results, capsys):
    """Another process holding the index in a write transaction."""
    _history(capsys, results)
    proc = subprocess.Popen([sys.executable, "-c", LOCKER, str(results / INDEX_NAME)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "locked"
        yield proc
    finally:
        if proc.poll() is None:
            proc.stdin.write("\n")
            proc.stdin.flush()
        proc.wait(timeout=30)


def test_a_locked_index_is_waited_for_then_worked_around_never_deleted(results, capsys, locker, monkeypatch):
    monkeypatch.setattr(indexfile, "LOCK_WAIT_S", 0.3)
    store.save(store.load(str(results / "n0.xml")), str(results / "n3.xml"))  # a new night to add
    before = (results / INDEX_NAME).read_bytes()
    ino = os.stat(results / INDEX_NAME).st_ino
    doc, err = _history(capsys, results)
    assert len(err) == 1 and "held by another process" in err[0] and "waited 0.3 s" in err[0]
    assert doc["index"] is None and len(_last(doc)) == 4
    assert (results / INDEX_NAME).read_bytes() == before and os.stat(results / INDEX_NAME).st_ino == ino
    locker.stdin.write("\n")
    locker.stdin.flush()
    assert locker.wait(timeout=30) == 0
    doc, err = _history(capsys, results)
    assert err == [] and doc["index"] == str(results / INDEX_NAME) and doc["update"]["added"] == 1


def test_a_lock_released_within_the_wait_is_waited_for(results, capsys, locker, monkeypatch):
    monkeypatch.setattr(indexfile, "LOCK_WAIT_S", 30.0)
    releaser = subprocess.Popen(["sh", "-c", "sleep 0.5; echo"], stdout=locker.stdin)
    doc, err = _history(capsys, results)
    releaser.wait(timeout=30)
    assert err == [] and doc["index"] == str(results / INDEX_NAME) and doc["update"]["unchanged"] == 3


def test_links_in_the_folder_are_left_out_and_counted(results, tmp_path, capsys):
    os.symlink(results / "gone.xml", results / "latest.xml")  # dangling
    os.symlink("loop-b.xml", results / "loop-a.xml")  # a loop
    os.symlink("loop-a.xml", results / "loop-b.xml")
    os.symlink(".", results / "again")  # a folder loop
    os.symlink(results / "n0.xml", results / "copy.xml")  # a link to a result: not opened either
    os.mkfifo(results / "fifo.xml")  # would block a reader forever
    doc, err = _history(capsys, results)
    assert err == [] and doc["update"]["links"] == 6 and doc["devices"][0]["runs"] == 3
    rc = main(["history", str(results)])
    out = capsys.readouterr().out
    assert rc == EXIT_OK and "left out 6 links" in out


def _mount_tmpfs(where, size):
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root")
    where.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tkperf-test", str(where)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")


def test_a_full_disk_gives_the_history_from_memory(tmp_path, example, capsys):
    small = tmp_path / "small"
    _mount_tmpfs(small, "1m")
    try:
        for i in range(3):
            store.save(night(example, i, 1.0), str(small / f"n{i}.xml"))
        fd = os.open(small / "filler", os.O_WRONLY | os.O_CREAT, 0o644)  # the rest of the disk
        try:
            while True:
                os.write(fd, b"\0" * 4096)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
        finally:
            os.close(fd)
        doc, err = _history(capsys, small)
        assert len(err) == 1 and "no space left" in err[0] and "from memory" in err[0]
        assert doc["index"] is None and doc["devices"][0]["runs"] == 3
        assert sorted(os.listdir(small)) == ["filler", "n0.xml", "n1.xml", "n2.xml"]  # nothing half-written
        rc = main(["history", str(small), "--outdir", str(small / "pages"), "--no-plots"])
        out, err = capsys.readouterr()
        assert rc == EXIT_OUTPUT and out == ""
        lines = err.strip().splitlines()
        assert lines[-1].startswith("tkperf: error:") and all(x.startswith("tkperf: warning:") for x in lines[:-1])
    finally:
        subprocess.run(["umount", str(small)], check=True)


def test_a_link_swapped_in_after_the_scan_is_not_opened(results, tmp_path):
    from tkperf.errors import ResultFileError
    from tkperf.history import folder
    secret = tmp_path / "secret.xml"
    secret.write_bytes((results / "n0.xml").read_bytes())
    os.unlink(results / "n1.xml")
    os.symlink(secret, results / "n1.xml")
    with pytest.raises(ResultFileError, match="a symbolic link, not opened"):
        folder.read_result(str(results / "n1.xml"), follow=False)
    data, st = folder.read_result(str(results / "n1.xml"), follow=True)  # named by the user: followed
    assert data == secret.read_bytes() and st.st_ino == os.stat(secret).st_ino


def test_two_history_runs_at_once_both_finish_and_leave_a_sound_index(results):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    runs = [subprocess.Popen([sys.executable, "-m", "tkperf", "history", str(results), "--json"], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    for proc in runs:
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == EXIT_OK and err == ""
        assert _strict(out)["devices"][0]["runs"] == 3
    with sqlite3.connect(results / INDEX_NAME) as db:
        assert db.execute("PRAGMA quick_check").fetchall() == [("ok",)]
        assert db.execute("SELECT COUNT(*) FROM files").fetchone() == (3,)
    assert sorted(os.listdir(results)) == [INDEX_NAME, "n0.xml", "n1.xml", "n2.xml"]
