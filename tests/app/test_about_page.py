"""About page: explains PROFET and profiling, and lists the artifacts' instances."""

from __future__ import annotations

import re

from tests.app._utils import no_exception, plain


def test_about_page_explains_profiling_and_lists_instances(page, predictor):
    at = page("about").run()
    no_exception(at)
    headers = [h.value for h in at.header]
    assert "How to profile on the anchor instance" in headers
    code = "\n".join(c.value for c in at.code)
    # PROFET's convention: two consecutive steps traced (the page once said 11 steps).
    window = re.search(r"profile_batch=\((.+?), (.+?)\)", code)
    start, stop = (eval(g, {"steps": 40}) for g in window.groups())
    assert stop - start == 1 and start > 40  # in the second epoch
    text = "\n".join(m.value for m in at.markdown)
    assert "tensorflow_stats" in text and "**2 steps**" in text and "profet profile" in text
    # The training data's convention, and what a Keras 3 / XLA / mixed-precision user does.
    assert "tf-keras" in text and "histogram_freq=1" in text and "legacy SGD" in text
    assert "Keras 3, XLA" in text and "measured step latency as the\nanchor latency" in text
    assert "jit_compile=False" in code and "legacy.SGD()" in code
    catalog = at.dataframe[0].value
    assert list(catalog["instance"]) == list(predictor.catalog["instance"])
    assert predictor.default_method in at.caption[-1].value


def test_about_page_works_without_artifacts(page, tmp_path, use_artifacts):
    use_artifacts(tmp_path)
    at = page("about").run()
    no_exception(at)
    assert at.warning and "not available" in plain(at.warning[0].value)
    assert "How to profile on the anchor instance" in [h.value for h in at.header]


def test_spec_table_shows_real_values_or_a_dash(page, predictor):
    """GPU memory, vCPUs and memory read "None" for every spec-only instance."""
    at = page("about").run()
    catalog = at.dataframe[0].value.set_index("instance")
    assert not catalog.isna().any().any(), catalog
    specs = predictor.cross.specs_.set_index("instance")
    for name in catalog.index:
        assert float(catalog.at[name, "gpu_memory_gb"]) == specs.at[name, "gpu_memory_gb"]
        assert float(catalog.at[name, "vcpus"]) == specs.at[name, "vcpus"]


def test_about_page_says_where_prices_come_from_and_how_old(page):
    """The prices' source and date on screen."""
    at = page("about").run()
    no_exception(at)
    assert "Where prices come from" in [h.value for h in at.header]
    text = plain("\n".join(m.value for m in at.markdown))
    assert "SkyPilot" in text and "00148f2a" in text and "2026-11-25" in text
    assert "carry no date" in text


def test_about_page_says_what_is_in_scope_now(page):
    """The page still said multi-GPU was out of scope, after AMP, every GPU of an
    instance and every offering of six clouds came in."""
    at = page("about").run()
    no_exception(at)
    assert "What is in scope" in [h.value for h in at.header]
    text = " ".join(plain("\n".join(m.value for m in at.markdown)).split())
    assert "multi-GPU) are out of scope" not in text and "single-GPU" not in text
    for said in (
        "mixed precision (AMP)",
        "1, N or all of an instance's GPUs, data-parallel",
        "every GPU offering of SkyPilot's catalog",
        "per step, per image",
        "multi-node",
    ):
        assert said in text, said
