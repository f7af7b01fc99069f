# Two commands matter: `make run` serves the API, `make test` runs every test.
# Both build the virtual environment from requirements.lock first.
VENV ?= .venv
PY := $(VENV)/bin/python
PORT ?= 8000
export PORT

.PHONY: run test test-quick test-compat lint typecheck openapi bench atlas atlas-plot venv native clean clients contract-lint contract-lint-redocly contract-lint-spectral contract-lint-validator contract-lint-generator \
	pact-verify pact-record pact-record-python pact-record-ts pact-examples

# A venv in $(1) with the pinned packages of $(2), marked installed (Debian's Python and
# python3-venv first, when the machine has no Python).
define make_venv
	@command -v python3 >/dev/null || (apt-get update -qq && apt-get install -y -qq python3 python3-venv)
	python3 -m venv $(1)
	$(1)/bin/python -m pip install -q --upgrade pip
	$(1)/bin/python -m pip install -q -r $(2)
	touch $(1)/.installed
endef

$(VENV)/.installed: requirements.lock
	$(call make_venv,$(VENV),requirements.lock)

venv: $(VENV)/.installed

# The compiled modules (issue 14: the searches, the wire codec): setup.py builds the C
# extensions in place, named with the venv's Python's extension suffix (another Python
# never loads them), again when a source, setup.py or the venv changes. Only the venv can tell that suffix, so `native`
# asks it and makes the modules by that name in a sub-make. The compiler, the C library's
# headers and Python's come from Debian when the venv's compiler cannot yet compile
# `#include <Python.h>`.
NATIVE_SRCS := service/solver/plugins/_penguin_native.c service/solver/plugins/_forty_thieves_native.c \
	service/http/_wire_native.c service/engine/_penguin_moves_native.c
NATIVE_PROBE := $(PY) -c 'import sysconfig as s; print(s.get_config_var("CC"), "-I" + s.get_paths()["include"])'

native: venv
	@ext="$$($(PY) -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')"; \
		$(MAKE) --no-print-directory $(foreach s,$(NATIVE_SRCS:.c=),"$(s)$$ext")

# One pattern rule with a target pattern per module: setup.py builds them all at once.
$(addsuffix .%.so,$(NATIVE_SRCS:.c=)): $(NATIVE_SRCS) service/solver/plugins/_native_keyset.h setup.py $(VENV)/.installed
	@echo '#include <Python.h>' | $$($(NATIVE_PROBE)) -fsyntax-only -x c - 2>/dev/null \
		|| (apt-get update -qq && apt-get install -y -qq --no-install-recommends gcc libc6-dev python3-dev)
	$(PY) -W ignore setup.py -q build_ext --inplace --force
	touch $(addsuffix .$*.so,$(NATIVE_SRCS:.c=))

run: venv native
	$(VENV)/bin/gunicorn -c deploy/gunicorn.conf.py service.wsgi:app

lint: venv
	$(PY) -m ruff check service tests bench
	$(PY) -m mypy

test: venv native lint
	$(PY) -m pytest -q

# The developer's loop: everything but the tests marked slow (load balancer, browser,
# long solver and contract runs); `make test` still runs them all.
test-quick: venv native lint
	$(PY) -m pytest -q -m "not slow"

# The previous minor release of each library whose private parts the service touches, in
# a venv of its own (.venv-compat, from requirements-compat.lock: Flask 3.0, Werkzeug 3.0,
# gunicorn 26, marshmallow 4.3, flask-smorest 0.46, webargs 8.6, apispec 6.9; everything
# else as requirements.lock pins it): every test not marked slow, with the version gates
# choosing the libraries' own paths and deploy/gunicorn.conf.py gunicorn's gthread. The
# inventory's test of the installed versions fails there by design and is left out. Not
# part of `make test` (its time); README, "Private parts of libraries".
COMPAT_VENV := .venv-compat

$(COMPAT_VENV)/.installed: requirements-compat.lock
	$(call make_venv,$(COMPAT_VENV),requirements-compat.lock)

test-compat: native $(COMPAT_VENV)/.installed
	$(COMPAT_VENV)/bin/python -m pytest -q -m "not slow" \
		--deselect tests/ops/test_private_parts.py::test_installed_version_was_checked

openapi: venv
	$(VENV)/bin/flask --app service.wsgi openapi write --format=yaml openapi.yaml

# Generated clients (issues 13, 24): the TypeScript client (openapi-typescript's types for
# openapi-fetch) and the Python client (openapi-python-client) of openapi.yaml, and
# openapi-generator's typescript-fetch and python clients, in clients/generated/
# (git-ignored). Their tools install themselves at pinned versions: Node and npm from
# Debian if missing, npm packages from clients/package-lock.json, the Python generators
# into their own venv (clients/.venv) from clients/python/requirements.txt (openapi-generator
# is the jar in the PyPI package openapi-generator-cli), and a Java runtime from Debian if
# missing (deploy/install-jre.sh). tests/clients/ type-checks and runs a bot on each.
CLIENTS_VENV := clients/.venv
CLIENTS_NPM := clients/node_modules/.installed
CLIENTS_PY := $(CLIENTS_VENV)/.installed
TS_CLIENT := clients/generated/ts/schema.d.ts
PY_CLIENT := clients/generated/python/patience_engine_client/__init__.py
# openapi-generator logs each file it writes: only its warnings are kept (its logback's level).
OGEN := JAVA_OPTS=-Dlog.level=warn $(CLIENTS_VENV)/bin/openapi-generator-cli
OGEN_TS_SRC := clients/generated/ogen-ts/src
OGEN_TS_CLIENT := clients/generated/ogen-ts/dist/index.js
OGEN_PY_CLIENT := clients/generated/ogen-python/patience_engine_ogen/__init__.py
# Redocly CLI's usage reports and update check stay off: only the package registries are reached.
export REDOCLY_TELEMETRY := off
export REDOCLY_SUPPRESS_UPDATE_NOTICE := true

$(CLIENTS_NPM): clients/package.json clients/package-lock.json
	bash deploy/install-node.sh
	cd clients && npm ci --ignore-scripts --no-audit --no-fund
	touch $@

$(CLIENTS_PY): clients/python/requirements.txt
	$(call make_venv,$(CLIENTS_VENV),clients/python/requirements.txt)

# openapi-typescript runs in the output folder: in clients/ it would lint with redocly.yaml
# and stop at the first error, and linting is contract-lint's job.
$(TS_CLIENT): openapi.yaml $(CLIENTS_NPM)
	mkdir -p $(@D)
	cd $(@D) && ../../node_modules/.bin/openapi-typescript ../../../openapi.yaml --output schema.d.ts

# --fail-on-warning: an operation or schema the generator had to skip fails the build.
# Its post hooks run the venv's ruff over the generated code.
$(PY_CLIENT): openapi.yaml $(CLIENTS_PY) clients/python/generator.yaml
	PATH="$(CURDIR)/$(CLIENTS_VENV)/bin:$$PATH" $(CLIENTS_VENV)/bin/openapi-python-client generate \
		--path openapi.yaml --meta none --config clients/python/generator.yaml \
		--output-path $(dir $@) --overwrite --fail-on-warning
	touch $@

# openapi-generator (no --skip-validate-spec: a contract its validator refuses generates
# nothing), each generator's settings in its generator.yaml; the output folder is emptied
# first so that nothing of an older contract stays. typescript-fetch's sources are then
# compiled (clients/ogen-ts/tsconfig.client.json) into dist/, which the bot imports as
# `#ogen-ts` (clients/package.json's "imports").
$(OGEN_TS_CLIENT): openapi.yaml $(CLIENTS_PY) $(CLIENTS_NPM) clients/ogen-ts/generator.yaml clients/ogen-ts/tsconfig.client.json
	bash deploy/install-jre.sh
	rm -rf clients/generated/ogen-ts
	$(OGEN) generate --input-spec openapi.yaml --config clients/ogen-ts/generator.yaml --output $(OGEN_TS_SRC)
	clients/node_modules/.bin/tsc -p clients/ogen-ts/tsconfig.client.json

$(OGEN_PY_CLIENT): openapi.yaml $(CLIENTS_PY) clients/ogen-python/generator.yaml
	bash deploy/install-jre.sh
	rm -rf clients/generated/ogen-python
	$(OGEN) generate --input-spec openapi.yaml --config clients/ogen-python/generator.yaml --output $(dir $(@D))
	touch $@

clients: $(TS_CLIENT) $(PY_CLIENT) $(OGEN_TS_CLIENT) $(OGEN_PY_CLIENT)

# The contract's linters, each a target of its own (tests/clients runs them one by one):
# Redocly CLI's recommended ruleset with its warnings as errors (clients/redocly.yaml),
# Spectral's spectral:oas failing on warnings (clients/.spectral.yaml),
# openapi-spec-validator, and openapi-generator's validator (which `generate` also runs).
# Each must report nothing.
contract-lint: contract-lint-redocly contract-lint-spectral contract-lint-validator contract-lint-generator

contract-lint-redocly: $(CLIENTS_NPM)
	cd clients && node_modules/.bin/redocly lint --config redocly.yaml ../openapi.yaml

contract-lint-spectral: $(CLIENTS_NPM)
	cd clients && node_modules/.bin/spectral lint --ruleset .spectral.yaml --fail-severity warn ../openapi.yaml

contract-lint-validator: $(CLIENTS_PY)
	$(CLIENTS_VENV)/bin/openapi-spec-validator openapi.yaml

# It prints "No validation issues detected." and exits 0, or lists each issue and exits 1;
# --recommend adds its recommendations, which must be none either.
contract-lint-generator: $(CLIENTS_PY)
	@bash deploy/install-jre.sh
	@out="$$($(OGEN) validate --recommend --input-spec openapi.yaml 2>&1)"; status=$$?; echo "$$out"; \
		[ $$status -eq 0 ] && echo "$$out" | grep -qx 'No validation issues detected.'

# Consumer-driven contracts (Pact; issue 29; README's "Contract testing"). pact-python 4 and
# pytest in their own venv (contracts/.venv, from contracts/requirements.txt); Pact's usage
# tracking and Scarf's install analytics stay off everywhere: nothing leaves the machine.
# pact-verify: every pact in contracts/pacts/ against gunicorn serving the verification app
# (service/pact_provider.py: provider states, the committed test-only key ring) as `make run`
# serves the service (contracts/provider/verify.py). tests/pact/test_pact_verify.py runs it
# in `make test`. pact-record: the example consumers write contracts/pacts/ again, the
# Python one (pact-python) and the TypeScript one (@pact-foundation/pact from
# clients/package.json, compiled by tsc, run by node --test). pact-examples: the examples
# the consumers give their mock servers, from the service's real answers.
CONTRACTS_VENV := contracts/.venv
CONTRACTS_PY := $(CONTRACTS_VENV)/.installed
PACT_TS := contracts/consumers/ts
export PACT_DO_NOT_TRACK := true
export SCARF_ANALYTICS := false

$(CONTRACTS_PY): contracts/requirements.txt
	$(call make_venv,$(CONTRACTS_VENV),contracts/requirements.txt)

# PACTS: the pact files or folders to verify (`make pact-verify PACTS=path/to/your.json`).
PACTS ?= contracts/pacts

pact-verify: venv native $(CONTRACTS_PY)
	$(CONTRACTS_VENV)/bin/python -m contracts.provider.verify --server-python $(PY) $(PACTS)

pact-record: pact-record-python pact-record-ts

pact-record-python: $(CONTRACTS_PY)
	$(CONTRACTS_VENV)/bin/python -m pytest -q -p no:cacheprovider contracts/consumers/python

# The TypeScript consumer takes its packages from clients/node_modules: tsc through its
# tsconfig's paths, node through NODE_PATH (it is compiled to CommonJS).
pact-record-ts: $(CLIENTS_NPM)
	rm -rf $(PACT_TS)/build
	clients/node_modules/.bin/tsc -p $(PACT_TS)/tsconfig.json
	NODE_PATH="$(CURDIR)/clients/node_modules" node --test $(PACT_TS)/build/ts/play.pact.test.js

pact-examples: venv native
	$(PY) -m contracts.consumers.make_examples

bench: venv native
	$(PY) -m bench.engine_bench
	$(PY) -m bench.http_bench
	$(PY) -m bench.state_protection_bench
	$(PY) -m bench.http_load_bench
	$(PY) -m bench.solver_bench
	$(PY) -m bench.position_cost
	$(PY) -m bench.compiled_candidates
	$(PY) -m bench.solve_contention_bench

# The winnability atlas (docs/atlas.md): solve ATLAS_GAMES' deals ATLAS_DEALS on every core
# into ATLAS_OUT (resumable: run it again after a kill), then print the table. Not run by
# `make test`; `make atlas ATLAS_WRITE=--write` also updates the table the API serves;
# ATLAS_PLAYER=hints plays the deals by following the player-knowledge hints instead
# (full-hints: the full-knowledge hints).
ATLAS_GAMES ?= all
ATLAS_DEALS ?= 1-100000
ATLAS_OUT ?= atlas-data
ATLAS_WRITE ?=
ATLAS_PLAYER ?= solver
atlas: venv native
	$(PY) -m service.atlas run --games $(ATLAS_GAMES) --deals $(ATLAS_DEALS) --out $(ATLAS_OUT) --player $(ATLAS_PLAYER)
	$(PY) -m service.atlas table --games $(ATLAS_GAMES) --out $(ATLAS_OUT) --player $(ATLAS_PLAYER) $(ATLAS_WRITE)

# The table as a plot (docs/atlas-winnability.png), from the shipped table alone, in a venv
# of its own with matplotlib (requirements-plot.lock).
PLOT_VENV := .venv-plot
$(PLOT_VENV)/.installed: requirements-plot.lock
	$(call make_venv,$(PLOT_VENV),requirements-plot.lock)

atlas-plot: $(PLOT_VENV)/.installed
	$(PLOT_VENV)/bin/python bench/atlas_plot.py

clean:
	rm -rf $(VENV) $(PLOT_VENV) $(COMPAT_VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
	rm -rf build $(addsuffix .*.so,$(NATIVE_SRCS:.c=))
	rm -rf clients/generated clients/node_modules $(CLIENTS_VENV)
	rm -rf $(CONTRACTS_VENV) $(PACT_TS)/build
