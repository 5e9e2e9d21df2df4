"""The emulated SSD: an FTL model served as a file over FUSE, under a loop
device with direct I/O (``tkperf simdrive``, ``docs/simdrive.rst``).

tkperf recognises such a loop device by its backing file (the ``drive``
file of a mount in the drive's runtime directory) and calls its transport
:data:`TRANSPORT`.
"""
from __future__ import annotations

#: The transport tkperf gives an emulated SSD (``tkperf info``, results, reports).
TRANSPORT = "emulated SSD"
