"""The admin upload page for a zipped learn folder. spec: importers.md; CONTRIBUTING.md (personas).

Refused zips get a clear message and write nothing; a valid zip runs the same import as the command.
"""

from __future__ import annotations

import io
import stat
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from lessons.importers.altimate_sessions import ALREADY_STORED, SNAPSHOT_VERSIONS
from lessons.importers.run import REASONS_KEPT, REASONS_NOT_COUNTED
from lessons.importers.zipped import ZIP_NOT_A_ZIP, ZIP_SYMLINK, ZIP_TOO_MANY, ZIP_UNSAFE_PATH
from lessons.models import Exposure, Host, Lesson
from tests.fixtures.importers import ALTIMATE
from tests.html import parse

URL = "/imports/altimate/"


def zipped(entries: dict[str, bytes], *, symlinks: tuple[str, ...] = ()) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
        for name in symlinks:
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, "/etc/passwd")
    return buffer.getvalue()


def corpus_zip(prefix: str = "") -> bytes:
    """The altimate-dbt-project corpus zipped as a project root (``.altimate-code/learn/...``)."""
    files = {
        prefix + str(p.relative_to(ALTIMATE)): p.read_bytes()
        for p in sorted(ALTIMATE.rglob("*"))
        if p.is_file()
    }
    return zipped(files)


def post(client, data: bytes, *, host: str = "dbt-project", dry_run: bool = False):
    form = {"archive": SimpleUploadedFile("learn.zip", data, content_type="application/zip"), "host": host}
    if dry_run:
        form["dry_run"] = "on"
    return client.post(URL, form)


@pytest.fixture
def as_admin(client, admin_user):
    client.force_login(admin_user)
    return client


def test_the_route_is_named_review_import_altimate():
    assert reverse("review:import_altimate") == URL


def test_an_admin_sees_the_upload_form(as_admin):
    response = as_admin.get(URL)
    assert response.status_code == 200
    assert b'name="archive"' in response.content and b'name="dry_run"' in response.content


def test_a_valid_zip_imports_and_shows_the_report(as_admin):
    response = post(as_admin, corpus_zip())
    assert response.status_code == 200
    body = response.content.decode()
    assert "imported: 38 line(s); 38 created, 0 unchanged, 0 updated, 0 held, 0 rejected" in body
    assert "<dt>candidates</dt><dd>1</dd>" in body
    assert Lesson.objects.filter(host__name="dbt-project", status="live").count() == 12
    assert Exposure.objects.filter(host__name="dbt-project").count() == 14


def test_a_zip_imported_then_dry_run_again_gives_reports_that_add_up(as_admin):
    """The newcomer run's item 13, on this page: the dry run's 37 lines and its one earlier version
    already stored add up to the import's 38 lines, and its notes say why it counts no retirement reason."""
    first = parse(post(as_admin, corpus_zip()).content)
    again = parse(post(as_admin, corpus_zip(), dry_run=True).content)
    summaries = [page.find(data_testid="summary").text for page in (first, again)]
    assert summaries == [
        "imported: 38 line(s); 38 created, 0 unchanged, 0 updated, 0 held, 0 rejected",
        "dry run, nothing written: 37 line(s); 0 created, 37 unchanged, 0 updated, 0 held, 0 rejected",
    ]
    counts = []
    for page in (first, again):
        listed = page.find(data_testid="importer-counts")
        names, values = listed.find_all("dt"), listed.find_all("dd")
        counts.append({dt.text: dd.text for dt, dd in zip(names, values, strict=True)})
    snapshot_versions = (SNAPSHOT_VERSIONS, f"{SNAPSHOT_VERSIONS} {ALREADY_STORED}")
    assert [[c.get(name) for name in snapshot_versions] for c in counts] == [["1", None], [None, "1"]]
    assert [c.get(REASONS_KEPT) for c in counts] == ["2", None]
    assert REASONS_NOT_COUNTED in [li.text for li in again.find("ul", "notes").find_all("li")]


def test_a_zip_of_the_learn_folder_inside_one_top_folder_imports_too(as_admin):
    response = post(as_admin, corpus_zip(prefix="my-project/"))
    assert "imported: 38 line(s); 38 created" in response.content.decode()


def test_the_dry_run_checkbox_writes_nothing(as_admin):
    response = post(as_admin, corpus_zip(), dry_run=True)
    body = response.content.decode()
    assert "dry run, nothing written: 38 line(s); 38 created" in body
    assert (Host.objects.count(), Lesson.objects.count()) == (0, 0)


def test_a_zip_with_a_dotdot_path_is_refused_with_a_clear_message(as_admin):
    response = post(as_admin, zipped({"team-playbook/approved.json": b"[]", "../evil": b"x"}))
    assert response.status_code == 400
    assert ZIP_UNSAFE_PATH.format(name="../evil") in response.content.decode().replace("&quot;", '"')
    assert not Host.objects.exists()


def test_a_zip_with_an_absolute_path_is_refused(as_admin):
    response = post(as_admin, zipped({"/etc/cron.d/evil": b"x"}))
    assert ZIP_UNSAFE_PATH.format(name="/etc/cron.d/evil") in response.content.decode().replace("&quot;", '"')


def test_a_zip_with_a_symlink_is_refused(as_admin):
    response = post(
        as_admin, zipped({"team-playbook/approved.json": b"[]"}, symlinks=("team-playbook/link",))
    )
    assert ZIP_SYMLINK.format(name="team-playbook/link") in response.content.decode().replace("&quot;", '"')


def test_a_zip_with_too_many_entries_is_refused(as_admin):
    response = post(as_admin, zipped({f"f{i}": b"" for i in range(2001)}))
    assert ZIP_TOO_MANY.format(count=2001) in response.content.decode()


def test_a_file_that_is_not_a_zip_is_refused(as_admin):
    response = post(as_admin, b"not a zip at all")
    assert (response.status_code, ZIP_NOT_A_ZIP in response.content.decode()) == (400, True)


def test_a_zip_without_a_store_names_the_problem_without_the_servers_folder(as_admin):
    response = post(as_admin, zipped({"README.md": b"hello"}))
    body = response.content.decode()
    assert "the zip: no learn store found" in body
    assert "/tmp" not in body


def test_a_bad_host_name_is_a_form_error(as_admin):
    response = post(as_admin, corpus_zip(), host="Not A Host")
    assert response.status_code == 400
    assert "A host name is 1 to 64 characters" in response.content.decode()
    assert not Lesson.objects.exists()


def test_a_viewer_gets_403(client, viewer):
    client.force_login(viewer)
    assert client.get(URL).status_code == 403
    assert post(client, corpus_zip()).status_code == 403
    assert not Lesson.objects.exists()


def test_a_reviewer_gets_403(client, reviewer):
    client.force_login(reviewer)
    assert client.get(URL).status_code == 403


def test_an_anonymous_visitor_is_sent_to_sign_in(outsider):
    response = outsider.get(URL)
    assert (response.status_code, response.url.split("?")[0]) == (302, "/accounts/login/")
