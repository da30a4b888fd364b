"""Settings for Lesson Pile Review, read from the environment.

DATABASE_URL  database (default: SQLite file db.sqlite3 in the project folder)
SECRET_KEY    required when DEBUG is off
DECISION_HEAD_KEY  the key of the decision chain head's seal (default: derived from SECRET_KEY;
              docs/decisions-verify.md, "The head's seal")
DEBUG         1/0, true/false, yes/no, on/off (any case) turns debug on or off (default off); any other
              word stops the start with one line naming it (``config.env``)
ALLOWED_HOSTS comma-separated (default "127.0.0.1,localhost")
API_MAX_BODY_BYTES  largest accepted API request body (default 50 MiB)
HTTPS         1 when served over TLS behind a proxy that sets X-Forwarded-Proto (default 0): turns on the
              proxy SSL header, Secure cookies, HSTS and the redirect to https
HSTS_SECONDS  HSTS max-age when HTTPS is on (default 31536000, one year)
SIGNIN_FAILURES_PER_ADDRESS  failed sign-ins from one client address (any usernames) within 15 minutes
              that pause every sign-in from it (default 20)
TRUSTED_PROXY_COUNT  how many proxies in front append to X-Forwarded-For (default 0: the client address is
              REMOTE_ADDR); with N, the N-th address from the right is the client's
HSTS_INCLUDE_SUBDOMAINS  1 to extend HSTS to every subdomain (default 0: only when you own them all)
CSRF_TRUSTED_ORIGINS  comma-separated origins (scheme and host) trusted for signed forms behind a proxy
              (default none)
CONN_MAX_AGE  seconds a server process keeps its database connection (default 60 on PostgreSQL, 0 on SQLite)
SESSION_FILE_PATH  folder of the sign-in sessions on SQLite (default: "sessions" beside the database file)
LOG_LEVEL     the root logger's level (default WARNING)
WEB_LOCK_TIMEOUT_SECONDS  how long a web write waits for another writer before 503 + Retry-After (default 3)
INGEST_BACKGROUND_BYTES  an API ingest body at least this large becomes a background job (default 1 MiB)
IMPORT_BACKGROUND_BYTES  an uploaded import at least this large becomes a background job (default 1 MiB)
INGEST_SLICE_MS  on SQLite, a background ingest commits in slices of about this many ms (default 1000)
RECURRENCE_BACKGROUND_KEYS  a web decision whose recurrence refresh touches more lesson keys than this is
              recounted by a background job (default 100)
FACTS_DEFER_LESSONS  an ingest of this many lessons or more leaves the facts' encoding to the worker
              (default 2000; docs/piles-and-recurrence.md, "Facts")
OUTCOME_SUPPORT_SESSIONS  sessions after a retire with no correction on its topic that make it
              "supported" (default 20; docs/decisions.md, "Outcomes")
JOBS_STALE_SECONDS  a running job silent this long is queued again by a worker (default 300)
JOBS_KEEP_DAYS  days a finished job's row is kept (default 30)
IMPORT_DRY_RUN_KEEP_SECONDS  seconds an upload's dry-run zip is kept for "Import this zip now" (default 3600)
CACHE_URL     redis://HOST:PORT/DB for a Redis cache shared by every server process (Django's RedisCache);
              default: each process's own memory (docs/production.md, "Cache")
FRAGMENT_CACHE_SECONDS  how long a rendered part of a page is kept for its data version (default 600; 0:
              never kept)
"""

import os
import tempfile
from datetime import timedelta
from pathlib import Path

import dj_database_url
from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured

from config.env import env_bool, env_int, env_list, private_dir

BASE_DIR = Path(__file__).resolve().parent.parent

DEBUG = env_bool("DEBUG")
SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if DEBUG:
        SECRET_KEY = "insecure-development-key-do-not-use-in-production"
    else:
        raise ImproperlyConfigured(
            "SECRET_KEY must be set when DEBUG is off (for local use: export DEBUG=1; make does this for you)"
        )

# Kept outside the database: a database writer cannot seal a chain head it moved (issue 21, fault 10).
DECISION_HEAD_KEY = os.environ.get("DECISION_HEAD_KEY", "")

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", default="127.0.0.1,localhost")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")

INSTALLED_APPS = [
    "review.admin_site.ReviewAdminConfig",  # django.contrib.admin, its sign-in answered by our pages
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "django_htmx",
    "django_tables2",
    "django_filters",
    "template_partials",
    "ninja",
    "axes",
    "lessons",
    # before django_tasks_db: review's db_worker (the backport's worker, plus resuming jobs whose worker
    # died) takes the command's name
    "review",
    "django_tasks",
    "django_tasks_db",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    # before anything reads a body (CSRF, the sign-in, the upload): a body over its route's limit is
    # refused unread (review/request_body.py, route_body_limit)
    "review.middleware.BodyLimitMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # outermost of the project's own: sees each page last (control characters shown as ⟨U+202E⟩)
    "review.middleware.VisibleControlsMiddleware",
    # before the session: the session's save (sign-in) also waits at most WEB_LOCK_TIMEOUT_SECONDS
    "review.locking.LockWaitMiddleware",
    # a sign-in from an address with too many failures is refused before any password is hashed; after
    # LockWaitMiddleware, whose bound on lock waits is set when a write request's connection opens (its
    # query here opened it first, and a sign-in then waited as long as a held user row: found on PostgreSQL)
    "review.middleware.SignInLimitMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.auth.middleware.LoginRequiredMiddleware",
    "review.middleware.NoStoreWhenSignedInMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # after the session, the sign-in and messages: a page's ETag, and 304 for a poll that holds it
    "review.middleware.ConditionalPagesMiddleware",
    # after messages and htmx: tells the page which background recounts its request started
    "review.services.recount.RecountNoticeMiddleware",
    # last, as django-axes asks: it turns a locked-out sign-in into the 429 page
    "axes.middleware.AxesMiddleware",
]

# django-axes first: it refuses a locked-out sign-in before any password is checked.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "review.backends.RoleBackend",  # ModelBackend, the permissions in one query
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    }
]
# Django's form renderer, with <input> and <textarea> built in Python: the same HTML (review/web/widgets.py)
FORM_RENDERER = "review.web.widgets.LeanRenderer"

DATABASES = {
    "default": dj_database_url.parse(os.environ.get("DATABASE_URL", f"sqlite:///{BASE_DIR / 'db.sqlite3'}"))
}
# PostgreSQL keeps each server process's connection for a minute by default: opening one costs 6-9 ms and
# a server process forked per connection, more than a page's queries (issue 10; docs/benchmarks.md). SQLite
# opens a file, which costs nothing to speak of.
_postgres = DATABASES["default"]["ENGINE"].endswith((".postgresql", ".postgis"))
_conn_max_age = env_int("CONN_MAX_AGE", default=60 if _postgres else 0, minimum=0)
DATABASES["default"]["CONN_MAX_AGE"] = _conn_max_age
# A kept connection the server dropped (a restart, an idle timeout) is replaced at a request's first query
# instead of failing that request (one per server thread).
DATABASES["default"]["CONN_HEALTH_CHECKS"] = _conn_max_age > 0
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Django's backend, opened read-only when a full disk stops the WAL files being made (config/sqlite).
    DATABASES["default"]["ENGINE"] = "config.sqlite"
    # IMMEDIATE takes the write lock when a transaction starts, so two writers queue
    # on the busy timeout instead of failing mid-transaction ("database is locked").
    # WAL: readers read the last commit while a writer works, instead of "database is locked" at its
    # commit; the busy timeout (seconds) is how long a writer waits for another. synchronous=NORMAL is
    # durable in WAL mode except for the last commits on a power cut (never corrupt).
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "transaction_mode": "IMMEDIATE",
            "timeout": 20,
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        }
    )
    # A sign-in writes nothing that waits for the one writer (issue 13, acceptance: sign in during a large
    # ingest): its session lives in files (SQLite means one machine, so every server process sees them),
    # and its bookkeeping (last_login, django-axes' success log and reset) is written only if the database
    # is free at that moment (review/signin.py).
    SESSION_ENGINE = "django.contrib.sessions.backends.file"
    _db_name = str(DATABASES["default"]["NAME"])
    SESSION_FILE_PATH = os.environ.get("SESSION_FILE_PATH") or (
        str(Path(_db_name).resolve().parent / "sessions")
        if _db_name and _db_name != ":memory:" and not _db_name.startswith("file:")
        else str(Path(tempfile.gettempdir()) / "lpr-sessions")
    )
    # owner-only (0700): the file names are the session keys (config.env.private_dir)
    private_dir(SESSION_FILE_PATH)

# Long work in the background (issue 13, Build 2): Django's tasks framework through the django-tasks
# backport, with django-tasks-db's database backend; the worker is ``manage.py db_worker``
# (docs/production.md). An API ingest body of at least INGEST_BACKGROUND_BYTES, or an uploaded zip of at
# least IMPORT_BACKGROUND_BYTES, becomes an ImportJob answered at once; smaller ones run in the request.
TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
# A retire is "supported" once the host had this many sessions after it with no correction on the
# retired lesson's topic (docs/decisions.md, "Outcomes").
OUTCOME_SUPPORT_SESSIONS = env_int("OUTCOME_SUPPORT_SESSIONS", default=20, minimum=1)
# An ingest of this many lessons or more leaves the piles whose texts are not encoded yet to the
# background worker (lessons.tasks.regroup_pending), instead of encoding them in its transaction.
FACTS_DEFER_LESSONS = env_int("FACTS_DEFER_LESSONS", default=2000, minimum=1)
INGEST_BACKGROUND_BYTES = env_int("INGEST_BACKGROUND_BYTES", default=1024 * 1024, minimum=1)
IMPORT_BACKGROUND_BYTES = env_int("IMPORT_BACKGROUND_BYTES", default=1024 * 1024, minimum=1)
# A status change (retire, restore, approve, rollback) from a web request whose recurrence refresh touches
# more than this many lesson keys is recounted by a background job (review/services/recount.py).
RECURRENCE_BACKGROUND_KEYS = env_int("RECURRENCE_BACKGROUND_KEYS", default=100, minimum=0)
# SQLite has one writer: a background API ingest there commits its write phase in slices of about this
# many milliseconds, pausing between them so that a reviewer's decision waits at most about one slice
# (issue 13, acceptance; lessons/ingest/passes.py, "Slices"). PostgreSQL writes every batch in one
# transaction (its row locks hold nothing a reviewer touches).
INGEST_SLICE_MS = env_int("INGEST_SLICE_MS", default=1000, minimum=50)
# A running job that has shown no progress for this long (its worker died) is queued again by a worker.
JOBS_STALE_SECONDS = env_int("JOBS_STALE_SECONDS", default=300, minimum=1)
# A finished job's row (its state, report and error, shown on its page and by the API) is deleted by the
# worker this many days after the job ended. A job's payload is dropped as the job ends, except the zip of
# an upload's dry run, kept this many seconds for "Import this zip now" (review/services/jobs.py).
JOBS_KEEP_DAYS = env_int("JOBS_KEEP_DAYS", default=30, minimum=1)
IMPORT_DRY_RUN_KEEP_SECONDS = env_int("IMPORT_DRY_RUN_KEEP_SECONDS", default=3600, minimum=0)

# Rendered parts of pages, kept by data version (review/web/fragments.py; docs/production.md, "Cache").
_cache_url = os.environ.get("CACHE_URL", "").strip()
if _cache_url:
    if not _cache_url.startswith(("redis://", "rediss://", "unix://")):
        raise ImproperlyConfigured(
            f"CACHE_URL must be a redis://, rediss:// or unix:// address, not {_cache_url!r}"
        )
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": _cache_url}}
else:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
            "LOCATION": "lesson-pile-review",
            "OPTIONS": {"MAX_ENTRIES": 300},  # a part of a 200-member pile is about 0.5 MB
        }
    }
FRAGMENT_CACHE_SECONDS = env_int("FRAGMENT_CACHE_SECONDS", default=600, minimum=0)
# How long a web write request waits for a lock held by another writer (an ingest, another reviewer)
# before it is answered 503 with Retry-After (review/locking.py).
WEB_LOCK_TIMEOUT_SECONDS = env_int("WEB_LOCK_TIMEOUT_SECONDS", default=3, minimum=1)

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

# Sign-in lockout (django-axes): 5 failures within 15 minutes for one username from one address pause
# that pair for 15 minutes (429, templates/registration/locked.html); the right password is refused
# meanwhile. A success resets the count. ``manage.py axes_reset_username NAME`` lifts a lock early.
AXES_FAILURE_LIMIT = 5
AXES_COOLOFF_TIME = timedelta(minutes=15)
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked.html"
AXES_HTTP_RESPONSE_CODE = 429
AXES_VERBOSE = False
AXES_USERNAME_CALLABLE = "review.signin.lockout_username"  # bounded: a hostile name is never a 500
# The client address of the lockout and of the sign-in limit per address: REMOTE_ADDR, or behind
# TRUSTED_PROXY_COUNT proxies the address the outermost one appended to X-Forwarded-For (review/signin.py).
TRUSTED_PROXY_COUNT = env_int("TRUSTED_PROXY_COUNT", default=0, minimum=0)
# Whatever the usernames: this many failed sign-ins from one client address within AXES_COOLOFF_TIME pause
# every sign-in from it (429) until they are older than that (review/signin.py).
SIGNIN_FAILURES_PER_ADDRESS = env_int("SIGNIN_FAILURES_PER_ADDRESS", default=20, minimum=1)
AXES_CLIENT_IP_CALLABLE = "review.signin.client_address"
# The attempts stay out of the Django admin (the admin role holds no permission on them).
AXES_ENABLE_ADMIN = False
AXES_HANDLER = "review.signin.SignInAxesHandler"  # its success bookkeeping never waits on SQLite

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "review:queue"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}

DJANGO_TABLES2_TEMPLATE = "tables/htmx_table.html"

API_MAX_BODY_BYTES = env_int("API_MAX_BODY_BYTES", default=50 * 1024 * 1024, minimum=1)
# Forms (sign-in, decisions, budgets) are small: a body past 2 MiB is refused before it is read, file parts
# included (review.middleware.BodyLimitMiddleware: Django's own check counts only the fields that are not
# files). The API streams its own body up to API_MAX_BODY_BYTES (review/request_body.py); the zip upload
# takes the largest zip (20 MB) and its form fields.
DATA_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024

SESSION_COOKIE_HTTPONLY = True
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"

# Content-Security-Policy (django-csp): every asset is our own and no page has inline script or style
# (htmx's indicator style is turned off in base.html and served from static/css/htmx-indicators.css).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "base-uri": [NONE],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
        "object-src": [NONE],
    }
}

# --- serving over TLS behind a proxy (docs/production.md) -----------------------------------------
HTTPS = env_bool("HTTPS")
if HTTPS:
    # The proxy terminates TLS and must set X-Forwarded-Proto itself (overwriting what a client sent):
    # then request.is_secure() holds, the CSRF origin check accepts https://<host>, and cookies are Secure.
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = True
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = env_int("HSTS_SECONDS", default=365 * 24 * 3600, minimum=0)
# Read even when HTTPS is off, so that a typo is refused in every environment.
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("HSTS_INCLUDE_SUBDOMAINS") and HTTPS
# Subdomains and the browsers' preload list are commitments about other sites and cannot be undone
# quickly: they stay the operator's choice, so check --deploy's reminders about them are silenced.
SILENCED_SYSTEM_CHECKS = ["security.W005", "security.W021"]

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"refusals": {"()": "review.web.log_filters.RefusalsWithoutTraceback"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "filters": ["refusals"]}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "WARNING")},
    # Django's default config gives "django" a console handler of its own (when DEBUG is on) that also
    # propagates here: every line printed twice under make run. The root handler alone prints it.
    "loggers": {"django": {"handlers": [], "propagate": True}},
}
