//! `patchspec mcp`: the command line of the MCP server. It checks the
//! workspace and the options and hands over to [`crate::mcp`], where the
//! server is.

use std::path::PathBuf;

use crate::error::Error;
use crate::exit;
use crate::mcp::{
    exposed_tools, is_loopback, serve_http, serve_stdio, EngineServer, HttpOptions, ServerOptions,
};

/// `patchspec mcp`.
#[derive(Clone, Debug, clap::Args)]
pub struct McpArgs {
    /// The workspace the tools work on (every path is relative to it).
    #[arg(long, value_name = "DIR")]
    pub root: PathBuf,
    /// Serve Streamable HTTP at http://ADDR/mcp instead of stdio. A loopback address
    /// (`127.0.0.1:PORT`, `[::1]:PORT`, `localhost:PORT`) unless you name another one:
    /// anyone who can reach ADDR can edit the workspace.
    #[arg(long, value_name = "ADDR", value_parser = crate::cmd_mcp::parse_listen)]
    pub listen: Option<std::net::SocketAddr>,
    /// With --listen: also accept requests whose `Origin` is ORIGIN (`scheme://host[:port]`,
    /// `:*` for any port; repeatable). Loopback origins and requests without one are always accepted.
    #[arg(long, value_name = "ORIGIN")]
    pub allow_origin: Vec<String>,
    /// With --listen: the most live sessions; an `initialize` past it gets HTTP 503.
    #[arg(long, value_name = "N", default_value_t = crate::mcp::http::DEFAULT_MAX_SESSIONS,
          value_parser = clap::value_parser!(usize))]
    pub max_sessions: usize,
    /// With --listen: a session without a message for this long ends (e.g. 300s, 90s).
    #[arg(long, value_name = "DURATION", default_value = "300s")]
    pub session_timeout: String,
    /// With --listen: a connection whose request head has not arrived this long after it
    /// went idle is closed (slow or half-sent requests; e.g. 10s, 2s).
    #[arg(long, value_name = "DURATION", default_value = "10s")]
    pub header_timeout: String,
    /// Expose only these tools (comma-separated; wire or model names, e.g. workspace.read_file or workspace_read_file).
    #[arg(long, value_name = "A,B", value_delimiter = ',')]
    pub tools: Option<Vec<String>>,
    /// Expose only the tools that never write.
    #[arg(long)]
    pub read_only: bool,
    /// The patch store.
    #[command(flatten)]
    pub store: crate::engine_store::StoreArgs,
    /// The events.
    #[command(flatten)]
    pub log: crate::logging::LogArgs,
}

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
    let http = HttpOptions {
        allowed_origins: args.allow_origin.clone(),
        max_sessions: args.max_sessions.max(1),
        session_timeout: crate::setup::parse_duration(&args.session_timeout)
            .map_err(|e| Error::usage(format!("--session-timeout: {e}")))?,
        header_timeout: crate::setup::parse_duration(&args.header_timeout)
            .map_err(|e| Error::usage(format!("--header-timeout: {e}")))?,
    };
    if args.listen.is_none() && !args.allow_origin.is_empty() {
        return Err(Error::usage("--allow-origin needs --listen"));
    }
    if let Some(bad) = args.allow_origin.iter().find(|o| !is_origin(o)) {
        return Err(Error::usage(format!(
            "--allow-origin {bad:?}: not an origin (scheme://host[:port], :* for any port, e.g. https://app.example.com:443)"
        )));
    }
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
        Some(addr) => serve_http(server, addr, &http, |bound| {
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

/// `--listen ADDR`: an IP socket address, or `localhost:PORT` (the IPv4
/// loopback, 127.0.0.1, which every client's `localhost` reaches). No other
/// name is resolved: the server listens exactly where it is told.
pub fn parse_listen(text: &str) -> Result<std::net::SocketAddr, String> {
    if let Ok(addr) = text.parse() {
        return Ok(addr);
    }
    match text.rsplit_once(':') {
        Some((host, port)) if host.eq_ignore_ascii_case("localhost") => port
            .parse::<u16>()
            .map(|port| std::net::SocketAddr::from(([127, 0, 0, 1], port)))
            .map_err(|e| format!("{text:?}: port {port:?}: {e}")),
        _ => Err(format!(
            "{text:?}: not an address (e.g. 127.0.0.1:8765, [::1]:8765, localhost:8765)"
        )),
    }
}

/// `scheme://host[:port]` (or `:*`), nothing after: what `--allow-origin`
/// takes (rmcp would silently ignore anything else).
fn is_origin(text: &str) -> bool {
    let Some((scheme, rest)) = text.split_once("://") else {
        return false;
    };
    let host = match rest.rsplit_once(':') {
        Some((host, port)) if !host.is_empty() && !host.ends_with(':') => {
            if port != "*" && port.parse::<u16>().is_err() {
                return false;
            }
            host
        }
        _ => rest,
    };
    !scheme.is_empty()
        && scheme
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
        && !host.is_empty()
        && !host.contains(['/', '?', '#', '@', ' '])
}

#[cfg(test)]
mod tests {
    use super::{is_origin, parse_listen};

    #[test]
    fn allow_origin_takes_origins_only() {
        for ok in [
            "https://app.example.com:443",
            "http://localhost:*",
            "http://[::1]:8080",
            "https://a.example",
        ] {
            assert!(is_origin(ok), "{ok}");
        }
        for bad in [
            "app.example.com",
            "https://a.example/",
            "https://a.example:x",
            "https://",
            "://a",
            "https://a.example/path",
        ] {
            assert!(!is_origin(bad), "{bad}");
        }
    }

    #[test]
    fn listen_takes_addresses_and_localhost() {
        assert_eq!(
            parse_listen("127.0.0.1:80").unwrap().to_string(),
            "127.0.0.1:80"
        );
        assert_eq!(parse_listen("[::1]:0").unwrap().to_string(), "[::1]:0");
        assert_eq!(
            parse_listen("localhost:0").unwrap().to_string(),
            "127.0.0.1:0"
        );
        assert_eq!(
            parse_listen("LocalHost:9").unwrap().to_string(),
            "127.0.0.1:9"
        );
        assert!(parse_listen("localhost").is_err());
        assert!(parse_listen("localhost:x").is_err());
        assert!(parse_listen("example.com:80").is_err());
    }
}
