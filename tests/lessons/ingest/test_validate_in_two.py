"""Validation in two processes (issue 10, Build 4): a large file is cut near its middle and its second part
validated in a forked child; what comes out is what one process gives. spec: interchange.md ("Framing",
"Errors and the import report"); lessons/ingest/passes.py, "Validation".
"""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

import lessons.ingest.passes as passes
import lessons.ingest.reading as reading
from lessons.ingest.passes import _pass_validate, _split_at, ingest_sources
from lessons.ingest.reading import BOM, file_source
from lessons.ingest.report import MAX_ERRORS_IN_FULL, ImportReport
from lessons.ingest.state import IngestState
from lessons.models import Exposure, Lesson
from tests import builders
from tests.lessons.ingest.test_slices import lesson_records, reference_records

BAD_LINES = (
    b"not json",
    b'{"type": "lesson", "host": "h1"}',  # several missing fields: one line, several errors
    b'{"type": "exposure", "host": "h1", "session": "a"}',
    b'{"type": "nonsense"}',
    b"\xff\xfe not UTF-8",
    b"",  # blank: not counted
    b"   ",
)


def encoded(record: dict) -> bytes:
    return json.dumps(record).encode()


lines = st.lists(
    st.one_of(
        st.builds(encoded, lesson_records()),
        st.builds(encoded, reference_records()),
        st.builds(
            encoded, st.builds(lambda name: {"type": "host", "name": name}, st.sampled_from(("h1", "h3")))
        ),
        st.sampled_from(BAD_LINES),
    ),
    min_size=0,
    max_size=30,
)


def write(tmp_path, name: str, body: list[bytes], *, crlf: bool, bom: bool) -> str:
    path = tmp_path / name
    end = b"\r\n" if crlf else b"\n"
    path.write_bytes((BOM if bom else b"") + b"".join(line + end for line in body))
    return str(path)


def validated(paths: list[str], *, workers: int, only_host: str | None = None) -> tuple:
    """Everything validation leaves for the write phase, the spooled entries flattened (chunk boundaries
    are the write phase's units, not part of what it writes)."""
    state = IngestState(
        report=ImportReport(),
        default_host=None,
        only_host=only_host,
        sources=[file_source(p) for p in paths],
        workers=workers,
    )
    try:
        _pass_validate(state, None)
        report = state.report
        return (
            report.as_dict(),
            report.error_count,
            report.outside_host,
            report.outside_host_count,
            state.host_records,
            [entry for chunk in state.lessons.chunks() for entry in chunk],
            state.lessons.count,
            [entry for chunk in state.references.chunks() for entry in chunk],
            state.references.count,
        )
    finally:
        state.lessons.close()
        state.references.close()


@pytest.fixture
def every_file_split(monkeypatch):
    monkeypatch.setattr(passes, "PARALLEL_BYTES", 0)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    files=st.lists(lines, min_size=1, max_size=3),
    crlf=st.booleans(),
    bom=st.booleans(),
    only_host=st.sampled_from((None, "h1")),
)
def test_two_processes_validate_exactly_what_one_does(
    tmp_path_factory, every_file_split, files, crlf, bom, only_host
):
    tmp = tmp_path_factory.mktemp("batch")
    paths = [write(tmp, f"part{i}.jsonl", body, crlf=crlf, bom=bom) for i, body in enumerate(files)]
    one = validated(paths, workers=1, only_host=only_host)
    two = validated(paths, workers=2, only_host=only_host)
    note(repr(one[0]))
    assert two == one


def test_the_second_part_starts_at_the_first_line_after_the_middle(tmp_path, every_file_split):
    path = write(tmp_path, "b.jsonl", [b"a" * 10, b"b" * 3, b"c" * 20, b"d"], crlf=False, bom=False)
    # Lines start at bytes 0, 11, 15 and 36 of 38: the middle (19) falls in line 3, so line 4 is the first.
    assert _split_at(file_source(path)) == (36, 4)
    assert reading.line_start_after(path, 11) == (15, 3)  # a line starting at the offset is not "after"
    assert reading.line_start_after(path, 37) == (38, 5)  # nothing starts after the last line's start
    single = write(tmp_path, "one.jsonl", [b"x" * 40], crlf=False, bom=False)
    assert _split_at(file_source(single)) is None  # no line starts after the middle: one process


def rule(i: int, *, hashed: bool = False) -> dict:
    return builders.lesson(
        host="h1", namespace="ns", subject=f"s{i % 3}", text=f"Rule {i}.", created_at=i + 1, hashed=hashed
    )


def test_more_errors_than_the_report_lists_keep_line_order_and_the_limit(tmp_path, every_file_split):
    body = [b"not json"] * (MAX_ERRORS_IN_FULL + 40) + [encoded(rule(0))]
    path = write(tmp_path, "bad.jsonl", body, crlf=False, bom=False)
    two = validated([path], workers=2)
    assert two == validated([path], workers=1)
    report = two[0]
    assert two[1] == MAX_ERRORS_IN_FULL + 40
    assert [e["line"] for e in report["errors"]] == list(range(1, MAX_ERRORS_IN_FULL + 1))


def test_a_child_that_fails_leaves_its_part_to_this_process(tmp_path, every_file_split, monkeypatch):
    body = [encoded(rule(i)) for i in range(6)]
    body.insert(4, b"not json")
    path = write(tmp_path, "b.jsonl", body, crlf=False, bom=False)
    expected = validated([path], workers=1)
    parent = os.getpid()
    real = reading.iter_lines_from

    def fails_in_the_child(*args, **kwargs):
        if os.getpid() != parent:
            raise OSError("disk gone")
        return real(*args, **kwargs)

    monkeypatch.setattr(passes, "iter_lines_from", fails_in_the_child)
    assert validated([path], workers=2) == expected
    assert expected[1] == 1 and expected[6] == 6  # one error, six lessons: the child's part was validated


@pytest.mark.django_db
def test_an_ingest_validated_in_two_processes_writes_what_one_process_reports(tmp_path, every_file_split):
    lessons = [rule(i, hashed=True) for i in range(9)]
    records = [{"type": "host", "name": "h1"}, *lessons]
    records += [
        builders.exposure(host="h1", session=f"ses{i}", lesson=lessons[i]["hash"], shown_at=100 + i)
        for i in range(9)
    ]
    path = write(tmp_path, "b.jsonl", [encoded(r) for r in records], crlf=False, bom=False)
    dry = ingest_sources(sources=[file_source(path)], dry_run=True, workers=1)
    report = ingest_sources(sources=[file_source(path)], workers=2)
    assert report.written and report.ok
    assert report.as_dict()["counts"] == dry.as_dict()["counts"]
    assert report.as_dict()["counts"]["lesson"]["created"] == 9
    assert report.as_dict()["counts"]["exposure"]["created"] == 9
    assert (Lesson.objects.count(), Exposure.objects.count()) == (9, 9)
