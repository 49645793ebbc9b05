"""Profiler trace (XSpace ``*.xplane.pb``) -> ``tensorflow_stats`` table -> one PROFET profile.

The conversion is the profiler package's own: ``xspace_to_tool_data`` of ``xprof`` (or of the
older ``tensorboard_plugin_profile``), tool ``framework_op_stats`` (older name
``tensorflow_stats``). It returns Google-visualization data tables as JSON; the first one keeps
the IDLE rows, like TensorBoard's CSV export, and is the one PROFET's data was built from.
Grouping is :func:`profet_core.inputs._tfstats.group_tf_stats`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from ..errors import ProfetError, ProfetFileNotFoundError, ProfetValueError
from ..inputs._tfstats import group_tf_stats

TOOLS = ("framework_op_stats", "tensorflow_stats")


def _tool_module():
    """The installed profiler package's ``raw_to_tool_data`` module and its version."""
    try:
        from xprof import version as ver
        from xprof.convert import raw_to_tool_data

        return raw_to_tool_data, f"xprof {getattr(ver, '__version__', '?')}"
    except ImportError:
        pass
    try:
        from tensorboard_plugin_profile import version as ver
        from tensorboard_plugin_profile.convert import raw_to_tool_data

        return raw_to_tool_data, f"tensorboard_plugin_profile {getattr(ver, '__version__', '?')}"
    except ImportError:
        raise ProfetError(
            "converting a profiler trace needs the xprof package (pip install -e '.[capture]' "
            "or pip install xprof)"
        ) from None


def profiler_version() -> str:
    """Name and version of the profiler package that converts traces."""
    return _tool_module()[1]


def find_xplanes(logdir: str | Path) -> list[Path]:
    """The ``*.xplane.pb`` files of the newest profiler run under ``logdir``.

    Raises
    ------
    ProfetFileNotFoundError
        If no trace was written (the traced steps never ran).
    """
    runs = sorted({p.parent for p in Path(logdir).glob("**/plugins/profile/*/*.xplane.pb")})
    if not runs:
        raise ProfetFileNotFoundError(
            f"no profiler trace (*.xplane.pb) under {str(logdir)!r}: the traced steps did not run"
        )
    return sorted(runs[-1].glob("*.xplane.pb"))


def _gviz_table(table: dict) -> pd.DataFrame:
    cols = [c.get("label") or c.get("id") for c in table["cols"]]
    rows = [[(cell or {}).get("v") for cell in row["c"]] for row in table.get("rows", [])]
    return pd.DataFrame(rows, columns=cols)


def stats_from_tool_json(data: bytes | str) -> pd.DataFrame:
    """The ``tensorflow_stats`` table (IDLE rows kept) from the tool's JSON output.

    Parameters
    ----------
    data : bytes or str
        ``xspace_to_tool_data(..., "framework_op_stats", ...)`` output: one data table or a list
        of them (with and without IDLE).

    Returns
    -------
    pandas.DataFrame
        One row per op with the tool's own column labels (``Host/device``, ``Operation Type`` or
        ``Type``, ``Total time (us)``, ...).
    """
    try:
        tables = json.loads(data)
    except (TypeError, ValueError) as exc:
        raise ProfetValueError(f"profiler tool output is not JSON: {exc}") from None
    tables = tables if isinstance(tables, list) else [tables]
    frames = [_gviz_table(t) for t in tables if isinstance(t, dict) and "cols" in t]
    if not frames:
        raise ProfetValueError("profiler tool output holds no data table")
    # The first table is the one with IDLE rows (TensorBoard's CSV export takes it too).
    return frames[0]


def trace_to_stats(xplanes) -> pd.DataFrame:
    """Convert XSpace files with the profiler package into a ``tensorflow_stats`` table.

    Parameters
    ----------
    xplanes : sequence of path-like
        ``*.xplane.pb`` files of one profiler run (see :func:`find_xplanes`).

    Returns
    -------
    pandas.DataFrame
        See :func:`stats_from_tool_json`.
    """
    module, _ = _tool_module()
    paths = [str(p) for p in xplanes]
    missing = [p for p in paths if not Path(p).is_file()]
    if missing or not paths:
        raise ProfetFileNotFoundError(f"trace file(s) {missing or paths} do not exist")
    for tool in TOOLS:
        try:
            data, _ = module.xspace_to_tool_data(paths, tool, {})
        except Exception as exc:  # the C++ converter raises assorted types on a bad file
            raise ProfetValueError(f"cannot convert trace {paths[0]!r}: {exc}") from None
        if data:
            return stats_from_tool_json(data)
    raise ProfetValueError(
        f"the profiler package converted {paths[0]!r} to no {' / '.join(TOOLS)} table "
        "(not an XSpace trace, or no op ran while tracing)"
    )


def trace_to_profile(xplanes) -> pd.DataFrame:
    """A trace as one PROFET profile row (``Host_<Type>``/``Device_<Type>`` -> total us)."""
    return group_tf_stats(trace_to_stats(xplanes))
