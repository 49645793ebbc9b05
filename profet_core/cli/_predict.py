"""``profet predict``: an anchor profile's batch latency (and cost) on every other instance."""

from __future__ import annotations

import sys

from ._common import ARTIFACTS_HELP, CATALOG_HELP, load_predictor, note, table_text, warn
from ._offerings import add_filters, filters_given, offering_filter, write_table
from ._request import add_request_args, request_from_args

#: Columns of `profet predict --format table` with their headers (units included).
_TABLE_COLUMNS = {
    "row": "row",
    "configuration": "configuration",
    "target": "target",
    "gpu": "gpu",
    "basis": "basis",
    "batch_latency_ms": "batch_latency_ms",  # one name per quantity: the CSV's and JSON's
    "low_ms": "low_ms",
    "high_ms": "high_ms",
    "novelty": "novelty",
    "p_fit": "p_fit",  # before the prices: the columns the picks rest on end the line
    "usd_per_hour": "usd_per_hour",
    "offering": "offering",
    "regions_at_price": "regions_at_price",
    "price_check": "price_check",  # what the offering's price needs said (the CSV's note says why)
    "usd_per_1000_steps": "usd_per_1000_steps",
    "ms_per_batch": "ms_per_batch",
    "usd_per_1000_batches": "usd_per_1000_batches",
    "steps": "steps",
    "run_hours": "run_hours",
    "run_usd": "run_usd",
    "pick": "pick",
}


def add_parser(subparsers) -> None:
    """Register ``predict`` on the ``profet`` subcommand parsers."""
    pr = subparsers.add_parser("predict", help="predict batch latency on every other instance")
    pr.add_argument(
        "--profile", required=True, help="profile: PROFET JSON, TensorBoard CSV, or table"
    )
    pr.add_argument("--artifacts", help=ARTIFACTS_HELP)
    pr.add_argument("--catalog", help=CATALOG_HELP)
    pr.add_argument(
        "--format",
        choices=["table", "json", "csv"],
        default="table",
        help="table: aligned text for people, numbers to 4 significant digits (default); "
        "json: one document with the warnings and every record; csv: one row per (profile "
        "row, target), numbers to 4 significant digits (at least 4 decimals)",
    )
    add_request_args(pr)
    pr.add_argument(
        "--offerings",
        action="store_true",
        help="price every GPU offering of SkyPilot's catalog (implied by the filters below): one "
        "prediction per GPU, joined to each offering that rents it; names the time-cost front",
    )
    add_filters(
        pr,
        "price with spot prices (offerings without one are left out; spot capacity "
        "can be taken back)",
    )


def run(args) -> int:
    """Predict ``--profile`` on every target; print it as a table, CSV or JSON."""
    from .. import read_profile

    predictor, given, snapshot, source, meta = load_predictor(args.artifacts, args.catalog)
    profiles = read_profile(args.profile)
    request = request_from_args(args, profiles)
    if args.offerings or filters_given(args):
        prices = {"catalog": given, "offerings": snapshot}
        return _offerings(args, predictor, _first_row(profiles), request, prices, source, meta)
    _check_table_size(args.format, len(profiles), predictor, request.anchor, profiles)
    # Run totals per configuration and the one set of picks: the app's table, too.
    result = predictor.predict(None, profiles, request)
    if request.run is None:
        result = result.with_run()
    for warning in result.warnings():
        warn(warning)
    for text in result.price_notes:  # what the prices rest on
        note(text)
    note(source)
    if args.format == "csv":
        result.write_csv(sys.stdout)  # the app's download, too
    elif args.format == "json":
        result.write_json(sys.stdout)
    else:
        _print_table(result, result.table)
    return 0


def _offerings(args, predictor, profiles, request, prices, source, meta) -> int:
    """``--offerings`` (or a filter): every chosen offering priced, the front named; ``meta``:
    the JSON's source, the snapshot the prices are from."""
    from .. import predict_offerings

    done = predict_offerings(
        predictor, None, profiles, request, filter=offering_filter(args, False), **prices
    )
    for warning in done.warnings():
        warn(warning)
    # the prediction's notes (what it rests on: amp's format, the data-parallel model...) too
    notes = (*done.notes, *done.prediction.price_notes)
    for text in notes:  # the prices' source: the snapshot's, or --catalog's
        note(source if text.startswith("Prices:") else text)
    for row in sorted(done.table["row"].unique()):
        note(
            ("" if done.table["row"].nunique() == 1 else f"profile row {row}: ")
            + done.front_text(row)
        )
    if args.format == "table":
        shown = [c for c in _OFFERING_TABLE if c in done.table.columns]
        print(table_text(done.table[shown]))
    elif args.format == "csv":  # the app's download: one document, one format
        from .._messages import printable

        sys.stdout.write(printable(done.to_csv().decode("utf-8")))
    else:
        write_table(
            done.table,
            args.format,
            notes,
            source=meta,
            anchor=done.prediction.anchor,
            method=done.prediction.method,
            warnings=done.warnings(),
        )
    return 0


#: Columns of `profet predict --offerings --format table` (csv and json carry every column).
_OFFERING_TABLE = (
    "row",
    "cloud",
    "instance",
    "region",
    "gpu",
    "gpus",
    "market",
    "usd_per_hour",
    "price_check",
    "basis",
    "batch_latency_ms",
    "low_ms",
    "high_ms",
    "p_fit",  # before the costs: the columns the front and picks rest on end the line
    "images_per_s",
    "usd_per_1000_steps",
    "ms_per_batch",
    "usd_per_1000_batches",
    "steps",
    "run_hours",
    "run_usd",
    "pareto",
    "pick",
)


#: The most lines ``--format table`` prints: aligned text is built whole in memory (40,000
#: lines take about 1.3 s and 5 MB; a 95,000-row profile's 3.6 million took 367 s and 6 GB),
#: while CSV and JSON are written as they are made.
TABLE_MAX_LINES = 50_000


def _check_table_size(fmt: str, rows: int, predictor, anchor, profiles) -> None:
    """Refuse the table format for an answer too long to align, before predicting it."""
    if fmt != "table" or rows * 2 <= TABLE_MAX_LINES // 100:
        return
    from .. import ProfetValueError

    if anchor is None:
        from ..inputs._profile import profile_instance

        anchor = profile_instance(profiles)

    lines = rows * max(len(predictor.targets(anchor)), 1)
    if lines > TABLE_MAX_LINES:
        raise ProfetValueError(
            f"the answer has about {lines:,} lines ({rows:,} profile rows x targets), and the "
            f"table format prints at most {TABLE_MAX_LINES:,}; use --format csv (or json)"
        )


def _first_row(profiles):
    """The profile's first row, with a note where it has more (offerings are priced for one
    row, as the app prices them: every row x every offering ran to gigabytes)."""
    if len(profiles) <= 1:
        return profiles
    warn(
        f"the profile has {len(profiles):,} rows; --offerings prices the first one, as the app "
        "does (give a one-row profile to price another, or call predict_offerings in Python)"
    )
    return profiles.iloc[:1]


def _print_table(result, table) -> None:
    cols = [c for c in _TABLE_COLUMNS if c in table.columns]
    if "configuration" in cols:  # the configuration names the GPU
        cols.remove("gpu")
    if "basis_precision" in table.columns:  # --precision amp or --gpus other than 1
        cols[cols.index("basis") + 1 : cols.index("basis") + 1] = [
            "basis_precision",
            "precision",
            "gpus",
        ]
        cols.insert(cols.index("usd_per_hour"), "images_per_s")
    level = int(round(result.interval_level * 100))
    print(f"anchor {result.anchor}, method {result.method}: {result.table['ensemble'].iloc[0]}")
    print(
        f"latency in ms per training step, {level}% interval low_ms..high_ms; one row per GPU "
        "configuration (GPUs x GPU; target: the spec line or measured instance it is predicted "
        "as), priced in USD by the on-demand offering renting it cheapest (offering; each "
        "instance type at its cheapest region, as profet instances lists it); --offerings "
        "prices every offering"
    )
    print(result.criterion.describe())
    # Significant digits, not fixed decimals: 0.0089 USD stays 0.0089, a 0.05 ms end not 0.000.
    if "pick" in table:  # a dash, not an empty cell, where a row is no pick
        table = table.assign(pick=table["pick"].replace("", "-"))
    print(table_text(table[cols].rename(columns=_TABLE_COLUMNS)))
