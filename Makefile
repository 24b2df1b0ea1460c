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
# The TypeScript client's toolchain (protoc-gen-es, tsc, esbuild), pinned in its package-lock.
TS_CLIENT := clients/typescript
TS_STAMP := $(TS_CLIENT)/node_modules/.installed

# The accessibility engine the browser tests run in the page (MPL-2.0), pinned like buf.
AXE := $(TOOLS)/node_modules/axe-core/axe.min.js
AXE_VERSION := 4.10.3

.PHONY: run run-cluster test bench demo generate check-generated lint lint-proto lint-python \
        envoy-validate web-unit chromium venv clean breaking baseline lint-ts lint-go \
        java-codegen axe postgresql quick

run: $(STAMP)  ## start the gRPC server and Envoy on the embedded SQLite default, with metrics
	SHELLEXEC_METRICS_PORT=$${SHELLEXEC_METRICS_PORT:-9464} \
	  SHELLEXEC_ENVOY_METRICS_PORT=$${SHELLEXEC_ENVOY_METRICS_PORT:-9465} $(BIN)/shellexec up

run-cluster: $(STAMP) postgresql  ## two replicas behind one Envoy on PostgreSQL (a local one unless SHELLEXEC_DATABASE_URL is set)
	$(BIN)/shellexec up --replicas 2

# Two worker processes, one per core of the machines it runs on, each given whole files
# (a module's browser or stack stays one start): about a third less time (ADR 0132).
test: $(STAMP) check-generated lint breaking envoy-validate web-unit chromium axe postgresql  ## every test
	$(BIN)/pytest --numprocesses 2 --dist loadfile --cov --cov-report=term:skip-covered \
	  --cov-fail-under=85

# The quick loop: every test but the slow ones, with the tools those tests need;
# MARKS="not slow and not postgresql" leaves out the tests that start PostgreSQL, and does not
# install it.
MARKS ?= not slow
QUICK_POSTGRESQL := $(if $(findstring not postgresql,$(MARKS)),,postgresql)
quick: $(STAMP) $(BUF) $(TS_STAMP) $(QUICK_POSTGRESQL)  ## every test but the slow ones, on two workers (about 2 minutes)
	$(BIN)/pytest -m "$(MARKS)" --numprocesses 2 -q

bench: $(STAMP)  ## benchmarks; figures are appended to bench/RESULTS.md
	@for script in bench/*.py; do \
	  case $$script in */results.py|*/_*) continue;; esac; \
	  echo "== $$script"; PYTHONPATH=bench:tests $(BIN)/python $$script || exit 1; done

demo: $(STAMP)  ## play a scripted multi-agent session and print the page's URL (ARGS="--pace 0")
	$(BIN)/python -m shellexec.demo $(ARGS)

generate: $(STAMP) $(BUF) $(TS_STAMP) java-codegen  ## regenerate every client and Envoy's descriptor from proto/
	$(BIN)/python proto/generate.py

check-generated: $(STAMP) $(BUF) $(TS_STAMP) java-codegen
	$(BIN)/python proto/generate.py --check

$(TS_STAMP): $(TS_CLIENT)/package.json $(TS_CLIENT)/package-lock.json
	npm ci --prefix $(TS_CLIENT) --no-audit --no-fund --silent
	touch $@

# Java (clients/java): the pinned protoc and grpc-java generator buf runs, fetched by Maven
# through the project's wrapper (versions in clients/java/pom.xml).
JAVA_CODEGEN := $(TOOLS)/java/protoc $(TOOLS)/java/protoc-gen-grpc-java
java-codegen: $(JAVA_CODEGEN)

$(JAVA_CODEGEN) &: clients/java/pom.xml
	cd clients/java && ./mvnw -q -B dependency:copy@codegen-tools
	chmod +x $(JAVA_CODEGEN)
	touch $(JAVA_CODEGEN)

venv: $(STAMP)

$(STAMP): pyproject.toml clients/python/pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -c constraints.txt \
	  --config-settings editable_mode=compat -e clients/python -e '.[dev]'
	touch $@

lint: lint-python lint-proto lint-ts lint-go

lint-python: $(STAMP)
	$(BIN)/ruff check server clients/python/shellexec/client tests bench proto
	$(BIN)/mypy

lint-ts: $(TS_STAMP)  ## tsc --strict over the TypeScript client and its conformance runner
	npm run --prefix $(TS_CLIENT) --silent check

$(BUF):
	npm install --prefix $(TOOLS) --no-audit --no-fund --silent @bufbuild/buf@$(BUF_VERSION)

axe: $(AXE)

$(AXE):
	npm install --prefix $(TOOLS) --no-audit --no-fund --silent axe-core@$(AXE_VERSION)

# google/api and google/rpc are vendored in third_party/googleapis: buf works offline.
lint-proto: $(STAMP) $(BUF)
	$(BUF) lint
	$(BUF) format --diff --exit-code proto

# The contract only grows: proto/ is compared with the released contract, proto/baseline.binpb
# (ADR 0101). `make baseline` records it, deliberately, with each additive release.
breaking: $(BUF)
	$(BUF) breaking proto --against proto/baseline.binpb

baseline: $(BUF)  ## record proto/ as the released contract `make breaking` compares with
	$(BUF) build proto --exclude-source-info -o proto/baseline.binpb

# The Go client and the Go test programs (conformance runner, grpc-gateway; ADR 0104).
lint-go:
	cd clients/go && go vet ./...
	cd tests/clients/go && go vet ./...

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
