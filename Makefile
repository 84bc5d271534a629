# Two commands do everything on a fresh machine:
#   make demo   the walkthrough of the README on the embedded default store
#   make test   every test the project has: lint, Rust, C (sanitizers), a short fuzz pass,
#               Python, and the install and the wheel
# And to ship it:
#   make install [PREFIX=/usr/local] [DESTDIR=]   the command, the C library, claimdag.pc
#   make uninstall [PREFIX=...] [DESTDIR=]        exactly what make install put there
#   make wheel                                    target/wheels: an abi3 wheel and an sdist
SHELL := /bin/bash
CARGO ?= cargo
# Where cargo puts what it builds: $CARGO_TARGET_DIR when set (relative to this directory),
# else target/.
TARGET_DIR := $(abspath $(or $(CARGO_TARGET_DIR),target))
PREFIX ?= /usr/local
DESTDIR ?=

.PHONY: demo test lint test-rust test-c test-shipped test-fuzz test-python test-install header generate \
	bench soak fuzz install uninstall wheel

demo:
	$(CARGO) build --release --bin claimdag
	PATH="$(TARGET_DIR)/release:$$PATH" bash scripts/demo.sh

test: lint test-rust test-c test-shipped test-fuzz test-python test-install

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --no-deps --workspace

# tmux runs the pane's end-to-end test, git the diff-check tests, curl the HTTP tests of
# claimdag serve (installed when missing).
test-rust:
	bash scripts/need.sh tmux git curl
	$(CARGO) test --workspace
	@if [ "$$(id -u)" = 0 ]; then $(CARGO) test -p claimdag --test root_only -- --ignored; \
	 else echo "skipped: tests/root_only (they need root: they mount a small tmpfs)"; fi

test-c:
	bash tests/c/run.sh

# Ten seconds of each cargo-fuzz target over the committed seeds, with a fixed random seed so
# the pass is the same on every run (the first run installs cargo-fuzz into target/tools).
# New inputs are searched for by make fuzz.
test-fuzz:
	FUZZ_SEED=1 CARGO=$(CARGO) bash scripts/fuzz.sh 10

# The release command and C library carry no test hooks.
test-shipped:
	CARGO=$(CARGO) bash tests/shipped.sh

test-python:
	bash tests/python/run.sh

# make install into a fresh prefix (its path has a space), C and C++ programs built with
# pkg-config alone, make uninstall; make wheel into a fresh venv; one version everywhere.
test-install:
	CARGO=$(CARGO) bash tests/install/run.sh

# scripts/install.sh reads PREFIX and DESTDIR from the environment (paths with spaces).
install uninstall: export PREFIX := $(PREFIX)
install uninstall: export DESTDIR := $(DESTDIR)
install:
	CARGO=$(CARGO) bash scripts/install.sh install

uninstall:
	bash scripts/install.sh uninstall

wheel:
	bash scripts/wheel.sh

# Regenerate include/claimdag.h from the C crate (a test fails when it drifts).
header:
	CLAIMDAG_BLESS=1 $(CARGO) test -p claimdag-capi --test header

# Regenerate every file written from the verbs' declarations: the C header and the Python
# Verb literal (tests fail when they drift).
generate: header
	CLAIMDAG_BLESS=1 $(CARGO) test -p claimdag --test front_doors generated::

# Figures against the alternatives (docs/performance.md). QUICK=1: fewer samples, no 1M nodes.
# BASELINE=PATH: the command-line figures of another claimdag binary too, runs alternating.
bench:
	CARGO=$(CARGO) bash scripts/bench.sh

# Long crash and SIGKILL runs (thousands of kills instead of a few hundred), power cuts with
# many more drawn file states, and minutes of the history checker on both backends.
soak:
	CLAIMDAG_SOAK=1 $(CARGO) test -p claimdag --test store_files --test leases -- --nocapture torture:: crash_loop:: interleavings:: group_commit:: powerloss:: histories::
	CLAIMDAG_SOAK=1 $(CARGO) test -p claimdag --test postgres -- --nocapture histories::

# Every cargo-fuzz target for five minutes each (cargo-fuzz is installed into target/tools;
# the stable toolchain runs it with RUSTC_BOOTSTRAP=1).
fuzz:
	CARGO=$(CARGO) bash scripts/fuzz.sh 300
