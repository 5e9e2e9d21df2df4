"""benchmarks/mutation.py's own bookkeeping (it runs mutmut for minutes, so
only its pure parts are tested here): which module and function a mutant
belongs to, the score without the listed equivalents, stale entries, and
that every listed equivalent names a mutated module and gives a reason."""
import importlib.util
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_spec = importlib.util.spec_from_file_location("mutation", os.path.join(ROOT, "benchmarks", "mutation.py"))
mutation = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("mutation", mutation)  # dataclasses look their module up
_spec.loader.exec_module(mutation)

MODULES = {m.name: m for m in mutation.MODULES}


def test_a_mutant_belongs_to_its_function_or_class():
    tp = MODULES["tp-sweep"]
    assert tp.dotted == "tkperf.testtypes.throughput"
    assert mutation.part_of(tp, "tkperf.testtypes.throughput.xǁSequentialSweepǁplaced__mutmut_5") == "SequentialSweep"
    assert mutation.part_of(MODULES["placement"], "tkperf.pts.placement.x_place__mutmut_2") == "place"
    assert mutation.part_of(tp, "tkperf.testtypes.throughput.x_block_size__mutmut_1") == "block_size"
    assert mutation.part_of(tp, "tkperf.model.steadystate.x_evaluate__mutmut_1") is None
    assert MODULES["steadystate"].dotted == "tkperf.model.steadystate"


def test_only_the_listed_parts_count(tmp_path):
    tp = MODULES["tp-sweep"]
    meta = tmp_path / "mutants" / "tkperf" / "testtypes" / "throughput" / "__init__.py.meta"
    meta.parent.mkdir(parents=True)
    meta.write_text('{"exit_code_by_key": {"tkperf.testtypes.throughput.xǁSequentialSweepǁplaced__mutmut_1": 1, '
                    '"tkperf.testtypes.throughput.x_block_size__mutmut_1": 0}}')
    assert mutation.results(tmp_path, tp) == {"tkperf.testtypes.throughput.xǁSequentialSweepǁplaced__mutmut_1": 1}
    assert mutation.results(tmp_path, MODULES["histogram"]) == {}


def test_the_score_leaves_out_equivalents_and_not_run_mutants():
    ss = MODULES["steadystate"]
    name = "tkperf.model.steadystate.x_evaluate__mutmut_{}".format
    codes = {name(1): 1, name(2): 0, name(3): 0, name(4): None, name(5): 36, name(6): 33}
    s = mutation.score(ss, codes, {name(2): "why", name(9): "gone"})
    assert (s.total, s.killed, s.not_run) == (6, 2, 1)
    assert s.equivalent == [name(2)] and s.survivors == [name(3), name(6)]
    assert s.counted == 4 and s.pct == 50.0 and s.raw == 40.0
    assert s.stale == []  # a partial run cannot tell
    del codes[name(4)]
    s = mutation.score(ss, codes, {name(2): "why", name(9): "gone", name(1): "killed now"})
    assert s.stale == [name(1), name(9)]


def test_every_listed_equivalent_names_a_mutated_module_and_a_reason():
    listed = mutation.read_equivalents()
    assert listed
    for name, reason in listed.items():
        assert any(mutation.part_of(m, name) for m in mutation.MODULES), name
        assert "__mutmut_" in name and len(reason) > 10, name


@pytest.mark.parametrize("path", mutation.TESTS)
def test_the_tests_it_runs_exist(path):
    assert os.path.exists(os.path.join(ROOT, path))
