"""`profet predict` on input mistakes: one `profet: error:` line and exit 2, or a
warning on stderr."""

import pytest

from tests._utils import ROOT, run

G3S = ROOT / "examples" / "profile_g3s.json"
G3S_10 = ROOT / "examples" / "profile_g3s_10steps.json"


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (["--anchor", "p3.2xlarge", "--profile", G3S], "taken on 'g3s.xlarge', but the anchor"),
        (["--profile", G3S, "--anchor-latency-ms", 0.113], "seconds given as milliseconds?"),
    ],
    ids=["anchor-mismatch", "seconds-as-ms"],
)
def test_input_mistakes_exit_2(args, match):
    code, out, err = run("predict", *args)
    assert code == 2 and out == ""
    assert err.startswith("profet: error: ") and match in err and err.count("\n") == 1


@pytest.mark.parametrize(
    ("args", "said"),
    [([], True), (["--steps", "10"], False)],
    ids=["steps-unsaid", "steps-said"],
)
def test_unsaid_steps_are_warned_about_on_stderr(args, said):
    code, _, err = run("predict", "--anchor", "g3s.xlarge", "--profile", G3S_10, *args)
    assert code == 0
    assert ("2 (PROFET's convention" in err) == said
    assert ("it looks taken over about 10 training steps" in err) == said
