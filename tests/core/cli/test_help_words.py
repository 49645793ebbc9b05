"""What the commands say about prices and installs matches what they do and what the docs say:
``--catalog``'s lines join the offerings (the help said they "replace" the offerings' prices, and
a dearer line is not used), and SkyPilot's missing-install message names the command the docs give
(it said ``pip install 'profet[sky]'``, a package no index has; the README ``pip install -e
'.[sky]'``)."""

from __future__ import annotations

import re

from profet_core.cli._main import build_parser
from tests._utils import ROOT


def _help(command: str) -> str:
    parser = build_parser([command])
    sub = parser._subparsers._group_actions[0].choices[command]
    return " ".join(sub.format_help().split())


def test_catalog_help_says_its_lines_join_the_offerings():
    text = _help("predict")
    said = text.split("--catalog CATALOG")[-1]  # its entry, past the usage line
    assert "join the offerings" in said and "replace the offerings'" not in said
    assert "no offering rents it cheaper" in said


def test_the_sky_install_hint_is_the_docs_one():
    source = (ROOT / "profet_core" / "sky" / "_offline.py").read_text()
    hint = re.search(r"add it with: (pip install -e '\.\[sky\]')", source).group(1)
    assert hint in (ROOT / "docs" / "sky.md").read_text()
    assert hint.replace("pip", ".venv/bin/pip") in (ROOT / "README.md").read_text()
    assert "profet[sky]" not in source
