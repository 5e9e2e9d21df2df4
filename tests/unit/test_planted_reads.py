"""Every file tkperf reads on a user's behalf is opened by the rule captures
follow (tkperf.model.files.open_to_read; issue 44 item 7): a result, a
baseline, the files of a comparison, a history file or folder, an archive
to import, a description or feature file, a run request, an SMTP password
file.  A symbolic link owned by another user, on the path itself or on a
folder of it, is not followed (tkperf runs as root; the kernel's
``fs.protected_symlinks`` may be off), whatever the command: one line
naming the link, exit 7 for a result file (2 for the run's own input
files, as their other faults), and the file behind it is not read.  The
shared directory is made as /tmp is (mode 1777), the links given to uid
65534 with ``os.lchown``; a link of root's own is followed."""
from __future__ import annotations

import os
import shutil
import threading

import pytest

from planted import needs_root, plant, shared_dir
from tkperf.cli import main
from tkperf.engine import request
from tkperf.errors import EXIT_OK, EXIT_RESULT_FILE, EXIT_USAGE, UsageError
from tkperf.notify import read_password

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RESULT = os.path.join(ROOT, "examples", "example-ssd.xml")
ARCHIVE = os.path.join(ROOT, "tests", "data", "tkperf2", "ssd-2.2-apacer.xml")

pytestmark = needs_root


@pytest.fixture
def shared(tmp_path):
    return shared_dir(tmp_path)


def _private(tmp_path, source=RESULT, name="private.xml") -> str:
    d = tmp_path / "private"
    d.mkdir(exist_ok=True)
    path = d / name
    shutil.copy(source, path)
    return str(path)


def _one_error(capsys, link) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("tkperf: error:"), err
    assert "symbolic link of another user (uid 65534)" in err[0] and str(link) in err[0], err
    return err[0]


def _commands(link: str, good: str, out: str):
    """Every command that reads a result file, with ``link`` in each place a file is read."""
    return {
        "show": ["show", link],
        "show-json": ["show", link, "--json"],
        "report": ["report", link, "--format", "rst", "--outdir", out, "-q"],
        "export": ["export", link, "--csv", out],
        "check-result": ["check", link, "--baseline", good],
        "check-baseline": ["check", good, "--baseline", link],
        "check-second-baseline": ["check", good, "--baseline", good, link],
        "compare-first": ["compare", link, good, "--format", "rst", "--outdir", out],
        "compare-second": ["compare", good, link, "--format", "rst", "--outdir", out],
        "history-file": ["history", link, "--json"],
        "history-second-file": ["history", good, link, "--json"],
        "import": ["import", link, "-o", os.path.join(out, "imported.xml")],
    }


COMMANDS = sorted(_commands("L", "G", "O"))


@pytest.mark.parametrize("command", COMMANDS)
def test_a_result_through_another_users_link_is_refused(command, tmp_path, shared, capsys):
    private = _private(tmp_path, ARCHIVE if command == "import" else RESULT)
    link = plant(shared / "result.xml", private)
    out = str(tmp_path / "out")
    argv = _commands(link, RESULT, out)[command]
    assert main(argv) == EXIT_RESULT_FILE
    _one_error(capsys, link)
    assert not os.path.exists(out) or os.listdir(out) == []  # nothing made of the victim's file


@pytest.mark.parametrize("command", COMMANDS)
def test_a_link_on_a_folder_of_the_path_is_refused_too(command, tmp_path, shared, capsys):
    private = _private(tmp_path, ARCHIVE if command == "import" else RESULT, "r.xml")
    link = plant(shared / "dir", os.path.dirname(private))
    out = str(tmp_path / "out")
    assert main(_commands(os.path.join(link, "r.xml"), RESULT, out)[command]) == EXIT_RESULT_FILE
    _one_error(capsys, link)


def test_a_link_of_roots_own_is_followed(tmp_path, shared, capsys):
    link = plant(shared / "result.xml", _private(tmp_path), uid=0)
    assert main(["show", link, "--json"]) == EXIT_OK
    assert main(["history", link, "--json"]) == EXIT_OK


def test_a_history_folder_through_another_users_link_is_refused(tmp_path, shared, capsys):
    """A folder is scanned and its index written in it: through a planted
    link, root would write the index into another user's folder."""
    folder = os.path.dirname(_private(tmp_path))
    link = plant(shared / "nightly", folder)
    assert main(["history", link, "--json"]) == EXIT_RESULT_FILE
    _one_error(capsys, link)
    assert sorted(os.listdir(folder)) == ["private.xml"]  # no index written there


def test_a_fifo_in_place_of_a_result_is_not_read(tmp_path, capsys):
    """A FIFO would block the read forever: it is refused at once."""
    fifo = tmp_path / "result.xml"
    os.mkfifo(fifo)
    done = []
    worker = threading.Thread(target=lambda: done.append(main(["show", str(fifo)])), daemon=True)
    worker.start()
    worker.join(60)
    if not done:  # unblock the reader so the thread ends
        with open(fifo, "wb"):
            pass
        worker.join(10)
    assert done == [EXIT_RESULT_FILE] and "not a regular file" in capsys.readouterr().err


@pytest.mark.parametrize("flag", ["-dsc", "-fm"])
def test_a_description_or_feature_file_through_another_users_link_is_refused(flag, tmp_path, shared, capsys):
    private = tmp_path / "secret.txt"
    private.write_text("Model: from the victim's file\n")
    link = plant(shared / "desc.txt", private)
    target = tmp_path / "target.img"
    rc = main(["ssd", "run", str(target), "--size", "64m", "--yes", "--outdir", str(tmp_path / "o"),
               "--tests", "iops", "--quick", flag, link])
    assert rc == EXIT_USAGE
    _one_error(capsys, link)
    assert not target.exists()  # refused before the target was made or touched


def test_a_request_or_password_file_through_another_users_link_is_refused(tmp_path, shared):
    secret = tmp_path / "secret"
    secret.write_text("root's password\n")
    link = plant(shared / "file", secret)
    with pytest.raises(UsageError, match="symbolic link of another user"):
        request.load(link)
    with pytest.raises(UsageError, match="symbolic link of another user"):
        read_password(link, {})
    own = tmp_path / "pw"
    own.write_text("mine\nsecond line\n")
    assert read_password(plant(shared / "own", own, uid=0), {}) == "mine"
