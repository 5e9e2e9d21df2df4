"""``tkperf simdrive up|down|stats|list``: an emulated SSD with a write cliff.

``up`` prints the loop device of a new emulated SSD (a FUSE file served by
an FTL model, under a loop device with direct I/O) and returns once it is
ready; ``down`` removes it; ``stats`` prints the model's counters.  The
model and its parameters: ``docs/simdrive.rst`` (``tkperf help simdrive``).
"""
from __future__ import annotations

import argparse
from typing import Dict

from tkperf import strictjson
from tkperf.errors import EXIT_OK, UsageError
from tkperf.kit import options
from tkperf.simdrive import control
from tkperf.simdrive.params import INT_PARAMS, PARAMS, table_bytes


def _param_option(name: str) -> str:
    return "--" + name.replace("_", "-")


def model_params(args: argparse.Namespace) -> Dict[str, float]:
    """The model parameters given on the command line (``--op`` is ``op_pct``)."""
    out: Dict[str, float] = {}
    for name in PARAMS:
        value = getattr(args, name, None)
        if value is not None:
            out[name] = value
    return out


def available_memory() -> int:
    """``MemAvailable`` of /proc/meminfo in bytes (0 when it cannot be read)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def check_memory(capacity: int, params: Dict[str, float], available: int) -> None:
    """UsageError when the model's tables (about 0.2% of the capacity) would
    not fit into ``available`` bytes of memory (0: unknown, not checked)."""
    try:
        need = table_bytes(capacity, params)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if available and need > available:
        raise UsageError(f"--capacity {capacity:,} bytes: the model's tables would take {need / 2**20:,.0f} MiB "
                         f"of memory, {available / 2**20:,.0f} MiB are available; choose a smaller capacity")


def cmd_up(args) -> int:
    capacity = options.parse_size(args.drive_capacity, "--capacity")
    params = model_params(args)
    check_memory(capacity, params, available_memory())
    print(control.up(capacity, params, args.name or ""))
    return EXIT_OK


def cmd_down(args) -> int:
    control.down(control.find(args.device))
    return EXIT_OK


def cmd_stats(args) -> int:
    doc = control.stats(control.find(args.device), history=args.history)
    if args.json:
        print(strictjson.dumps(doc, indent=1))  # strict JSON, valid UTF-8, as every document tkperf prints
        return EXIT_OK
    if args.history:
        raise UsageError("--history goes with --json")
    print(f"{doc['name']} ({doc['device']}): {doc['capacity_bytes']:,} bytes, model time {doc['model_time_s']:.3f} s "
          f"(idle {doc['idle_time_s']:.3f} s)")
    for key in ("host_write_bytes", "host_read_bytes", "host_trim_bytes", "nand_write_bytes", "mapped_bytes",
                "free_blocks", "physical_blocks", "erases", "gc_copies", "bg_gc_copies",
                "unmapped_read_pages", "first_fg_gc_host_write_bytes", "purges", "fresh", "waf",
                "late_replies", "max_late_s"):
        value = doc[key]
        shown = f"{value:.3f}" if isinstance(value, float) else ("-" if value is None else f"{value:,}")
        print(f"  {key:30} {shown}")
    print("  parameters: " + ", ".join(f"{k} {v['value']} {v['unit']}" for k, v in doc["params"].items()))
    return EXIT_OK


def cmd_list(args) -> int:
    for rundir in control.drives():
        print(f"{rundir.rsplit('/', 1)[-1]} {control.device_of(rundir) or '-'}")
    return EXIT_OK


def register(sub) -> None:
    p = sub.add_parser("simdrive", help="an emulated SSD (FTL model with a write cliff) as a loop device",
                       allow_abbrev=False,
                       description="An emulated SSD: a loop device (direct I/O) over the one file of a FUSE "
                                   "file system served by an FTL model with a fresh-out-of-box burst, a write "
                                   "cliff, garbage collection and idle recovery; its truth is in 'stats'. "
                                   "Root only ('tkperf help simdrive').")
    cmds = p.add_subparsers(dest="simdrive_command", metavar="SUBCOMMAND", required=True)
    up = cmds.add_parser("up", help="make one; prints its block device", allow_abbrev=False)
    up.add_argument("--capacity", dest="drive_capacity", required=True, metavar="SIZE",
                    help="its capacity, e.g. 64m or 1g (binary: m is MiB)")
    up.add_argument("--name", help="its name (default simdriveN)")
    up.add_argument("--op", dest="op_pct", type=float, metavar="PCT",
                    help=f"over-provisioning in per cent of the capacity (default {PARAMS['op_pct'][0]:g})")
    for name, (default, unit, what) in PARAMS.items():
        if name == "op_pct":
            continue
        up.add_argument(_param_option(name), dest=name, type=int if name in INT_PARAMS else float,
                        metavar=unit.upper() if unit.isalpha() else "N",
                        help=f"{what} (default {default:g} {unit})".replace("%", "%%"))  # argparse formats help
    up.set_defaults(func=cmd_up)
    down = cmds.add_parser("down", help="remove one: loop device, mount and server", allow_abbrev=False)
    down.add_argument("device", help="its block device (or its name)")
    down.set_defaults(func=cmd_down)
    st = cmds.add_parser("stats", help="the model's counters", allow_abbrev=False)
    st.add_argument("device", help="its block device (or its name)")
    st.add_argument("--json", action="store_true", help="one JSON object")
    st.add_argument("--history", action="store_true",
                    help="with --json: host writes per model second, [model_time_s, bytes, IOs]")
    st.set_defaults(func=cmd_stats)
    ls = cmds.add_parser("list", help="the emulated SSDs that are up: name and device", allow_abbrev=False)
    ls.set_defaults(func=cmd_list)
