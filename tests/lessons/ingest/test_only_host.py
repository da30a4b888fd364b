"""``ingest_sources(only_host=...)``: a record of another host is an error of its line, and nothing is
written whatever ``skip_invalid`` says (what the API does for a host-scoped token). spec: interchange.md.
"""

from __future__ import annotations

import pytest

from lessons.core.text import lesson_hash
from lessons.ingest.passes import OUTSIDE_HOST
from lessons.models import Host, Lesson

AT = "2026-01-01T00:00:00.000Z"
MINE = {
    "type": "lesson",
    "host": "alpha",
    "namespace": "ns",
    "subject": "s",
    "text": "Mine.",
    "created_at": AT,
}
THEIRS = {**MINE, "host": "beta", "text": "Theirs."}


@pytest.mark.parametrize("skip_invalid", [False, True])
def test_a_record_of_another_host_refuses_the_batch_with_its_line(ingest, skip_invalid):
    records = [MINE, {"type": "host", "name": "gamma"}, "{bad", THEIRS]
    report = ingest(records, only_host="alpha", skip_invalid=skip_invalid)
    assert report.outside_host == ["line 2: host gamma", "line 4: host beta"]
    assert report.outside_host_count == 2
    assert [str(e) for e in report.errors] == [
        "batch.jsonl:2: host.name: " + OUTSIDE_HOST.format(name="gamma", only="alpha"),
        "batch.jsonl:3: json: not valid JSON (Expecting property name enclosed in double quotes at column 2)",
        "batch.jsonl:4: lesson.host: " + OUTSIDE_HOST.format(name="beta", only="alpha"),
    ]
    assert not report.written
    assert (Host.objects.count(), Lesson.objects.count()) == (0, 0)


def test_records_of_the_host_alone_are_written_as_without_the_option(ingest):
    report = ingest(
        [MINE, {"type": "lesson", "namespace": "ns", "subject": "s", "text": "Default.", "created_at": AT}],
        default_host="alpha",
        only_host="alpha",
    )
    assert report.ok and report.written and report.outside_host == []
    assert sorted(Lesson.objects.values_list("host__name", "text")) == [
        ("alpha", "Default."),
        ("alpha", "Mine."),
    ]


def test_each_line_is_parsed_once(ingest, monkeypatch):
    import lessons.ingest.passes as passes

    parsed: dict[str, int] = {}
    real = passes.parse_line

    def counting(text, **kwargs):
        parsed[text] = parsed.get(text, 0) + 1
        return real(text, **kwargs)

    monkeypatch.setattr(passes, "parse_line", counting)
    host = {"type": "host", "name": "alpha"}
    verdict = {
        "type": "verdict",
        "host": "alpha",
        "lesson": lesson_hash("ns", "s", "Mine."),
        "verdict": "held",
        "metric": "m",
        "measured_at": AT,
    }
    report = ingest([host, MINE, verdict], only_host="alpha")
    assert report.ok, report.error_lines()
    assert sorted(parsed.values()) == [
        1,
        1,
        1,
    ]  # validation parses; the write phase reads the spooled records
