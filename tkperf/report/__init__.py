"""tkperf.report."""
