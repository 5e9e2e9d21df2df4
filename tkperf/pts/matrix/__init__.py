"""The block size x R/W mix matrix of IOPS and LAT: its jobs, tracking
cells and verdicts (``plan``), and what a report shows of it (``report``)."""
