"""Where the JSON API and Django's admin live: one home for their prefixes. config/urls.py routes them
(``API_PREFIX`` + ``v1/``, ``ADMIN_PREFIX``); the middleware, the lock-wait answer and the error pages
answer JSON under the API's, and the pages' conditional answers leave both to their own. docs/api.md."""

API_PREFIX = "/api/"
ADMIN_PREFIX = "/admin/"
