//! `--log-format`: the engine's structured events (`patchspec_engine::events`)
//! on stderr, as JSON lines or as text, through `tracing-subscriber`.
//! Without the flag only errors are written (as text): a store that could
//! not record a call (C-store-write-failure).

use tracing_subscriber::filter::LevelFilter;

/// How events are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// One JSON object per line: `timestamp`, `level`, `target` and the event's fields.
    Json,
    /// One readable line per event.
    Text,
    /// Nothing, not even errors.
    Off,
}

/// `--log-format`.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct LogArgs {
    /// Write the engine's events (docs/tools.md, "Events") to stderr: `json` (JSON lines)
    /// or `text`; `off` for nothing. Default: errors only, as text.
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub log_format: Option<LogFormat>,
}

impl LogArgs {
    /// Install the subscriber for the rest of the process (once; a second
    /// call keeps the first).
    pub fn install(&self) {
        let (format, level) = match self.log_format {
            Some(LogFormat::Off) => return,
            Some(format) => (format, LevelFilter::INFO),
            None => (LogFormat::Text, LevelFilter::ERROR),
        };
        let builder = tracing_subscriber::fmt()
            .with_writer(std::io::stderr)
            .with_max_level(level)
            .with_ansi(false);
        let _ = match format {
            LogFormat::Json => builder
                .json()
                .flatten_event(true)
                .with_current_span(false)
                .with_span_list(false)
                .try_init(),
            _ => builder.try_init(),
        };
    }
}
