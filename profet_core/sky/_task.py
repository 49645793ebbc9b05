"""A SkyPilot task file checked before SkyPilot starts (seconds of imports): a regular file of
bounded size, UTF-8 YAML whose nesting and aliases are bounded before it is built (a 341-byte
alias bomb expands to 9**10 nodes, and SkyPilot's duplicate-key walk never ended on it), a
mapping; its resources in every form SkyPilot writes them (``any_of``, ``ordered``,
accelerator strings, lists, sets and ``{name: count}`` maps) ask for at least one GPU, at most
:data:`MAX_CANDIDATES` candidates, and name each accelerator and count as an instance could.

SkyPilot's own schema stays the judge of the rest (keys, clouds, regions): the child process
reports what it says in one line.
"""

from __future__ import annotations

import math
import re

from .._messages import quote, show_number
from ..errors import ProfetValueError

#: A SkyPilot task is a short file; anything longer is not read (or handed to SkyPilot).
TASK_MAX_BYTES = 1_000_000
#: Deepest nesting of a task's mappings and lists (SkyPilot's schema goes 5 deep).
MAX_YAML_DEPTH = 32
#: Most nodes a task may expand to, each alias counted as the node it repeats.
MAX_YAML_NODES = 100_000
#: Most candidate resources planned: SkyPilot's optimizer runs once per candidate (about 0.1 s
#: each, seconds more under load), so 500 candidates ran past 150 s.
MAX_CANDIDATES = 64
#: Largest GPU count a candidate may ask for (no instance holds more; SkyPilot's arithmetic
#: breaks on counts near 2**63).
MAX_TASK_GPUS = 1024
#: An accelerator name as SkyPilot's catalogs write them (T4, A100-80GB, tpu-v4-8,
#: "Radeon Pro V520"): a regular expression's characters are no name (SkyPilot matches names
#: as patterns).
ACCELERATOR_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9 ._+-]{0,63}")
#: Resource fields a plan reads or that ask for no GPU (any other key: SkyPilot's schema judges
#: it first; "acelerators" gets its "did you mean").
RESOURCE_KEYS = frozenset(
    "accelerators instance_type cloud infra region zone cpus memory use_spot disk_size "
    "disk_tier network_tier ports image_id labels job_recovery autostop".split()
)
NO_GPU = (
    "the task asks for no GPU: give its resources accelerators, e.g. any_of: "
    "[{accelerators: T4}, {accelerators: A100:8}]"
)


def read_task(path) -> tuple[bytes, dict]:
    """The bytes of a task file and its YAML document, checked (see the module's text).

    Raises
    ------
    ProfetFileNotFoundError, ProfetValueError
        No such file, no regular file, too long, not UTF-8, not YAML, nested or aliased past
        the bounds, or not a mapping.
    """
    import yaml  # SkyPilot's own dependency

    from ..inputs._safe_read import read_bounded

    data = read_bounded(path, TASK_MAX_BYTES, "task YAML")
    shown = quote(str(path))
    try:
        text = data.decode("utf-8")
        yaml_shape(text, shown)
        doc = yaml.safe_load(text)
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        what = " ".join(str(exc).split())[:300]
        raise ProfetValueError(f"task YAML {shown} is not a SkyPilot task: {what}") from None
    if not isinstance(doc, dict):
        held = {list: "a list", str: "text", int: "a number", float: "a number", bool: "a flag"}
        raise ProfetValueError(
            f"task YAML {shown} is not a SkyPilot task: it holds "
            f"{held.get(type(doc), 'nothing')}, not a mapping of task fields (resources, run, ...)"
        )
    return data, doc


def yaml_shape(text: str, shown: str) -> None:
    """Refuse YAML nested deeper than :data:`MAX_YAML_DEPTH` or expanding to more than
    :data:`MAX_YAML_NODES` nodes, from its event stream (no tree is built, nothing recurses)."""
    import yaml

    opened, sizes, expanded = [], {}, 0
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, yaml.CollectionStartEvent):
            opened.append([event.anchor, expanded])
            expanded += 1
            if len(opened) > MAX_YAML_DEPTH:
                raise ProfetValueError(
                    f"task YAML {shown} nests deeper than {MAX_YAML_DEPTH} levels; a SkyPilot "
                    "task is a few levels deep"
                )
        elif isinstance(event, yaml.CollectionEndEvent):
            anchor, start = opened.pop()
            if anchor is not None:
                sizes[anchor] = expanded - start
        elif isinstance(event, yaml.ScalarEvent):
            expanded += 1
            if event.anchor is not None:
                sizes[event.anchor] = 1
        elif isinstance(event, yaml.AliasEvent):
            expanded += sizes.get(event.anchor, 1)
        if expanded > MAX_YAML_NODES:
            raise ProfetValueError(
                f"task YAML {shown} expands to more than {MAX_YAML_NODES:,} nodes (its aliases "
                "counted each time they are used); a SkyPilot task is a short file"
            )


def check_resources(doc: dict) -> None:
    """Refuse a task whose resources ask for no GPU, for more than :data:`MAX_CANDIDATES`
    candidates, or for an accelerator name or count no instance has (one line each). Forms
    SkyPilot's schema refuses are left to it."""
    candidates = _candidates(doc.get("resources"))
    if candidates is None or any(set(c) - RESOURCE_KEYS for c in candidates):
        return  # a key misspelt or new: SkyPilot's schema says what it is
    options = [_accelerators(c.get("accelerators")) for c in candidates]
    if any(o is None for o in options):
        return
    pairs = zip(options, candidates, strict=True)
    if not any(o or c.get("instance_type") is not None for o, c in pairs):
        raise ProfetValueError(NO_GPU)
    total = sum(max(1, len(o)) for o in options)
    if total > MAX_CANDIDATES:
        raise ProfetValueError(
            f"the task lists {total:,} candidate resources (its any_of/ordered entries times "
            f"their accelerators); a plan runs SkyPilot's optimizer once per candidate: give at "
            f"most {MAX_CANDIDATES}"
        )
    for name, count in (pair for o in options for pair in o):
        _check_accelerator(name, count)
    if all(o for o in options):  # every candidate names its accelerators: none a GPU?
        from ._runs import not_a_gpu

        other = [not_a_gpu(name) for o in options for name, _ in o]
        if all(other):
            raise ProfetValueError(
                "the task asks for no GPU PROFET predicts: " + "; ".join(dict.fromkeys(other))
            )


def _candidates(resources) -> list[dict] | None:
    """Each candidate's resource fields (``any_of``/``ordered`` entries over the shared ones);
    ``[]`` without resources; None for a form SkyPilot's schema judges."""
    if resources is None:
        return [{}]
    if not isinstance(resources, dict):
        return None
    shared = {k: v for k, v in resources.items() if k not in ("any_of", "ordered")}
    for key in ("any_of", "ordered"):
        if key in resources:
            entries = resources[key]
            if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
                return None
            return [{**shared, **e} for e in entries] or [{}]
    return [shared]


def _accelerators(value) -> list[tuple] | None:
    """``[(name, count)]`` of an ``accelerators`` field: ``"A100:8"``, ``{A100: 8}``,
    ``{T4, A100:8}`` (a set: YAML's keys without values), ``[T4, A100]``; None for another
    form (SkyPilot's schema says what is wrong)."""
    if value is None:
        return []
    if isinstance(value, str):
        return [_split(value)]
    if isinstance(value, dict):
        return [_split(k) if v is None else (k, v) for k, v in value.items()]
    if isinstance(value, list):
        out = []
        for item in value:
            if isinstance(item, str):
                out.append(_split(item))
            elif isinstance(item, dict):
                out += [_split(k) if v is None else (k, v) for k, v in item.items()]
            else:
                return None
        return out
    return None


def _split(text) -> tuple:
    """``"A100:8"`` -> ``("A100", 8.0)``; ``"T4"`` -> ``("T4", 1)``; a count that is no number
    stays text (refused by :func:`_check_accelerator`)."""
    name, sep, count = str(text).rpartition(":")
    if not sep:
        return str(text), 1
    try:
        return name, float(count)
    except ValueError:
        return name, count


def _check_accelerator(name, count) -> None:
    """Refuse an empty or impossible accelerator name, and a count no instance has."""
    text = str(name).strip() if name is not None else ""
    if not text:
        raise ProfetValueError(
            "an accelerator name is empty in the task's resources; name one, e.g. "
            "accelerators: A100:8"
        )
    if not ACCELERATOR_NAME.fullmatch(text):
        raise ProfetValueError(
            f"accelerator name {quote(text)} is not allowed; accelerator names are letters, "
            "digits, spaces and . _ + - (e.g. T4, A100-80GB, tpu-v4-8)"
        )
    number = isinstance(count, (int, float)) and not isinstance(count, bool)
    if number and isinstance(count, int) and count > MAX_TASK_GPUS:
        big = True
    else:
        big = number and math.isfinite(count) and count > MAX_TASK_GPUS
    if big:
        raise ProfetValueError(
            f"GPU count {show_number(count)} of {quote(text)}: no instance has that many GPUs "
            f"(at most {MAX_TASK_GPUS:,} here)"
        )
    if not number or not (math.isfinite(count) and count > 0):
        raise ProfetValueError(
            f"GPU count {show_number(count)} of {quote(text)} is not a number of GPUs; give a "
            f"count > 0, e.g. {text}:8"
        )
