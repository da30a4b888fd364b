"""Score a restatement grouping against the labelled piles of tests/data/restatements/.

Usage:
    .venv/bin/python bench/restatements_score.py [--grouper DOTTED.PATH] [--data FOLDER] [--json]
    .venv/bin/python bench/restatements_score.py --cross-validate   # leave one pile out
    .venv/bin/python bench/restatements_score.py --grouper lessons.core.facts.pile_facts --after-retire

The grouper (default ``lessons.core.groups.restatement_groups``) runs over each pile and is scored
pairwise over the pairs of lessons in that pile: a pair is positive in the labels when both lessons
have the same non-null ``fact`` (a pair with an umbrella is always negative), and predicted when the
grouper puts both in one group. Prints each pile's and the pooled (micro-averaged) precision, recall
and F1. The rule the labels follow and the file format are in tests/data/restatements/README.md.
Never run by the test suite (its tests call the functions on small inputs and on the set).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from lessons.core.piles import PileMember  # noqa: E402  (after the sys.path line, for a direct run)

DEFAULT_DATA = ROOT / "tests" / "data" / "restatements"
DEFAULT_GROUPER = "lessons.core.groups.restatement_groups"
LIVE = "live"
RETRACTED = "retracted"
_KEYS = ("id", "domain", "pile", "text", "fact", "created_at")


class DataError(ValueError):
    """A labelled file or a grouper's output breaks the format: the message names file, line, field."""


@dataclass(frozen=True)
class Lesson:
    """One labelled lesson: ``fact`` is None for an umbrella, whose ``covers`` names the facts it states
    (empty for any other lesson); ``created_at_ms`` is epoch milliseconds (UTC)."""

    id: str
    domain: str
    pile: str
    text: str
    fact: str | None
    covers: tuple[str, ...]
    created_at_ms: int

    @property
    def hash(self) -> str:
        """The member hash the grouper sees: the SHA-256 of the text, in hex."""
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Score:
    """Pair counts: ``tp`` predicted and labelled, ``fp`` predicted only, ``fn`` labelled only."""

    tp: int = 0
    fp: int = 0
    fn: int = 0

    def __add__(self, other: Score) -> Score:
        return Score(self.tp + other.tp, self.fp + other.fp, self.fn + other.fn)

    @property
    def precision(self) -> float | None:
        """TP / (TP + FP); None when nothing was predicted."""
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def recall(self) -> float | None:
        """TP / (TP + FN); None when nothing is labelled."""
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else None

    @property
    def f1(self) -> float | None:
        """2 TP / (2 TP + FP + FN); None when there is no pair on either side."""
        total = 2 * self.tp + self.fp + self.fn
        return 2 * self.tp / total if total else None


def load_pile(path: Path) -> tuple[Lesson, ...]:
    """The lessons of one ``.jsonl`` file, in file order, checked against the format of the README.

    Raises ``DataError`` ("<file>:<line>: <field>: <what>") on a line that is no JSON object, a missing
    or mistyped key, a second pile or domain in the file, a ``created_at`` not above the line before, a
    repeated text, or ``covers`` that is not on exactly the umbrellas or names no two facts of the pile.
    """
    lessons: list[Lesson] = []
    where: dict[str, str] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        at = f"{path.name}:{number}"
        if not line.strip():
            continue
        lesson = _lesson(line, at)
        where[lesson.id] = at
        if lessons:
            first, last = lessons[0], lessons[-1]
            if (lesson.pile, lesson.domain) != (first.pile, first.domain):
                raise DataError(
                    f"{at}: pile: {lesson.pile!r} ({lesson.domain}) in the file of {first.pile!r}"
                )
            if lesson.created_at_ms <= last.created_at_ms:
                raise DataError(f"{at}: created_at: {lesson.created_at_ms} is not after the line before")
            if any(lesson.text == other.text for other in lessons):
                raise DataError(f"{at}: text: the same text is on an earlier line")
        lessons.append(lesson)
    if not lessons:
        raise DataError(f"{path.name}: no lessons")
    facts = {lesson.fact for lesson in lessons if lesson.fact is not None}
    for lesson in lessons:
        unknown = sorted(set(lesson.covers) - facts)
        if unknown:
            raise DataError(f"{where[lesson.id]}: covers: {', '.join(unknown)} is no fact of the pile")
    return tuple(lessons)


def _lesson(line: str, at: str) -> Lesson:
    try:
        record = json.loads(line)
    except json.JSONDecodeError as error:
        raise DataError(f"{at}: not JSON ({error.msg})") from None
    if not isinstance(record, dict):
        raise DataError(f"{at}: not a JSON object")
    for key in _KEYS:
        if key not in record:
            raise DataError(f"{at}: {key}: missing")
    for key in ("id", "domain", "pile", "text"):
        if not isinstance(record[key], str) or not record[key].strip():
            raise DataError(f"{at}: {key}: not a non-empty string")
    fact, covers = record["fact"], record.get("covers")
    if fact is not None and (not isinstance(fact, str) or not fact.strip()):
        raise DataError(f"{at}: fact: not a non-empty string or null")
    if fact is None:
        if (
            not isinstance(covers, list)
            or len(set(covers)) < 2
            or not all(isinstance(c, str) for c in covers)
        ):
            raise DataError(f"{at}: covers: an umbrella (fact null) needs a list of two or more facts")
        if len(set(covers)) != len(covers):
            raise DataError(f"{at}: covers: a fact is listed twice")
    elif covers is not None:
        raise DataError(f"{at}: covers: only an umbrella (fact null) has covers")
    created = record["created_at"]
    if isinstance(created, bool) or not isinstance(created, int):
        raise DataError(f"{at}: created_at: not an integer of milliseconds")
    return Lesson(
        id=record["id"],
        domain=record["domain"],
        pile=record["pile"],
        text=record["text"],
        fact=fact,
        covers=tuple(covers or ()),
        created_at_ms=created,
    )


def load_set(folder: Path = DEFAULT_DATA) -> dict[str, tuple[Lesson, ...]]:
    """Every ``*.jsonl`` of ``folder`` by pile name, files in name order. Raises ``DataError`` as
    ``load_pile`` does, and when a pile name or a lesson id is in two files or there is no file."""
    piles: dict[str, tuple[Lesson, ...]] = {}
    seen: dict[str, str] = {}
    for path in sorted(folder.glob("*.jsonl")):
        lessons = load_pile(path)
        pile = lessons[0].pile
        if pile in piles:
            raise DataError(f"{path.name}: pile: {pile!r} is also in {seen[pile]}")
        for lesson in lessons:
            if lesson.id in seen:
                raise DataError(f"{path.name}: id: {lesson.id!r} is also in {seen[lesson.id]}")
            seen[lesson.id] = path.name
        seen[pile] = path.name
        piles[pile] = lessons
    if not piles:
        raise DataError(f"{folder}: no .jsonl file")
    return piles


def gold_pairs(lessons: Sequence[Lesson]) -> frozenset[frozenset[str]]:
    """The labelled positive pairs (of ids): two lessons with the same non-null fact."""
    by_fact: dict[str, list[str]] = {}
    for lesson in lessons:
        if lesson.fact is not None:
            by_fact.setdefault(lesson.fact, []).append(lesson.id)
    return frozenset(frozenset(pair) for ids in by_fact.values() for pair in combinations(ids, 2))


def predicted_pairs(groups: Iterable[Iterable[str]]) -> frozenset[frozenset[str]]:
    """The pairs (of ids) a grouping predicts: two lessons in one group."""
    return frozenset(frozenset(pair) for group in groups for pair in combinations(sorted(set(group)), 2))


def score_pile(lessons: Sequence[Lesson], groups: Iterable[Iterable[str]]) -> Score:
    """The pair counts of ``groups`` (lists of lesson ids) against the labels of ``lessons``.

    A lesson in no group is a group of one. Raises ``DataError`` when a group names an id that is not
    in the pile or an id is in two groups.
    """
    known = {lesson.id for lesson in lessons}
    placed: set[str] = set()
    checked: list[list[str]] = []
    for group in groups:
        ids = list(group)
        for lesson_id in ids:
            if lesson_id not in known:
                raise DataError(f"groups: {lesson_id!r} is not a lesson of the pile")
            if lesson_id in placed:
                raise DataError(f"groups: {lesson_id!r} is in two groups")
            placed.add(lesson_id)
        checked.append(ids)
    gold, predicted = gold_pairs(lessons), predicted_pairs(checked)
    return Score(tp=len(gold & predicted), fp=len(predicted - gold), fn=len(gold - predicted))


def mistakes(
    lessons: Sequence[Lesson], groups: Iterable[Iterable[str]]
) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """The pairs (of ids, each pair and the list sorted) ``groups`` gets wrong: those it joins that the
    labels do not (false), then those the labels join that it does not (missed)."""
    gold, predicted = gold_pairs(lessons), predicted_pairs(groups)
    return sorted(tuple(sorted(p)) for p in predicted - gold), sorted(
        tuple(sorted(p)) for p in gold - predicted
    )


def resolve(dotted: str) -> Callable[..., Iterable[object]]:
    """The callable at ``package.module.name``; ``DataError`` when it cannot be imported."""
    module_name, _, name = dotted.rpartition(".")
    try:
        found = getattr(importlib.import_module(module_name), name) if module_name else None
    except (ImportError, AttributeError) as error:
        raise DataError(f"--grouper: cannot import {dotted!r} ({error})") from None
    if not callable(found):
        raise DataError(f"--grouper: {dotted!r} is not a callable")
    return found


def run_grouper(
    grouper: Callable[..., Iterable[object]], lessons: Sequence[Lesson], retired: frozenset[str] = frozenset()
) -> list[list[str]]:
    """The groups (lists of lesson ids) ``grouper`` makes of one pile.

    It is called as ``grouper(members=..., texts=...)`` with one ``PileMember`` per lesson (hash the
    SHA-256 of the text, ``created_at_ms`` from the file, no verdict; live, or ``retracted`` for the ids
    in ``retired``) and a hash-to-text mapping, and returns groups: objects with a ``members``
    attribute, or iterables, of member hashes (``lessons.core.facts.pile_facts`` shows the live ones).
    """
    by_hash = {lesson.hash: lesson.id for lesson in lessons}
    members = [
        PileMember(
            hash=lesson.hash,
            created_at_ms=lesson.created_at_ms,
            status=RETRACTED if lesson.id in retired else LIVE,
            verdict=None,
        )
        for lesson in lessons
    ]
    texts: Mapping[str, str] = {lesson.hash: lesson.text for lesson in lessons}
    groups = []
    for group in grouper(members=members, texts=texts):
        hashes = getattr(group, "members", group)
        try:
            groups.append([by_hash[h] for h in hashes])
        except KeyError as error:
            raise DataError(f"groups: {error.args[0]!r} is not a member hash of the pile") from None
    return groups


def score_set(
    piles: Mapping[str, Sequence[Lesson]], grouper: Callable[..., Iterable[object]]
) -> dict[str, Score]:
    """Each pile's ``Score`` under ``grouper``, in the order of ``piles``."""
    return {pile: score_pile(lessons, run_grouper(grouper, lessons)) for pile, lessons in piles.items()}


def overall(scores: Mapping[str, Score]) -> Score:
    """The pooled pair counts of every pile (micro average)."""
    return sum(scores.values(), Score())


def report(piles: Mapping[str, Sequence[Lesson]], scores: Mapping[str, Score]) -> str:
    """The text table the CLI prints: one line a pile, then the pooled line."""

    def figure(value: float | None) -> str:
        return "-" if value is None else f"{value:.2f}"

    def row(name: str, lessons: int, facts: int, s: Score) -> str:
        return (
            f"{name:<22} {lessons:>7} {facts:>5} {s.tp + s.fn:>5} {s.tp + s.fp:>5} {s.tp:>4} "
            f"{figure(s.precision):>5} {figure(s.recall):>5} {figure(s.f1):>5}"
        )

    def facts(lessons: Sequence[Lesson]) -> int:
        return len({lesson.fact for lesson in lessons if lesson.fact is not None})

    heads = ("lessons", 7), ("facts", 5), ("gold", 5), ("found", 5), ("tp", 4), ("P", 5), ("R", 5), ("F1", 5)
    lines = [" ".join([f"{'pile':<22}", *(f"{head:>{width}}" for head, width in heads)])]
    lines += [row(p, len(piles[p]), facts(piles[p]), s) for p, s in scores.items()]
    lines.append(
        row(
            "overall",
            sum(len(piles[p]) for p in scores),
            sum(facts(piles[p]) for p in scores),
            overall(scores),
        )
    )
    return "\n".join(lines)


def as_json(scores: Mapping[str, Score]) -> dict[str, object]:
    """The figures as JSON-ready data: ``piles`` by name and ``overall``, each with tp, fp, fn, P, R, F1."""

    def entry(s: Score) -> dict[str, object]:
        return {"tp": s.tp, "fp": s.fp, "fn": s.fn, "precision": s.precision, "recall": s.recall, "f1": s.f1}

    return {"piles": {p: entry(s) for p, s in scores.items()}, "overall": entry(overall(scores))}


@dataclass(frozen=True)
class RetireFigures:
    """What one way of grouping after a retire gives over every single retire of every pile: ``score``,
    the pooled pair counts of the lessons left against their labels; ``retires``, how many; ``kept``,
    how many left every other group exactly as the grouping of the whole pile had it."""

    score: Score
    retires: int
    kept: int


def after_retire(
    piles: Mapping[str, Sequence[Lesson]], grouper: Callable[..., Iterable[object]], *, regroup: bool
) -> RetireFigures:
    """Retire each lesson of each pile in turn and score what is left (``score_pile`` over the other
    lessons). ``regroup``: the lessons left are grouped anew, as if the retired one never was (facts
    method 16 and before); else the retired one is given to ``grouper`` as ``retracted`` with the others
    (method 17: grouped over every lesson, the live ones shown). docs/benchmarks.md, the session of
    2026-12-04, seventh."""
    total, retires, kept = Score(), 0, 0
    for lessons in piles.values():
        whole = [frozenset(group) for group in run_grouper(grouper, lessons)]
        for lesson in lessons:
            left = [other for other in lessons if other.id != lesson.id]
            if regroup:
                groups = run_grouper(grouper, left)
            else:
                groups = run_grouper(grouper, lessons, retired=frozenset({lesson.id}))
            total += score_pile(left, groups)
            retires += 1
            others = {group for group in whole if lesson.id not in group}
            kept += others <= {frozenset(group) for group in groups}
    return RetireFigures(total, retires, kept)


# The settings of lessons.core.facts that --cross-validate chooses among (name: the values tried).
CV_GRID = {
    "WORDS_WEIGHT": (0.0, 0.15, 0.25, 0.4),
    "ANCHORS_WEIGHT": (0.0, 0.1, 0.15, 0.25),
    "SAME_FACT": (0.1, 0.15, 0.2, 0.25, 0.3, 0.35),
    "CENTRE_PRIOR": (0, 4),
}


def cross_validate(
    piles: Mapping[str, Sequence[Lesson]], module: object, grid: Mapping[str, Sequence[object]] = CV_GRID
) -> tuple[Score, dict[str, dict[str, object]]]:
    """Leave one pile out: for each pile, the settings of ``module`` (its attributes named in ``grid``)
    that score best (F1, pooled) on the other piles, scored on that pile. Returns the pooled held-out
    ``Score`` and each pile's chosen settings; ``module``'s attributes are put back afterwards. An honest
    figure for piles the settings were not chosen on, unlike the figures of a run with today's settings."""
    from itertools import product

    names = list(grid)
    saved = {name: getattr(module, name) for name in names}
    per_setting: list[tuple[dict[str, object], dict[str, Score]]] = []
    try:
        for values in product(*(grid[name] for name in names)):
            setting = dict(zip(names, values, strict=True))
            for name, value in setting.items():
                setattr(module, name, value)
            per_setting.append((setting, score_set(piles, module.pile_facts)))
    finally:
        for name, value in saved.items():
            setattr(module, name, value)

    def f1_without(scores: dict[str, Score], left_out: str) -> float:
        return overall({p: s for p, s in scores.items() if p != left_out}).f1 or 0.0

    held_out, chosen = Score(), {}
    for pile in piles:
        setting, scores = max(per_setting, key=lambda entry: f1_without(entry[1], pile))
        held_out += scores[pile]
        chosen[pile] = setting
    return held_out, chosen


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grouper", default=DEFAULT_GROUPER, help=f"dotted path (default {DEFAULT_GROUPER})")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="folder of labelled .jsonl piles")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--pairs", action="store_true", help="also list each pile's false and missed pairs")
    parser.add_argument(
        "--cross-validate",
        action="store_true",
        help="leave-one-pile-out figures of lessons.core.facts over its settings (CV_GRID)",
    )
    parser.add_argument(
        "--after-retire",
        action="store_true",
        help="retire each lesson in turn: the lessons left regrouped, and grouped with it retracted",
    )
    args = parser.parse_args(argv)
    if args.after_retire:
        piles, grouper = load_set(args.data), resolve(args.grouper)
        for name, regroup in (("regrouped without it", True), ("grouped with it retracted", False)):
            found = after_retire(piles, grouper, regroup=regroup)
            s = found.score
            print(
                f"{name:<26} retires {found.retires} others kept {found.kept} "
                f"tp {s.tp} fp {s.fp} fn {s.fn} P {s.precision:.3f} R {s.recall:.3f} F1 {s.f1:.3f}"
            )
        return 0
    if args.cross_validate:
        from lessons.core import facts

        held_out, chosen = cross_validate(load_set(args.data), facts)
        for pile, setting in chosen.items():
            print(f"{pile:<22} " + " ".join(f"{k}={v}" for k, v in setting.items()))
        print(f"held out: P {held_out.precision:.2f} R {held_out.recall:.2f} F1 {held_out.f1:.2f}")
        return 0
    try:
        piles = load_set(args.data)
        grouper = resolve(args.grouper)
        groups = {pile: run_grouper(grouper, lessons) for pile, lessons in piles.items()}
        scores = {pile: score_pile(piles[pile], found) for pile, found in groups.items()}
    except (DataError, OSError) as error:
        print(f"restatements_score: {error}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps({"grouper": args.grouper, **as_json(scores)}, indent=2))
    else:
        print(f"grouper: {args.grouper}")
        print(report(piles, scores))
    if args.pairs:
        for pile, found in groups.items():
            text = {lesson.id: lesson.text for lesson in piles[pile]}
            false, missed = mistakes(piles[pile], found)
            for kind, pairs in (("false", false), ("missed", missed)):
                for a, b in pairs:
                    print(
                        f"{kind} {a} {b}\n  {text[a]}\n  {text[b]}",
                        file=sys.stderr if args.json else sys.stdout,
                    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
