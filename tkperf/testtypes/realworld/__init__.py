"""The real-world workload tests (SNIA RWSW PTS; docs/rwsw-tests.rst): ``replay``
(:mod:`.replay`), ``rwsw-wsat`` (:mod:`.wsat`) and ``rwsw-dirth`` (:mod:`.dirth`),
each taking a capture written by ``tkperf capture`` (``--workload N.xml``)."""
