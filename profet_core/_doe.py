"""Two-level factorial experiment design and factor analysis.

Designs come from pyDOE3 (``ff2n`` for full factorials, ``fracfact`` for fractions, and
``fracfact_aliasing`` for the alias chains); fitting and the ANOVA come from statsmodels (OLS with
sum-to-zero contrasts, type III sums of squares); normality checks and plot quantiles from scipy.
"""

from __future__ import annotations

import io
import itertools
import re
import string
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import statsmodels.formula.api as smf
from pyDOE3 import ff2n, fracfact, fracfact_aliasing
from scipy import stats
from statsmodels.stats.anova import anova_lm

from .errors import ProfetFileNotFoundError, ProfetValueError

__all__ = [
    "AnalysisResult",
    "Design",
    "Factor",
    "ShapiroResult",
    "analyze",
    "default_factors",
    "demo_results",
    "make_design",
    "montgomery_filtration_example",
    "parse_factor",
    "read_results",
]

#: Largest number of factors a design may have (26 letters exist, but the alias search and the
#: run sheet grow as 2**k).
MAX_FACTORS = 12
#: Largest number of rows a run sheet may have.
MAX_RUNS = 10_000
#: Columns of a run sheet that are bookkeeping, never factors.
RUN_COLUMNS = ("run", "std_order", "replicate")

_LETTERS = string.ascii_uppercase
_ROMAN = {
    1: "I",
    2: "II",
    3: "III",
    4: "IV",
    5: "V",
    6: "VI",
    7: "VII",
    8: "VIII",
    9: "IX",
    10: "X",
    11: "XI",
    12: "XII",
}
# Kubernetes-style quantity suffixes, so that "750m" < "1500m" and "512Mi" < "1Gi" sort as numbers.
_SUFFIX_SCALE = {
    "": 1.0,
    "m": 1e-3,
    "k": 1e3,
    "K": 1e3,
    "M": 1e6,
    "G": 1e9,
    "T": 1e12,
    "Ki": 2.0**10,
    "Mi": 2.0**20,
    "Gi": 2.0**30,
    "Ti": 2.0**40,
}
_QUANTITY = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([A-Za-z%]*)\s*$")
# patsy's Sum omits the *last* level by default, which would code the high level as -1 and flip
# every effect's sign; omitting level 0 (the -1 level) keeps high = +1.
_SUM = "Sum(omit=0)"


# --------------------------------------------------------------------------------------- factors
@dataclass(frozen=True)
class Factor:
    """A two-level factor.

    Parameters
    ----------
    name : str
        Column name of the factor in run sheets and results.
    low, high : str
        Labels of the low (coded -1) and high (coded +1) levels.
    """

    name: str
    low: str
    high: str

    def __post_init__(self) -> None:
        name, low, high = (str(v).strip() for v in (self.name, self.low, self.high))
        if not name:
            raise ProfetValueError("a factor needs a name; got an empty one")
        if any(ch in name for ch in ":=*,"):
            # these characters separate factors in term names ("A:B = C:D") and in NAME=LOW,HIGH
            raise ProfetValueError(
                f"factor name {name!r} may not contain ':', '=', '*' or ','; rename it"
            )
        if not low or not high:
            raise ProfetValueError(
                f"factor {name!r} needs a low and a high level; got low={low!r}, high={high!r}"
            )
        if low == high:
            raise ProfetValueError(
                f"factor {name!r} has one level ({low!r}); a two-level design needs two different "
                "levels"
            )
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "low", low)
        object.__setattr__(self, "high", high)


def parse_factor(spec: str) -> Factor:
    """Parse a factor written as ``NAME=LOW,HIGH``.

    Parameters
    ----------
    spec : str
        For example ``"cpu=750m,1500m"``.

    Returns
    -------
    Factor

    Raises
    ------
    ProfetValueError
        If the text is not ``NAME=LOW,HIGH`` or does not give exactly two levels.
    """
    name, sep, levels = str(spec).partition("=")
    if not sep or not name.strip():
        raise ProfetValueError(
            f"factor {spec!r} must look like NAME=LOW,HIGH (e.g. cpu=750m,1500m)"
        )
    parts = [p.strip() for p in levels.split(",")]
    if len(parts) != 2 or not all(parts):
        got = [p for p in parts if p]
        raise ProfetValueError(
            f"factor {name.strip()!r} has {len(got)} level(s) ({', '.join(got) or 'none'}); a "
            "two-level design needs exactly two, written NAME=LOW,HIGH"
        )
    return Factor(name.strip(), parts[0], parts[1])


# ---------------------------------------------------------------------------------------- design
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
    m = re.fullmatch(r"\s*([A-Za-z])\s*=\s*([-+]?)\s*([A-Za-z]+)\s*", str(text))
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
        Seed of the randomised run order. When None and ``randomize`` is true a seed is drawn and
        stored in the result, so the sheet can be reproduced.
    randomize : bool, default True
        Randomise the run order over all runs and replicates; otherwise keep standard order.

    Returns
    -------
    Design

    Raises
    ------
    ProfetValueError
        On duplicate or reserved factor names, malformed or conflicting generators, too many
        factors or runs, or a replicate count below 1.
    """
    parsed = [f if isinstance(f, Factor) else parse_factor(f) for f in factors]
    k = len(parsed)
    if not 1 <= k <= MAX_FACTORS:
        raise ProfetValueError(f"a design needs 1 to {MAX_FACTORS} factors; got {k}")
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
    try:
        replicates = int(replicates)
    except (TypeError, ValueError):
        raise ProfetValueError(
            f"replicates must be a whole number >= 1; got {replicates!r}"
        ) from None
    if replicates < 1:
        raise ProfetValueError(f"replicates must be a whole number >= 1; got {replicates}")

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
    p = len(gens)
    if k - p < 1:
        raise ProfetValueError(f"{p} generators for {k} factors leave no base factor")
    n_base = 2 ** (k - p)
    if n_base * replicates > MAX_RUNS:
        raise ProfetValueError(
            f"the design has {n_base} runs x {replicates} replicates = {n_base * replicates} rows; "
            f"at most {MAX_RUNS} are allowed"
        )

    base = [i for i in range(k) if i not in targets]
    if not gens:
        # ff2n varies the last column fastest; reversing the columns gives Yates' standard order
        # (A fastest), which is what textbooks list.
        coded = ff2n(k)[:, ::-1]
        unsigned = coded
    else:
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
            coded = fracfact(gen_string(signed=True))
            unsigned = fracfact(gen_string(signed=False))
        except ValueError as exc:  # pyDOE3's own generator checks
            raise ProfetValueError(f"invalid generators {generators!r}: {exc}") from exc

    defining, aliases = _alias_structure(coded, unsigned) if gens else ((), ())
    resolution = min(len(w.lstrip("-")) for w in defining) if defining else None

    runs = _run_sheet(parsed, coded.astype(int), replicates, seed, randomize)
    if randomize and seed is None:
        seed = int(runs.attrs.pop("seed"))
    runs.attrs.pop("seed", None)
    gen_text = tuple(
        f"{_LETTERS[t]} = {'-' if neg else ''}{''.join(_LETTERS[w] for w in word)}"
        for t, word, neg in gens
    )
    return Design(
        factors=tuple(parsed),
        generators=gen_text,
        defining_relation=defining,
        resolution=resolution,
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
    factors: Sequence[Factor], coded: np.ndarray, replicates: int, seed: int | None, randomize: bool
) -> pd.DataFrame:
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
    if randomize:
        if seed is None:
            seed = int(np.random.SeedSequence().entropy % 2**32)
        order = np.random.default_rng(seed).permutation(len(sheet))
        sheet = sheet.iloc[order].reset_index(drop=True)
        sheet.attrs["seed"] = seed
    sheet.insert(0, "run", np.arange(1, len(sheet) + 1))
    return sheet


# -------------------------------------------------------------------------------------- examples
def montgomery_filtration_example() -> pd.DataFrame:
    """Montgomery's filtration-rate 2^(4-1) experiment (I = ABCD), unreplicated.

    Design and Analysis of Experiments (Montgomery), Example 8.1: A = temperature, B = pressure,
    C = formaldehyde concentration, D = stirring rate (D = ABC), response filtration rate in gal/h.
    Published effects: A = 19.00, B = 1.50, C = 14.00, D = 16.50, AB + CD = -1.00,
    AC + BD = -18.50, AD + BC = 19.00.

    Returns
    -------
    pandas.DataFrame
        Columns ``run``, ``temperature``, ``pressure``, ``concentration``, ``stirring_rate`` (coded
        -1/+1) and ``filtration_rate``, in standard order.
    """
    a = [-1, 1, -1, 1, -1, 1, -1, 1]
    b = [-1, -1, 1, 1, -1, -1, 1, 1]
    c = [-1, -1, -1, -1, 1, 1, 1, 1]
    return pd.DataFrame(
        {
            "run": range(1, 9),
            "temperature": a,
            "pressure": b,
            "concentration": c,
            "stirring_rate": [x * y * z for x, y, z in zip(a, b, c, strict=True)],
            # treatment combinations (1), ad, bd, ab, cd, ac, bc, abcd
            "filtration_rate": [45.0, 100.0, 45.0, 65.0, 75.0, 60.0, 80.0, 96.0],
        }
    )


def demo_results(design: Design, seed: int = 0) -> pd.DataFrame:
    """Synthetic results for a design's run sheet, to try the analysis without real data.

    The responses ``accuracy`` and ``train_time_s`` are made up: a few factors have large effects,
    the first two interact, and noise is Gaussian. They are for demonstration only.

    Parameters
    ----------
    design : Design
        The design whose run sheet is filled in.
    seed : int, default 0
        Seed of the made-up effects and noise.

    Returns
    -------
    pandas.DataFrame
        The run sheet with two extra columns, ``accuracy`` and ``train_time_s``.
    """
    rng = np.random.default_rng(seed)
    x = design.coded().to_numpy(dtype=float)
    k = x.shape[1]
    # sparse effects: a geometric fall-off makes the first factors matter most, as in screening
    scale = 0.5 ** np.arange(k)
    inter = x[:, 0] * x[:, 1] if k > 1 else np.zeros(len(x))
    acc = (
        0.85
        + x @ (0.03 * scale * rng.choice([-1, 1], k))
        + 0.01 * inter
        + rng.normal(0, 0.005, len(x))
    )
    time = 600 + x @ (120 * scale * rng.choice([-1, 1], k)) - 40 * inter + rng.normal(0, 15, len(x))
    out = design.runs.copy()
    out["accuracy"] = np.clip(acc, 0, 1).round(4)
    out["train_time_s"] = time.round(1)
    return out


# -------------------------------------------------------------------------------------- analysis
def read_results(source: str | Path | bytes) -> pd.DataFrame:
    """Read a results CSV.

    Parameters
    ----------
    source : str, pathlib.Path or bytes
        Path of the CSV file, or its content (e.g. the bytes of an upload).

    Returns
    -------
    pandas.DataFrame

    Raises
    ------
    ProfetFileNotFoundError
        If a path is given and the file does not exist.
    ProfetValueError
        If the content is not a readable, non-empty CSV.
    """
    if isinstance(source, bytes | bytearray):
        what, handle = "the uploaded file", io.BytesIO(bytes(source))
    else:
        path = Path(source)
        if not path.is_file():
            raise ProfetFileNotFoundError(f"results file {str(path)!r} does not exist")
        what, handle = repr(str(path)), path
    try:
        df = pd.read_csv(handle)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise ProfetValueError(f"cannot read {what} as CSV: {exc}") from exc
    if df.empty:
        raise ProfetValueError(f"{what} has a header but no rows")
    return df


@dataclass(frozen=True)
class ShapiroResult:
    """Shapiro-Wilk test of the residuals."""

    statistic: float
    p_value: float


@dataclass(frozen=True, eq=False)
class AnalysisResult:
    """Result of :func:`analyze`.

    Attributes
    ----------
    response : str
        Name of the analysed response column.
    factors : tuple of Factor
        Factors with the level labels found in the data (low is coded -1).
    terms : tuple of str
        Model terms in model order; aliased terms are named together, e.g. ``"A:B = C:D"``.
    formula : str
        The statsmodels formula fitted (on internal column names ``f0``, ``f1``, ... and ``y``).
    n_runs : int
        Number of observations used.
    df_resid : int
        Residual degrees of freedom; 0 means no error term (no F tests).
    anova : pandas.DataFrame
        Type III ANOVA indexed by term (plus ``Intercept`` and ``Residual``): ``sum_sq``, ``df``,
        ``mean_sq``, ``F``, ``p_value`` (F and p are NaN without an error term).
    coefficients : pandas.DataFrame
        Indexed by term: ``coef``, ``std_err``, ``t``, ``p_value``, ``ci_low``, ``ci_high``.
    effects : pandas.DataFrame
        One row per term: ``term``, ``letters`` (e.g. ``"AB = CD"``), ``effect`` (2 x coef),
        ``coef``, ``sum_sq``, ``pct_contribution`` (of the corrected total SS), ``p_value``.
    residuals : pandas.DataFrame
        ``run_order``, ``observed``, ``fitted``, ``residual``.
    shapiro : ShapiroResult or None
        Shapiro-Wilk test of the residuals, None without an error term.
    r_squared, adj_r_squared : float
        Fit statistics (adjusted is NaN without an error term).
    alpha : float
        Level of the confidence intervals (1 - alpha).
    notes : tuple of str
        What the analysis decided on the user's behalf (level order, dropped or added terms).
    data : pandas.DataFrame
        Factor columns as level labels and the response, as used for plots.
    """

    response: str
    factors: tuple[Factor, ...]
    terms: tuple[str, ...]
    formula: str
    n_runs: int
    df_resid: int
    anova: pd.DataFrame
    coefficients: pd.DataFrame
    effects: pd.DataFrame
    residuals: pd.DataFrame
    shapiro: ShapiroResult | None
    r_squared: float
    adj_r_squared: float
    alpha: float
    notes: tuple[str, ...]
    data: pd.DataFrame

    @property
    def has_error(self) -> bool:
        """Whether an error term exists (replicates or spare runs), so F tests are possible."""
        return self.df_resid > 0

    @property
    def interaction_pairs(self) -> tuple[tuple[str, str], ...]:
        """Factor-name pairs of the two-factor interactions in the model (first of each chain)."""
        pairs = []
        for t in self.terms:
            first = t.split(" = ")[0].lstrip("-")
            parts = first.split(":")
            if len(parts) == 2:
                pairs.append((parts[0], parts[1]))
        return tuple(pairs)


def _label(value: object) -> str:
    if isinstance(value, float | np.floating) and float(value).is_integer():
        return str(int(value))
    return str(value).strip()


def _as_number(label: str) -> float | None:
    m = _QUANTITY.match(label)
    if m is None or m.group(2) not in _SUFFIX_SCALE:
        return None
    return float(m.group(1)) * _SUFFIX_SCALE[m.group(2)]


def _code_factor(
    name: str, values: pd.Series, hint: Factor | None
) -> tuple[np.ndarray, Factor, str | None]:
    """Code a column -1/+1 and tell which label is low."""
    if values.isna().any():
        rows = ", ".join(str(i) for i in values.index[values.isna()][:5])
        raise ProfetValueError(f"factor {name!r} has missing values (rows {rows})")
    labels = values.map(_label)
    distinct = list(dict.fromkeys(labels))
    note = None
    if hint is not None:
        lo, hi = hint.low, hint.high
        lo_num, hi_num = _as_number(lo), _as_number(hi)
        coded = np.zeros(len(labels), dtype=int)
        for idx, lab in enumerate(labels):
            num = _as_number(lab)
            if lab == lo or (num is not None and num == lo_num):
                coded[idx] = -1
            elif lab == hi or (num is not None and num == hi_num):
                coded[idx] = 1
            elif num in (-1.0, 1.0):
                coded[idx] = int(num)
            else:
                raise ProfetValueError(
                    f"factor {name!r} has value {lab!r}, which is neither its low level {lo!r} "
                    f"nor its high level {hi!r}"
                )
        if len(set(coded)) != 2:
            raise ProfetValueError(
                f"factor {name!r} takes only one level ({distinct[0]!r}) in the results; a "
                "two-level factor needs runs at both levels"
            )
        return coded, hint, None

    if len(distinct) != 2:
        shown = ", ".join(repr(d) for d in distinct[:6]) + (", ..." if len(distinct) > 6 else "")
        raise ProfetValueError(
            f"factor {name!r} has {len(distinct)} level(s) ({shown}); a two-level design needs "
            "exactly two per factor"
        )
    lowered = {d.lower() for d in distinct}
    nums = [_as_number(d) for d in distinct]
    if lowered == {"-", "+"}:
        low, high = "-", "+"
    elif lowered in ({"low", "high"}, {"lo", "hi"}):
        low = next(d for d in distinct if d.lower() in ("low", "lo"))
        high = next(d for d in distinct if d != low)
    elif None not in nums and nums[0] != nums[1]:
        low, high = (distinct[0], distinct[1]) if nums[0] < nums[1] else (distinct[1], distinct[0])
    else:
        low, high = sorted(distinct)
        note = (
            f"levels of {name!r} are not numbers, so they were ordered alphabetically: "
            f"low (-1) = {low!r}, high (+1) = {high!r}; pass the levels to choose"
        )
    coded = np.where(labels == high, 1, -1)
    return coded, Factor(name, low, high), note


def default_factors(results: pd.DataFrame, response: str | Sequence[str]) -> tuple[str, ...]:
    """Columns taken as factors when none are named.

    Every column except the response(s), the run-sheet bookkeeping columns (``run``,
    ``std_order``, ``replicate``) and numeric columns with more than two distinct values (other
    responses).

    Parameters
    ----------
    results : pandas.DataFrame
        The results table.
    response : str or sequence of str
        Response column(s) to leave out.

    Returns
    -------
    tuple of str
    """
    responses = {response} if isinstance(response, str) else set(response)
    out = []
    for col in results.columns:
        if col in responses or col in RUN_COLUMNS:
            continue
        s = results[col]
        if pd.api.types.is_numeric_dtype(s) and s.dropna().nunique() > 2:
            continue
        out.append(str(col))
    return tuple(out)


def _parse_term(text: str, names: Sequence[str]) -> tuple[int, ...]:
    first = str(text).split("=")[0].strip().lstrip("-").strip()
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


def analyze(
    results: pd.DataFrame,
    response: str,
    factors: Sequence[str] | None = None,
    *,
    levels: Mapping[str, tuple[str, str]] | Sequence[Factor] | None = None,
    terms: Sequence[str] | None = None,
    alpha: float = 0.05,
) -> AnalysisResult:
    """Fit main effects and estimable two-factor interactions of a two-level experiment.

    The model is OLS with sum-to-zero contrasts (statsmodels, ``C(x, Sum)``); the ANOVA uses type
    III sums of squares. Two-factor interactions that are exactly aliased with each other enter
    once and are named together (``"A:B = C:D"``); those aliased with a main effect are left out
    and named with it (``"A = B:C"``).

    Parameters
    ----------
    results : pandas.DataFrame
        One row per run: factor columns (level labels, or -1/+1) and response columns.
    response : str
        Numeric response column to analyse.
    factors : sequence of str, optional
        Factor columns; default :func:`default_factors`.
    levels : mapping or sequence of Factor, optional
        Low and high label of some factors (``{"cpu": ("750m", "1500m")}`` or Factor objects).
        Without it, numbers (also with units such as 750m, 1.5Gi) are ordered numerically,
        ``-``/``+`` and ``low``/``high`` as written, anything else alphabetically.
    terms : sequence of str, optional
        Keep only these terms (``"A"``, ``"A:B"``; main effects of kept interactions are added).
        The rest is pooled into the error, e.g. after reading a half-normal plot.
    alpha : float, default 0.05
        Confidence intervals are at level 1 - alpha.

    Returns
    -------
    AnalysisResult

    Raises
    ------
    ProfetValueError
        If the response is missing or not numeric, a factor does not have exactly two levels,
        two factors are confounded, or there are fewer runs than model terms.
    """
    if not isinstance(results, pd.DataFrame) or results.empty:
        raise ProfetValueError("the results table is empty")
    if not 0 < alpha < 1:
        raise ProfetValueError(f"alpha must be between 0 and 1; got {alpha}")
    cols = [str(c) for c in results.columns]
    results = results.set_axis(cols, axis=1)
    if response not in cols:
        raise ProfetValueError(
            f"response {response!r} is not a column of the results; columns are {', '.join(cols)}"
        )
    raw = results[response]
    y = pd.to_numeric(raw, errors="coerce")
    bad = raw[y.isna() & raw.notna() & (raw.astype(str).str.strip() != "")]
    if len(bad):
        raise ProfetValueError(
            f"response {response!r} must be numeric; it holds {bad.iloc[0]!r} (row {bad.index[0]})"
        )
    notes: list[str] = []
    keep = y.notna()
    if not keep.all():
        notes.append(f"{int((~keep).sum())} run(s) without a {response!r} value were left out")
    if keep.sum() == 0:
        raise ProfetValueError(f"response {response!r} has no values")
    data = results.loc[keep].reset_index(drop=True)
    y = y[keep].to_numpy(dtype=float)

    names = list(factors) if factors is not None else list(default_factors(results, response))
    if factors is None:
        skipped = [c for c in cols if c not in names and c != response and c not in RUN_COLUMNS]
        if skipped:
            notes.append(
                f"column(s) {', '.join(skipped)} have more than two numeric values and were "
                "treated as other responses, not factors"
            )
    if not names:
        raise ProfetValueError("no factor columns: name them, e.g. factors=['cpu', 'memory']")
    missing = [n for n in names if n not in cols]
    if missing:
        raise ProfetValueError(
            f"factor column(s) {', '.join(missing)} not in the results; columns are {', '.join(cols)}"
        )
    if response in names:
        raise ProfetValueError(f"{response!r} cannot be both the response and a factor")
    if len(set(names)) != len(names):
        raise ProfetValueError("each factor may be named once")
    if len(names) > 26:
        raise ProfetValueError(f"at most 26 factors can be analysed; got {len(names)}")

    hints: dict[str, Factor] = {}
    if levels is not None:
        items = levels.items() if isinstance(levels, Mapping) else ((f.name, f) for f in levels)
        for name, lv in items:
            hints[name] = lv if isinstance(lv, Factor) else Factor(name, *lv)
    coded_cols, fac_objs = [], []
    for name in names:
        coded, fac, note = _code_factor(name, data[name], hints.get(name))
        coded_cols.append(coded)
        fac_objs.append(fac)
        if note:
            notes.append(note)
    x = np.column_stack(coded_cols).astype(int)
    n, k = x.shape
    if n < k + 1:
        raise ProfetValueError(
            f"the results have {n} run(s) but the model needs at least {k + 1} (an intercept and "
            f"{k} main effects); add runs or analyse fewer factors"
        )

    groups = _estimable_groups(x, names)
    dropped = [g for g in groups if g["dropped"]]
    groups = [g for g in groups if not g["dropped"]]
    if dropped:
        notes.append(
            "interaction(s) "
            + ", ".join(":".join(names[i] for i in g["terms"][0][0]) for g in dropped)
            + " cannot be estimated from these runs and were left out"
        )
    if terms is not None:
        groups = _select_terms(groups, terms, names, notes)
    p = 1 + len(groups)
    if n < p:
        raise ProfetValueError(
            f"the results have {n} run(s) but the model has {p} parameters; drop terms"
        )

    # internal names keep user column names (spaces, "C", ...) out of the formula
    frame = pd.DataFrame({f"f{i}": x[:, i] for i in range(k)})
    frame["y"] = y

    def term_formula(idx: tuple[int, ...]) -> str:
        return ":".join(f"C(f{i}, {_SUM})" for i in idx)

    formula = "y ~ " + " + ".join(term_formula(g["terms"][0][0]) for g in groups)
    model = smf.ols(formula, data=frame).fit()
    df_resid = round(model.df_resid)
    display = {term_formula(g["terms"][0][0]): _group_name(g, names) for g in groups}
    letters = {term_formula(g["terms"][0][0]): _group_name(g, _LETTERS) for g in groups}

    def col_term(col: str) -> str:
        return col if col == "Intercept" else col.replace("[S.1]", "")

    ss_total = float(np.sum((y - y.mean()) ** 2))
    with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        if df_resid > 0:
            anova = anova_lm(model, typ=3).rename(columns={"PR(>F)": "p_value"})
            anova["mean_sq"] = anova["sum_sq"] / anova["df"]
            conf = model.conf_int(alpha)
            bse, tval, pval = model.bse, model.tvalues, model.pvalues
        else:
            # anova_lm cannot test without residual df; each term has one df, so its type III
            # SS is the Wald numerator, which needs no error variance
            ss = model.params**2 / np.diag(model.normalized_cov_params)
            anova = pd.DataFrame(
                {"sum_sq": ss.to_numpy(), "df": 1.0},
                index=[col_term(c) for c in model.params.index],
            )
            anova.loc["Residual"] = [float(model.ssr), 0.0]
            anova["mean_sq"] = np.nan
            anova["F"] = np.nan
            anova["p_value"] = np.nan
            nan = pd.Series(np.nan, index=model.params.index)
            conf = pd.DataFrame({0: nan, 1: nan})
            bse = tval = pval = nan
    anova = anova[["sum_sq", "df", "mean_sq", "F", "p_value"]]
    anova = anova.rename(index=lambda t: display.get(t, t))
    anova.index.name = "term"

    coef_names = [display.get(col_term(c), c) for c in model.params.index]
    coefficients = pd.DataFrame(
        {
            "coef": model.params.to_numpy(),
            "std_err": np.asarray(bse, dtype=float),
            "t": np.asarray(tval, dtype=float),
            "p_value": np.asarray(pval, dtype=float),
            "ci_low": conf.iloc[:, 0].to_numpy(dtype=float),
            "ci_high": conf.iloc[:, 1].to_numpy(dtype=float),
        },
        index=pd.Index(coef_names, name="term"),
    )
    term_cols = [c for c in model.params.index if c != "Intercept"]
    effects = pd.DataFrame(
        {
            "term": [display[col_term(c)] for c in term_cols],
            "letters": [letters[col_term(c)] for c in term_cols],
            # with -1/+1 coding a coefficient is half the change from low to high
            "effect": [2 * model.params[c] for c in term_cols],
            "coef": [model.params[c] for c in term_cols],
        }
    )
    effects["sum_sq"] = anova.loc[effects["term"], "sum_sq"].to_numpy()
    effects["pct_contribution"] = 100 * effects["sum_sq"] / ss_total if ss_total > 0 else np.nan
    effects["p_value"] = anova.loc[effects["term"], "p_value"].to_numpy()

    if "run" in data.columns and pd.api.types.is_numeric_dtype(data["run"]):
        run_order = data["run"].to_numpy()
    else:
        run_order = np.arange(1, n + 1)
    residuals = pd.DataFrame(
        {
            "run_order": run_order,
            "observed": y,
            "fitted": model.fittedvalues.to_numpy(),
            "residual": model.resid.to_numpy(),
        }
    )
    shapiro = None
    if df_resid > 0 and n >= 3 and np.ptp(residuals["residual"]) > 1e-12 * max(1.0, np.ptp(y)):
        sw = stats.shapiro(residuals["residual"])
        shapiro = ShapiroResult(float(sw.statistic), float(sw.pvalue))
    plot_data = pd.DataFrame(
        {f.name: np.where(x[:, i] > 0, f.high, f.low) for i, f in enumerate(fac_objs)}
    )
    plot_data[response] = y
    plot_data["run_order"] = run_order
    return AnalysisResult(
        response=response,
        factors=tuple(fac_objs),
        terms=tuple(display[term_formula(g["terms"][0][0])] for g in groups),
        formula=formula,
        n_runs=n,
        df_resid=df_resid,
        anova=anova,
        coefficients=coefficients,
        effects=effects,
        residuals=residuals,
        shapiro=shapiro,
        r_squared=float(model.rsquared),
        adj_r_squared=float(model.rsquared_adj) if df_resid > 0 else float("nan"),
        alpha=float(alpha),
        notes=tuple(notes),
        data=plot_data,
    )


def _estimable_groups(x: np.ndarray, names: Sequence[str]) -> list[dict]:
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


def _group_name(group: dict, names: Sequence[str]) -> str:
    sep = "" if names is _LETTERS else ":"
    parts = []
    for j, (idx, sign) in enumerate(group["terms"]):
        word = sep.join(names[i] for i in idx)
        parts.append(("-" if sign < 0 and j else "") + word)
    return " = ".join(parts)


def _select_terms(
    groups: list[dict], terms: Sequence[str], names: Sequence[str], notes: list[str]
) -> list[dict]:
    if len(terms) == 0:
        raise ProfetValueError("keep at least one term")
    where = {t: gi for gi, g in enumerate(groups) for t, _ in g["terms"]}
    chosen: set[int] = set()
    for text in terms:
        idx = _parse_term(text, names)
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
