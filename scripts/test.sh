#!/usr/bin/env bash
# The project's test command (the README's second command; `.ci/run` calls exactly this).
#
# It installs what the tests need, then checks formatting and lints and runs every test:
# unit tests, the conformance suite on every device present, the examples, the CLI tests and
# the doc tests. It fails, never skips, when something the tests require cannot run.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v cargo >/dev/null 2>&1; then
    echo "error: cargo is not installed; install Rust from https://rustup.rs" >&2
    exit 1
fi
rustup component add rustfmt clippy >/dev/null 2>&1 || true

echo "== format"
cargo fmt --all -- --check
echo "== lint"
cargo clippy --all-targets --locked -- -D warnings
echo "== tests"
cargo test --locked --all-targets
echo "== doc tests"
cargo test --locked --doc
