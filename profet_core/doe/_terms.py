"""Model terms of a two-level analysis: estimable effects, alias groups and term selection."""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence

import numpy as np

from ..errors import ProfetValueError
from ._factors import LETTERS as _LETTERS


def parse_term(text: str, names: Sequence[str]) -> tuple[int, ...]:
    """Factor indices of a main effect ``"A"`` or interaction ``"A:B"`` (first of a chain)."""
    text = str(text)
    if len(text) > 1000:
        raise ProfetValueError(f"term {text[:40]!r}... is {len(text)} characters long")
    first = text.split("=")[0].strip().lstrip("-").strip()
    parts = [p.strip() for p in re.split(r"[:*]", first) if p.strip()]
    idx = []
    for p in parts:
        if p not in names:
            raise ProfetValueError(
                f"term {text!r} names {p!r}, which is not a factor; factors are "
                f"{', '.join(names)} (write interactions as A:B)"
            )
        idx.append(list(names).index(p))
    if not 1 <= len(set(idx)) <= 2 or len(set(idx)) != len(idx):
        raise ProfetValueError(
            f"term {text!r} must be a main effect or a two-factor interaction (e.g. A or A:B)"
        )
    return tuple(sorted(idx))


def estimable_groups(x: np.ndarray, names: Sequence[str]) -> list[dict]:
    """Main effects and two-factor interactions, exactly aliased ones grouped together.

    Each group is ``{"terms": [(indices, sign), ...], "dropped": bool}``; the first term
    represents the group in the model. Groups whose column is a linear combination of earlier
    ones (possible in irregular, incomplete designs) are marked dropped.
    """
    k = x.shape[1]
    candidates = [(i,) for i in range(k)] + list(itertools.combinations(range(k), 2))
    groups: list[dict] = []
    cols: list[np.ndarray] = []
    for t in candidates:
        col = np.prod(x[:, list(t)], axis=1)
        for g, gcol in zip(groups, cols, strict=True):
            if np.array_equal(col, gcol) or np.array_equal(col, -gcol):
                if len(t) == 1:
                    raise ProfetValueError(
                        f"factors {names[g['terms'][0][0][0]]!r} and {names[t[0]]!r} are "
                        "confounded (their columns are identical or opposite in the results), "
                        "so their effects cannot be separated"
                    )
                g["terms"].append((t, 1 if np.array_equal(col, gcol) else -1))
                break
        else:
            groups.append({"terms": [(t, 1)], "dropped": False})
            cols.append(col)
    basis = [np.ones(x.shape[0])]
    for g, col in zip(groups, cols, strict=True):
        trial = np.column_stack([*basis, col])
        if np.linalg.matrix_rank(trial) == trial.shape[1]:
            basis.append(col)
        elif len(g["terms"][0][0]) == 1:
            raise ProfetValueError(
                f"the runs cannot separate the main effect of {names[g['terms'][0][0][0]]!r} "
                "from the others; the design is incomplete or confounded"
            )
        else:
            g["dropped"] = True
    return groups


def group_name(group: dict, names: Sequence[str]) -> str:
    sep = "" if names is _LETTERS else ":"
    parts = []
    for j, (idx, sign) in enumerate(group["terms"]):
        word = sep.join(names[i] for i in idx)
        parts.append(("-" if sign < 0 and j else "") + word)
    return " = ".join(parts)


def select_terms(
    groups: list[dict], terms: Sequence[str], names: Sequence[str], notes: list[str]
) -> list[dict]:
    if len(terms) == 0:
        raise ProfetValueError("keep at least one term")
    where = {t: gi for gi, g in enumerate(groups) for t, _ in g["terms"]}
    chosen: set[int] = set()
    for text in terms:
        idx = parse_term(text, names)
        if idx not in where:
            raise ProfetValueError(f"term {text!r} cannot be estimated from these runs")
        chosen.add(where[idx])
    added = []
    for gi in list(chosen):
        for i in groups[gi]["terms"][0][0]:
            main = where[(i,)]
            if main not in chosen:
                chosen.add(main)
                added.append(names[i])
    if added:
        notes.append(
            f"main effect(s) {', '.join(sorted(set(added)))} were added to keep the model "
            "hierarchical"
        )
    return [g for gi, g in enumerate(groups) if gi in chosen]
