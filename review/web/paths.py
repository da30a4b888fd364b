"""Where the JSON API lives: one home for its prefix. config/urls.py routes it (``API_PREFIX`` +
``v1/``); the middleware, the lock-wait answer and the error pages answer JSON under it.
docs/api.md."""

API_PREFIX = "/api/"
