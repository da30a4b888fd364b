"""One job page for one model (newcomer item 15: imports and recounts had a template each)."""

from __future__ import annotations

from pathlib import Path

from review.models import ImportJob

TEMPLATES = Path(__file__).resolve().parents[3] / "templates" / "review"


def _job(kind: str, **fields) -> ImportJob:
    return ImportJob.objects.create(kind=kind, state=ImportJob.State.QUEUED, **fields)


def test_an_import_and_a_recount_render_the_one_job_template(client, admin_user):
    client.force_login(admin_user)
    recount = _job(ImportJob.Kind.RECOUNT)
    upload = _job(ImportJob.Kind.ALTIMATE, host="adbuy-desk", filename="learn.zip")
    pages = {
        f"/jobs/{recount.pk}/": ("Recount job", "recount-job", "Recount progress"),
        f"/imports/jobs/{upload.pk}/": ("Import job", "import-job", "Import progress"),
    }
    for path, (heading, testid, progress) in pages.items():
        response = client.get(path)
        assert [t.name for t in response.templates][:1] == ["review/jobs/job.html"]
        page = response.content.decode()
        assert f"<h1>{heading} " in page
        assert f'data-testid="{testid}"' in page
        assert f'hx-get="{path}"' in page
        assert f'aria-label="{progress}"' in page
    assert not (TEMPLATES / "imports" / "job.html").exists()


def test_the_polled_region_alone_answers_htmx_and_varies_on_it(client, admin_user):
    client.force_login(admin_user)
    recount = _job(ImportJob.Kind.RECOUNT)
    response = client.get(f"/jobs/{recount.pk}/", headers={"HX-Request": "true"})
    assert response.content.decode().lstrip().startswith('<div id="job" data-testid="recount-job"')
    assert "HX-Request" in response["Vary"]
