"""The Streamlit app's package: what the pages in ``pages/`` share, beside ``app.py``.

Streamlit runs every ``pages/*.py`` as a page, so the code the pages share lives here:

- ``common``: the cached predictor, text made safe for Markdown, units, number formats and the
  small charts several pages draw;
- ``result_table``, ``target_chart``, ``offerings_front``: the Anchor prediction page's result
  table, per-target chart and time-cost front;
- ``accuracy``: the Model accuracy page's sections on GPUs beyond the data;
- ``worker``: a many-row prediction in a child process;
- ``session``: a session's end and the memory it frees.

No model or feature code lives here: every number shown comes from ``profet_core``'s public
API (``tests/core/test_layers.py`` checks that this package and the pages import nothing
private of it, and that ``profet_core`` never imports this package).
"""
