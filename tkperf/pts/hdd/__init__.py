"""The HDD round tests (hdd-iops, hdd-lat): their cells, tracking and
repeatability plan (``cells``), and what their reports say in common
(``report``)."""
