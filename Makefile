# Two commands matter: `make run` serves the API, `make test` runs every test.
# Both build the virtual environment from requirements.lock first.
VENV ?= .venv
PY := $(VENV)/bin/python
PORT ?= 8000
export PORT

.PHONY: run test test-quick lint typecheck openapi bench venv clean

$(VENV)/.installed: requirements.lock
	@command -v python3 >/dev/null || (apt-get update -qq && apt-get install -y -qq python3 python3-venv)
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements.lock
	touch $@

venv: $(VENV)/.installed

run: venv
	$(VENV)/bin/gunicorn -c deploy/gunicorn.conf.py service.wsgi:app

lint: venv
	$(PY) -m ruff check service tests bench
	$(PY) -m mypy

test: venv lint
	$(PY) -m pytest -q

# The developer's loop: everything but the tests marked slow (load balancer, browser,
# long solver and contract runs); `make test` still runs them all.
test-quick: venv lint
	$(PY) -m pytest -q -m "not slow"

openapi: venv
	$(VENV)/bin/flask --app service.wsgi openapi write --format=yaml openapi.yaml

bench: venv
	$(PY) -m bench.engine_bench
	$(PY) -m bench.http_bench
	$(PY) -m bench.state_protection_bench
	$(PY) -m bench.http_load_bench
	$(PY) -m bench.solver_bench
	$(PY) -m bench.position_cost
	$(PY) -m bench.solve_contention_bench

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
