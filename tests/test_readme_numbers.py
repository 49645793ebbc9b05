"""Every accuracy number the README and the docs pages quote is keyed to the file (or bench
script) that produces it, and is on the line of that file the key names.

A quoted number is a percentage (``6.4%``, a range's both ends ``3.9-6.7%``) or an interval
factor (``x0.92``). Each is followed, before the next such number's key, by a key in an HTML
comment, invisible where the page is read:

- ``<!--crossgpu.md: | all | all | 58 |-->``: the number is on the first line of
  ``docs/crossgpu.md`` holding that label, or on one of the 3 lines after it (a table's rows);
- ``<!--accuracy.md#without the anchor latency: | mean |-->``: the same, searching from the first
  heading that holds the text after ``#``;
- ``<!--../bench/claims/limits.py-->``: a script (or code) that prints or sets it: it must exist.

Paths are relative to the page's folder (``docs/...`` in the README). Before, the test passed when any of 3,038
numbers in four docs rounded to a README number: a number changed to another that the docs hold
elsewhere passed (``test_a_changed_number_is_caught`` plants that).
"""

from __future__ import annotations

import re

import pytest

from tests._utils import ROOT

DOCS = ROOT / "docs"
#: The pages written for people (the rest of docs/ is what the benches and studies write).
PAGES = (
    "README.md",
    "docs/accuracy_numbers.md",
    "docs/app.md",
    "docs/cli.md",
    "docs/development.md",
    "docs/memory.md",
    "docs/offerings.md",
    "docs/sky.md",
)
#: A quoted number: ``x0.92``, ``6.4%`` or a range ``3.9-6.7%`` (both ends).
NUMBER = re.compile(r"x(\d+\.\d+)|(\d+(?:\.\d+)?)(?:-(\d+(?:\.\d+)?))?%")
KEY = re.compile(r"<!--\s*(.*?)\s*-->", re.S)
#: Lines of the source searched after the label's line (a table's next rows, a wrapped line).
WINDOW = 3


#: The nominal level of every interval (``INTERVAL_LEVEL``), a name, not a result.
LEVEL = re.compile(r"80% (?=(?:prediction )?(?:interval|range|coverage))")


def _prose(text: str) -> str:
    """``text`` without its code blocks, inline code (commands and examples, not quotes) and the
    intervals' name ("80% interval")."""
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    return LEVEL.sub("", re.sub(r"`[^`\n]*`", "", text))


def quotes(text: str) -> list[tuple[str, str | None]]:
    """``(number as shown, its key or None)`` for each quoted number of ``text``, in order."""
    text = _prose(text)
    found, pending = [], []
    pos = 0
    while pos < len(text):
        m_num, m_key = NUMBER.search(text, pos), KEY.search(text, pos)
        if m_key and (not m_num or m_key.start() < m_num.start()):
            found += [(n, m_key.group(1)) for n in pending]
            pending, pos = [], m_key.end()
        elif m_num:
            pending += [g for g in (m_num.group(1), m_num.group(2), m_num.group(3)) if g]
            pos = m_num.end()
        else:
            break
    return found + [(n, None) for n in pending]


def _rounds_to(shown: str, line: str) -> bool:
    places = len(shown.split(".")[1]) if "." in shown else 0
    want = float(shown)
    half = 0.5 * 10**-places + 1e-9
    return any(abs(float(v) - want) <= half for v in re.findall(r"\d+(?:\.\d+)?", line))


def check(shown: str, key: str | None, base=DOCS) -> str | None:
    """Why the quoted number ``shown`` does not match its ``key`` (None: it does); the key's
    path is relative to ``base``, the page's folder."""
    if key is None:
        return f"{shown} has no key (<!--file: label-->) saying where it comes from"
    path, _, label = (part.strip() for part in key.partition(":"))
    path, _, section = path.partition("#")
    source = (base / path).resolve()
    if not source.is_file():
        return f"{shown}: its source {path} does not exist"
    if path.endswith(".py") or not label:
        return None  # a script that prints it, or code that sets it
    lines = source.read_text().splitlines()
    start = 0
    if section:
        heads = [i for i, x in enumerate(lines) if x.startswith("#") and section in x]
        if not heads:
            return f"{shown}: {path} has no heading with {section!r}"
        start = heads[0]
    at = [i for i in range(start, len(lines)) if label in lines[i]]
    if not at:
        return f"{shown}: {path} has no line with {label!r}" + (
            f" after {section!r}" if section else ""
        )
    near = lines[at[0] : at[0] + 1 + WINDOW]
    if not any(_rounds_to(shown, x) for x in near):
        return f"{shown}: not on the line of {path} with {label!r}: {near[0][:160]!r}"
    return None


def _all_quotes() -> list[tuple[str, str, str | None]]:
    return [(page, n, k) for page in PAGES for n, k in quotes((ROOT / page).read_text())]


def test_the_pages_quote_numbers():
    by_page = {p: sum(1 for q in _all_quotes() if q[0] == p) for p in PAGES}
    assert by_page["docs/accuracy_numbers.md"] >= 40, by_page


@pytest.mark.parametrize(("page", "shown", "key"), _all_quotes(), ids=lambda v: str(v)[:40])
def test_each_quoted_number_is_on_its_sources_line(page, shown, key):
    problem = check(shown, key, (ROOT / page).parent)
    assert problem is None, f"{page}: {problem}"


def test_a_changed_number_is_caught():
    """A number changed to another the docs hold elsewhere (6.4% -> 6.8%: 6.8 is in
    docs/accuracy.md, crossgpu.md and others) is caught; the test before this one passed it."""
    text = (DOCS / "accuracy_numbers.md").read_text()
    keyed = "6.4%<!--crossgpu.md: | all | all | 58 |-->"
    assert keyed in text
    assert check("6.4", "crossgpu.md: | all | all | 58 |") is None
    planted = quotes(text.replace(keyed, keyed.replace("6.4%", "6.8%")))
    problems = [check(n, k) for n, k in planted if check(n, k)]
    assert len(problems) == 1 and problems[0].startswith("6.8: not on the line"), problems
    assert check("6.4", None) is not None  # and an unkeyed number is refused
