"""The install `make run` and `make test` do: `pip install -e .` of this project (newcomer item: no
setuptools "Editable installation" warning block in their output)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_editable_install_is_a_plain_path_entry_and_warns_of_nothing(tmp_path):
    """setuptools' meta path finder strategy prints a warning block on every install; the project's
    package-dir makes it a .pth line naming the project root instead (pyproject.toml, [tool.setuptools])."""
    build = "import sys; from setuptools import build_meta; print(build_meta.build_editable(sys.argv[1]))"
    done = subprocess.run(
        [sys.executable, "-c", build, str(tmp_path)], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert "Editable installation" not in done.stdout + done.stderr
    wheel = tmp_path / done.stdout.strip().splitlines()[-1]
    with zipfile.ZipFile(wheel) as zipped:
        pth = [name for name in zipped.namelist() if name.endswith(".pth")]
        assert pth == ["__editable__.lesson_pile_review-0.1.0.pth"]
        assert zipped.read(pth[0]).decode().split() == [str(ROOT)]


def test_the_readme_says_how_to_serve_on_another_port_and_make_run_follows_it():
    """Newcomer item: `make run PORT=8001` serves (and links the demo) on 8001, as the README's first
    screen says. `make -n` prints the recipe without running it (the install step is up to date or not;
    only the serving lines are compared)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    first_screen = readme.split("## Documentation")[0]
    assert "`make run PORT=8001` serves on\nhttp://127.0.0.1:8001" in first_screen
    recipe = subprocess.run(
        ["make", "-n", "run", "PORT=8001"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    assert "manage.py demo --url http://127.0.0.1:8001/" in recipe
    assert "manage.py runserver 127.0.0.1:8001" in recipe
