"""The documentation stays true: its examples are run against the product.

- docs/interchange.md: the example batch (the fenced ``jsonl`` block) ingests with the exact report
  the page shows, and the hash snippet (the fenced ``python`` block) computes what the product computes;
- docs/decisions.md: the standalone verification script (the fenced ``python`` block) accepts an
  export of real decisions with its exact success line, and refuses tampered exports.
"""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from contextlib import redirect_stdout
from pathlib import Path

import pytest
from django.core.management import call_command

from lessons.core.interchange import parse_line
from lessons.core.text import lesson_hash
from lessons.ingest.passes import ingest_sources
from lessons.ingest.reading import bytes_source
from lessons.models import Draft, Host, Lesson
from review.models import Decision
from review.services.budget import host_set_budget
from review.services.consolidation import draft_approve
from review.services.decisions import lesson_restore, lessons_retire

DOCS = Path(__file__).resolve().parents[1] / "docs"
EXAMPLE_HOST = "adbuy-desk"
REGRESSED = "58bf220587cd4740f136a0836c855a4d487f250b784322c52c5dab1e1ede36bf"
UNMEASURED = "0b8bf11ea5b2ab3d636962de36d16e4ad624db469fe1293f92f16ce52f8c9ee4"


def fenced(doc: str, language: str) -> str:
    """The one fenced block of ``language`` in ``docs/<doc>``; fails when there is none or several."""
    text = (DOCS / doc).read_text(encoding="utf-8")
    blocks = re.findall(rf"^```{language}\n(.*?)^```$", text, flags=re.MULTILINE | re.DOTALL)
    assert len(blocks) == 1, f"{doc}: expected one ```{language} block, found {len(blocks)}"
    return blocks[0]


def load(doc: str) -> dict:
    """Run the ``python`` block of ``docs/<doc>`` (its prints captured); returns its names."""
    namespace: dict = {}
    out = io.StringIO()
    with redirect_stdout(out):
        exec(compile(fenced(doc, "python"), f"docs/{doc}", "exec"), namespace)  # our own docs
    namespace["printed"] = out.getvalue()
    return namespace


def ingest_example(**options):
    body = fenced("interchange.md", "jsonl").encode("utf-8")
    return ingest_sources(sources=[bytes_source(body, name="example.jsonl")], **options)


def counts(report) -> dict[str, dict[str, int]]:
    return {rtype: c for rtype, c in report.counts.items() if any(c.values())}


def created(n_by_type: dict[str, int]) -> dict[str, dict[str, int]]:
    return {
        t: {"created": n, "unchanged": 0, "updated": 0, "held": 0, "rejected": 0}
        for t, n in n_by_type.items()
    }


EXAMPLE_CREATED = {"host": 1, "lesson": 3, "verdict": 2, "exposure": 1, "correction": 1, "draft": 1}


# --- docs/interchange.md ------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_example_batch_dry_run_prints_the_report_of_the_page():
    report = ingest_example(dry_run=True)

    assert report.error_lines() == []
    assert counts(report) == created(EXAMPLE_CREATED)
    assert report.summary_line() == (
        "dry run, nothing written: 9 line(s); 9 created, 0 unchanged, 0 updated, 0 held, 0 rejected"
    )
    assert report.table() + "\n" + report.summary_line() in (DOCS / "interchange.md").read_text()
    assert Lesson.objects.count() == 0


@pytest.mark.django_db
def test_the_example_batch_ingests_and_a_repeat_changes_nothing():
    first = ingest_example()
    again = ingest_example()

    assert counts(first) == created(EXAMPLE_CREATED)
    assert first.summary_line() == (
        "imported: 9 line(s); 9 created, 0 unchanged, 0 updated, 0 held, 0 rejected"
    )
    assert again.summary_line() == (
        "imported: 9 line(s); 0 created, 9 unchanged, 0 updated, 0 held, 0 rejected"
    )
    host = Host.objects.get(name=EXAMPLE_HOST)
    assert (host.max_active, host.budget_enabled) == (2, True)
    first_lesson = Lesson.objects.get(host=host, lesson_id="L-0a01")
    assert first_lesson.latest_verdict == "held"  # the verdict before its lesson, by store + lesson_id
    assert first_lesson.recurrence.recurred == 1


def test_the_hash_snippet_computes_the_products_lesson_hash():
    snippet = fenced("interchange.md", "python")
    printed = load("interchange.md")["printed"].strip()
    expected = lesson_hash(
        "desk.adbuy",
        "invoice_capture",
        "Copy the `contract_number` character for character; never drop leading zeros.",
    )

    assert printed == expected == "989d1aa91816aa90f29046080b41fbb03313ce1e1e8a72b1101e4014f3661db1"
    assert f"# {expected}" in snippet


def test_the_hash_snippet_normalizes_like_the_product():
    namespace = load("interchange.md")
    messy = "  Ｃopy\tthe  `ｃontract_number`\u00a0exactly.\n"  # fullwidth letters, tab, no-break space

    assert namespace["lesson_hash"]("", "s", messy) == lesson_hash("", "s", messy)
    assert namespace["normalize"](messy) == "Copy the `contract_number` exactly."


# --- docs/decisions.md --------------------------------------------------------------------------


@pytest.fixture
def example_decisions(db, reviewer, admin_user):
    """Real decisions on the example batch: a retire of two lessons, a restore, an approval, a budget."""
    assert ingest_example().ok
    host = Host.objects.get(name=EXAMPLE_HOST)
    retired = lessons_retire(
        host=host, hashes=[REGRESSED, UNMEASURED], actor=reviewer, reason="Both folded into rec-0001"
    )
    lesson_restore(
        lesson=Lesson.objects.get(hash=UNMEASURED),
        actor=reviewer,
        reason="Still needed — «dates» matter\u2028(header rule)",
    )
    lesson_restore(lesson=Lesson.objects.get(hash=REGRESSED), actor=reviewer, reason="Back for the draft")
    draft_approve(
        draft=Draft.objects.get(ext_id="rec-0001"), actor=reviewer, reason="One rule instead of two"
    )
    host_set_budget(
        host=host, actor=admin_user, max_active=3, budget_enabled=None, reason="Room for one more"
    )
    assert [d.seq for d in retired] == [1, 2]
    return list(Decision.objects.order_by("seq"))


def export_lines(*options: str) -> list[str]:
    """What ``manage.py export_decisions`` prints, line by line (each line ends in ``\\n``)."""
    out = io.StringIO()
    call_command("export_decisions", *options, stdout=out)
    return [line + "\n" for line in out.getvalue().split("\n") if line]  # not splitlines: U+2028 is text


def run_script(tmp_path: Path, lines: list[str], *extra: str) -> subprocess.CompletedProcess:
    """The script of docs/decisions.md, run by a bare Python: -I -S, so neither the project nor Django
    (nor any installed package) can be imported."""
    script = tmp_path / "verify_chain.py"
    script.write_text(fenced("decisions.md", "python"), encoding="utf-8")
    export = tmp_path / "decisions.jsonl"
    export.write_text("".join(lines), encoding="utf-8")
    return subprocess.run(
        [sys.executable, "-I", "-S", str(script), str(export), *extra],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
    )


def test_the_script_accepts_an_export_of_real_decisions(example_decisions, tmp_path):
    lines = export_lines()
    result = run_script(tmp_path, lines)

    assert [d.action for d in example_decisions] == [
        "retire",
        "retire",
        "restore",
        "restore",
        "approve_consolidation",
        "set_budget",
    ]
    assert "«dates» matter\u2028(header" in "".join(lines)  # non-ASCII kept as UTF-8, U+2028 within a line
    assert (result.returncode, result.stdout, result.stderr) == (0, "chain intact: 6 decisions\n", "")


def test_the_script_verifies_a_partial_export_from_the_last_trusted_hash(example_decisions, tmp_path):
    lines = export_lines("--since", "3")
    trusted = example_decisions[2].hash

    intact = run_script(tmp_path, lines, trusted)
    wrong_anchor = run_script(tmp_path, lines, example_decisions[1].hash)

    assert (intact.returncode, intact.stdout) == (0, "chain intact: 3 decisions\n")
    assert (wrong_anchor.returncode, wrong_anchor.stdout) == (
        1,
        "chain broken at seq 4: prev_hash is not the previous record's hash\n",
    )


def _with(line: str, **changes) -> str:
    record = json.loads(line)
    record.update(changes)
    return json.dumps(record, ensure_ascii=False) + "\n"


def test_the_script_refuses_a_changed_reason(example_decisions, tmp_path):
    lines = export_lines()
    lines[4] = _with(lines[4], reason="One rule instead of three")

    result = run_script(tmp_path, lines)

    assert (result.returncode, result.stdout) == (
        1,
        "chain broken at seq 5: hash does not match the record\n",
    )


def test_the_script_refuses_changed_evidence(example_decisions, tmp_path):
    lines = export_lines()
    record = json.loads(lines[0])
    record["evidence"]["count"] = 2
    lines[0] = json.dumps(record) + "\n"

    result = run_script(tmp_path, lines)

    assert (result.returncode, result.stdout) == (
        1,
        "chain broken at seq 1: hash does not match the record\n",
    )


def test_the_script_refuses_a_dropped_record(example_decisions, tmp_path):
    lines = export_lines()
    del lines[2]

    result = run_script(tmp_path, lines)

    assert (result.returncode, result.stdout) == (1, "chain broken at seq 3: line 3 has seq 4\n")


def test_the_script_refuses_a_record_rehashed_after_a_change(example_decisions, tmp_path):
    """A forger who recomputes the changed record's hash still breaks the next record's prev_hash."""
    namespace = load("decisions.md")
    lines = export_lines()
    record = json.loads(lines[1])
    record["actor"] = "someone-else"
    record["hash"] = namespace["record_hash"](record["prev_hash"], record)
    lines[1] = json.dumps(record) + "\n"

    result = run_script(tmp_path, lines)

    assert (result.returncode, result.stdout) == (
        1,
        "chain broken at seq 3: prev_hash is not the previous record's hash\n",
    )


def test_the_script_computes_the_products_hashes(example_decisions):
    namespace = load("decisions.md")
    for line, decision in zip(export_lines(), example_decisions, strict=True):
        assert namespace["record_hash"](decision.prev_hash, json.loads(line)) == decision.hash


# --- the repository stands alone ------------------------------------------------------------------

LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def _pages() -> list[Path]:
    return [DOCS.parent / "README.md", *sorted(DOCS.glob("*.md"))]


def test_every_relative_link_of_the_docs_names_a_file_of_the_repository():
    broken = []
    for page in _pages():
        for target in LINK.findall(page.read_text(encoding="utf-8")):
            if "://" in target:
                continue
            resolved = (page.parent / target).resolve()
            if not resolved.is_file() or DOCS.parent not in resolved.parents:
                broken.append(f"{page.name}: {target}")

    assert broken == []


OUTSIDE = "/".join(("..", "shared"))  # the team's reference folder beside a checkout, which users lack


def test_the_docs_do_not_point_outside_the_repository():
    found = [page.name for page in _pages() if OUTSIDE in page.read_text(encoding="utf-8")]

    assert found == []


def test_the_docs_index_lists_every_page():
    index = (DOCS / "README.md").read_text(encoding="utf-8")
    pages = sorted(p.name for p in DOCS.glob("*.md") if p.name != "README.md")

    assert [name for name in pages if f"]({name})" not in index] == []


def test_a_draft_without_an_id_is_named_as_the_page_says():
    namespace = load("interchange.md")
    supersedes = [UNMEASURED, REGRESSED]
    record = parse_line(
        json.dumps(
            {
                "type": "draft",
                "host": EXAMPLE_HOST,
                "namespace": "desk.adbuy",
                "subject": "invoice_capture",
                "text": "  One rule\tfor both. ",
                "supersedes": supersedes,
                "drafted_by": "llm:qwen3-30b",
                "gates": {"ground": "pass", "verify": "pass"},
                "created_at": 1769990400000,
            }
        )
    )
    text = namespace["normalize"]("  One rule\tfor both. ")
    documented = "auto-" + namespace["sha256_hex"](text + " " + " ".join(sorted(supersedes)))[:16]

    assert record.identity == documented


def test_the_keyboard_table_of_reviewing_md_lists_the_keys_of_the_shortcuts_dialog():
    """docs/reviewing.md's key table and the "?" dialog (templates/review/shared/_shortcuts.html) name the
    same keys, in the same order."""
    doc = (DOCS / "reviewing.md").read_text(encoding="utf-8")
    table = re.search(r"^\| key \| what it does \|\n\|---\|---\|\n((?:\|.*\n)+)", doc, flags=re.MULTILINE)
    documented = [re.findall(r"`([^`]+)`", row.split("|")[1]) for row in table.group(1).splitlines()]
    dialog = (DOCS.parent / "templates/review/shared/_shortcuts.html").read_text(encoding="utf-8")
    shown = [
        ["+".join(re.findall(r"<kbd>([^<]+)</kbd>", dt))]
        if "+" in dt
        else re.findall(r"<kbd>([^<]+)</kbd>", dt)
        for dt in re.findall(r"<dt>(.*?)</dt>", dialog)
    ]
    assert documented == shown
    assert shown[0] == ["j", "k"] and shown[-1] == ["?"]


def test_the_settings_docstring_names_every_environment_variable_the_settings_read():
    """config/settings.py's docstring is the list of what an operator can set (issue 23, item 8)."""
    import config.settings as settings_module

    source = Path(settings_module.__file__).read_text()
    read = set(re.findall(r'(?:env_(?:bool|int|list)|os\.environ\.get)\("([A-Z_]+)"', source))
    documented = set(re.findall(r"^([A-Z_]+) ", settings_module.__doc__, re.M))
    assert read - documented == set()
    assert documented - read == set()
    assert len(read) == 27
