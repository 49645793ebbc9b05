"""Two-level factorial experiment design and the ANOVA of its results.

Typical use::

    from profet_core.doe import make_design, analyze, read_results, doe_figures
    design = make_design(["cpu=750m,1500m", "memory=1.5Gi,3Gi", "epochs=5,10"], replicates=2)
    design.runs.to_csv("run_sheet.csv", index=False)  # run it, add a response column, then:
    result = analyze(read_results("results.csv"), "train_time_s")
    result.anova, result.effects, doe_figures(result)["half_normal"]

The names are loaded on first use: importing ``profet_core.doe`` (or ``profet_core.doe._cli``,
which the ``profet`` CLI does to register ``profet doe``) does not import statsmodels, pyDOE3 or
plotly until a design, an analysis or a figure is asked for.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from ._analysis import AnalysisResult, analyze
    from ._design import Design, make_design
    from ._diagnostics import ShapiroResult
    from ._examples import demo_results, montgomery_filtration_example
    from ._factors import RUN_COLUMNS, Factor, parse_factor
    from ._plots import doe_figures
    from ._results import default_factors, read_results

_WHERE = {
    "RUN_COLUMNS": "._factors",
    "Factor": "._factors",
    "parse_factor": "._factors",
    "Design": "._design",
    "make_design": "._design",
    "read_results": "._results",
    "default_factors": "._results",
    "AnalysisResult": "._analysis",
    "ShapiroResult": "._diagnostics",
    "analyze": "._analysis",
    "demo_results": "._examples",
    "montgomery_filtration_example": "._examples",
    "doe_figures": "._plots",
}

__all__ = [
    "RUN_COLUMNS",
    "AnalysisResult",
    "Design",
    "Factor",
    "ShapiroResult",
    "analyze",
    "default_factors",
    "demo_results",
    "doe_figures",
    "make_design",
    "montgomery_filtration_example",
    "parse_factor",
    "read_results",
]


def __getattr__(name: str) -> Any:
    # PEP 562: import the submodule holding ``name`` only when it is first asked for
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_WHERE[name], __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
