# shellexec: `make run` starts the service, `make test` runs every test.
# Both create .venv and install what they need (pinned in pyproject.toml + constraints.txt).
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
TOOLS := .tools
BUF := $(TOOLS)/node_modules/.bin/buf
BUF_VERSION := 1.75.0
GOOGLEAPIS := .build/googleapis/google/api

.PHONY: run run-cluster test bench demo generate check-generated lint lint-proto lint-python \
        envoy-validate web-unit chromium postgresql venv clean

run: $(STAMP)  ## start the gRPC server and Envoy on the embedded SQLite default, with metrics
	SHELLEXEC_METRICS_PORT=$${SHELLEXEC_METRICS_PORT:-9464} \
	  SHELLEXEC_ENVOY_METRICS_PORT=$${SHELLEXEC_ENVOY_METRICS_PORT:-9465} $(BIN)/shellexec up

run-cluster: $(STAMP) postgresql  ## two replicas behind one Envoy on PostgreSQL (a local one unless SHELLEXEC_DATABASE_URL is set)
	$(BIN)/shellexec up --replicas 2

test: $(STAMP) check-generated lint envoy-validate web-unit chromium postgresql  ## every test
	$(BIN)/pytest --cov --cov-report=term:skip-covered --cov-fail-under=85

bench: $(STAMP)  ## benchmarks; figures are appended to bench/RESULTS.md
	@for script in bench/*.py; do \
	  case $$script in */results.py|*/_*) continue;; esac; \
	  echo "== $$script"; PYTHONPATH=bench:tests $(BIN)/python $$script || exit 1; done

demo: $(STAMP)  ## play a scripted multi-agent session and print the page's URL
	$(BIN)/python -m shellexec.demo

generate: $(STAMP)  ## regenerate the Python stubs and Envoy's descriptor from proto/
	$(BIN)/python proto/generate.py

check-generated: $(STAMP)
	$(BIN)/python proto/generate.py --check

venv: $(STAMP)

$(STAMP): pyproject.toml clients/python/pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -c constraints.txt \
	  --config-settings editable_mode=compat -e clients/python -e '.[dev]'
	touch $@

lint: lint-python lint-proto

lint-python: $(STAMP)
	$(BIN)/ruff check server clients/python/shellexec/client tests bench proto
	$(BIN)/mypy

$(BUF):
	npm install --prefix $(TOOLS) --no-audit --no-fund --silent @bufbuild/buf@$(BUF_VERSION)

# buf needs google/api as a local module; copy it from the googleapis-common-protos wheel.
lint-proto: $(STAMP) $(BUF)
	mkdir -p $(GOOGLEAPIS)
	site=$$($(BIN)/python -c 'import google.api as g; print(list(g.__path__)[0])'); \
	  cp $$site/annotations.proto $$site/http.proto $$site/field_behavior.proto $(GOOGLEAPIS)/
	$(BUF) lint
	$(BUF) format --diff --exit-code proto

envoy-validate: $(STAMP)  ## with the statistics listener on, so it is validated too
	mkdir -p .build
	SHELLEXEC_ENVOY_METRICS_PORT=9465 $(BIN)/shellexec envoy-config --grpc-port 50051 > .build/envoy.yaml
	$(BIN)/envoy --mode validate -c .build/envoy.yaml --disable-hot-restart --log-level warn
	$(BIN)/yamllint -d '{extends: relaxed, rules: {line-length: disable}}' .build/envoy.yaml

web-unit:
	node --test web/test/

# Browser tests drive Debian's Chromium (Playwright cannot download a browser here).
chromium:
	@command -v chromium >/dev/null || { apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

# The tests (and `make run-cluster` without a URL) start Debian's PostgreSQL; its programs live
# under /usr/lib/postgresql/VERSION/bin, not on PATH.
postgresql:
	@ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || { apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null; }

clean:
	rm -rf $(VENV) $(TOOLS) .build .run
