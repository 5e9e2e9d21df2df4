"""The feature matrix of a run (``-fm FILE``) as report blocks: a table of
the features in the order the file gave them, or nothing for a run without
one.  The values are the user's own words; the report says so, since tkperf
checks none of them."""
from __future__ import annotations

from typing import List

from tkperf.model.results import RunResult
from tkperf.render import blocks as b


def features_blocks(run: RunResult, level: int = 1) -> List[object]:
    """A heading of ``level``, a sentence on where the features come from
    and the table; an empty list when the run has no feature matrix."""
    if not run.features:
        return []
    return [
        b.Heading("Feature matrix", level),
        b.Paragraph("The features below come from the feature file given for the run (-fm); "
                    "tkperf shows them as given and did not check them."),
        b.table(["Feature", "Value"], [[name, value] for name, value in run.features],
                title="Features of the device under test", widths=[40, 60]),
    ]
