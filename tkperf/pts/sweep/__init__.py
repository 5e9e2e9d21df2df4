"""The thread count x queue depth sweep of DIRTH, CBW and the real-world
DIRTH: its options and plan (``plan``), its points (``points``), its two
round structures (``structure``) and the settings they share
(``settings``); in a report its sections (``report``) and SNIA header
(``header``)."""
