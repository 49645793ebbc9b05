"""Anchor prediction: a profile taken on one instance -> batch latency and cost on the others.

The page holds the form (``profet_app/anchor_form.py``), makes one core call when Predict is
pressed (``profet_core.answer``, in a child process for a many-row file) and renders the
answer (``profet_app/anchor_view.py``).
"""

from __future__ import annotations

import streamlit as st

from profet_app import anchor_form, anchor_view, common, offerings_front, worker
from profet_core import OfferingFilter, ProfetError

#: Session-state key of the inputs the shown result was predicted from.
INPUTS = "anchor_inputs"

common.wide_layout()
predictor = common.predictor_or_stop()
st.title("Anchor prediction")
st.caption(
    "Profile one training step on the instance you have (the anchor); PROFET predicts how long "
    "the same step takes on the other GPU instances and what a whole run costs there."
)
form = anchor_form.render(predictor)
if st.button("Predict", type="primary", key="predict"):
    st.session_state.pop(common.ANCHOR_RESULT, None)
    st.session_state.pop(offerings_front.OFFERINGS_RESULT, None)
    st.session_state[INPUTS] = form.inputs
    try:
        profile, request = form.profile(), form.request()
        # One core call: the prediction, every offering (both markets) and the breakdown; a
        # many-row file is answered in a child process, so the server's memory stays flat.
        answer = worker.predict(predictor, form.anchor, profile, request, OfferingFilter(spot=None))
        st.session_state[common.ANCHOR_RESULT] = common.AnchorResult(
            answer.prediction,
            answer.prediction.table,
            answer.breakdown,
            form.batch_size,
            form.input_size,
            profile,
            request,
        )
        if answer.offerings is None:
            st.error(common.safe(f"Offerings could not be priced: {answer.offerings_error}"))
        st.session_state[offerings_front.OFFERINGS_RESULT] = answer.offerings
    except ProfetError as exc:
        common.show_error(exc)

anchor_view.render(
    st.session_state.get(common.ANCHOR_RESULT),
    st.session_state.get(INPUTS, {}),
    form.inputs,
)
offerings_front.render(st.session_state.get(offerings_front.OFFERINGS_RESULT))
