//! `cargo run --example extract-seeds [--corpus DIR] [--out DIR]`: write every
//! seed (each envelope and batch of the JSON corpus, in each target's input
//! shape, plus the hand-written ones) to `<out>/<target>/<hash>`, but for
//! `envelope_parse` seeds longer than libFuzzer's default input limit and
//! workspaces of more than 64 entries (`seeds::for_the_fuzzer` says why).
//! Defaults:
//! `../corpus` and `corpus` relative to the fuzz crate. Existing files are
//! left alone, so the fuzzer's own finds are kept. Exit 0, or 2 on bad
//! arguments or an unwritable directory.

use std::path::PathBuf;
use std::process::ExitCode;

use patchspec_fuzz::oracles::seeds;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("extract-seeds: {e}");
            ExitCode::from(2)
        }
    }
}

fn run() -> Result<(), String> {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut corpus = here.join("../corpus");
    let mut out = here.join("corpus");
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let value = || -> Result<PathBuf, String> { Err(format!("{a} needs a value")) };
        match a.as_str() {
            "--corpus" => corpus = args.next().map(PathBuf::from).map_or_else(value, Ok)?,
            "--out" => out = args.next().map(PathBuf::from).map_or_else(value, Ok)?,
            _ => {
                return Err(format!(
                    "unknown argument {a:?} (use --corpus DIR, --out DIR)"
                ))
            }
        }
    }
    let all = seeds::all(&corpus);
    let (mut written, mut present, mut left_out) = (0, 0, 0);
    for (target, bytes) in &all {
        if !seeds::for_the_fuzzer(target, bytes) {
            left_out += 1;
            continue;
        }
        let dir = out.join(target);
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let path = dir.join(seeds::name(bytes));
        if path.exists() {
            present += 1;
            continue;
        }
        std::fs::write(&path, bytes).map_err(|e| format!("{}: {e}", path.display()))?;
        written += 1;
    }
    println!(
        "extract-seeds: {} cases under {}: {written} seeds written, {present} already present, \
         {left_out} left out as too costly to fuzz (seeds::for_the_fuzzer; the replay test still \
         runs them)",
        seeds::case_files(&corpus).len(),
        corpus.display()
    );
    Ok(())
}
