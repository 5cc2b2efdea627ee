# pushgate — the two set-up commands are `make run` and `make test`.
SHELL := /bin/bash
SWIFT ?= swift
# Debian packages the build, the tests and the benchmarks need.
DEB_PACKAGES := pkg-config libssl-dev libcurl4-openssl-dev libmicrohttpd-dev libsqlite3-dev libpq-dev postgresql-15 \
                python3 python3-h2 python3-jwt python3-cryptography nghttp2-client h2o time openssl wrk curl \
                python3-venv chromium chromium-driver jq dpkg-dev adduser systemd
# The browser tests' Selenium, pinned in Tests/Browser/requirements.txt.
BROWSER_VENV := .build/browser-venv
# The OpenAPI conformance test's schemathesis, pinned in Tests/API/requirements.txt.
API_VENV := .build/api-venv

# A virtual environment (the folder of the target's .installed) with the pins of the
# requirements file it depends on.
define make-venv
rm -rf $(@D)
/usr/bin/python3 -m venv $(@D)
$(@D)/bin/pip install -q --disable-pip-version-check -r $<
touch $@
endef

.PHONY: deps browser-env api-env build release deb deb-test run demo test bench clean

# Installs only what is missing; `apt-get update` runs only when something is.
deps:
	@missing=""; for p in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get update -qq && apt-get install -y -qq $$missing; \
	fi

# The virtual environment the /ui browser tests drive Chromium from; rebuilt when the pins change.
browser-env: deps $(BROWSER_VENV)/.installed

$(BROWSER_VENV)/.installed: Tests/Browser/requirements.txt
	$(make-venv)

# The virtual environment the OpenAPI conformance test runs schemathesis from; rebuilt when the pins change.
api-env: deps $(API_VENV)/.installed

$(API_VENV)/.installed: Tests/API/requirements.txt
	$(make-venv)

build: deps
	$(SWIFT) build

# The Swift runtime and Foundation linked statically (scripts/release-build.sh, which the
# benchmark scripts use too, so they all measure the same binary).
release: deps
	SWIFT=$(SWIFT) bash scripts/release-build.sh

# pushgate_<version>_amd64.deb from the release binary (scripts/build-deb.sh; docs/install.md).
deb: deps
	SWIFT=$(SWIFT) bash scripts/release-build.sh --product pushgate
	bash scripts/build-deb.sh

# The package installed, upgraded, removed and purged on this machine (root; it is left
# clean). Rebuilds the release binary only where the sources changed since the last one.
deb-test: deps
	SWIFT=$(SWIFT) bash Tests/Package/deb-test.sh

# The main job: the HTTP API on the shipped configuration (dry run: no Apple credentials).
run: build
	.build/debug/pushgate serve --config config/gateway.json

# A short tour of the CLI over the shipped samples.
demo: build
	@bash scripts/demo.sh

# The PostgreSQL fleet test at its full size runs alone after the parallel suite: its
# three serves load both cores for minutes, and timing tests beside them would wait.
FLEET_TEST := PostgresFleetTests/threeInstancesShareOneCampaignThroughTwoKills
FLEET_DEVICES ?= 100000

test: deps browser-env api-env
	SWIFT=$(SWIFT) python3 scripts/check-architecture.py
	python3 scripts/check-time.py
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --parallel --skip '$(FLEET_TEST)'
	PUSHGATE_FLEET_DEVICES=$(FLEET_DEVICES) $(SWIFT) test --skip-build --filter '$(FLEET_TEST)'
	SWIFT=$(SWIFT) bash Tests/Package/deb-test.sh

# Every benchmark, release build: the in-process suites (links, payloads, apns), the HTTP
# API under load, the streaming link checker against libcurl's URL parser, `send` against
# the bare libcurl program, and the durable outbox (rate next to `send` on SQLite and on a throwaway PostgreSQL with one and
# two instances, with their claim times and lock waits; a transactional campaign behind a
# bulk one).
bench: release
	.build/release/PushgateBench
	bash Benchmarks/http/run.sh
	bash Benchmarks/http/probes.sh
	bash Benchmarks/linkcheck/run.sh
	bash Benchmarks/send/run.sh
	bash Benchmarks/durable/run.sh
	bash Benchmarks/durable/lanes.sh

clean:
	rm -rf .build
