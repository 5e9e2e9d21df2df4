"""Real-world storage workloads (SNIA RWSW PTS, docs/rwsw.rst): capture the
block I/O of an application, find its IO streams and steps, replay them."""
