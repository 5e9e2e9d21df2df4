"""tkperf.kit."""
