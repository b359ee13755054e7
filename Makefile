# The one command surface for developers, the README and CI.
# `make install` builds and installs the package; `make test` is the test command.

PYTHON ?= python3
CARGO  ?= cargo
export CARGO_TERM_COLOR ?= never

.PHONY: install dev build lint fmt test test-rust test-python bench bench-peers bench-campaign quickstart clean

install:            ## build the Rust core and install tcplab (with the `tcplab` command)
	$(PYTHON) -m pip install .

dev:                ## editable install plus developer tools
	$(PYTHON) -m pip install -e '.[dev]'

build:
	$(CARGO) build --workspace --release

lint:               ## rustfmt, clippy (warnings denied), ruff
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	$(PYTHON) -m ruff check python tests
	$(PYTHON) -m ruff format --check python tests

fmt:
	$(CARGO) fmt --all
	$(PYTHON) -m ruff format python tests
	$(PYTHON) -m ruff check --fix python tests

test-rust:
	$(CARGO) test --workspace

test-python: dev   # the tests import python/tcplab: build the extension into the tree
	$(PYTHON) -m pytest -q -rs

test: lint test-rust test-python   ## the test command: lints, Rust unit tests, pytest end to end

quickstart:
	tcplab run quickstart

bench:              ## simulator throughput on the three fixed scenarios
	tcplab bench

bench-peers:        ## the same scenarios on ns-2 (Debian package ns2), for the README table
	$(PYTHON) benches/peers.py

bench-campaign:     ## local vs Ray executors (needs the ray extra), for the README table
	$(PYTHON) benches/campaign.py

clean:
	$(CARGO) clean
	rm -rf build dist python/tcplab/_core*.so
