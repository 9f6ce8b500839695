# toolcell tasks. Every recipe is a plain cargo command you can also run by hand.

# List the recipes.
default:
    @just --list

# Build the CLI, which builds the seven standard tools for wasm32-wasip2 on the way.
build:
    cargo build -p toolcell-cli

# Install `toolcell` with the built-in tools compiled for this machine: its first `invoke python`
# then starts in a tenth of a second instead of compiling for 10-20 s. (`cargo install --locked
# --path cli` alone installs it without them.)
install:
    cargo build --release --locked -p toolcell-cli
    target/release/toolcell precompile --out target/precompiled-release
    TOOLCELL_PRECOMPILED_DIR="$PWD/target/precompiled-release" cargo install --locked --path cli

# Build only the standard tools (into target/*/build/toolcell-tools-*/out/tools/).
tools:
    cargo build -p toolcell-tools

# The demo: list the tools, then evaluate an expression with the calculator.
demo:
    cargo run -q -p toolcell-cli -- list
    cargo run -q -p toolcell-cli -- invoke calculator '{"expression": "2 * (3 + sqrt(16)) ^ 2"}'
    cargo run -q -p toolcell-cli -- invoke files '{"operation": "list", "path": "/workspace"}' --dir .:/workspace

# Run every test (the same command CI runs).
test:
    cargo test --workspace

# Format check and clippy with warnings as errors.
lint:
    cargo fmt --all --check
    cargo clippy --workspace --all-targets -- -D warnings

# Format the code.
fmt:
    cargo fmt --all

# The embedding example.
example:
    cargo run -q -p toolcell-runtime --example embed

# Call-cost and MCP round-trip benchmarks (release build).
bench:
    cargo bench -p toolcell-runtime --bench calls
    cargo bench -p toolcell-cli --bench serve

# The soak: a million mixed benign and hostile calls per instance allocator (release build).
# TOOLCELL_SOAK_CALLS and TOOLCELL_SOAK_TASKS change its size.
soak:
    cargo test --release -p toolcell-tests --test it soak -- --ignored --nocapture

# Fuzz for SECONDS per target (nightly + cargo-fuzz): `just fuzz 600 arguments`.
fuzz seconds="60" *targets="":
    bash fuzz/run {{seconds}} {{targets}}

# Everything CI does.
ci:
    bash .ci/run

# The book (docs/): mdBook from crates.io (installed once per machine), then every link checked.
book:
    bash .ci/book
