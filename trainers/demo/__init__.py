"""The end-to-end demo: synthesize environments, run the teacher, export SFT data, train a tiny student, compare.

`run_demo(DemoSettings(...), out_dir, reporter)` runs it and returns a `DemoSummary`;
`coworkenv demo` is the command-line face (rich progress on a terminal, `PlainReporter` lines when
redirected, and a final table, from `render`).
"""

from .pipeline import STAGES, DemoError, DemoSummary, run_demo
from .progress import PlainReporter, Reporter, SilentReporter
from .settings import DEFAULT_CAPABILITIES, DemoSettings

__all__ = ["DEFAULT_CAPABILITIES", "STAGES", "DemoError", "DemoSettings", "DemoSummary", "PlainReporter",
           "Reporter", "SilentReporter", "run_demo"]
