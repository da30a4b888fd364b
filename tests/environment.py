"""What the test process needs in its environment before Django's settings load.

``config/settings.py`` refuses to start with DEBUG off and no SECRET_KEY (right for a server, wrong for a
test run). ``make test`` exports DEBUG=1; this module gives ``python -m pytest`` run directly the same.

Why a ``-p`` plugin and not ``conftest.py``: pytest-django reads ``DJANGO_SETTINGS_MODULE`` and imports the
settings in its ``pytest_load_initial_conftests`` hook, which runs before pytest imports any conftest, so a
conftest is too late. Plugins named with ``-p`` (here through ``addopts`` in pyproject.toml) are imported
earlier, right after ``pythonpath`` (set to the project folder there) is put on ``sys.path``.
``setdefault``: a caller who sets DEBUG (and SECRET_KEY) themselves keeps their values.
"""

import os

os.environ.setdefault("DEBUG", "1")
