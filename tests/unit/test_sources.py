"""Sources a reader can look up: no text of the package, its docs or the
README names a document only the team has (an internal source file's number,
a team note, a folder outside the repository), and every file of the
repository they name exists."""
from __future__ import annotations

import os
import re
from typing import Iterator, List, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
#: Internal references a user cannot follow.
PRIVATE = [re.compile(r"\bseeds? \d{3}\b", re.I), re.compile(r"shared/"), re.compile(r"pts-notes"),
           re.compile(r"house-style\.md"), re.compile(r"\b(?:tkperf's|our|the team's)\s+notes\b", re.I)]
#: A path inside the repository: a top folder of it, then a file name with an extension.
REPO_PATH = re.compile(r"(?<![\w/.-])((?:docs|tkperf|tests|examples|benchmarks)/[\w./-]*\w\.(?:rst|py|md|txt|xml|"
                       r"json|svg|png|sh|toml|cfg))\b")
#: A Markdown file named anywhere: the repository has none but its own.
MARKDOWN = re.compile(r"\b([\w-]+\.md)\b")


def texts() -> Iterator[Tuple[str, str]]:
    """(path relative to the repository, text) of every file users read or run."""
    yield "README.rst", open(os.path.join(ROOT, "README.rst"), encoding="utf-8").read()
    for top in ("tkperf", "docs"):
        for folder, _dirs, files in os.walk(os.path.join(ROOT, top)):
            for f in files:
                if f.endswith((".py", ".rst", ".txt", ".json", ".html", ".css")):
                    path = os.path.join(folder, f)
                    yield os.path.relpath(path, ROOT), open(path, encoding="utf-8", errors="replace").read()


def _hits(pattern: re.Pattern, text: str) -> List[str]:
    return [m.group(0) for m in pattern.finditer(text)]


def test_no_text_names_a_source_only_the_team_has():
    found = []
    for path, text in texts():
        for pattern in PRIVATE:
            found += [f"{path}: {hit}" for hit in _hits(pattern, text)]
    assert not found, found


def test_every_repository_file_named_exists():
    missing = []
    for path, text in texts():
        for m in REPO_PATH.finditer(text):
            name = m.group(1)
            if "*" in name or "NAME" in name or "<" in name:
                continue
            if not os.path.exists(os.path.join(ROOT, name)):
                missing.append(f"{path}: {name}")
        for m in MARKDOWN.finditer(text):
            if not any(os.path.exists(os.path.join(ROOT, d, m.group(1))) for d in ("", "docs")):
                missing.append(f"{path}: {m.group(1)}")
    assert not missing, missing


def test_the_patterns_find_what_they_look_for():
    # the checks above are only as good as their patterns
    assert _hits(PRIVATE[0], "a disclosed variant (seed 000)") and _hits(PRIVATE[0], "(seeds 002 and 004)")
    assert _hits(PRIVATE[1], "``shared/seeds``") and _hits(PRIVATE[2], '(pts-notes.md, "LAT MAX")')
    assert _hits(PRIVATE[4], "is marked *check* in tkperf's\n  notes") and not _hits(PRIVATE[4], "the run notes")
    assert [m.group(1) for m in REPO_PATH.finditer("see docs/nowhere.rst and tkperf/cli/run.py.")] == \
        ["docs/nowhere.rst", "tkperf/cli/run.py"]
    assert [m.group(1) for m in MARKDOWN.finditer("(pts-notes.md)")] == ["pts-notes.md"]


def test_method_names_the_plots_as_they_are_written():
    text = open(os.path.join(ROOT, "docs", "method.rst"), encoding="utf-8").read()
    assert "iops-window.svg" in text and "iops-window.png``" not in text
    assert not re.search(r"iops-window-[\w-]+\.png", text)


def test_method_gives_hir_the_oio_it_runs():
    """docs/method.rst's OIO table (issue 55 item 8): HIR runs one thread at
    --hir-qd whatever --numjobs says, as its plan does, not the operator's
    TC x QD of IOPS and WSAT."""
    from tkperf.kit import options, registry

    text = open(os.path.join(ROOT, "docs", "method.rst"), encoding="utf-8").read()
    table = text.split("**One rule for the OIO.**")[1].split("**A test range the device cannot hold.**")[0]
    rows = {line[:7].strip(): line[7:30].strip() for line in table.splitlines() if re.match(r"[A-Z]{2,5} ", line)}
    assert rows["HIR"] == "TC1 x ``--hir-qd``" and rows["WSAT"].startswith("(``--numjobs``")
    assert "its thread count is always 1, whatever ``--numjobs`` says" in " ".join(table.split())
    hir = registry.get("hir")
    (plan,) = hir.plan(options.build({"tests": ("hir",), "numjobs": 4, "hir_qd": 16}), 1 << 30)
    assert (plan.params["numjobs"], plan.params["iodepth"]) == ("1", "16")
