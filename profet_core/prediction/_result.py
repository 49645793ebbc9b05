"""The result of a prediction, and everything both the CLI and the app show of it.

Warnings, member columns and the JSON document are computed here once, so the command line and
the web app say the same thing in the same words (a test compares them).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from .._format import round_table
from .._messages import quote
from ._picks import criterion_of, picked_rows, steps_text, weak_picks_warning, with_picks

#: Relative novelty from which the CLI and the app warn (held-out CNNs above it were predicted
#: about twice as badly as the rest: docs/accuracy.md, "Error by novelty").
NOVELTY_WARN = 1.25
#: Columns of the prediction table that are not ensemble members, in display order.
BASE_COLUMNS = (
    "row",
    "anchor",
    "target",
    "configuration",
    "gpu",
    "basis",
    "batch_latency_ms",
    "low_ms",
    "high_ms",
    "novelty",
    "usd_per_hour",
    "offering",
    "usd_per_1000_steps",
    "p_fit",
    "method",
    "ensemble",
)
#: The first columns of the CSV document (``profet predict --format csv``, the app's download).
CSV_FIRST = ("row", "configuration", "target", "batch_latency_ms", "low_ms", "high_ms", "novelty")
#: Op names quoted in a warning at most (the rest are counted).
_MAX_QUOTED = 10


@dataclass(frozen=True)
class Prediction:
    """Result of :meth:`Predictor.predict`.

    Attributes
    ----------
    table : pandas.DataFrame
        Long format, one row per (input row, target[, GPU count]): :data:`BASE_COLUMNS`
        (``row`` is the 0-based input row; ``target`` the spec line or measured instance the GPU
        is predicted as; from a predictor priced by the offerings (``profet_core.load_artifacts``)
        one row per GPU configuration the offerings rent, ``configuration`` its name (``"8 x
        H100 SXM5 80GB"``) and ``usd_per_hour`` the price of ``offering``, the on-demand
        offering renting it cheapest; ``low_ms``..``high_ms`` the calibrated interval; ``novelty`` how
        unlike the training profiles the row's profile is, 1 = as unusual as a typical
        held-out CNN, NaN where not measured; ``basis`` what the prediction rests on;
        ``usd_per_1000_steps`` the cost of 1,000 steps at that latency; ``p_fit`` the
        probability that the step fits the target's memory, NaN where the workload's sizes or
        the anchor latency are unknown), then one
        ``<member>_ms`` column per ensemble member.
    ignored_ops : tuple of str
        Ops of the input that the method did not use (their time did not count).
    method : str
    interval_level : float
        Nominal coverage of ``low_ms``..``high_ms``.
    anchor : str
    rows : pandas.DataFrame
        One row per input row: ``row``, ``novelty`` (the largest over targets),
        ``with_latency`` and the validation band of that novelty (``band``, ``band_mape_pct``).
    notes : tuple of str
        Further warnings found while predicting (e.g. sense checks of the input).
    matched_ops : tuple of (str, str)
        ``(op, known op)``: ops of the input that training never saw, counted as the known op
        they resemble in spelling (exact names are absent).
    price_notes : tuple of str
        What the answer rests on: its prices (a configuration paid as a bigger instance, one
        nothing rents, a measured GPU priced as another host), the format amp means, the
        data-parallel model, where specs-only GPUs' efficiency and published- and spec-based
        intervals come from: notes, not warnings (the CLI prints them as ``profet: note:``, the
        JSON document's ``notes``, the page as info).
    """

    table: pd.DataFrame
    ignored_ops: tuple
    method: str
    interval_level: float
    anchor: str = ""
    rows: pd.DataFrame = field(default_factory=pd.DataFrame)
    notes: tuple = ()
    matched_ops: tuple = ()
    price_notes: tuple = ()

    @property
    def member_columns(self) -> list[str]:
        """The ``<member>_ms`` columns of :attr:`table` (ensemble members' predictions)."""
        return [c for c in self.table.columns if c.endswith("_ms") and c not in BASE_COLUMNS]

    def novelty_warning(self, row: int | None = None) -> str | None:
        """The novelty warning for one input row (default: the most novel row), or None."""
        rows = self.rows if row is None else self.rows[self.rows["row"] == row]
        rows = rows[np.isfinite(rows["novelty"].to_numpy(dtype=float))] if len(rows) else rows
        if rows.empty:
            return None
        r = rows.loc[rows["novelty"].idxmax()]
        if r["novelty"] < NOVELTY_WARN:
            return None
        seen = ""
        if pd.notna(r.get("band_mape_pct")):
            seen = (
                f" In validation, held-out CNNs this unusual (novelty {r['band']}) were missed by "
                f"{r['band_mape_pct']:.0f}% on average."
            )
        where = f"Profile row {int(r['row'])}" if len(self.rows) > 1 else "The profile"
        return (
            f"{where} is unlike the networks PROFET was trained on (novelty {r['novelty']:.2f}; "
            f"1 = a typical held-out CNN in validation).{seen} The intervals are widened; treat "
            "the ranking of close targets with care."
        )

    def ignored_warning(self) -> str | None:
        """The warning about ops the method did not use, or None."""
        if not self.ignored_ops:
            return None
        shown = ", ".join(quote(op, 60) for op in self.ignored_ops[:_MAX_QUOTED])
        more = len(self.ignored_ops) - _MAX_QUOTED
        return (
            f"{len(self.ignored_ops)} op(s) of the profile are unknown to method "
            f"{self.method} and were left out (their time did not count): {shown}"
            + (f" and {more} more" if more > 0 else "")
            + "."
        )

    def matched_warning(self) -> str | None:
        """The warning naming ops matched to known ops by spelling (``op -> known``), or None."""
        if not self.matched_ops:
            return None
        # Names as the profile spells them (quoted only when cut short).
        pairs = [
            f"{op if len(op) <= 60 else quote(op, 60)} -> {known}" for op, known in self.matched_ops
        ]
        more = len(pairs) - _MAX_QUOTED
        return (
            "op names matched to known ops by spelling (their time counts with the known op's; "
            f"check the names if that is wrong): {', '.join(pairs[:_MAX_QUOTED])}"
            + (f" and {more} more" if more > 0 else "")
            + "."
        )

    def basis_warning(self, row: int | None = None) -> str | None:
        """A warning when a pick (:meth:`picks`) rests on specs, not measurements."""
        return weak_picks_warning(
            self.picks(0 if row is None else row), "target", self.criterion.name, advise=True
        )

    @property
    def criterion(self):
        """The :class:`Criterion` the picks rank by (per step, per image or whole run)."""
        return criterion_of(self.table)

    def picks(self, row: int = 0) -> dict:
        """The fastest, the cheapest and the best-value target of one input row
        (``{"fastest" | "cheapest" | "best value": row or None}``), by :attr:`criterion`: the
        ``pick`` column of :meth:`with_run`'s table, or computed so."""
        t = self.table[self.table["row"] == row]
        if "pick" not in t:
            t = with_picks(t)[0]
        return picked_rows(t, row)

    def steps_text(self, row: int = 0) -> str | None:
        """How many steps each GPU count of :meth:`with_run`'s run takes for one input row
        ("Steps in the run: 15,630 on 1 GPU, 1,960 on 8 GPUs ..."), or None without a run."""
        return steps_text(self.table[self.table["row"] == row])

    def with_run(self, dataset_images=None, batch_size=None, epochs=None) -> Prediction:
        """The prediction with its run totals per configuration (``steps`` at each
        configuration's global batch, ``run_hours``, ``run_usd``; see ``estimate_run``) where
        ``dataset_images`` is given, the columns its picks rest on and ``pick``: the one table
        the CLI's table, CSV and JSON and the app's table, metrics and chart show."""
        table = self.table
        if dataset_images is not None:
            from ..inputs._catalog import estimate_run

            table = estimate_run(table, dataset_images, batch_size, epochs)
        return replace(self, table=with_picks(table)[0])

    def fit_warning(self, row: int | None = None) -> str | None:
        """A warning naming the targets where the step may not fit in GPU memory (P < 0.5)."""
        t = self.table if row is None else self.table[self.table["row"] == row]
        if "p_fit" not in t:
            return None
        risky = t[t["p_fit"] < 0.5].drop_duplicates("target")
        if risky.empty:
            return None
        names = ", ".join(f"{r.target} (P(fits) {r.p_fit:.2f})" for r in risky.itertuples())
        return (
            f"May not fit in GPU memory: {names}. Judged from the anchor latency, the batch and "
            "input size and the target's memory; the training data lacks workloads that did not "
            "fit, so treat it as a hint."
        )

    def warnings(self, row: int | None = None) -> list[str]:
        """Every warning about this prediction, as the CLI prints and the app shows them."""
        found = (
            self.matched_warning(),
            self.ignored_warning(),
            self.novelty_warning(row),
            self.basis_warning(row),
            self.fit_warning(row),
        )
        return [*self.notes, *(w for w in found if w)]

    def document(self) -> dict:
        """The JSON document of the prediction (without the records; see :meth:`write_json`)."""
        return {
            "anchor": self.anchor,
            "method": self.method,
            "interval_level": self.interval_level,
            "units": {"latency": "ms", "price": "USD/h", "cost": "USD"},
            "ignored_ops": list(self.ignored_ops),
            "matched_ops": dict(self.matched_ops),
            "warnings": self.warnings(),
            "notes": list(self.price_notes),
            "picks": {  # what the pick column ranks by
                "criterion": self.criterion.name,
                "time": self.criterion.time_column,
                "cost": self.criterion.cost_column,
            },
        }

    def to_json(self) -> dict:
        """The whole JSON document: :meth:`document` plus ``predictions`` (a list of records)."""
        records = json.loads(self.table.to_json(orient="records", double_precision=10))
        return {**self.document(), "predictions": records}

    def csv_columns(self) -> list[str]:
        """Columns of the CSV document: :data:`CSV_FIRST`, then the rest of :attr:`table` in
        its order, without ``anchor`` (the same in every row; the JSON document names it)."""
        first = [c for c in CSV_FIRST if c in self.table]
        return first + [c for c in self.table.columns if c not in (*CSV_FIRST, "anchor")]

    def write_csv(self, fp, columns=None, chunk: int = 50_000) -> None:
        """Stream :attr:`table` as the CSV document (``profet predict --format csv`` and the
        app's download) to a text file object.

        Numbers keep 4 significant digits and at least 4 decimals (``round_table``); pyarrow's writer keeps 100,000-profile tables fast.
        Text that a spreadsheet would run as a formula (a catalog's GPU name ``=HYPERLINK(...)``)
        is prefixed with ``'``.

        Parameters
        ----------
        fp : text file object
        columns : list of str, optional
            Columns to write; default :meth:`csv_columns`.
        chunk : int
            Rows formatted at a time.
        """
        from ..inputs._csv import escape_formulas

        table = self.table[list(self.csv_columns() if columns is None else columns)]
        table = escape_formulas(table)
        # UTF-8 bytes go straight to the binary stream under a UTF-8 text stream (stdout):
        # decoding 300 MB of CSV to text only for the stream to encode it again costs ~0.3 s.
        binary = _utf8_buffer(fp)
        if binary is not None:
            fp.flush()
        for data in _csv_parts(table, chunk):
            if binary is not None:
                binary.write(data)
            else:
                fp.write(data.decode("utf-8"))

    def to_csv(self) -> bytes:
        """The CSV document of :meth:`write_csv` as UTF-8 bytes (the app's download)."""
        import io

        out = io.BytesIO()
        with io.TextIOWrapper(out, encoding="utf-8", newline="") as text:
            self.write_csv(text)
            text.flush()
            return out.getvalue()

    def write_json(self, fp, chunk: int = 5000) -> None:
        """Stream :meth:`to_json` to a text file object, ``chunk`` records at a time."""
        head = json.dumps(self.document(), indent=1)
        fp.write(head[:-2] + ',\n "predictions": [')
        for start in range(0, len(self.table), chunk):
            part = self.table.iloc[start : start + chunk]
            text = part.to_json(orient="records", double_precision=10)
            fp.write(("," if start else "") + "\n" + text[1:-1])
        fp.write("\n ]\n}\n")


def _utf8_buffer(fp):
    """The binary stream under text stream ``fp`` when writing UTF-8 bytes to it is the same
    as writing the text (UTF-8 encoding, no newline translation), else None."""
    import codecs
    import os

    buffer, encoding = getattr(fp, "buffer", None), getattr(fp, "encoding", None)
    if buffer is None or not isinstance(encoding, str) or os.linesep != "\n":
        return None
    try:
        return buffer if codecs.lookup(encoding).name == "utf-8" else None
    except LookupError:
        return None


def _csv_chunk(part: pd.DataFrame, header: bool) -> bytes:
    import io

    import pyarrow as pa
    import pyarrow.csv as pacsv

    options = pacsv.WriteOptions(include_header=header, quoting_style="needed")
    sink = io.BytesIO()
    pacsv.write_csv(pa.Table.from_pandas(part, preserve_index=False), sink, options)
    return sink.getvalue()


def _csv_parts(table: pd.DataFrame, chunk: int):
    """CSV bytes of ``table`` (numbers ``round_table``), ``chunk`` rows at a time, in order.

    pyarrow formats the numbers (most of the time) without holding the GIL, so chunks are
    formatted in two threads, at most a chunk ahead of the writer each (bounded memory).
    """
    from collections import deque
    from concurrent.futures import ThreadPoolExecutor

    starts = range(0, max(len(table), 1), chunk)
    if len(starts) == 1:
        yield _csv_chunk(round_table(table), True)
        return
    workers = 2
    with ThreadPoolExecutor(workers) as pool:
        pending = deque()
        for start in starts:
            # pandas slices in this thread only: its objects are not safe to share across threads
            part = round_table(table.iloc[start : start + chunk])
            pending.append(pool.submit(_csv_chunk, part, start == 0))
            if len(pending) > workers:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


#: How the messages start that say what an answer rests on, not what may be wrong with it:
#: notes (``Prediction.price_notes``; the CLI's ``profet: note:``, the page's info), not warnings.
ANSWER_NOTES = (
    "amp: FP16 on Volta/Turing",  # which format amp means
    "Several GPUs: data-parallel at",  # the data-parallel model and its all-reduce size
    "GPUs with no published measurement of their own take",  # their architecture's efficiency
    "published- and spec-based intervals are widened for a new source",  # how they were set
)


def answer_notes(pred: Prediction) -> Prediction:
    """``pred`` with the messages of :data:`ANSWER_NOTES` moved from its warnings to its notes."""
    said = [n for n in pred.notes if n.startswith(ANSWER_NOTES)]
    if not said:
        return pred
    kept = tuple(n for n in pred.notes if not n.startswith(ANSWER_NOTES))
    return replace(pred, notes=kept, price_notes=(*said, *pred.price_notes))
