"""The consistency stream of the consistency test, XSR and CBW: its phases
cut into intervals (``phases``) and the per-I/O latency logs it keeps
(``latlog``)."""
