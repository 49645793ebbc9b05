"""The whole answer to one question, from one call: the per-configuration prediction (with the
run's totals and the picks), every offering priced and the per-op-family breakdown, the engine
evaluating each target once for all of them (the Anchor page's Predict)."""

from __future__ import annotations

from dataclasses import dataclass, replace

import pandas as pd

from ..errors import ProfetError
from ..inputs._args import frame_arg
from ..prediction._request import as_request
from ._filter import check_offering_args
from ._predict import OfferingsResult, offerings_answer


@dataclass(frozen=True)
class Answer:
    """Everything one question is answered with.

    Attributes
    ----------
    prediction : Prediction
        One row per profile row and GPU configuration, with the run's steps, hours and cost
        where the request has a run, and the picks (the CLI's table).
    offerings : OfferingsResult or None
        Every offering the filter keeps, priced for the first profile row (a table of every
        row x every offering runs to gigabytes); None where they could not be priced.
    offerings_error : str
        Why the offerings could not be priced ("" where they were).
    breakdown : pandas.DataFrame
        Predicted device time per op family on each measured target, first profile row
        (:meth:`Predictor.breakdown`).
    evaluations : int
        Targets the engine evaluated for this answer (each once per method).
    """

    prediction: object
    offerings: OfferingsResult | None
    offerings_error: str
    breakdown: pd.DataFrame
    evaluations: int = 0


def answer(predictor, anchor, profiles: pd.DataFrame, request=None, *, filter=None, **options):
    """The prediction, the offerings and the breakdown of one profile, from one call.

    Parameters
    ----------
    predictor : Predictor
    anchor, profiles, request, **options
        As for :meth:`Predictor.predict`.
    filter : OfferingFilter, optional
        The offerings priced (default: on-demand, every cloud, each type at its cheapest
        region).

    Returns
    -------
    Answer

    Raises
    ------
    ProfetError
        What :meth:`Predictor.predict` refuses; an offerings error is kept in the answer.
    """
    request = as_request(request, options, anchor)
    frame_arg(profiles, "profiles")
    check_offering_args(predictor, filter, None, None)
    anchor, profiles = predictor.resolve(request, profiles)
    pred, _, blocks = predictor.predict_prepared(anchor, profiles, request)
    pred = pred.with_run(request.dataset_images, request.batch_size, request.epochs)
    first = profiles.iloc[:1]
    shared = blocks if len(profiles) == 1 else None  # a one-row question shares the work
    try:
        offers = offerings_answer(predictor, anchor, first, request, filter, blocks=shared)
        error = ""
    except ProfetError as exc:
        offers, error = None, str(exc)
    if offers is not None and len(profiles) > 1:
        note = f"Offerings are priced for profile row 0 only (the file holds {len(profiles)} rows)."
        offers = replace(offers, notes=(*offers.notes, note))
    breakdown = predictor.breakdown(anchor, first)
    return Answer(pred, offers, error, breakdown, blocks.evaluations)
