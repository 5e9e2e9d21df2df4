"""tkperf: the SNIA Solid State Storage Performance Test Specification with fio."""

__version__ = "0.1.0"

import logging as _logging

# A library stays quiet unless the CLI gives it a log file: without this,
# Python's last-resort handler would echo every logged error to stderr.
_logging.getLogger("tkperf").addHandler(_logging.NullHandler())
