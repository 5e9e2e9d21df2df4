"""A QEMU guest with real (emulated) drive controllers, for the ``vm`` tests.

One guest per test session: QEMU's NVMe controller (two: 512 B and 4 KiB
sectors), an AHCI SATA disk and a virtio-scsi disk, each over a sparse file
under a temporary directory.  virtme-ng boots Debian's generic kernel with
the host's own root file system (so this checkout and the test's Python run
unchanged inside), under software emulation (TCG; no KVM here), runs
``tests/lab/vm_guest.py`` and powers off; its ``results.json`` comes back
through a shared directory (``--rwdir``).  Nothing runs afterwards: the
whole QEMU process group is killed when the time limit is reached.

What it needs (the README's test command installs them): Debian's
``qemu-system-x86``, ``linux-image-amd64`` and ``busybox-static``, and
virtme-ng from PyPI (the ``test`` extra).  docs/testing.rst says what is
covered here and what only by recorded output.
"""
from __future__ import annotations

import fcntl
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Optional

HERE = Path(__file__).resolve().parents[1]
REPO = HERE.parent
MiB = 1024 * 1024
DISK_MB = 128
BOOT_LIMIT_S = 1500.0

#: The real Popen, taken at import: a boot started early (:func:`start_early`)
#: runs in a thread while a unit test may have swapped ``subprocess.Popen``
#: for its guard against starting programs (tests/lab/suite.py).
_POPEN = subprocess.Popen

#: (serial, QEMU device options after the drive) of each emulated disk.
DISKS = {
    "nvme": "-device nvme,serial=TKNVME01,drive={id}",
    "nvme4k": "-device nvme,serial=TKNVME4K,drive={id},logical_block_size=4096,physical_block_size=4096",
    "sata": "-device ide-hd,drive={id},bus=ahci0.0,serial=TKSATA01",
    "scsi": "-device scsi-hd,drive={id},bus=scsi0.0,serial=TKSCSI01",
}


def kernel() -> str:
    """Debian's generic kernel (the cloud kernel lacks AHCI and 9p), newest first."""
    found = sorted(glob.glob("/boot/vmlinuz-*-amd64"), reverse=True)
    return found[0] if found else ""


def vng() -> str:
    return shutil.which("vng") or str(Path(sys.executable).parent / "vng")


def missing() -> str:
    """Why no guest can be booted here ('' when one can)."""
    if not shutil.which("qemu-system-x86_64"):
        return "qemu-system-x86_64 is missing (apt-get install qemu-system-x86)"
    if not kernel():
        return "no /boot/vmlinuz-*-amd64 (apt-get install linux-image-amd64)"
    if not os.path.exists(vng()):
        return "virtme-ng is missing (pip install virtme-ng)"
    if not shutil.which("busybox"):
        return "busybox is missing (apt-get install busybox-static)"
    return ""


def boot(workdir: Path, limit_s: float = BOOT_LIMIT_S) -> dict:
    """Boot the guest once, run vm_guest.py in it; its results (with the
    guest's console tail and the seconds it took)."""
    workdir.mkdir(parents=True, exist_ok=True)
    out = workdir / "out"
    out.mkdir(exist_ok=True)
    opts = ["-device ahci,id=ahci0", "-device virtio-scsi-pci,id=scsi0"]
    for name, device in DISKS.items():
        image = workdir / f"{name}.img"
        with open(image, "wb") as fh:
            fh.truncate(DISK_MB * MiB)
        opts.append(f"-drive file={image},if=none,id=d{name},format=raw,cache=unsafe")
        opts.append(device.format(id=f"d{name}"))
    argv = [vng(), "--run", kernel(), "--disable-kvm", "--disable-microvm", "--memory", "1536M", "--cpus", "2",
            "--rwdir", str(out), f"--qemu-opts={' '.join(opts)}",
            "--exec", f"{sys.executable} {Path(__file__).resolve().parent / 'vm_guest.py'} {out} {REPO}"]
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}")
    console = workdir / "console.txt"
    started = time.monotonic()
    with open(console, "wb") as fh:
        proc = _POPEN(argv, stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env=env, start_new_session=True)
        try:
            proc.wait(timeout=limit_s)
        except subprocess.TimeoutExpired:
            pass
        finally:
            _kill_group(proc)
    took = time.monotonic() - started
    results_file = out / "results.json"
    results = json.loads(results_file.read_text()) if results_file.exists() else {}
    results["boot"] = {"seconds": round(took, 1), "rc": proc.returncode, "argv": argv,
                       "console": console.read_text(errors="replace")[-4000:]}
    return results


def boot_once(shared: Path, limit_s: float = BOOT_LIMIT_S) -> dict:
    """:func:`boot`, once for all of a session's pytest-xdist workers: the
    first to come boots the guest under ``shared`` (the workers' common temp
    folder) and keeps its results there; the others wait for it on a lock
    and read them.  One guest, whichever worker its tests are dealt to
    (two guests at once would each take the two cores the suite has)."""
    shared.mkdir(parents=True, exist_ok=True)
    kept = shared / "vm-results.json"
    with open(shared / "vm.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if kept.exists():
                return json.loads(kept.read_text())
            results = boot(shared / "vm", limit_s)
            tmp = kept.with_suffix(".tmp")
            tmp.write_text(json.dumps(results))
            os.replace(tmp, kept)
            return results
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def shared_dir(basetemp: Path) -> Path:
    """Where an xdist worker (basetemp ``.../popen-gwN``) finds the guest
    booted for the whole session."""
    return basetemp.parent / "vm-guest"


_early: list = []


def start_early(basetemp: Path) -> None:
    """In an xdist worker whose session has vm tests: boot the guest now, in
    a thread (:func:`boot_once`), while the worker runs its other tests; the
    ``guest`` fixture then finds it booted or waits for it, not a worker
    idle through a boot.  QEMU inherits the run's tag, so an interrupted
    run's sweep ends it (tests/lab/suite.py)."""
    if missing():
        return
    thread = threading.Thread(target=boot_once, args=(shared_dir(basetemp),), name="vm-guest", daemon=True)
    thread.start()
    _early.append(thread)


def finish_early() -> None:
    """At the worker's end: a boot it started is seen through (the other
    worker may be waiting for its results), never cut off."""
    for thread in _early:
        thread.join(BOOT_LIMIT_S + 60)


def _kill_group(proc: subprocess.Popen) -> None:
    """QEMU and everything virtme-ng started: gone, whatever happened."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if proc.poll() is not None:
            break
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            continue
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # stragglers in the group
    except ProcessLookupError:
        pass


def step(results: dict, name: str) -> Optional[dict]:
    """One guest step's value; raises AssertionError with the guest's
    traceback or console when it did not run."""
    got = results.get("steps", {}).get(name)
    if got is None:
        raise AssertionError(f"the guest never ran {name}: {results.get('boot', {}).get('console', '')[-2500:]}")
    if not got.get("ok"):
        raise AssertionError(f"the guest's {name} failed:\n{got.get('error')}")
    return got.get("value")
