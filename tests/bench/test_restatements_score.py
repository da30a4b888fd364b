"""The restatements scorer (bench/restatements_score.py): pairwise counts and figures computed by hand,
the format checks of a labelled file, the grouper adapter and the CLI."""

import json
from pathlib import Path

import pytest

from bench.restatements_score import (
    DataError,
    Lesson,
    RetireFigures,
    Score,
    after_retire,
    cross_validate,
    gold_pairs,
    load_pile,
    load_set,
    main,
    mistakes,
    overall,
    predicted_pairs,
    run_grouper,
    score_pile,
    score_set,
)
from lessons.core.groups import restatement_groups


def _lesson(lesson_id: str, fact: str | None, covers: tuple[str, ...] = (), at: int = 0) -> Lesson:
    return Lesson(
        id=lesson_id,
        domain="d",
        pile="p",
        text=f"text of {lesson_id}",
        fact=fact,
        covers=covers,
        created_at_ms=at,
    )


# Facts x = {a, b, c}, y = {d}, z = {e, f}; u is an umbrella covering x and y.
PILE = (
    _lesson("a", "x"),
    _lesson("b", "x"),
    _lesson("c", "x"),
    _lesson("d", "y"),
    _lesson("e", "z"),
    _lesson("f", "z"),
    _lesson("u", None, ("x", "y")),
)


def test_gold_pairs_are_the_pairs_of_lessons_with_the_same_fact_and_never_an_umbrella():
    assert gold_pairs(PILE) == {frozenset(p) for p in (("a", "b"), ("a", "c"), ("b", "c"), ("e", "f"))}


def test_predicted_pairs_are_the_pairs_within_each_group():
    assert predicted_pairs([["a", "b", "u"], ["c"], ["d", "e"]]) == {
        frozenset(p) for p in (("a", "b"), ("a", "u"), ("b", "u"), ("d", "e"))
    }


def test_a_grouping_scored_by_hand():
    # Predicted ab au bu de df ef; labelled ab ac bc ef: TP ab ef, FP au bu de df, FN ac bc.
    score = score_pile(PILE, [["a", "b", "u"], ["c"], ["d", "e", "f"]])
    assert score == Score(tp=2, fp=4, fn=2)
    assert score.precision == pytest.approx(1 / 3)
    assert score.recall == 0.5
    assert score.f1 == pytest.approx(0.4)  # 2*2 / (2*2 + 4 + 2)


def test_mistakes_lists_the_false_then_the_missed_pairs_sorted():
    assert mistakes(PILE, [["u", "b", "a"], ["c"], ["f", "e", "d"]]) == (
        [("a", "u"), ("b", "u"), ("d", "e"), ("d", "f")],
        [("a", "c"), ("b", "c")],
    )


def test_an_umbrella_joined_to_a_fact_it_covers_is_a_false_positive():
    assert score_pile(PILE, [["a", "b", "c", "u"], ["e", "f"]]) == Score(tp=4, fp=3, fn=0)


def test_the_labels_themselves_score_one_and_umbrellas_alone_cost_nothing():
    score = score_pile(PILE, [["a", "b", "c"], ["d"], ["e", "f"], ["u"]])
    assert (score.precision, score.recall, score.f1) == (1.0, 1.0, 1.0)


def test_lessons_in_no_group_are_groups_of_one_and_nothing_predicted_has_no_precision():
    score = score_pile(PILE, [])
    assert score == Score(tp=0, fp=0, fn=4)
    assert (score.precision, score.recall, score.f1) == (None, 0.0, 0.0)
    assert Score().f1 is None


def test_overall_pools_the_pairs_of_every_pile():
    pooled = overall({"one": Score(tp=2, fp=4, fn=2), "two": Score(tp=3, fp=0, fn=1)})
    assert pooled == Score(tp=5, fp=4, fn=3)
    assert (pooled.precision, pooled.recall, pooled.f1) == (5 / 9, 5 / 8, 10 / 17)


def test_a_group_naming_another_pile_s_lesson_or_a_lesson_twice_is_refused():
    with pytest.raises(DataError, match=r"^groups: 'zz' is not a lesson of the pile$"):
        score_pile(PILE, [["a", "zz"]])
    with pytest.raises(DataError, match=r"^groups: 'a' is in two groups$"):
        score_pile(PILE, [["a", "b"], ["a"]])


def test_run_grouper_maps_the_word_rules_groups_back_to_lesson_ids():
    texts = (
        "Filter test accounts with `is_internal = false` in every revenue query.",
        "Filter test accounts with `is_internal = false` in every revenue and retention query.",
        "Round revenue to whole dollars in dashboards.",
    )
    lessons = [
        Lesson(id=f"r-{i}", domain="d", pile="p", text=t, fact=None, covers=(), created_at_ms=i)
        for i, t in enumerate(texts)
    ]
    assert run_grouper(restatement_groups, lessons) == [["r-0", "r-1"], ["r-2"]]


def test_run_grouper_takes_groups_as_plain_iterables_of_hashes():
    def one_group(*, members, texts):
        return [tuple(m.hash for m in members)]

    assert run_grouper(one_group, PILE[:2]) == [["a", "b"]]


def _pairs(*, members, texts):
    """A toy grouper: the members two by two, oldest first, whatever their status; the live ones shown."""
    ordered = sorted(members, key=lambda m: m.created_at_ms)
    groups = [ordered[i : i + 2] for i in range(0, len(ordered), 2)]
    return [
        [m.hash for m in group if m.status == "live"]
        for group in groups
        if any(m.status == "live" for m in group)
    ]


def test_after_retire_scores_the_lessons_left_regrouped_and_grouped_with_the_retired_one():
    # Facts x = {a, b}, y = {c, d}; the toy grouper pairs (a, b) and (c, d).
    pile = {
        "p": tuple(_lesson(i, fact, at=n) for n, (i, fact) in enumerate(zip("abcd", "xxyy", strict=True)))
    }
    # Regrouped: retiring a gives (b, c), (d): 0 right, 1 wrong, 1 missed, and (c, d) not kept; b the
    # same; retiring c or d leaves (a, b) right and kept.
    assert after_retire(pile, _pairs, regroup=True) == RetireFigures(
        Score(tp=2, fp=2, fn=2), retires=4, kept=2
    )
    # Grouped with the retired one: the other pair is always right and kept.
    assert after_retire(pile, _pairs, regroup=False) == RetireFigures(
        Score(tp=4, fp=0, fn=0), retires=4, kept=4
    )


def test_run_grouper_gives_the_retired_ids_as_retracted():
    statuses = []

    def record(*, members, texts):
        statuses.extend((m.hash, m.status) for m in members)
        return []

    run_grouper(record, PILE[:2], retired=frozenset({"b"}))
    assert statuses == [(PILE[0].hash, "live"), (PILE[1].hash, "retracted")]


def _write(folder: Path, name: str, records: list[dict]) -> Path:
    path = folder / name
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _record(i: int, fact: str | None, **extra) -> dict:
    return {
        "id": f"p-{i}",
        "domain": "d",
        "pile": "p",
        "text": f"lesson {i}",
        "fact": fact,
        "created_at": i,
        **extra,
    }


@pytest.mark.parametrize(
    ("records", "message"),
    [
        (
            [_record(1, "x"), _record(2, None)],
            "p.jsonl:2: covers: an umbrella (fact null) needs a list of two or more facts",
        ),
        (
            [_record(1, "x"), _record(2, "y", covers=["x"])],
            "p.jsonl:2: covers: only an umbrella (fact null) has covers",
        ),
        (
            [_record(1, "x"), _record(2, "y"), _record(3, None, covers=["x", "w"])],
            "p.jsonl:3: covers: w is no fact of the pile",
        ),
        ([_record(2, "x"), _record(1, "y")], "p.jsonl:2: created_at: 1 is not after the line before"),
        (
            [_record(1, "x"), {**_record(2, "y"), "text": "lesson 1"}],
            "p.jsonl:2: text: the same text is on an earlier line",
        ),
        ([_record(1, "x"), {**_record(2, "y"), "pile": "q"}], "p.jsonl:2: pile: 'q' (d) in the file of 'p'"),
        ([{k: v for k, v in _record(1, "x").items() if k != "text"}], "p.jsonl:1: text: missing"),
    ],
)
def test_a_file_breaking_the_format_is_refused_naming_line_and_field(tmp_path, records, message):
    with pytest.raises(DataError) as raised:
        load_pile(_write(tmp_path, "p.jsonl", records))
    assert str(raised.value) == message


def test_a_line_that_is_not_json_is_refused(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps(_record(1, "x")) + "\n{oops\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"^p\.jsonl:2: not JSON \("):
        load_pile(path)


def test_one_pile_in_two_files_is_refused(tmp_path):
    _write(tmp_path, "a.jsonl", [_record(1, "x")])
    _write(tmp_path, "b.jsonl", [{**_record(2, "x"), "id": "p-2b"}])
    with pytest.raises(DataError) as raised:
        load_set(tmp_path)
    assert str(raised.value) == "b.jsonl: pile: 'p' is also in a.jsonl"


def _small_set(folder: Path) -> None:
    _write(
        folder,
        "p.jsonl",
        [
            {
                **_record(1, "x"),
                "text": "Filter test accounts with `is_internal = false` in every revenue query.",
            },
            {
                **_record(2, "x"),
                "text": "Filter test accounts with `is_internal = false` in every revenue and retention query.",
            },
            {**_record(3, "x"), "text": "Internal users never count in revenue."},
            {
                **_record(4, None, covers=["x", "y"]),
                "text": "Exclude internal accounts and round revenue to dollars.",
            },
            {**_record(5, "y"), "text": "Round revenue to whole dollars in dashboards."},
        ],
    )


def test_score_set_runs_the_grouper_over_each_pile(tmp_path):
    _small_set(tmp_path)
    # The word rules join p-1 and p-2 (1 of the 3 pairs of fact x) and nothing else.
    assert score_set(load_set(tmp_path), restatement_groups) == {"p": Score(tp=1, fp=0, fn=2)}


def test_the_cli_prints_the_figures_as_json(tmp_path, capsys):
    _small_set(tmp_path)
    assert main(["--data", str(tmp_path), "--json"]) == 0
    figures = {"tp": 1, "fp": 0, "fn": 2, "precision": 1.0, "recall": 1 / 3, "f1": 0.5}
    assert json.loads(capsys.readouterr().out) == {
        "grouper": "lessons.core.groups.restatement_groups",
        "piles": {"p": figures},
        "overall": figures,
    }


def test_the_cli_prints_a_table_with_a_pooled_line(tmp_path, capsys):
    _small_set(tmp_path)
    assert main(["--data", str(tmp_path)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "grouper: lessons.core.groups.restatement_groups",
        "pile                   lessons facts  gold found   tp     P     R    F1",
        "p                            5     2     3     1    1  1.00  0.33  0.50",
        "overall                      5     2     3     1    1  1.00  0.33  0.50",
    ]


def test_the_cli_refuses_a_grouper_it_cannot_import_in_one_line(tmp_path, capsys):
    _small_set(tmp_path)
    assert main(["--data", str(tmp_path), "--grouper", "lessons.core.nowhere.groups"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("restatements_score: --grouper: cannot import 'lessons.core.nowhere.groups' (")
    assert err.count("\n") == 1


def test_the_cli_lists_the_missed_pairs_with_their_texts(tmp_path, capsys):
    _small_set(tmp_path)
    assert main(["--data", str(tmp_path), "--pairs"]) == 0
    assert capsys.readouterr().out.splitlines()[4:] == [
        "missed p-1 p-3",
        "  Filter test accounts with `is_internal = false` in every revenue query.",
        "  Internal users never count in revenue.",
        "missed p-2 p-3",
        "  Filter test accounts with `is_internal = false` in every revenue and retention query.",
        "  Internal users never count in revenue.",
    ]


def test_cross_validation_chooses_on_the_other_piles_and_puts_the_settings_back():
    """Two settings: the threshold at which nothing joins and today's. Leaving any pile out, today's
    scores better on the rest, so each pile is scored with today's; the module is left as it was."""
    from lessons.core import facts

    piles = load_set()
    today = facts.SAME_FACT
    held_out, chosen = cross_validate(piles, facts, {"SAME_FACT": (1e9, today)})
    assert chosen == {pile: {"SAME_FACT": today} for pile in piles}
    assert held_out == overall(score_set(piles, facts.pile_facts))
    assert facts.SAME_FACT == today
