"""``python -I .../tkperf/bootstrap.py MODULE ARGS``: what ``python -m MODULE
ARGS`` does, with the tkperf package this file is in, whatever ``sys.path``
holds (:func:`tkperf.programs.python_module` starts every Python child so).

Isolated mode leaves the current folder, the script's folder, ``PYTHONPATH``
and the user's site packages off ``sys.path``; the package is loaded from
this file's folder by name, so a test run from a checkout runs the
checkout's code in its children, not an installed copy's.  Nothing of
tkperf is imported before it.
"""
import importlib.util
import os
import runpy
import sys


def main() -> int:
    """Run the module; 2 (a usage error, said on stderr) when it is no tkperf module."""
    if len(sys.argv) < 2 or sys.argv[1].partition(".")[0] != "tkperf":
        print("usage: python -I tkperf/bootstrap.py tkperf[.MODULE] [ARGS...]", file=sys.stderr)
        return 2
    module = sys.argv.pop(1)
    if "tkperf" not in sys.modules:
        package = os.path.dirname(os.path.abspath(__file__))
        spec = importlib.util.spec_from_file_location("tkperf", os.path.join(package, "__init__.py"),
                                                      submodule_search_locations=[package])
        assert spec is not None and spec.loader is not None
        tkperf = importlib.util.module_from_spec(spec)
        sys.modules["tkperf"] = tkperf
        spec.loader.exec_module(tkperf)
    runpy.run_module(module, run_name="__main__", alter_sys=True)  # the module's own exit ends the process
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
