"""Two-level full and fractional factorial designs and their run sheets.

Designs come from pyDOE3: ``ff2n`` for full factorials, ``fracfact`` for fractions and
``fracfact_aliasing`` for the alias chains.
"""

from __future__ import annotations

import re
import string
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from pyDOE3 import ff2n, fracfact, fracfact_aliasing

from ..errors import ProfetValueError
from ._factors import LETTERS as _LETTERS
from ._factors import MAX_FACTORS, MAX_RUNS, RUN_COLUMNS, Factor, parse_factor

#: Largest seed of the randomised run order (drawn seeds are below it too).
MAX_SEED = 2**32 - 1

_ROMAN = dict(enumerate(("I II III IV V VI VII VIII IX X XI XII").split(), start=1))


@dataclass(frozen=True, eq=False)
class Design:
    """A two-level full or fractional factorial design and its run sheet.

    Attributes
    ----------
    factors : tuple of Factor
        The factors; factor ``i`` has the letter ``"ABC..."[i]``.
    generators : tuple of str
        Normalised generators, e.g. ``("D = ABC",)``; empty for a full factorial.
    defining_relation : tuple of str
        Words of the defining relation, e.g. ``("ABCD",)``; a word carries a leading ``-`` when
        its column is all -1. Empty for a full factorial.
    resolution : int or None
        Length of the shortest word, or None for a full factorial.
    aliases : tuple of str
        Alias chains of every effect (excluding the identity), e.g. ``"A = BCD"``, ``"AB = CD"``.
    replicates : int
        How many times each distinct run is repeated.
    seed : int or None
        Seed of the randomised run order (None when the order is not randomised).
    runs : pandas.DataFrame
        The run sheet in run order: ``run``, ``std_order``, ``replicate`` and one column of level
        labels per factor.
    """

    factors: tuple[Factor, ...]
    generators: tuple[str, ...]
    defining_relation: tuple[str, ...]
    resolution: int | None
    aliases: tuple[str, ...]
    replicates: int
    seed: int | None
    runs: pd.DataFrame

    @property
    def n_base_runs(self) -> int:
        """Number of distinct runs (2**(k-p))."""
        return 2 ** (len(self.factors) - len(self.generators))

    @property
    def n_runs(self) -> int:
        """Number of rows of the run sheet (distinct runs x replicates)."""
        return len(self.runs)

    @property
    def label(self) -> str:
        """Design type such as ``"2^(4-1)"`` or ``"2^3"``."""
        k, p = len(self.factors), len(self.generators)
        return f"2^({k}-{p})" if p else f"2^{k}"

    @property
    def resolution_label(self) -> str:
        """Resolution in Roman numerals, or ``"full"`` for a full factorial."""
        return (
            "full" if self.resolution is None else _ROMAN.get(self.resolution, str(self.resolution))
        )

    @property
    def defining_relation_text(self) -> str:
        """Defining relation such as ``"I = ABCD"`` (empty for a full factorial)."""
        return "I = " + " = ".join(self.defining_relation) if self.defining_relation else ""

    def factor_table(self) -> pd.DataFrame:
        """One row per factor: letter, name, low and high level, and its generator if any."""
        generated = {g.split(" = ")[0]: g.split(" = ")[1] for g in self.generators}
        return pd.DataFrame(
            {
                "letter": [_LETTERS[i] for i in range(len(self.factors))],
                "factor": [f.name for f in self.factors],
                "low (-1)": [f.low for f in self.factors],
                "high (+1)": [f.high for f in self.factors],
                "generator": [generated.get(_LETTERS[i], "") for i in range(len(self.factors))],
            }
        )

    def alias_table(self, max_order: int | None = None) -> pd.DataFrame:
        """Alias chains as a table.

        Parameters
        ----------
        max_order : int, optional
            Keep only chains that contain an effect of at most this order (2 keeps the chains of
            main effects and two-factor interactions), and within a chain only effects of at most
            ``max_order + 1`` factors, as design software usually prints them.

        Returns
        -------
        pandas.DataFrame
            Columns ``effect`` (first effect of the chain), ``aliases`` (letters) and ``factors``
            (the same chain with factor names).
        """
        names = [f.name for f in self.factors]
        rows = []
        for chain in self.aliases:
            words = chain.split(" = ")
            orders = [len(w.lstrip("-")) for w in words]
            if max_order is not None:
                if min(orders) > max_order:
                    continue
                words = [w for w, o in zip(words, orders, strict=True) if o <= max_order + 1]
            rows.append(
                {
                    "effect": words[0],
                    "aliases": " = ".join(words),
                    "factors": " = ".join(_word_to_names(w, names) for w in words),
                }
            )
        return pd.DataFrame(rows, columns=["effect", "aliases", "factors"])

    def coded(self) -> pd.DataFrame:
        """The run sheet's factor columns coded -1 (low) / +1 (high), in run order."""
        return pd.DataFrame(
            {f.name: np.where(self.runs[f.name] == f.high, 1, -1) for f in self.factors},
            index=self.runs.index,
        )


def _word_to_names(word: str, names: Sequence[str]) -> str:
    sign = "-" if word.startswith("-") else ""
    return sign + ":".join(names[_LETTERS.index(ch)] for ch in word.lstrip("-"))


def _parse_generator(text: str, n_factors: int) -> tuple[int, tuple[int, ...], bool]:
    """Return (generated factor index, source factor indices, negated) for ``"D = ABC"``."""
    valid = _LETTERS[:n_factors]
    if len(text) > 80:  # the longest sensible one, "L = -ABCDEFGHIJK", has 16 characters
        raise ProfetValueError(f"generator {text[:40]!r}... is {len(text)} characters long")
    m = re.fullmatch(r"\s*([A-Za-z])\s*=\s*([-+]?)\s*([A-Za-z]+)\s*", text)
    if m is None:
        raise ProfetValueError(
            f"generator {text!r} must look like D=ABC (a factor letter, '=', and a product of "
            f"other factor letters from {', '.join(valid)})"
        )
    target, sign, word = m.group(1).upper(), m.group(2), m.group(3).upper()
    bad = sorted({ch for ch in target + word if ch not in valid})
    if bad:
        raise ProfetValueError(
            f"generator {text!r} uses letter(s) {', '.join(bad)}, but with {n_factors} factors "
            f"only {', '.join(valid)} exist"
        )
    if len(set(word)) != len(word):
        raise ProfetValueError(f"generator {text!r} repeats a letter in {word}")
    if target in word:
        raise ProfetValueError(f"generator {text!r} defines {target} in terms of itself")
    if len(word) < 2:
        raise ProfetValueError(
            f"generator {text!r} would make {target} identical to a single factor ({word}); the "
            "product needs at least two letters"
        )
    return valid.index(target), tuple(valid.index(ch) for ch in word), sign == "-"


def _split_generators(generators: str | Sequence[str]) -> list[str]:
    if isinstance(generators, str):
        generators = re.split(r"[,;\n]", generators)
    return [g for g in (str(g).strip() for g in generators) if g]


def _whole_number(what: str, value: object, low: int, high: int) -> int:
    """``value`` as an int in [low, high], or a ProfetValueError naming it."""
    try:
        number = int(value)  # type: ignore[call-overload]
    except (TypeError, ValueError, OverflowError):
        number = None
    if number is None or not low <= number <= high:
        shown = str(value) if isinstance(value, int) else repr(value)
        shown = shown[:40] + ("..." if len(shown) > 40 else "")
        raise ProfetValueError(f"{what} must be a whole number from {low} to {high}; got {shown}")
    return number


def _check_factors(factors: Sequence[Factor | str]) -> list[Factor]:
    parsed = [f if isinstance(f, Factor) else parse_factor(f) for f in factors]
    if not 1 <= len(parsed) <= MAX_FACTORS:
        raise ProfetValueError(f"a design needs 1 to {MAX_FACTORS} factors; got {len(parsed)}")
    names = [f.name for f in parsed]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ProfetValueError(f"factor names must be unique; repeated: {', '.join(dupes)}")
    reserved = sorted(set(names) & set(RUN_COLUMNS))
    if reserved:
        raise ProfetValueError(
            f"factor name(s) {', '.join(reserved)} are reserved for run-sheet columns "
            f"({', '.join(RUN_COLUMNS)}); rename them"
        )
    return parsed


def _check_generators(
    generators: str | Sequence[str], k: int
) -> list[tuple[int, tuple[int, ...], bool]]:
    gens = [_parse_generator(g, k) for g in _split_generators(generators)]
    targets = [t for t, _, _ in gens]
    if len(set(targets)) != len(targets):
        raise ProfetValueError(
            "each factor can be generated only once; "
            f"{', '.join(sorted({_LETTERS[t] for t in targets if targets.count(t) > 1}))} "
            "has more than one generator"
        )
    for t, word, _ in gens:
        used = sorted(_LETTERS[w] for w in word if w in targets)
        if used:
            raise ProfetValueError(
                f"generator for {_LETTERS[t]} uses generated factor(s) {', '.join(used)}; build "
                "generators only from factors that are not themselves generated"
            )
    if k - len(gens) < 1:
        raise ProfetValueError(f"{len(gens)} generators for {k} factors leave no base factor")
    return gens


def _coded_matrix(
    k: int, gens: list[tuple[int, tuple[int, ...], bool]]
) -> tuple[np.ndarray, np.ndarray]:
    """Coded design in standard order, and the same design with every generator made positive."""
    if not gens:
        # ff2n varies the last column fastest; reversing the columns gives Yates' standard order
        # (A fastest), which is what textbooks list.
        coded = ff2n(k)[:, ::-1]
        return coded, coded
    targets = [t for t, _, _ in gens]
    base = [i for i in range(k) if i not in targets]
    # pyDOE3 wants its base factors lettered a, b, c...; lettering them in reverse makes our
    # first base factor vary fastest (standard order) in fracfact's output.
    pletter = {i: string.ascii_lowercase[len(base) - 1 - j] for j, i in enumerate(base)}
    gen_of = {t: (word, neg) for t, word, neg in gens}

    def gen_string(signed: bool) -> str:
        cols = []
        for i in range(k):
            if i in gen_of:
                word, neg = gen_of[i]
                cols.append(("-" if signed and neg else "") + "".join(pletter[w] for w in word))
            else:
                cols.append(pletter[i])
        return " ".join(cols)

    try:
        return fracfact(gen_string(signed=True)), fracfact(gen_string(signed=False))
    except ValueError as exc:  # pyDOE3's own generator checks
        raise ProfetValueError(f"invalid generators: {exc}") from exc


def make_design(
    factors: Sequence[Factor | str],
    generators: str | Sequence[str] = (),
    replicates: int = 1,
    seed: int | None = None,
    randomize: bool = True,
) -> Design:
    """Build a two-level full or fractional factorial design.

    Parameters
    ----------
    factors : sequence of Factor or str
        The factors in letter order (A, B, C, ...); strings are parsed with :func:`parse_factor`.
    generators : str or sequence of str, optional
        Generators of a fraction such as ``"D = ABC"`` (``"D = -ABC"`` for the other half); a
        single string may hold several separated by commas. Empty gives a full factorial.
    replicates : int, default 1
        Number of times each distinct run appears in the run sheet.
    seed : int, optional
        Seed of the randomised run order, 0 to 2**32 - 1. When None and ``randomize`` is true a
        seed is drawn and stored in the result, so the sheet can be reproduced.
    randomize : bool, default True
        Randomise the run order over all runs and replicates; otherwise keep standard order.

    Returns
    -------
    Design

    Raises
    ------
    ProfetValueError
        On duplicate or reserved factor names, malformed or conflicting generators, too many
        factors or runs, a replicate count below 1 or a seed outside 0..2**32 - 1.
    """
    parsed = _check_factors(factors)
    k = len(parsed)
    replicates = _whole_number("replicates", replicates, 1, MAX_RUNS)
    if seed is not None:
        seed = _whole_number("seed", seed, 0, MAX_SEED)
    gens = _check_generators(generators, k)
    n_base = 2 ** (k - len(gens))
    if n_base * replicates > MAX_RUNS:
        raise ProfetValueError(
            f"the design has {n_base} runs x {replicates} replicates = {n_base * replicates} rows; "
            f"at most {MAX_RUNS} are allowed"
        )
    coded, unsigned = _coded_matrix(k, gens)
    defining, aliases = _alias_structure(coded, unsigned) if gens else ((), ())
    if randomize and seed is None:
        seed = int(np.random.SeedSequence().entropy % (MAX_SEED + 1))
    runs = _run_sheet(parsed, coded.astype(int), replicates, seed if randomize else None)
    gen_text = tuple(
        f"{_LETTERS[t]} = {'-' if neg else ''}{''.join(_LETTERS[w] for w in word)}"
        for t, word, neg in gens
    )
    return Design(
        factors=tuple(parsed),
        generators=gen_text,
        defining_relation=defining,
        resolution=min(len(w.lstrip("-")) for w in defining) if defining else None,
        aliases=aliases,
        replicates=replicates,
        seed=seed if randomize else None,
        runs=runs,
    )


def _alias_structure(
    coded: np.ndarray, unsigned: np.ndarray
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Defining relation and alias chains, with signs.

    pyDOE3's ``fracfact_aliasing`` groups effects whose contrast columns are *equal*, so on a
    fraction with a negative generator it misses A = -BCD. It is therefore run on the all-positive
    fraction (same chains), and the signs are read off the actual design's columns.
    """
    chains, _ = fracfact_aliasing(unsigned)
    defining: tuple[str, ...] = ()
    out = []
    for chain in chains:
        terms = [tuple(ord(ch) - ord("a") for ch in t) for t in chain.split(" = ")]
        terms.sort(key=lambda t: (len(t), t))
        cols = [np.prod(coded[:, list(t)], axis=1) for t in terms]
        words = ["".join(_LETTERS[i] for i in t) for t in terms]
        if np.all(cols[0] == cols[0][0]):
            defining = tuple(
                ("-" if c[0] < 0 else "") + w for c, w in zip(cols, words, strict=True)
            )
            continue
        signed = [words[0]] + [
            ("-" if np.dot(c, cols[0]) < 0 else "") + w
            for c, w in zip(cols[1:], words[1:], strict=True)
        ]
        out.append((terms[0], " = ".join(signed)))
    out.sort(key=lambda x: (len(x[0]), x[0]))
    return defining, tuple(chain for _, chain in out)


def _run_sheet(
    factors: Sequence[Factor], coded: np.ndarray, replicates: int, seed: int | None
) -> pd.DataFrame:
    """Run sheet of the design, shuffled with ``seed`` (standard order when it is None)."""
    n = coded.shape[0]
    full = np.tile(coded, (replicates, 1))
    sheet = pd.DataFrame(
        {
            "std_order": np.tile(np.arange(1, n + 1), replicates),
            "replicate": np.repeat(np.arange(1, replicates + 1), n),
        }
    )
    for j, f in enumerate(factors):
        sheet[f.name] = np.where(full[:, j] > 0, f.high, f.low)
    if seed is not None:
        order = np.random.default_rng(seed).permutation(len(sheet))
        sheet = sheet.iloc[order].reset_index(drop=True)
    sheet.insert(0, "run", np.arange(1, len(sheet) + 1))
    return sheet
