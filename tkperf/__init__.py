"""tkperf: the SNIA Solid State Storage Performance Test Specification with fio."""

__version__ = "0.1.0"
