"""PROFET web app: ``streamlit run app.py``.

The pages live in ``pages/``; shared helpers (the cached model loader) in ``profet_app/common.py``.
"""

from __future__ import annotations

import streamlit as st

from profet_app import common, session

st.set_page_config(
    page_title="PROFET — GPU instance latency and cost", page_icon="⏱️", layout="wide"
)

pages = {
    "Predict": [
        st.Page(
            "pages/anchor_prediction.py",
            title="Anchor prediction",
            icon=":material/target:",
            default=True,
        ),
        st.Page(
            "pages/scaler_prediction.py", title="Scaler prediction", icon=":material/show_chart:"
        ),
    ],
    "Trust and plan": [
        st.Page("pages/model_accuracy.py", title="Model accuracy", icon=":material/fact_check:"),
        st.Page("pages/experiment_design.py", title="Experiment design", icon=":material/science:"),
    ],
    "Help": [st.Page("pages/about.py", title="About / how to profile", icon=":material/help:")],
}
# A session's uploads and results are released when its browser goes (not kept for a reconnect).
session.end_with_the_browser()
# The models, validation tables and every page's modules, loaded once a process in the background.
common.warm_up()
page = st.navigation(pages)
st.sidebar.caption(
    "PROFET predicts a CNN training step's latency and cost on GPU cloud "
    "instances from one TensorFlow profile."
)
page.run()
