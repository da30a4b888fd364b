"""Attacks on the importers and the admin zip upload: malformed source files are skipped and counted,
never a traceback; a hostile zip is refused with a message naming the entry. spec: importers.md
("Malformed source lines are skipped and counted, never fatal"), interchange.md.
"""

from __future__ import annotations

import io
import json
import shutil
import stat
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from lessons.core.interchange import E_LONE_SURROGATE, NUL_MESSAGE
from lessons.importers.zipped import ZIP_UNWRITABLE, ZIP_UNZIPPED_TOO_LARGE
from lessons.models import Host, Lesson
from tests.fixtures.importers import ALTIMATE, run_command

DEEP = "[" * 50_000
HUGE_NUMBER = "1" * 5000


def grain(n: int, text: str = "Rule {n}.") -> dict:
    return {
        "hash": f"{n:064x}",
        "type": "fact",
        "fields": {
            "subject": "s",
            "relation": "lesson",
            "object": text.format(n=n),
            "namespace": "ns",
            "created_at": 1768694400000,
        },
    }


@pytest.fixture
def project(tmp_path):
    """A writable copy of the altimate-dbt-project corpus."""
    target = tmp_path / "project"
    shutil.copytree(ALTIMATE, target)
    for path in [target, *target.rglob("*")]:
        path.chmod(path.stat().st_mode | stat.S_IWUSR)
    return target


@pytest.fixture
def store(project):
    """The copy's team-playbook store folder."""
    return project / ".altimate-code" / "learn" / "team-playbook"


def notes(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("note: team-playbook/")]


def test_altimate_skips_files_and_lines_json_cannot_decode_and_imports_the_rest(db, project, store):
    (store / "usage.json").write_text(f'{{"L-8201": {HUGE_NUMBER}}}')
    with (store / "signals.jsonl").open("a") as signals:
        signals.write(DEEP + "\n")
    code, out, err = run_command("import_altimate", str(project), "--host", "dbt-project")
    assert code == 0, err
    assert "Traceback" not in err
    assert (
        "note: team-playbook/usage.json: does not parse, skipped whole (a number has too many digits)" in err
    )
    assert "note: team-playbook/signals.jsonl:11: skipped: not valid JSON: nested too deeply" in err
    assert Lesson.objects.filter(host__name="dbt-project").count() == 15


def test_altimate_skips_a_lesson_with_a_lone_surrogate_by_name(db, project, store):
    approved = json.loads((store / "approved.json").read_text())
    approved[1]["text"] = "Convert PLACEHOLDER columns."
    (store / "approved.json").write_text(json.dumps(approved).replace("PLACEHOLDER", "\\udc00"))
    code, _out, err = run_command("import_altimate", str(project), "--host", "dbt-project", "--dry-run")
    assert code == 0, err
    assert f"note: team-playbook/approved.json[1]: not imported: lesson.text: {E_LONE_SURROGATE}" in err


def test_areev_skips_lines_json_cannot_decode(db, tmp_path):
    path = tmp_path / "grains.jsonl"
    lines = [
        json.dumps(grain(1)),
        DEEP,
        json.dumps(grain(2)).replace("1768694400000", HUGE_NUMBER),
        json.dumps(grain(3)),
    ]
    path.write_text("\n".join(lines) + "\n")
    code, _out, err = run_command("import_areev", str(path), "--host", "h1")
    assert code == 0, err
    assert "note: grains.jsonl:2: skipped: not valid JSON: nested too deeply" in err
    assert "note: grains.jsonl:3: skipped: not valid JSON: a number has too many digits" in err
    assert sorted(Lesson.objects.values_list("text", flat=True)) == ["Rule 1.", "Rule 3."]


def test_areev_a_map_file_json_cannot_decode_is_a_clear_error(db, tmp_path):
    grains = tmp_path / "grains.jsonl"
    grains.write_text(json.dumps(grain(1)) + "\n")
    bad_map = tmp_path / "map.json"
    bad_map.write_text(DEEP)
    code, _out, err = run_command("import_areev", str(grains), "--host", "h1", "--map", str(bad_map))
    assert code == 1
    assert "not valid JSON (nested too deeply)" in err and "Traceback" not in err
    assert Lesson.objects.count() == 0


# --- the admin zip upload ------------------------------------------------------------------------


def zipped(entries: list[tuple[str, bytes]], compression=zipfile.ZIP_STORED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression) as archive:
        for name, data in entries:
            archive.writestr(name, data)
    return buffer.getvalue()


@pytest.fixture
def upload(client, admin_user):
    client.force_login(admin_user)

    def post(data: bytes):
        archive = SimpleUploadedFile("learn.zip", data, content_type="application/zip")
        return client.post("/imports/altimate/", {"archive": archive, "host": "dbt-project"})

    return post


def page_text(response) -> str:
    return response.content.decode().replace("&quot;", '"').replace("&#x27;", "'")


@pytest.mark.parametrize(
    ("entries", "name", "why"),
    [
        (
            [("team-playbook/approved.json", b"[]"), ("team-playbook/approved.json/x", b"1")],
            "team-playbook/approved.json/x",
            "File exists",
        ),
        ([("team-playbook/x/", b""), ("team-playbook/x", b"1")], "team-playbook/x", "Is a directory"),
        ([("team-playbook/" + "a" * 300, b"1")], "team-playbook/" + "a" * 300, "File name too long"),
    ],
    ids=["file-then-child", "folder-then-file", "name-too-long"],
)
def test_a_zip_entry_the_file_system_refuses_is_a_400_naming_it(upload, entries, name, why):
    response = upload(zipped(entries))
    assert response.status_code == 400
    assert ZIP_UNWRITABLE.format(name=name, why=why) in page_text(response)
    assert not Host.objects.exists()


def test_a_zip_bomb_is_refused_before_it_fills_the_disk(upload):
    bomb = zipped([("team-playbook/approved.json", b"\0" * (101 * 1024 * 1024))], zipfile.ZIP_DEFLATED)
    assert len(bomb) < 200_000
    response = upload(bomb)
    assert response.status_code == 400
    assert ZIP_UNZIPPED_TOO_LARGE in page_text(response)
    assert not Host.objects.exists()


def test_a_zip_that_lies_about_its_unpacked_size_is_refused(upload):
    data = bytearray(
        zipped([("team-playbook/approved.json", b"[" + b" " * 1000 + b"]")], zipfile.ZIP_DEFLATED)
    )
    # Declare 2 bytes unpacked in both the local and the central header: the CRC check catches the lie.
    for signature, offset in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
        at = data.index(signature) + offset
        data[at : at + 4] = (2).to_bytes(4, "little")
    response = upload(bytes(data))
    assert response.status_code == 400
    assert "The zip is damaged and cannot be read" in page_text(response)
    assert not Host.objects.exists()


def test_altimate_a_session_snapshot_whose_session_has_a_lone_surrogate_is_skipped_not_a_crash(db, project):
    import hashlib

    session = "ses_\udc00"
    name = hashlib.sha256(session.encode("utf-8", "surrogatepass")).hexdigest()
    lesson = {  # a snapshot altimate's delivery accepts: the strict lesson schema, every State field
        "id": "L-8201",
        "text": "Shown.",
        "tags": [],
        "scope": "project",
        "helpful": 0,
        "harmful": 0,
        "applied": 0,
        "created": "2026-08-25T08:00:00.000Z",
        "updated": "2026-08-25T08:00:00.000Z",
    }
    snapshot = {
        "version": 1,
        "session": "PLACEHOLDER",
        "firstMessage": "msg_1",
        "section": "",
        "requests": [],
        "compactions": [],
        "counted": [],
        "shown": [
            {
                "at": "2026-09-28T08:00:00.000Z",
                "name": "team-playbook",
                "tier": "core",
                "queryHash": "0" * 64,
                "lesson": lesson,
            }
        ],
    }
    path = project / ".altimate-code" / "learn" / ".sessions" / f"{name}.json"
    path.write_text(json.dumps(snapshot).replace("PLACEHOLDER", "ses_\\udc00"))
    code, _out, err = run_command("import_altimate", str(project), "--host", "dbt-project", "--dry-run")
    assert code == 0, err
    assert f"exposure.session: {E_LONE_SURROGATE}" in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("field", "value", "why"),
    [
        ("session", "ses_\ud800", E_LONE_SURROGATE),
        ("id", "L-\udfff", E_LONE_SURROGATE),
        ("session", "ses_\x00", NUL_MESSAGE),  # PostgreSQL text cannot hold it: was a DataError there
        ("id", "L-\x00", NUL_MESSAGE),
    ],
)
def test_altimate_a_shown_line_whose_session_or_id_no_database_takes_is_skipped_by_name(
    db, project, store, field, value, why
):
    shown = (store / "shown.jsonl").read_text().splitlines()
    line = json.loads(shown[0])
    line[field] = value
    (store / "shown.jsonl").write_text("\n".join([json.dumps(line), *shown[1:]]) + "\n")
    code, _out, err = run_command("import_altimate", str(project), "--host", "dbt-project")
    assert code == 0, err
    assert "Traceback" not in err
    named = {"session": "exposure.session", "id": "exposure.lesson_id"}[field]
    assert f"note: team-playbook/shown.jsonl:1: not imported: {named}: {why}" in err.splitlines()
    assert Lesson.objects.filter(host__name="dbt-project").count() == 15
