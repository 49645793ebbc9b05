"""SkyPilot's optimizer with PROFET's run times: a time estimator from one profile
(``time_estimator``, for ``sky.Task.set_time_estimator``) and an offline plan of a task YAML
(``sky_plan``, ``profet sky-plan``): per candidate resource its predicted run time and cost, and
the optimizer's pick with and without the estimate.

Nothing here imports SkyPilot (``pip install -e '.[sky]'``) until a plan is made, and the plan
runs SkyPilot in a child process on a copy of a catalog folder, with no network.
"""

from ._estimator import SkyTimeEstimator, config_of, time_estimator
from ._plan import PLAN_COLUMNS, SkyPlan, sky_plan
from ._runs import RUN_COLUMNS, UNANSWERED_S, RunSpec, estimate_runs, reason_for, run_spec

__all__ = [
    "PLAN_COLUMNS",
    "RUN_COLUMNS",
    "UNANSWERED_S",
    "RunSpec",
    "SkyPlan",
    "SkyTimeEstimator",
    "config_of",
    "estimate_runs",
    "reason_for",
    "run_spec",
    "sky_plan",
    "time_estimator",
]
