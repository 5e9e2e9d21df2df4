"""Verdicts over a stored run that need the test types' own judgement.

``conformance`` (does a run follow the PTS revision it names) and
``regression`` (what ``tkperf check`` computes) ask each test type about its
own tests, so they sit above :mod:`tkperf.testtypes`, and the data model
below stays free of test types (``docs/layout.rst``).
"""
