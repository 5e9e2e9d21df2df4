"""--data-pattern: what fio writes, read back from the device afterwards, and
how the run discloses it (options, header, conformance).  The real fio on a
real loop device that starts full of 0xFF bytes, so every byte fio wrote
shows."""
import os
import zlib

import pytest

from conftest import needs_fio
from tkperf import store
from tkperf.cli import main
from tkperf.errors import UsageError
from tkperf.kit import options
from tkperf.verdict import conformance

MiB = 1024 * 1024
SIZE = 64 * MiB


def test_patterns_parse_and_map_to_fio():
    assert options.parse_data_pattern("random") == "random"
    assert options.parse_data_pattern("Compressible:50%") == "compressible:50"
    assert options.data_pattern_fio("compressible:50") == (("refill_buffers", "1"),
                                                           ("buffer_compress_percentage", "50"))
    assert options.data_pattern_fio("zero") == (("zero_buffers", "1"),)
    assert options.data_pattern_fio("random") == ()
    for bad in ("compressible:0", "compressible:100", "compressible", "ones", ""):
        with pytest.raises(UsageError):
            options.parse_data_pattern(bad)


def test_a_bad_pattern_is_a_usage_error(tmp_path, capsys):
    img = tmp_path / "t.img"
    assert main(["ssd", "run", str(img), "--size", "64m", "--tests", "lat", "--data-pattern", "ones",
                 "--yes"]) == 2
    assert "--data-pattern 'ones'" in capsys.readouterr().err
    assert not img.exists()  # nothing written


def fill(path: str, byte: int) -> None:
    block = bytes([byte]) * MiB
    with open(path, "r+b") as fh:
        for _ in range(SIZE // MiB):
            fh.write(block)
        fh.flush()
        # On the device before fio writes: a write-back later than fio's
        # direct writes would put 0xFF back over them (a machine under load
        # saw 1.3% of the device so).  Then out of the page cache: a cached
        # 0xFF page that fio's direct write failed to invalidate would be
        # read back instead of what fio wrote (seen once more, 1.2%).
        os.fsync(fh.fileno())
        os.posix_fadvise(fh.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)


def read_back(path: str, size: int) -> bytes:
    """The device's first ``size`` bytes as on the device, not as cached."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        data = b""
        while len(data) < size:
            chunk = os.pread(fd, size - len(data), len(data))
            if not chunk:
                break
            data += chunk
        return data
    finally:
        os.close(fd)


PAGE = 4096


def written(data: bytes) -> bytes:
    """The pages of ``data`` fio overwrote: a page of one repeated byte (the
    0xFF fill, or the zeros of a discard) was not overwritten, or is read
    back stale from the loop device's backing file (a machine under load
    left up to 1.3% of the pages so, which is the kernel's, not tkperf's):
    at most a tenth may be, and the data pattern is judged on the others."""
    pages = [data[i:i + PAGE] for i in range(0, len(data), PAGE)]
    kept = [p for p in pages if p.count(p[:1]) != PAGE]
    assert len(kept) >= 0.9 * len(pages), f"{len(pages) - len(kept)} of {len(pages)} pages not overwritten"
    return b"".join(kept)


def run_on(tmp_path, pattern, *extra):
    """A TP round writing ``pattern`` over a loop device filled with 0xFF; the
    result file and what is on the device after.  No report: the figures
    here are the device's bytes (one test renders the stored run's header)."""
    from conftest import try_loop

    loop, why = try_loop(SIZE, str(tmp_path))
    if loop is None:
        pytest.skip(why)
    try:
        fill(loop.path, 0xFF)
        out = tmp_path / "out"
        rc = main(["ssd", "run", loop.path, "--name", "t", "--outdir", str(out), "--tests", "tp",
                   "--tp-bs", "1024k", "--purge", "none", "--wipc-loops", "1", "--runtime", "1",
                   "--max-rounds", "1", "-nj", "1", "-iod", "4", "--data-pattern", pattern, "--yes", "--quiet",
                   "--no-report", *extra])
        assert rc == 0
        return out / "t.xml", read_back(loop.path, 16 * MiB)
    finally:
        loop.__exit__(None, None, None)


@needs_fio
def test_zero_writes_zeros(tmp_path):
    xml, data = run_on(tmp_path, "zero")
    assert data.count(0) == len(data)  # the WIPC overwrote every 0xFF with zeros
    run = store.load(str(xml))
    assert run.options["data_pattern"] == "zero"
    verdict = conformance.of_run(run)
    assert any("data pattern zero" in d for d in verdict.deviations)
    assert "zero_buffers=1" in (xml.parent / "t.log").read_text()


@needs_fio
def test_compressible_compresses_about_as_asked(tmp_path):
    xml, data = run_on(tmp_path, "compressible:50")
    data = written(data)
    ratio = len(zlib.compress(data, 6)) / len(data)
    assert 0.35 < ratio < 0.75, ratio
    log = (xml.parent / "t.log").read_text()
    assert "buffer_compress_percentage=50" in log and "refill_buffers=1" in log


@pytest.mark.parametrize("argv", [(), ("--refill-buffers",)])
@needs_fio
def test_random_with_refill_does_not_compress(tmp_path, capsys, argv):
    # fio's reused (scrambled) buffers compress to about 0.87; refilled ones hardly do, and are the
    # default.  fio's random buffers are not a cipher's: each buffer is one seed times a constant word
    # by word, so its low bits repeat within the buffer, and zlib takes 16 MiB of them to between 0.98
    # and 1.0 (fio 3.33, measured 4 MiB at a time: 0.982 to 1.0003); 0.97 and 0.95 keep the two apart.
    xml, data = run_on(tmp_path, "random", *argv)
    assert store.load(str(xml)).options["refill_buffers"] == "true"
    assert "refill_buffers=1" in (xml.parent / "t.log").read_text()
    data = written(data)
    assert len(zlib.compress(data, 6)) / len(data) > 0.97
    run = store.load(str(xml))
    assert not any("data pattern" in d for d in conformance.of_run(run).deviations)
    out = tmp_path / "rep"
    assert main(["report", str(xml), "--outdir", str(out), "--format", "rst", "-q"]) == 0
    assert "- random, refill\\_buffers (new" in (out / "t.rst").read_text()  # the header's data pattern


@needs_fio
def test_reused_buffers_are_named_in_the_verdict(tmp_path):
    # --no-refill-buffers: fio's buffers reused, scrambled only; they compress, and the verdict says so
    xml, data = run_on(tmp_path, "random", "--no-refill-buffers")
    assert len(zlib.compress(data, 6)) / len(data) < 0.95  # measured 0.872 and 0.876
    run = store.load(str(xml))
    assert run.options["refill_buffers"] == "false"
    assert "refill_buffers=1" not in (xml.parent / "t.log").read_text()
    said = [d for d in conformance.of_run(run).deviations if d.startswith("data pattern")]
    assert said == ["data pattern: fio's random buffers reused (scrambled, not refilled: mostly, not wholly "
                    "incompressible) instead of the PTS's random data; refill_buffers makes it wholly "
                    "incompressible"]
