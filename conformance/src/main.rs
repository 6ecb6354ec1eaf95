//! The `patchspec` binary: all logic is in the library (`cli::main`).

fn main() {
    std::process::exit(patchspec_conformance::cli::main());
}
