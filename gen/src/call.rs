//! Whole tool calls for `patchspec fuzz`: a workspace (files with their
//! bytes and modes, directories, symbolic links), the session, and the
//! params of one call of `apply_patch`, `workspace_write_patch`,
//! `workspace_create_file` or `workspace.read_file`.
//!
//! Main types: [`CallInput`] (the `arbitrary` shape: one tool's input, and
//! which [`LINKS`] exist) and [`GenCall`] (what the runner sends and
//! materialises). [`generate`] turns a seed and a call index into a call
//! deterministically (a seeded PRNG's bytes read with `arbitrary`), so one
//! seed and one index always give the same call, whatever the parallelism;
//! `strategy` (behind the `proptest` feature) is the same as a proptest strategy.
//!
//! The envelope and batch inputs are those of the cargo-fuzz targets
//! ([`crate::envelope`], [`crate::write_patch`]): envelopes with near
//! misses, CRLF, no final newline, duplicate contexts, moves and path
//! tricks; line-patch batches planned against the files. Create and read
//! calls add content with CRLF, lone CR and BOM, size limits, `maxBytes` of
//! every type and ActiveFiles.

use std::collections::BTreeMap;

use arbitrary::{Arbitrary, Unstructured};
use serde_json::{json, Map, Value};

use crate::envelope::{self, workspace, FileSpec, PathSpec, Text, LINKS};
use crate::write_patch;

/// The tools [`generate`] makes calls of.
pub const TOOLS: &[&str] = &[
    "apply_patch",
    "workspace_write_patch",
    "workspace_create_file",
    "workspace.read_file",
];

/// A value of any JSON type, for params that must be refused.
#[derive(Arbitrary, Debug, Clone)]
pub enum Odd {
    /// `null`.
    Null,
    /// A number.
    Number(i8),
    /// A string.
    Str(Text),
    /// A boolean.
    Bool(bool),
}

impl Odd {
    fn get(&self) -> Value {
        match self {
            Odd::Null => Value::Null,
            Odd::Number(n) => json!(n),
            Odd::Str(t) => json!(t.get()),
            Odd::Bool(b) => json!(b),
        }
    }
}

/// `workspace_create_file`'s content.
#[derive(Arbitrary, Debug)]
pub enum ContentSpec {
    /// Lines joined with one ending.
    Lines {
        /// The lines.
        lines: Vec<Text>,
        /// 0: `\n`, 1: `\r\n`, 2: lone `\r`, 3: mixed.
        eol: u8,
        /// End with the ending.
        final_newline: bool,
        /// Lead with U+FEFF.
        bom: bool,
    },
    /// Absent.
    Missing,
    /// Not a string.
    Odd(Odd),
}

/// The input of a `workspace_create_file` call.
#[derive(Arbitrary, Debug)]
pub struct CreateInput {
    base: [FileSpec; 3],
    files: Vec<FileSpec>,
    path: PathSpec,
    content: ContentSpec,
    overwrite: Option<Result<bool, Odd>>,
    /// `session.limits.createFileMaxBytes`.
    limit: Option<u8>,
}

/// `workspace.read_file`'s `maxBytes`.
#[derive(Arbitrary, Debug)]
pub enum MaxBytes {
    /// `1..=40`.
    Small(u8),
    /// Larger than any file here.
    Big,
    /// `0`.
    Zero,
    /// A negative number.
    Negative,
    /// `3.0`.
    Float,
    /// Not a number.
    Odd(Odd),
}

/// The input of a `workspace.read_file` call.
#[derive(Arbitrary, Debug)]
pub struct ReadInput {
    base: [FileSpec; 3],
    files: Vec<FileSpec>,
    path: PathSpec,
    max_bytes: Option<MaxBytes>,
    /// One ActiveFiles entry.
    active: Option<(PathSpec, Text)>,
}

/// One tool's input.
#[derive(Arbitrary, Debug)]
pub enum ToolInput {
    /// `apply_patch`.
    Envelope(envelope::ApplyInput),
    /// `workspace_write_patch`.
    WritePatch(write_patch::ApplyInput),
    /// `workspace_create_file`.
    Create(CreateInput),
    /// `workspace.read_file`.
    Read(ReadInput),
}

/// A whole call: the tool's input and which [`LINKS`] exist (bit `i`: link `i`).
#[derive(Arbitrary, Debug)]
pub struct CallInput {
    /// The tool's input.
    pub input: ToolInput,
    /// Which links exist; most calls have none (`links % 4 != 0` → none).
    pub links: u8,
}

/// A generated tool call with its workspace.
#[derive(Clone, Debug, PartialEq)]
pub struct GenCall {
    /// The tool's wire name.
    pub tool: &'static str,
    /// The params object.
    pub params: Map<String, Value>,
    /// (path, bytes, mode) of every regular file.
    pub files: Vec<(String, Vec<u8>, u32)>,
    /// Directories (parents of files exist anyway).
    pub dirs: Vec<String>,
    /// Symbolic links: (path, target as written).
    pub symlinks: Vec<(String, String)>,
    /// `session.activeFiles`.
    pub active_files: BTreeMap<String, String>,
    /// `session.limits.createFileMaxBytes`.
    pub create_file_max_bytes: Option<u64>,
}

impl GenCall {
    /// The corpus tags that describe what the call needs, so an executor's
    /// `unsupportedTags` and `--skip-tag` can rule it out: `symlink`,
    /// `modes`, `limits`, `active-files`, `crlf`, `bom`, `non-utf8`, and,
    /// as the corpus tags such cases, `partial` (`atomic: false`) and
    /// `stale` (`expectedSha256ByPath`).
    pub fn tags(&self) -> Vec<String> {
        let mut tags = Vec::new();
        let mut add = |t: &str, on: bool| {
            if on {
                tags.push(t.to_string());
            }
        };
        let text_has = |needle: &[u8]| {
            self.files
                .iter()
                .any(|(_, b, _)| b.windows(needle.len()).any(|w| w == needle))
                || self.params.values().any(|v| {
                    v.as_str()
                        .is_some_and(|s| s.as_bytes().windows(needle.len()).any(|w| w == needle))
                })
        };
        add("symlink", !self.symlinks.is_empty());
        add("partial", self.params.get("atomic") == Some(&json!(false)));
        add("stale", self.params.contains_key("expectedSha256ByPath"));
        add("modes", self.files.iter().any(|(_, _, m)| *m != 0o644));
        add("limits", self.create_file_max_bytes.is_some());
        add("active-files", !self.active_files.is_empty());
        add("crlf", text_has(b"\r\n"));
        add("bom", text_has("\u{feff}".as_bytes()));
        add(
            "non-utf8",
            self.files
                .iter()
                .any(|(_, b, _)| std::str::from_utf8(b).is_err()),
        );
        tags
    }
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

impl CallInput {
    /// The call.
    pub fn call(&self) -> GenCall {
        let mut call = match &self.input {
            ToolInput::Envelope(input) => {
                let s = input.scenario();
                let mut params = Map::new();
                params.insert("patch".into(), json!(lossy(&s.patch)));
                if !s.atomic {
                    params.insert("atomic".into(), json!(false));
                }
                if !s.expected.is_empty() {
                    params.insert("expectedSha256ByPath".into(), json!(s.expected));
                }
                GenCall::new("apply_patch", params, s.files, s.dirs)
            }
            ToolInput::WritePatch(input) => {
                let s = input.scenario();
                let params = match s.batch {
                    Value::Object(m) => m,
                    other => Map::from_iter([("files".to_string(), other)]),
                };
                GenCall::new("workspace_write_patch", params, s.files, s.dirs)
            }
            ToolInput::Create(c) => c.call(),
            ToolInput::Read(r) => r.call(),
        };
        if self.links.is_multiple_of(4) {
            let present = |p: &str| {
                call.files.iter().any(|(f, _, _)| f == p) || call.dirs.iter().any(|d| d == p)
            };
            for (i, (path, target)) in LINKS.iter().enumerate() {
                if (self.links >> (2 + i)) & 1 == 1 && !present(path) {
                    call.symlinks.push((path.to_string(), target.to_string()));
                }
            }
            if call.symlinks.is_empty() {
                call.symlinks
                    .push((LINKS[2].0.to_string(), LINKS[2].1.to_string()));
            }
        }
        call
    }
}

impl GenCall {
    fn new(
        tool: &'static str,
        params: Map<String, Value>,
        files: Vec<(String, Vec<u8>, u32)>,
        dirs: Vec<String>,
    ) -> GenCall {
        GenCall {
            tool,
            params,
            files,
            dirs,
            symlinks: Vec::new(),
            active_files: BTreeMap::new(),
            create_file_max_bytes: None,
        }
    }
}

impl CreateInput {
    fn call(&self) -> GenCall {
        let (files, dirs, _) = workspace(&self.base, &self.files);
        let mut params = Map::new();
        params.insert("path".into(), json!(self.path.get()));
        match &self.content {
            ContentSpec::Lines {
                lines,
                eol,
                final_newline,
                bom,
            } => {
                let mut text = String::new();
                if *bom {
                    text.push('\u{feff}');
                }
                let lines: Vec<String> = lines.iter().take(6).map(Text::get).collect();
                for (i, l) in lines.iter().enumerate() {
                    text.push_str(l);
                    if i + 1 < lines.len() || *final_newline {
                        text.push_str(match (eol % 4, i % 3) {
                            (0, _) | (3, 0) => "\n",
                            (1, _) | (3, 1) => "\r\n",
                            _ => "\r",
                        });
                    }
                }
                params.insert("content".into(), json!(text));
            }
            ContentSpec::Missing => {}
            ContentSpec::Odd(o) => {
                params.insert("content".into(), o.get());
            }
        }
        match &self.overwrite {
            Some(Ok(b)) => {
                params.insert("overwrite".into(), json!(b));
            }
            Some(Err(o)) => {
                params.insert("overwrite".into(), o.get());
            }
            None => {}
        }
        let mut call = GenCall::new("workspace_create_file", params, files, dirs);
        call.create_file_max_bytes = self.limit.map(|n| u64::from(n % 24));
        call
    }
}

impl ReadInput {
    fn call(&self) -> GenCall {
        let (files, dirs, _) = workspace(&self.base, &self.files);
        let mut params = Map::new();
        params.insert("path".into(), json!(self.path.get()));
        if let Some(m) = &self.max_bytes {
            let v = match m {
                MaxBytes::Small(n) => json!(1 + n % 40),
                MaxBytes::Big => json!(1_000_000),
                MaxBytes::Zero => json!(0),
                MaxBytes::Negative => json!(-1),
                MaxBytes::Float => json!(3.0),
                MaxBytes::Odd(o) => o.get(),
            };
            params.insert("maxBytes".into(), v);
        }
        let mut call = GenCall::new("workspace.read_file", params, files, dirs);
        if let Some((p, t)) = &self.active {
            call.active_files.insert(p.get(), t.get());
        }
        call
    }
}

/// The per-call PRNG seed: `seed` and `index` mixed (SplitMix64), so
/// neighbouring indexes give unrelated calls.
pub fn call_seed(seed: u64, index: u64) -> u64 {
    let mut z = seed
        .wrapping_add(index.wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The bytes a call is read from: not uniform, which would make nearly
/// every flag true half the time (a BOM on every other file) and every
/// enum pick uniform, but mostly zeros and small values, so most calls
/// are plain and each oddity is rare enough to be the one that matters.
fn biased_bytes(rng: &mut fastrand::Rng) -> Vec<u8> {
    let len = rng.usize(64..1024);
    // Half the calls from plain random bytes (long collections, every
    // oddity often), half from bytes leaning to zero (plain calls).
    let lean = rng.bool();
    (0..len)
        .map(|_| match (lean, rng.u8(..8)) {
            (true, 0..=1) => 0,
            (true, 2..=4) => rng.u8(1..8),
            _ => rng.u8(..),
        })
        .collect()
}

/// Call number `index` of the run seeded `seed`, among `tools` (a subset of
/// [`TOOLS`]; `None` when it holds none of them). `accept` may refuse a
/// call (its tags are skipped): the next candidate of the same index is
/// tried, up to 32; `None` when none is accepted.
pub fn generate(
    seed: u64,
    index: u64,
    tools: &[&str],
    accept: &dyn Fn(&GenCall) -> bool,
) -> Option<GenCall> {
    let tools: Vec<usize> = (0..TOOLS.len())
        .filter(|i| tools.contains(&TOOLS[*i]))
        .collect();
    if tools.is_empty() {
        return None;
    }
    let mut rng = fastrand::Rng::with_seed(call_seed(seed, index));
    for _ in 0..32 {
        let bytes = biased_bytes(&mut rng);
        let tool = tools[rng.usize(..tools.len())];
        let call = from_bytes(tool, &bytes);
        if accept(&call) {
            return Some(call);
        }
    }
    None
}

/// The call of tool `TOOLS[tool]` that `bytes` describe (read with `arbitrary`).
pub fn from_bytes(tool: usize, bytes: &[u8]) -> GenCall {
    let mut u = Unstructured::new(bytes);
    // `arbitrary` never fails on structs of these shapes: exhausted input
    // reads as zeros and empty collections.
    let input = match tool {
        0 => envelope::ApplyInput::arbitrary(&mut u).map(|mut input| {
            // Half the envelopes plain: blind generation rarely builds one
            // that applies otherwise.
            if bytes.first().is_some_and(|b| b.is_multiple_of(2)) {
                input.tame();
            }
            ToolInput::Envelope(input)
        }),
        1 => write_patch::ApplyInput::arbitrary(&mut u).map(ToolInput::WritePatch),
        2 => CreateInput::arbitrary(&mut u).map(ToolInput::Create),
        _ => ReadInput::arbitrary(&mut u).map(ToolInput::Read),
    };
    let links = u8::arbitrary(&mut u).unwrap_or(1);
    match input {
        Ok(input) => CallInput { input, links }.call(),
        Err(_) => {
            let mut u = Unstructured::new(&[]);
            CallInput::arbitrary(&mut u)
                .expect("arbitrary reads an empty input as the default shape")
                .call()
        }
    }
}

/// The generator as a proptest strategy: any call of any tool.
#[cfg(feature = "proptest")]
pub fn strategy() -> impl proptest::strategy::Strategy<Value = GenCall> {
    use proptest::prelude::*;
    (
        0..TOOLS.len(),
        proptest::collection::vec(any::<u8>(), 16..1024),
    )
        .prop_map(|(tool, bytes)| from_bytes(tool, &bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_seed_and_index_give_one_call() {
        for i in 0..50 {
            let a = generate(7, i, TOOLS, &|_| true);
            let b = generate(7, i, TOOLS, &|_| true);
            assert_eq!(a, b);
        }
        let differ = (0..50)
            .filter(|&i| generate(7, i, TOOLS, &|_| true) != generate(8, i, TOOLS, &|_| true))
            .count();
        assert!(differ > 40, "only {differ} of 50 calls depend on the seed");
    }

    #[test]
    fn only_the_asked_tools_are_generated_and_refusals_are_retried() {
        for i in 0..100 {
            let c = generate(1, i, &["workspace.read_file"], &|_| true).expect("a call");
            assert_eq!(c.tool, "workspace.read_file");
            let c = generate(1, i, TOOLS, &|c| c.symlinks.is_empty()).expect("a call");
            assert!(c.symlinks.is_empty());
        }
        assert_eq!(generate(1, 0, &["read_file"], &|_| true), None);
    }

    #[test]
    fn the_generators_reach_every_tool_and_the_interesting_shapes() {
        let calls: Vec<GenCall> = (0..2000)
            .filter_map(|i| generate(3, i, TOOLS, &|_| true))
            .collect();
        for tool in TOOLS {
            assert!(
                calls.iter().filter(|c| c.tool == *tool).count() > 300,
                "{tool}"
            );
        }
        let count = |f: &dyn Fn(&GenCall) -> bool| calls.iter().filter(|c| f(c)).count();
        let patch = |c: &GenCall| {
            c.params
                .get("patch")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        /// A shape's name, its test, and how many of the calls at least have it.
        type Shape<'a> = (&'a str, &'a dyn Fn(&GenCall) -> bool, usize);
        for c in &calls {
            let tags = c.tags();
            assert_eq!(
                tags.contains(&"partial".to_string()),
                c.params.get("atomic") == Some(&json!(false))
            );
            assert_eq!(
                tags.contains(&"stale".to_string()),
                c.params.contains_key("expectedSha256ByPath")
            );
        }
        let shapes: [Shape<'_>; 9] = [
            ("symlinks", &|c| !c.symlinks.is_empty(), 100),
            ("crlf", &|c| c.tags().contains(&"crlf".to_string()), 100),
            ("move", &|c| patch(c).contains("*** Move"), 50),
            ("end of file", &|c| patch(c).contains("*** End of File"), 5),
            ("escape", &|c| patch(c).contains("../"), 20),
            (
                "near miss",
                &|c| {
                    patch(c).lines().any(|l| {
                        (l.starts_with(' ') || l.starts_with('-'))
                            && (l.ends_with(' ') || l.ends_with('\t'))
                    })
                },
                5,
            ),
            (
                "stale check",
                &|c| c.params.contains_key("expectedSha256ByPath"),
                50,
            ),
            ("active files", &|c| !c.active_files.is_empty(), 50),
            ("limits", &|c| c.create_file_max_bytes.is_some(), 50),
        ];
        for (name, shape, least) in shapes {
            let n = count(shape);
            assert!(n >= least, "{name}: {n} of 2000 calls, fewer than {least}");
        }
    }
}
