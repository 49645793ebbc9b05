"""Every warning about ops, novelty, basis, fit or the input is computed once in the core: the CLI
prints and the Anchor page shows the very same texts."""

from __future__ import annotations

import contextlib
import io
import json

from profet_core.cli._main import main
from tests.app._utils import no_exception, plain


def _warnings(err: str) -> list[str]:
    """The CLI's warnings; its notes (where prices come from) are notes, not warnings."""
    lines = err.splitlines()
    assert all(line.startswith(("profet: warning: ", "profet: note: ")) for line in lines)
    return [line.removeprefix("profet: warning: ") for line in lines if "warning:" in line[:16]]


def test_cli_and_page_show_the_same_warnings(page, predictor, tmp_path):
    anchor = predictor.instances[0]
    profile = dict(predictor.examples[anchor]["profile"])
    # Unusual (all device time in one pooling op) plus an op name no cluster takes.
    profile = {k: v for k, v in profile.items() if not k.startswith("Device_")}
    profile.update({"Device_MaxPool": 1e6, "Device_TotallyNovelKernel": 500.0})
    text = json.dumps(profile)
    path = tmp_path / "p.json"
    path.write_text(text)
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(["predict", "--anchor", anchor, "--profile", str(path), "--method", "profet"])
    assert code == 0
    cli = _warnings(err.getvalue())
    at = page("anchor").run()
    at.radio(key="source").set_value("Paste JSON").run()
    at.text_area(key="profile_text").input(text)
    at.selectbox(key="method").set_value("profet")
    next(c for c in at.checkbox if c.key.startswith("known_")).uncheck().run()
    at.button(key="predict").click().run()
    no_exception(at)
    shown = [plain(w.value) for w in at.warning]
    assert cli and shown == cli
    assert any("left out" in w for w in cli)  # the reference method ignored the novel op


def test_a_file_without_steps_warns_as_the_cli_does(page, predictor):
    """The app filled in 2 steps, so its warning read "the profile says it
    covers 2 step(s)" where the CLI said that 2 steps were assumed."""
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "examples" / "profile_g3s_10steps.json"
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(["predict", "--anchor", "g3s.xlarge", "--profile", str(path)])
    assert code == 0
    cli = _warnings(err.getvalue())
    at = page("anchor").run()
    at.selectbox(key="anchor").set_value("g3s.xlarge").run()
    at.radio(key="source").set_value("Upload a file").run()
    at.file_uploader(key="profile_file").upload(path.name, path.read_bytes(), "application/json")
    at.run().button(key="predict").click().run()
    no_exception(at)
    shown = [plain(w.value) for w in at.warning]
    assert any("were assumed" in w for w in cli) and shown == cli
