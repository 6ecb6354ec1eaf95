//! `patchspec mcp`: the command line of the MCP server. It checks the
//! workspace and the options and hands over to [`crate::mcp`], where the
//! server is.

use crate::cli::McpArgs;
use crate::error::Error;
use crate::exit;
use crate::mcp::{
    exposed_tools, is_loopback, serve_http, serve_stdio, EngineServer, ServerOptions,
};

/// Run `patchspec mcp`; returns the exit code.
pub fn mcp(args: &McpArgs) -> Result<i32, Error> {
    if !args.root.is_dir() {
        return Err(Error::usage(format!(
            "--root {}: not a directory",
            args.root.display()
        )));
    }
    // Absolute once, so the server's answers do not depend on a later cwd.
    let root = std::path::absolute(&args.root)
        .map_err(|e| Error::usage(format!("--root {}: {e}", args.root.display())))?;
    let options = ServerOptions {
        root,
        tools: args.tools.clone(),
        read_only: args.read_only,
    };
    args.log.install();
    args.store.open()?;
    let names = exposed_tools(&options).map_err(Error::usage)?;
    if names.is_empty() {
        return Err(Error::usage(
            "no tool left to serve (--tools and --read-only exclude every one)",
        ));
    }
    let server = EngineServer::new(&options.root, &names);
    match args.listen {
        None => serve_stdio(server)?,
        Some(addr) => serve_http(server, addr, |bound| {
            // The first line a script waits for (port 0 picks a free port).
            eprintln!("patchspec mcp: listening on http://{bound}/mcp");
            if !is_loopback(&bound) {
                eprintln!(
                    "patchspec mcp: warning: {bound} is not a loopback address: \
                     anyone who can reach it can edit {}",
                    options.root.display()
                );
            }
        })?,
    }
    Ok(exit::OK)
}
