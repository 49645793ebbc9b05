"""No "issue N" in the code, tests, benches or app: the number points to a tracker the repository
does not have. A comment says the reason in words, and history goes in commit bodies (docs/ and
the README keep theirs: their history is their content)."""

from __future__ import annotations

import re

from tests._utils import ROOT

#: Where a reference is refused: the package (its data READMEs too), the app, bench/ and tests/.
TREES = ("profet_core", "profet_app", "pages", "bench", "tests")
#: Files the check leaves alone (none).
PENDING: set = set()
REF = re.compile(r"\b[Ii]ssues? #?\d+")


def test_no_issue_numbers_in_the_tree():
    files = [ROOT / "app.py"]
    for top in TREES:
        files += [p for p in (ROOT / top).rglob("*") if p.suffix in (".py", ".md")]
    found = [
        f"{p.relative_to(ROOT)}:{i}: {line.strip()[:100]}"
        for p in files
        if "__pycache__" not in p.parts and str(p.relative_to(ROOT)) not in PENDING
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if REF.search(line)
    ]
    assert not found, "say the reason instead of the issue number:\n" + "\n".join(found)
