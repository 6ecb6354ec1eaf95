//! `patchspec catalog`: print the tool catalog in one of the shapes model
//! APIs take, or write its JSON Schemas to a directory. Parsing only; the
//! work is [`crate::catalog`].

use std::io::{self, Write};
use std::path::PathBuf;

use crate::catalog::{self, Format};
use crate::exit;
use crate::output::{eprintln_quietly, stdout};

/// `patchspec catalog [--format F] [--strict] [--tools a,b] [--write-schemas DIR]`.
#[derive(Clone, Debug, clap::Args)]
pub struct CatalogArgs {
    /// json: the full catalog (name, modelName, title, description, side, writes, idempotent, paramsSchema, resultSchema); mcp: an MCP tools/list result; openai: Chat Completions function tools; openai-responses: Responses API function tools; anthropic: Messages API tools.
    #[arg(long, value_enum, default_value = "json")]
    pub format: Format,
    /// With openai, openai-responses or anthropic: `strict: true` and params schemas in the strict-mode shape (every object closed, every member required, optional ones nullable).
    #[arg(long)]
    pub strict: bool,
    /// Only these tools, comma-separated, in this order (wire or model names, e.g. apply_patch,workspace_read_file).
    #[arg(long, value_delimiter = ',', value_name = "NAMES")]
    pub tools: Vec<String>,
    /// Write each tool's params and result JSON Schemas to DIR (TOOL.params.json, TOOL.result.json) instead of printing the catalog; stale schema files there are removed.
    #[arg(long, value_name = "DIR")]
    pub write_schemas: Option<PathBuf>,
}

/// Run `patchspec catalog`; returns the exit code (0, or 2 for a usage or output error).
pub fn catalog(args: &CatalogArgs) -> i32 {
    let tools = match catalog::select(&args.tools) {
        Ok(t) => t,
        Err(e) => {
            eprintln_quietly(format_args!("error: {e}"));
            return exit::USAGE;
        }
    };
    if let Some(dir) = &args.write_schemas {
        return match catalog::write_schemas(dir, &tools) {
            Ok(names) => {
                eprintln_quietly(format_args!(
                    "wrote {} schema files to {}",
                    names.len(),
                    dir.display()
                ));
                exit::OK
            }
            Err(e) => {
                eprintln_quietly(format_args!("error: writing {}: {e}", dir.display()));
                exit::USAGE
            }
        };
    }
    let rendered = if args.strict {
        match catalog::render_strict(args.format, &tools) {
            Ok(r) => r,
            Err(e) => {
                eprintln_quietly(format_args!("error: {e}"));
                return exit::USAGE;
            }
        }
    } else {
        catalog::render(args.format, &tools)
    };
    let written = serde_json::to_vec_pretty(&rendered)
        .map_err(io::Error::other)
        .and_then(|mut text| {
            text.push(b'\n');
            let mut out = stdout();
            out.write_all(&text)?;
            out.flush()
        });
    match written {
        Ok(()) => exit::OK,
        Err(e) => {
            eprintln_quietly(format_args!("error: cannot write the output: {e}"));
            exit::USAGE
        }
    }
}
