"""Run inside the QEMU guest of tests/lab/vm_lab.py: tkperf's own code against
real (emulated) NVMe, SATA (AHCI) and SCSI controllers.

The guest boots the host's own root file system (virtme-ng), so this file,
the checkout and the Python that runs the tests are all there.  Every step
records what it did and what tkperf said into ``results.json`` in the
directory named on the command line; the tests on the host judge it.  No
step may stop the others: each is caught and recorded.

    python vm_guest.py OUTDIR REPO
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import traceback

OUT, REPO = sys.argv[1], sys.argv[2]
sys.path.insert(0, REPO)
# the root file system is read-only in the guest: matplotlib's cache goes to
# the shared directory, built once for every process of the boot
ENV = dict(os.environ, PYTHONPATH=REPO, MPLCONFIGDIR=os.path.join(OUT, "mpl"))
os.environ["MPLCONFIGDIR"] = ENV["MPLCONFIGDIR"]
TKPERF = [sys.executable, "-m", "tkperf"]
SERIALS = {"nvme": "TKNVME01", "nvme4k": "TKNVME4K", "sata": "TKSATA01", "scsi": "TKSCSI01"}
results: dict = {"steps": {}}


def save() -> None:
    tmp = os.path.join(OUT, "results.json.tmp")
    with open(tmp, "w") as fh:
        json.dump(results, fh, indent=1, default=str)
    os.replace(tmp, os.path.join(OUT, "results.json"))


def run(argv, timeout=300, **kw) -> dict:
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=ENV, **kw)
        return {"argv": argv, "rc": p.returncode, "out": p.stdout[-20000:], "err": p.stderr[-5000:]}
    except subprocess.TimeoutExpired as exc:
        return {"argv": argv, "rc": "timeout", "out": str(exc.stdout)[-2000:], "err": str(exc.stderr)[-2000:]}


def here(argv) -> dict:
    """``tkperf ARGV`` in this process, as :func:`run` reports it (a
    process's start costs seconds of imports under emulation)."""
    import contextlib
    import io

    from tkperf.cli import main
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(list(argv))
    return {"argv": ["tkperf", *argv], "rc": rc, "out": out.getvalue()[-20000:], "err": err.getvalue()[-5000:]}


def step(name):
    def wrap(fn):
        started = time.monotonic()
        try:
            results["steps"][name] = {"ok": True, "value": fn()}
        except Exception:  # noqa: BLE001 - one failing step must not hide the others
            results["steps"][name] = {"ok": False, "error": traceback.format_exc()[-3000:]}
        results["steps"][name]["seconds"] = round(time.monotonic() - started, 1)
        save()
        return fn
    return wrap


def disks() -> dict:
    found = {}
    for _ in range(60):
        data = json.loads(run(["lsblk", "-J", "-d", "-o", "NAME,TRAN,SERIAL"])["out"] or "{}")
        found = {d.get("serial"): "/dev/" + d["name"] for d in data.get("blockdevices", [])}
        if all(s in found for s in SERIALS.values()):
            break
        time.sleep(0.5)
    return {k: found.get(s, "") for k, s in SERIALS.items()}


for module in ("nvme", "ahci", "virtio_scsi", "sd_mod", "sg"):
    run(["modprobe", module])
DEV = disks()
results["disks"] = DEV
results["tools"] = {t: run([t, "--version"])["out"].strip()[:80] for t in ("nvme", "hdparm", "sdparm", "fio")}
save()

from tkperf.errors import TkperfError  # noqa: E402
from tkperf.target import device, health, purge, writecache  # noqa: E402


def resolved(kind):
    return device.resolve(DEV[kind])


@step("info")
def _info():
    """``tkperf info --json`` of each drive, in this process (a Python start
    costs many seconds under emulation)."""
    import contextlib
    import io

    from tkperf.cli import main

    out = {}
    for kind in ("nvme", "sata", "scsi", "nvme4k"):
        buf, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(err):
            rc = main(["info", DEV[kind], "--json"])
        out[kind] = json.loads(buf.getvalue()) if rc == 0 else {"rc": rc, "err": err.getvalue()}
    return out


@step("recorded")
def _recorded():
    """Tool output recorded here for the parser tests (tests/data/vm/)."""
    ctrl = writecache.nvme_controller(resolved("nvme"))
    return {
        "nvme-id-ctrl.json": run(["nvme", "id-ctrl", ctrl, "--output-format=json"])["out"],
        "nvme-get-feature-6.txt": run(["nvme", "get-feature", ctrl, "--feature-id=6"])["out"],
        "nvme-smart-log.json": run(["nvme", "smart-log", DEV["nvme"], "--output-format=json"])["out"],
        "hdparm-W.txt": run(["hdparm", "-W", DEV["sata"]])["out"],
        "hdparm-I.txt": run(["hdparm", "-I", DEV["sata"]])["out"],
        "sdparm-get-WCE.txt": run(["sdparm", "--get=WCE", DEV["scsi"]])["out"],
    }


@step("write_cache")
def _write_cache():
    """off, on and keep on each controller with tkperf's WriteCache: set,
    read back by tkperf, read back by the tool itself, restored at the end."""
    out = {}
    for kind in ("nvme", "sata", "scsi"):
        dev = resolved(kind)
        per = {}
        for wanted in ("off", "on", "keep"):
            events = []
            cache = writecache.WriteCache(dev, wanted, lambda k, t, events=events: events.append([k, t]))
            before = writecache.WriteCache(dev, "keep", lambda k, t: None)
            before.start()
            cache.start()
            during = cache.state
            probe = writecache.WriteCache(dev, "keep", lambda k, t: None)
            probe.start()
            cache.restore()
            after = writecache.WriteCache(dev, "keep", lambda k, t: None)
            after.start()
            per[wanted] = {"before": before.state, "during": during, "probe": probe.state, "after": after.state,
                           "events": events}
        out[kind] = per
    return out


def _flip_to_wce(kind):
    dev = resolved(kind)
    w = writecache.WriteCache(dev, "on", lambda k, t: None)
    w.start()
    w.changed = False  # leave it on: the runs below must find WCE and put it back
    return w.state


@step("run_nvme_lat")
def _run_nvme():
    """A short real LAT run on the NVMe drive: WCD for the run (enterprise),
    WCE restored after, NVMe format as the purge, health before and after."""
    _flip_to_wce("nvme")
    out = os.path.join(OUT, "run-nvme")
    r = run([*TKPERF, "ssd", "run", DEV["nvme"], "--name", "nvme", "--outdir", out, "--yes", "--tests", "lat",
             "--lat-bs", "4k", "--lat-mix", "0/100", "--lat-capture", "0", "--runtime", "1", "--max-rounds", "2",
             "-nj", "1",
             "-iod", "1", "--wipc-loops", "1", "--write-cache", "off", "--purge", "nvme-format",
             "--no-report"], timeout=900)
    after = writecache.WriteCache(resolved("nvme"), "keep", lambda k, t: None)
    after.start()
    return {"run": r, "cache_after": after.state, "xml": os.path.join(out, "nvme.xml")}


@step("sigterm_sata")
def _sigterm():
    """SIGTERM in the middle of a run on the SATA drive: WCE put back."""
    _flip_to_wce("sata")
    out = os.path.join(OUT, "run-sata")
    p = subprocess.Popen([*TKPERF, "ssd", "run", DEV["sata"], "--name", "sata", "--outdir", out, "--yes",
                          "--tests", "lat", "--lat-bs", "4k", "--lat-mix", "0/100", "--lat-capture", "0", "--runtime",
                          "30",
                          "--max-rounds", "2", "-nj", "1", "-iod", "1", "--wipc-loops", "1",
                          "--write-cache", "off", "--purge", "discard", "--no-report", "-q"],
                         env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    log = os.path.join(out, "sata.log")
    deadline = time.monotonic() + 300
    seen = ""
    while time.monotonic() < deadline and p.poll() is None:
        if os.path.exists(log):
            seen = open(log).read()
            if "write cache set to WCD" in seen and "fio" in seen.split("write cache set to WCD", 1)[1]:
                break
        time.sleep(0.5)
    during = writecache.WriteCache(resolved("sata"), "keep", lambda k, t: None)
    during.start()
    p.send_signal(signal.SIGTERM)
    try:
        _, err = p.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        p.kill()
        _, err = p.communicate()
    after = writecache.WriteCache(resolved("sata"), "keep", lambda k, t: None)
    after.start()
    return {"rc": p.returncode, "err": err[-2000:], "during": during.state, "after": after.state,
            "log_tail": open(log).read()[-3000:] if os.path.exists(log) else ""}


def _purge(kind, method):
    try:
        rec = purge.purge(method, resolved(kind))
        return {"done": True, "method": rec.method, "pts": rec.pts_purge, "command": rec.command,
                "note": rec.note, "verification": rec.verification}
    except TkperfError as exc:
        return {"done": False, "error": str(exc), "type": type(exc).__name__}


@step("purge")
def _purges():
    out = {
        "nvme-format": _purge("nvme", "nvme-format"),
        "nvme-crypto": _purge("nvme", "nvme-crypto"),
        "sanitize-block": _purge("nvme", "sanitize-block"),
        "scsi": _purge("scsi", "scsi"),
        "discard-sata": _purge("sata", "discard"),
        "ata-enhanced": _purge("sata", "ata-enhanced"),
        "ata": _purge("sata", "ata"),
    }
    out["sata_security_after"] = run(["hdparm", "-I", DEV["sata"]])["out"]
    return out


@step("health")
def _health():
    snap = health.snapshot(resolved("nvme"), "before")
    return {"source": snap.source, "values": dict(snap.values)} if snap else None


@step("refuse_4kn")
def _refuse_4kn():
    dev = resolved("nvme4k")
    r = here(["ssd", "run", DEV["nvme4k"], "--tests", "lat", "--lat-bs", "512", "--dry-run", "--yes",
              "--outdir", os.path.join(OUT, "run-4k")])
    return {"logical_sector": dev.logical_sector, "run": r}


def _ar_signalled(sig, name):
    """A segmented run sent ``sig`` once its map exists; what is left of it."""
    out = os.path.join(OUT, f"run-ar-{name}")
    p = subprocess.Popen([*TKPERF, "ssd", "run", DEV["nvme"], "--name", name, "--outdir", out, "--yes", "--quiet",
                          "--pts", "pts-c-1.1", "--test-range", "8m", "--ar-segments", "64", "--tests", "lat",
                          "--quick", "--purge", "none", "--wipc-loops", "0", "--max-rounds", "1", "--runtime",
                          "60", "--no-report"], env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and p.poll() is None:
        # the map itself, not a log line
        if "tkperf-ar-" in run(["dmsetup", "ls"])["out"]:
            break
        time.sleep(0.5)
    p.send_signal(sig)
    try:
        _, err = p.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        p.kill()
        _, err = p.communicate()
    for _ in range(60):  # fio dies with it (PR_SET_PDEATHSIG, or tkperf's own clean-up)
        if run(["pgrep", "-x", "fio"])["rc"] != 0:
            break
        time.sleep(0.5)
    log = os.path.join(out, f"{name}.log")
    return {"rc": p.returncode, "err": err[-2000:], "dmsetup_ls": run(["dmsetup", "ls"])["out"],
            "log": [line for line in open(log).read().splitlines() if "dmsetup" in line or "map" in line][-8:]
            if os.path.exists(log) else []}


@step("ar_segments")
def _ar_segments():
    """A short PTS-C 1.1 LAT run on the NVMe drive in 64 ActiveRange segments
    of its 8 MiB test range, mapped by device-mapper (this kernel has it):
    the drive filled with 0xFF first, read back after; every changed 4 KiB
    block is held against the segments regenerated from the stored seed
    (tests/lab/archeck.py), and the map is gone afterwards."""
    import contextlib
    import io

    import archeck
    from tkperf import store
    from tkperf.cli import main
    from tkperf.kit.options import RunOptions

    # SIGTERM: the run removes its map on the way out; SIGKILL: the map is
    # left, and the run below sweeps it
    got = {"terminated": _ar_signalled(signal.SIGTERM, "terminated"), "killed": _ar_signalled(signal.SIGKILL, "killed")}
    archeck.fill(DEV["nvme"], 0xFF)
    out = os.path.join(OUT, "run-ar")
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        rc = main(["ssd", "run", DEV["nvme"], "--name", "ar", "--outdir", out, "--yes", "--quiet",
                   "--pts", "pts-c-1.1", "--test-range", "8m", "--ar-segments", "64", "--tests", "lat",
                   "--quick", "--purge", "none", "--wipc-loops", "0", "--max-rounds", "1", "--runtime", "1",
                   "--no-report"])
    got.update(rc=rc, err=err.getvalue()[-3000:], dmsetup_ls=run(["dmsetup", "ls"])["out"])
    log = os.path.join(out, "ar.log")
    got["log"] = [line for line in open(log).read().splitlines()
                  if "dmsetup" in line or "mapped" in line or "map " in line][-12:] if os.path.exists(log) else []
    if rc == 0:
        saved = store.load(os.path.join(out, "ar.xml"))
        lay = RunOptions.from_dict(saved.options).segment_layout(saved.device.size_bytes)
        got.update(archeck.judge(archeck.changed_blocks(DEV["nvme"], 0xFF), list(lay.starts), lay.size))
        got.update(seed=lay.seed, segment_size=lay.size, status=saved.status,
                   filenames=sorted({line.split("=", 1)[1] for line in open(log).read().splitlines()
                                     if line.startswith("filename=")}))
    return got


@step("stale_maps")
def _stale_maps():
    """Issue 54 item 3 with the real device-mapper: four maps of the SATA
    drive's first MiB, named as tkperf never names its maps
    (``tkperf-ar-backup``), as a live run's (pid 1 and its start), and as
    runs whose pid no process can have (one of them held open: busy).  The
    sweep, timed, with every ``dmsetup remove`` it runs counted, then a
    second sweep; every map made is removed afterwards."""
    from tkperf import programs
    from tkperf.target import armap

    rdev = os.stat(DEV["sata"]).st_rdev
    with open("/proc/sys/kernel/pid_max") as fh:
        dead = int(fh.read())
    names = {"foreign": "tkperf-ar-backup", "live": f"tkperf-ar-1-{armap.owner_tag(1).split('-')[1]}",
             "gone": f"tkperf-ar-{dead}-1", "busy": f"tkperf-ar-{dead}-2"}
    got: dict = {"names": names}
    made, tried, real = [], [], programs.run

    def counting(argv, *a, **kw):
        tried.append(list(argv))
        return real(argv, *a, **kw)

    try:
        for name in names.values():
            subprocess.run(["dmsetup", "create", name], input=f"0 2048 linear {os.major(rdev)}:{os.minor(rdev)} 0\n",
                           text=True, check=True, capture_output=True)
            made.append(name)
        fd = os.open(armap.map_path(names["busy"]), os.O_RDONLY)
        programs.run = counting
        try:
            started = time.monotonic()
            got["swept"] = armap.sweep()
            got["seconds"] = round(time.monotonic() - started, 1)
            got["again"] = armap.sweep() + armap.remove_stale(armap.require(2, load=False))
        finally:
            programs.run = real
            os.close(fd)
        got["removed"] = [a[-1] for a in tried if a[1:2] == ["remove"]]
        got["left"] = sorted(n for n in armap._maps() if n in names.values())
        got["said"] = armap.unsaid()
    finally:
        for name in made:
            if name in armap._maps():
                subprocess.run(["dmsetup", "remove", "--retry", name], capture_output=True)
        got["after"] = run(["dmsetup", "ls"])["out"]
    return got


results["done"] = True
save()
