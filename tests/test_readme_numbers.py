"""The README's GPU numbers are those the committed docs say (issue 28, item 6): docs/crossgpu.md
(FP32 across GPUs), docs/amp_multigpu.md (mixed precision, several GPUs; issue 25),
docs/dp_candidates.md (the N-GPU interval) and docs/goal_limits.md (what limits the goals). A number
rewritten in one and not the other fails here."""

import re

import pytest

from tests._utils import ROOT

SECTION = re.compile(r"## GPUs the data never measured\n(.*?)\n## ", re.S)
#: A percentage or an interval factor as the README writes them: 7.3%, x0.92.
NUMBER = re.compile(r"(?:(\d+(?:\.\d+)?)%)|(?:x(\d+\.\d+))")


def _readme_numbers() -> list[str]:
    text = SECTION.search((ROOT / "README.md").read_text()).group(1)
    return [a or b for a, b in NUMBER.findall(text)]


def _doc_numbers() -> list[float]:
    names = ("crossgpu.md", "amp_multigpu.md", "dp_candidates.md", "goal_limits.md")
    doc = "\n".join((ROOT / "docs" / n).read_text() for n in names)
    return [float(v) for v in re.findall(r"\d+(?:\.\d+)?", doc)]


def test_the_readme_section_has_its_numbers():
    found = _readme_numbers()
    assert len(found) >= 15 and "6.8" in found and "0.92" in found, found


@pytest.mark.parametrize("shown", _readme_numbers())
def test_each_readme_number_is_in_the_committed_doc(shown):
    places = len(shown.split(".")[1]) if "." in shown else 0
    doc = _doc_numbers()
    assert any(round(v, places) == float(shown) for v in doc), (
        f"README says {shown} in its GPUs section; no committed doc has a number that rounds to it"
    )
