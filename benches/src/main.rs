//! `patchspec-benchgen`: write a generated benchmark case to a directory, or
//! render criterion's saved estimates as the tables of docs/performance.md.
//! Thin: the logic is in the `patchspec_benches` library.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use patchspec_benches::case::Case;
use patchspec_benches::support::parse_size;
use patchspec_benches::{report, SourceFile, SEED};

#[derive(Parser)]
#[command(about = "Generate patchspec benchmark inputs; report measured results")]
struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Write one envelope case (file, envelopes both ways, unified diff, expected result).
    Case {
        /// File size, decimal units: 1MB, 100MB, 64KB.
        #[arg(long, value_parser = size)]
        size: usize,
        /// Number of hunks.
        #[arg(long)]
        hunks: usize,
        /// The directory to write (see the layout in `patchspec_benches::case`).
        #[arg(long)]
        out: PathBuf,
    },
    /// The on-disk floor as a whole process (the `floor` row of the peers
    /// bench): read DIR/FILE, SHA-256 it, write the bytes to a sibling temp
    /// file, fsync it, rename it over the file; print the digest.
    Floor {
        /// The directory holding the file.
        #[arg(long)]
        dir: PathBuf,
        /// The file's name in it.
        #[arg(long)]
        file: String,
    },
    /// Print the Markdown tables of the last `cargo bench` run.
    Report {
        /// criterion's output directory (default: $CARGO_TARGET_DIR/criterion or target/criterion).
        #[arg(long)]
        criterion: Option<PathBuf>,
    },
}

fn size(text: &str) -> Result<usize, String> {
    parse_size(text).ok_or_else(|| format!("not a size: {text:?} (try 64KB, 10MB)"))
}

fn main() -> ExitCode {
    let result = match Args::parse().command {
        Command::Case { size, hunks, out } => {
            let file = SourceFile::generate(size, SEED);
            Case::new(&file, hunks)
                .write(&out)
                .map(|_| ())
                .map_err(|e| format!("cannot write {}: {e}", out.display()))
        }
        Command::Floor { dir, file } => patchspec_benches::support::floor_on_disk(&dir, &file)
            .map(|digest| println!("{digest}"))
            .map_err(|e| format!("cannot rewrite {}: {e}", dir.join(&file).display())),
        Command::Report { criterion } => {
            let dir = criterion.unwrap_or_else(|| {
                let target = std::env::var_os("CARGO_TARGET_DIR")
                    .map_or_else(|| PathBuf::from("target"), PathBuf::from);
                target.join("criterion")
            });
            report::load(&dir)
                .map(|m| print!("{}", report::render(&m)))
                .map_err(|e| format!("cannot read {}: {e}", dir.display()))
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("patchspec-benchgen: {message}");
            ExitCode::FAILURE
        }
    }
}
