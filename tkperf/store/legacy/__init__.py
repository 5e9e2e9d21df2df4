"""Readers of older result files, beside the store that calls them.

``format1`` upgrades tkperf's own format-1 files; ``tkperf2`` (the file's
structure), ``tkperf2_tests`` and ``tkperf2_hdd`` (its tests) and
``tkperf2_run`` (the run they make) read the original TKperf's 1.x/2.x
files.  They build on the data model (:mod:`tkperf.model`: results, series,
steady state, the names of stored workloads) and nothing above it, so
:mod:`tkperf.store` can hand them a file (``docs/layout.rst``).
"""
