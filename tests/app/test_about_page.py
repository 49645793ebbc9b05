"""About page: explains PROFET and profiling, and lists the artifacts' instances."""

from __future__ import annotations

from app_helpers import no_exception, plain


def test_about_page_explains_profiling_and_lists_instances(page, predictor):
    at = page("about").run()
    no_exception(at)
    headers = [h.value for h in at.header]
    assert "How to profile on the anchor instance" in headers
    code = "\n".join(c.value for c in at.code)
    assert "profile_batch" in code and "tf.profiler.experimental.start" in code
    assert "tensorflow_stats" in "\n".join(m.value for m in at.markdown)
    catalog = at.dataframe[0].value
    assert list(catalog["instance"]) == list(predictor.catalog["instance"])
    assert predictor.default_method in at.caption[-1].value


def test_about_page_works_without_artifacts(page, tmp_path, use_artifacts):
    use_artifacts(tmp_path)
    at = page("about").run()
    no_exception(at)
    assert at.warning and "not available" in plain(at.warning[0].value)
    assert "How to profile on the anchor instance" in [h.value for h in at.header]
