//! `call_chain` (websocket-tool-protocol.md): who calls a Java method, and
//! what it calls, to a given depth, over the workspace's `.java` files.
//!
//! The main type is [`Index`]: every `.java` file the workspace walk lists
//! ([`crate::tools::ide::walk_files`], so build output and ignored files are
//! left out) parsed with tree-sitter-java, giving type declarations, method
//! and constructor declarations, and call sites (`m()`, `x.m()`, `new T()`,
//! `this(...)`, `super(...)`) with the method or initializer they sit in.
//!
//! Resolution is by name, not by the Java type system (C-ide-chain-resolution):
//! a call's receiver is typed only from what is written where it is used (a
//! local variable, parameter or field declared with a type, `this`, `super`,
//! a class name, `new T()`); such a call links to the methods of that name and
//! argument count in that type, its supertypes and its subtypes (virtual
//! dispatch), supertypes known by the simple names in `extends`/`implements`.
//! A call whose receiver has no declared type (a method result, `var`, a
//! chain) links to every method of that name and argument count
//! (`"resolution": "name"`). Overloads are told apart by argument count only;
//! no imports, generics or inference. A call that links to no workspace
//! method is listed as `external` among callees.
//!
//! The target (`ClassName.methodName`): the class part is a type's simple
//! name or a dotted suffix of its qualified name (`pkg.Outer.Inner`); every
//! overload of the method in that one type is the target. No such type or
//! method is `method_not_found`; the method in several types is
//! `ambiguous_method`, with the candidates (C-ide-chain-target).
//!
//! Cost, for S bytes of Java source: a token count first (one pass, every
//! byte read once): a file of more than [`MAX_FILE_TOKENS`] is not parsed
//! but listed in `skippedFiles` (C-ide-chain-file-size), which bounds the
//! parser's tree (70 to 250 bytes a token) at one file's worth. Parsing
//! (tree-sitter) and indexing the rest are one pass each, every syntax node visited once with explicit stacks (no
//! recursion; a node with no named children is counted, never pushed, so a
//! chain `a.b().c()…` holds one pending node per level): O(S) time and
//! memory, the index keeping a fixed-size record per call site plus its
//! name. How an external call reads is built only when shown, from at most
//! 61 characters of its receiver. tree-sitter's syntax tree (70 to 110
//! bytes a node, one file at a time) dominates the memory.
//! Qualified names are not stored but rebuilt from parent links when shown,
//! and type nesting is limited to [`MAX_TYPE_NESTING`] levels
//! (`nesting_too_deep` past it, C-ide-chain-nesting), so resolving an
//! unqualified call walks at most that many enclosing types: linking is
//! O(calls × [`MAX_TYPE_NESTING`]) plus the supertypes and declarations a
//! link reaches. Each answer tree holds at most [`MAX_NODES`] nodes, each
//! showing at most [`MAX_SITES_PER_NODE`] call-site lines
//! (C-ide-chain-sites), and each method's level of a tree is built once
//! however often the method is shown: building a tree is O(the calls of
//! the methods it expands + [`MAX_NODES`] × [`MAX_SITES_PER_NODE`]). The
//! `work_is_linear_*`, `*_is_bounded`, `*_summarised_once` and
//! `*_token_limit_*` tests count the steps.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{json, Map, Value};
use tree_sitter::Node;

use crate::error::{IdeErrorKind, Reason};
use crate::fs::Fs;
use crate::tools::ide::{out_of_range, walk_files, IdeError, IdeTool, Params};

mod index;

/// The largest `depth` accepted.
pub const MAX_DEPTH: u64 = 10;

/// At most this many nodes in each of the callers and callees trees; past
/// it the tree is cut (`truncated`), breadth first (C-ide-chain-depth).
pub const MAX_NODES: usize = 1000;

/// At most this many `callSites` entries in one node; past it the list is
/// cut and says `callSitesTruncated: true` (C-ide-chain-sites). With
/// [`MAX_NODES`], it bounds an answer whatever the source: without it, a
/// method with S call sites shown under each of a thousand parents made an
/// answer of a thousand times S entries (a 70 KB file, a 360 MB answer).
pub const MAX_SITES_PER_NODE: usize = 100;

/// The most Java tokens a file may hold to be parsed and indexed
/// (one counting pass, before any parse); a bigger file is left out and
/// listed in `skippedFiles` (C-ide-chain-file-size). tree-sitter's syntax
/// tree and parse stack cost 70 to 250 bytes a token (the most for short
/// statements, `c();` over and over), so this bounds one file's parse near
/// 60 MB and half a second; hand-written Java runs 4 to 8 bytes a token,
/// so the limit is met near 1 to 2 MB of source, where IDEs stop analysing
/// a file too (IntelliJ's default is 2.5 MB); what passes it is generated
/// code.
pub const MAX_FILE_TOKENS: usize = 250_000;

/// The deepest nesting of type declarations indexed (a top-level class is
/// level 1): a file nesting deeper is refused, `nesting_too_deep`
/// (C-ide-chain-nesting). Resolving an unqualified call walks the enclosing
/// types outward, so this bounds that walk, and the length of a qualified
/// name in segments.
pub const MAX_TYPE_NESTING: usize = 64;

/// The longest receiver text kept for an external callee's `method`, in
/// characters (longer ones are cut with `...`).
const MAX_DISPLAY_CHARS: usize = 60;

/// The params of `call_chain`, for the catalog's schema; [`parse`] reads
/// them into [`ChainArgs`] (the corpus test holds the two in agreement).
/// Unknown keys are ignored; `null` counts as absent.
#[derive(Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(title = "call_chain params")]
pub struct CallChainParams {
    /// The target, `ClassName.methodName`: the class part a type's simple
    /// name or a dotted suffix of its qualified name (`pkg.Outer.Inner.run`).
    /// Each part is a Java identifier (the pattern says only "dot-separated,
    /// no spaces": identifiers are checked by the tool, `invalid_value`).
    #[schemars(regex(pattern = r"^[^.\s]+(\.[^.\s]+)+$"))]
    pub method: String,
    /// `callers`, `callees` or `both` (default).
    pub direction: Option<ChainDirection>,
    /// Levels to follow (1 to 10, default 1).
    #[schemars(range(min = 1, max = 10))]
    pub depth: Option<u64>,
    /// Include each declaration's source text (default false).
    pub include_source: Option<bool>,
}

/// `direction` of `call_chain`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ChainDirection {
    /// Who calls the method.
    Callers,
    /// What the method calls.
    Callees,
    /// Both trees.
    Both,
}

/// A method declaration: an entry of `declarations`, and the start of a
/// tree node (which adds `callSites`, `external`, its children, ...).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MethodNode {
    /// `SimpleClass.name` (`<init>` for a constructor).
    pub method: String,
    /// The declaring type's qualified name.
    pub class: String,
    /// The declaration's signature as written.
    pub signature: String,
    /// The file, relative to the workspace root.
    pub file: String,
    /// First line of the declaration (1-based).
    pub line: usize,
    /// Last line of the declaration.
    pub end_line: usize,
    /// The declaration's text, with `includeSource`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

/// The success body of `call_chain`. The tree nodes (a recursive shape:
/// a [`MethodNode`] plus `callSites`, `external`, `recursive`, `truncated`
/// and its own `callers`/`callees`; C-ide-chain-result) are objects to the
/// schema: a recursive type would need `$ref`, which the catalog avoids.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChainBody {
    /// `method`, as given.
    pub method: String,
    /// The direction followed.
    #[schemars(extend("enum" = ["callers", "callees", "both"]))]
    pub direction: &'static str,
    /// The depth followed.
    pub depth: u64,
    /// Whether declarations carry their source.
    pub include_source: bool,
    /// `.java` files parsed.
    pub files_parsed: usize,
    /// Files with syntax errors (parsed anyway, error-tolerant).
    pub syntax_errors: Vec<String>,
    /// Files not parsed: over the token limit (C-ide-chain-file-size).
    pub skipped_files: Vec<SkippedFile>,
    /// Every overload of the target.
    pub declarations: Vec<MethodNode>,
    /// The callers tree (absent when `direction` is `callees`): nodes
    /// with `method`, `class`, `file`, `line`, `callSites` and their own
    /// `callers`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub callers: Option<Vec<Value>>,
    /// The callees tree (absent when `direction` is `callers`): nodes
    /// with `method`, `external`, `callSites` and, for workspace methods,
    /// `class`, `file`, `line` and their own `callees`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub callees: Option<Vec<Value>>,
    /// True when a tree was cut at the node limit.
    pub truncated: bool,
}

/// A `.java` file `call_chain` did not parse (C-ide-chain-file-size).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct SkippedFile {
    /// The file, relative to the workspace.
    pub path: String,
    /// Why: `too_large` (over 250,000 tokens).
    #[schemars(extend("enum" = ["too_large"]))]
    pub reason: &'static str,
    /// The limit passed, in tokens.
    pub limit: usize,
}

/// What to trace: `call_chain`'s params, checked. Built from JSON by the
/// wire, or in Rust with [`ChainArgs::new`] (the wire's defaults) and its
/// public fields. A `method` that is not `ClassName.methodName` (Java
/// identifiers) or a `depth` outside 1 to 10 is
/// `invalid_params`, as on the wire.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChainArgs {
    /// The target, `ClassName.methodName`: the class part a type's simple
    /// name or a dotted suffix of its qualified name (`pkg.Outer.Inner.run`).
    pub method: String,
    /// `direction` (default both).
    pub direction: ChainDirection,
    /// `depth` (default 1, at most 10).
    pub depth: u64,
    /// `includeSource` (default false).
    pub include_source: bool,
}

fn is_ident(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_alphanumeric() || c == '_' || c == '$')
}

impl ChainArgs {
    /// Both directions from `method`, one level deep, without source: the
    /// wire's defaults.
    pub fn new(method: impl Into<String>) -> ChainArgs {
        ChainArgs {
            method: method.into(),
            direction: ChainDirection::Both,
            depth: 1,
            include_source: false,
        }
    }

    /// `invalid_params` for what [`parse`] refuses: a `method` that is not
    /// `ClassName.methodName`, a `depth` outside 1 to [`MAX_DEPTH`].
    pub(crate) fn check(&self) -> Result<(), IdeError> {
        target_parts(&self.method)?;
        if !(1..=MAX_DEPTH).contains(&self.depth) {
            return Err(out_of_range("depth", 1, MAX_DEPTH, self.depth));
        }
        Ok(())
    }

    /// The class part (`a.b.Foo` in `a.b.Foo.bar`) and the method name.
    fn parts(&self) -> Result<(&str, &str), IdeError> {
        target_parts(&self.method)
    }
}

/// `method`'s class part and method name, each part a Java identifier.
fn target_parts(method: &str) -> Result<(&str, &str), IdeError> {
    let bad_method = || {
        IdeError::invalid(
            "method",
            Reason::InvalidValue,
            format!("'method' must be ClassName.methodName (e.g. OrderService.placeOrder), got {method:?}"),
        )
    };
    let (class, name) = method.rsplit_once('.').ok_or_else(bad_method)?;
    if !is_ident(name) || class.split('.').any(|c| !is_ident(c)) {
        return Err(bad_method());
    }
    Ok((class, name))
}

/// Check the params (C-ide-params), before any I/O.
pub fn parse(params: &Value) -> Result<ChainArgs, IdeError> {
    let p = Params::of(params)?;
    let method = p.req_str("method", false)?;
    target_parts(method)?;
    let direction = match p.opt_str("direction")? {
        None | Some("both") => ChainDirection::Both,
        Some("callers") => ChainDirection::Callers,
        Some("callees") => ChainDirection::Callees,
        Some(other) => {
            return Err(IdeError::invalid(
                "direction",
                Reason::InvalidValue,
                format!("'direction' must be \"callers\", \"callees\" or \"both\", got {other:?}"),
            ))
        }
    };
    let depth = p.int("depth", 1, MAX_DEPTH)?.unwrap_or(1);
    let include_source = p.bool_or("includeSource", false)?;
    Ok(ChainArgs {
        method: method.to_string(),
        direction,
        depth,
        include_source,
    })
}

/// A class, interface, enum, record or annotation type.
#[derive(Clone, Debug)]
pub struct TypeDecl {
    /// Simple name.
    pub simple: String,
    /// Index into [`Index::files`].
    pub file: usize,
    /// 1-based line of the declaration.
    pub line: usize,
    /// Simple names in `extends` / `implements`.
    pub supers: Vec<String>,
    /// The enclosing type, for a nested or local type: the parent link the
    /// qualified name is built from ([`Index::qualified`]), so nesting costs
    /// memory linear in the source, not quadratic.
    pub outer: Option<usize>,
    /// Nesting level: 1 for a top-level type.
    pub nesting: usize,
    /// Field name → simple name of its declared type.
    pub fields: HashMap<String, String>,
    /// A record's components: how many, and whether the last is varargs
    /// (`record R(A a, B... bs)`: `(2, true)`), the parameters of its
    /// compact constructor. `(0, false)` for other types.
    pub components: (usize, bool),
}

/// A method or constructor declaration.
#[derive(Clone, Debug)]
pub struct MethodDecl {
    /// Index into [`Index::types`].
    pub ty: usize,
    /// The method's name (a constructor's is its type's).
    pub name: String,
    /// True for a constructor.
    pub ctor: bool,
    /// Declared parameters.
    pub params: usize,
    /// The last parameter is `T...`.
    pub varargs: bool,
    /// Index into [`Index::files`].
    pub file: usize,
    /// 1-based first and last line.
    pub lines: (usize, usize),
    /// Byte range in the file.
    pub range: (usize, usize),
    /// `name(Type a, Type b)`, whitespace collapsed.
    pub signature: String,
}

/// Where a call site sits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Caller {
    /// In a method or constructor (index into [`Index::methods`]).
    Method(usize),
    /// In a field initializer or an initializer block of a type.
    Init {
        /// Index into [`Index::types`].
        ty: usize,
        /// `static` (`<clinit>`) or not (`<init>`).
        is_static: bool,
    },
}

/// What a call's receiver is, as far as the source says.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Recv {
    /// `m()` or `this.m()`.
    Implicit,
    /// `super.m()`.
    Super,
    /// A receiver whose declared type is this simple name.
    Typed(String),
    /// An identifier not declared in the method: a field or a class name.
    Ident(String),
    /// `this.f.m()`.
    ThisField(String),
    /// Anything else.
    Unknown,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CallKind {
    Method,
    New,
    This,
    Super,
}

/// One call site.
#[derive(Clone, Debug)]
pub struct CallSite {
    /// Index into [`Index::files`].
    pub file: usize,
    /// 1-based line.
    pub line: usize,
    /// The method or initializer it sits in.
    pub caller: Caller,
    name: String,
    kind: CallKind,
    args: usize,
    recv: Recv,
    /// The receiver's byte range in the file (`repo` in `repo.save()`):
    /// how an external callee reads is built from it only when shown
    /// ([`Index::display`]), not kept per call site.
    receiver: Option<(usize, usize)>,
    ty: usize,
}

/// How a call site was linked to declarations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Link {
    /// Through the receiver's declared type (or the enclosing type).
    Typed(Vec<usize>),
    /// By name and argument count only (receiver type unknown): to every
    /// method of that name that takes that many arguments (computed when
    /// needed, as such a link can reach thousands of declarations).
    ByName,
    /// To no workspace declaration.
    External,
}

impl Link {
    fn label(&self) -> &'static str {
        match self {
            Link::Typed(_) => "type",
            Link::ByName => "name",
            Link::External => "external",
        }
    }
}

/// One node-to-be of a callers or callees list.
#[derive(Clone)]
enum Entry {
    /// A caller and its call sites.
    Caller(Caller, Sites),
    /// A resolved callee and the call sites that reach it.
    Callee(usize, Sites),
    /// An external callee, by how it reads, and its call sites.
    External(String, Sites),
}

/// A node's call sites as its `callSites` shows them (C-ide-chain-sites):
/// each line (with how its calls were linked) once, in line order, at most
/// [`MAX_SITES_PER_NODE`] of them. Built once per list of call sites, so a
/// node costs O([`MAX_SITES_PER_NODE`]) to copy and to show however many
/// calls it stands for.
#[derive(Clone)]
struct Sites {
    /// Distinct (line, resolution) pairs in order; no resolution for an
    /// external callee's sites.
    shown: Vec<(usize, Option<&'static str>)>,
    /// How many calls the node stands for.
    calls: usize,
    /// More distinct lines than [`MAX_SITES_PER_NODE`]: `shown` is the first ones.
    cut: bool,
    /// The first call (in scan order): an initializer node's `file` and
    /// `line`, and the key callees are sorted by.
    first: usize,
}

/// The parsed Java sources of a workspace.
#[derive(Debug, Default)]
pub struct Index {
    /// Workspace-relative paths of the `.java` files, in walk order.
    pub files: Vec<String>,
    /// Each file's package (`None` for the default package).
    packages: Vec<Option<String>>,
    sources: Vec<Vec<u8>>,
    /// Files whose parse had syntax errors (indexed as far as it recovered).
    pub syntax_errors: Vec<String>,
    /// Files left out, over [`MAX_FILE_TOKENS`] tokens.
    pub skipped: Vec<String>,
    /// Every type declaration.
    pub types: Vec<TypeDecl>,
    /// Every method and constructor declaration.
    pub methods: Vec<MethodDecl>,
    /// Every call site.
    pub calls: Vec<CallSite>,
    /// One link per call site.
    pub links: Vec<Link>,
    by_simple: HashMap<String, Vec<usize>>,
    /// Simple name → the types that name it in `extends`/`implements`.
    subs: HashMap<String, Vec<usize>>,
    /// Method name → its (non-constructor) declarations.
    by_name: HashMap<String, Vec<usize>>,
    /// Type → its constructors.
    ctors: HashMap<usize, Vec<usize>>,
    /// Type → its (non-constructor) methods.
    members: HashMap<usize, Vec<usize>>,
    /// Call sites whose typed link reaches a declaration (reverse of `links`).
    callers_of: HashMap<usize, Vec<usize>>,
    /// Call sites linked by name, by the method name they call.
    name_sites: HashMap<String, Vec<usize>>,
    /// Call sites inside a method.
    calls_in: HashMap<usize, Vec<usize>>,
    /// Unit steps of indexing work (tests only), as the matcher counts.
    #[cfg(test)]
    work: std::cell::Cell<u64>,
    /// The most syntax nodes the scan held pending at once (tests only).
    #[cfg(test)]
    peak_pending: usize,
}

fn text(node: Node<'_>, src: &[u8]) -> String {
    String::from_utf8_lossy(&src[node.start_byte()..node.end_byte()]).into_owned()
}

/// `bytes` as text (lossy) with whitespace runs collapsed and trimmed, cut
/// to `max - 3` characters and `...` when longer than `max` (`max` ≥ 3):
/// reads O(`max`) characters (plus the whitespace among them), not the whole
/// text, so a receiver that is a long call chain (`this.c().c()…`) costs the
/// same as a short one.
fn display_prefix(bytes: &[u8], max: usize, steps: &mut u64) -> String {
    let mut out = String::new();
    let (mut count, mut gap) = (0, false);
    for c in lossy_chars(bytes) {
        *steps += 1;
        if c.is_whitespace() {
            gap = count > 0;
            continue;
        }
        if gap {
            out.push(' ');
            count += 1;
            gap = false;
        }
        out.push(c);
        count += 1;
        if count > max {
            return out.chars().take(max - 3).collect::<String>() + "...";
        }
    }
    out
}

/// How many bytes [`lossy_chars`] decodes at a time.
const DECODE_WINDOW: usize = 64;

/// The characters of `bytes` as `String::from_utf8_lossy` gives them (one
/// U+FFFD per maximal invalid sequence), decoded lazily [`DECODE_WINDOW`]
/// bytes at a time: taking the first k characters costs O(k), where
/// `utf8_chunks` would validate the whole rest first.
fn lossy_chars(bytes: &[u8]) -> impl Iterator<Item = char> + '_ {
    let mut pos = 0;
    let mut pending = "".chars();
    let mut bad = false;
    std::iter::from_fn(move || loop {
        if let Some(c) = pending.next() {
            return Some(c);
        }
        if bad {
            bad = false;
            return Some(char::REPLACEMENT_CHARACTER);
        }
        if pos >= bytes.len() {
            return None;
        }
        let end = (pos + DECODE_WINDOW).min(bytes.len());
        let window = &bytes[pos..end];
        match std::str::from_utf8(window) {
            Ok(text) => {
                pending = text.chars();
                pos = end;
            }
            Err(e) => {
                let valid = e.valid_up_to();
                pending = std::str::from_utf8(&window[..valid])
                    .unwrap_or_default()
                    .chars();
                match e.error_len() {
                    Some(n) => {
                        bad = true;
                        pos += valid + n;
                    }
                    // A character cut by the window's end: read it whole
                    // with the next window.
                    None if end < bytes.len() && valid > 0 => pos += valid,
                    None => {
                        bad = true;
                        pos = end;
                    }
                }
            }
        }
    })
}

fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn line(node: Node<'_>) -> usize {
    node.start_position().row + 1
}

fn named(node: Node<'_>) -> Vec<Node<'_>> {
    let mut c = node.walk();
    node.named_children(&mut c)
        .filter(|n| !n.is_extra())
        .collect()
}

impl Index {
    /// Count `n` unit steps of work (tests only).
    #[cfg(test)]
    fn tick(&self, n: u64) {
        self.work.set(self.work.get() + n);
    }

    #[cfg(not(test))]
    #[inline(always)]
    fn tick(&self, _n: u64) {}

    /// Every workspace type named by `simple`'s ancestors (transitively), not
    /// including the starting types.
    fn ancestors(&self, start: &[usize]) -> BTreeSet<usize> {
        let mut out = BTreeSet::new();
        let mut todo: Vec<usize> = start.to_vec();
        while let Some(t) = todo.pop() {
            for s in &self.types[t].supers {
                for &u in self.by_simple.get(s).map_or(&[][..], Vec::as_slice) {
                    if out.insert(u) {
                        todo.push(u);
                    }
                }
            }
        }
        out
    }

    fn descendants(&self, start: &[usize]) -> BTreeSet<usize> {
        let mut out = BTreeSet::new();
        let mut todo: Vec<usize> = start.to_vec();
        while let Some(t) = todo.pop() {
            let name = &self.types[t].simple;
            for &u in self.subs.get(name).map_or(&[][..], Vec::as_slice) {
                if out.insert(u) {
                    todo.push(u);
                }
            }
        }
        out
    }

    fn fits(m: &MethodDecl, args: usize) -> bool {
        m.params == args || (m.varargs && args + 1 >= m.params)
    }

    fn methods_in(
        &self,
        types: &BTreeSet<usize>,
        name: &str,
        ctor: bool,
        args: usize,
    ) -> Vec<usize> {
        let fits = |&i: &usize| Self::fits(&self.methods[i], args);
        let named = self.by_name.get(name).map_or(&[][..], Vec::as_slice);
        let mut found: Vec<usize> = if ctor {
            types
                .iter()
                .flat_map(|t| self.ctors.get(t).map_or(&[][..], Vec::as_slice))
                .copied()
                .filter(fits)
                .collect()
        } else if types.len() < named.len() {
            // Few types (the usual: a class and its supertypes): look in each.
            types
                .iter()
                .flat_map(|t| self.members.get(t).map_or(&[][..], Vec::as_slice))
                .copied()
                .filter(|&i| self.methods[i].name == name)
                .filter(fits)
                .collect()
        } else {
            named
                .iter()
                .copied()
                .filter(|i| types.contains(&self.methods[*i].ty))
                .filter(fits)
                .collect()
        };
        found.sort_unstable();
        found
    }

    fn typed(&self, t: &str, call: &CallSite) -> Link {
        let Some(start) = self.by_simple.get(t) else {
            return Link::External;
        };
        let mut set: BTreeSet<usize> = start.iter().copied().collect();
        set.extend(self.ancestors(start));
        if call.kind == CallKind::Method {
            set.extend(self.descendants(start));
        }
        let found = self.methods_in(&set, &call.name, call.kind == CallKind::New, call.args);
        if found.is_empty() {
            Link::External
        } else {
            Link::Typed(found)
        }
    }

    fn field_type(&self, ty: usize, name: &str, outward: bool) -> Option<String> {
        let mut t = Some(ty);
        while let Some(i) = t {
            self.tick(1);
            if let Some(f) = self.types[i].fields.get(name) {
                return Some(f.clone());
            }
            // Inherited fields of workspace supertypes.
            for a in self.ancestors(&[i]) {
                if let Some(f) = self.types[a].fields.get(name) {
                    return Some(f.clone());
                }
            }
            t = if outward { self.types[i].outer } else { None };
        }
        None
    }

    fn link(&self, i: usize) -> Link {
        let call = &self.calls[i];
        match call.kind {
            CallKind::New => return self.typed(&call.name, call),
            CallKind::This => {
                let set = BTreeSet::from([call.ty]);
                let found = self.methods_in(&set, "", true, call.args);
                return if found.is_empty() {
                    Link::External
                } else {
                    Link::Typed(found)
                };
            }
            CallKind::Super => {
                let set = self.ancestors(&[call.ty]);
                let found = self.methods_in(&set, "", true, call.args);
                return if found.is_empty() {
                    Link::External
                } else {
                    Link::Typed(found)
                };
            }
            CallKind::Method => {}
        }
        let recv = match &call.recv {
            Recv::Ident(id) => match self.field_type(call.ty, id, true) {
                Some(t) => Recv::Typed(t),
                None if self.by_simple.contains_key(id)
                    || id.chars().next().is_some_and(char::is_uppercase) =>
                {
                    Recv::Typed(id.clone())
                }
                None => Recv::Unknown,
            },
            Recv::ThisField(f) => self
                .field_type(call.ty, f, false)
                .map_or(Recv::Unknown, Recv::Typed),
            other => other.clone(),
        };
        match recv {
            Recv::Typed(t) => self.typed(&t, call),
            Recv::Implicit => {
                let mut t = Some(call.ty);
                while let Some(ty) = t {
                    self.tick(1);
                    let mut set = BTreeSet::from([ty]);
                    set.extend(self.ancestors(&[ty]));
                    let found = self.methods_in(&set, &call.name, false, call.args);
                    if !found.is_empty() {
                        return Link::Typed(found);
                    }
                    t = self.types[ty].outer;
                }
                Link::External
            }
            Recv::Super => {
                let set = self.ancestors(&[call.ty]);
                let found = self.methods_in(&set, &call.name, false, call.args);
                if found.is_empty() {
                    Link::External
                } else {
                    Link::Typed(found)
                }
            }
            Recv::Unknown | Recv::Ident(_) | Recv::ThisField(_) => {
                if self.by_name_targets(i).next().is_some() {
                    Link::ByName
                } else {
                    Link::External
                }
            }
        }
    }

    /// The qualified name of type `ty` (`pkg.Outer.Inner`), built from the
    /// parent links: O([`MAX_TYPE_NESTING`] + its length).
    pub fn qualified(&self, ty: usize) -> String {
        let mut names = Vec::new();
        let mut t = Some(ty);
        while let Some(i) = t {
            names.push(self.types[i].simple.as_str());
            t = self.types[i].outer;
        }
        if let Some(p) = &self.packages[self.types[ty].file] {
            names.push(p);
        }
        names.reverse();
        names.join(".")
    }

    /// Does type `ty`'s qualified name equal `class` or end with `.class`?
    /// Compared segment by segment from the end, without building the name.
    fn names(&self, ty: usize, class: &str) -> bool {
        let mut want = class.rsplit('.');
        let mut t = Some(ty);
        while let Some(i) = t {
            match want.next() {
                None => return true,
                Some(w) if w == self.types[i].simple => {}
                Some(_) => return false,
            }
            t = self.types[i].outer;
        }
        let rest: Vec<&str> = want.collect();
        if rest.is_empty() {
            return true;
        }
        // The rest must be a suffix of the package.
        let Some(p) = &self.packages[self.types[ty].file] else {
            return false;
        };
        let mut have = p.rsplit('.');
        rest.iter().all(|w| have.next() == Some(w))
    }

    /// How the files left out read in a message: empty when none were.
    fn skipped_note(&self) -> String {
        match self.skipped.as_slice() {
            [] => String::new(),
            [one] => format!("; {one} was not parsed: over {MAX_FILE_TOKENS} tokens"),
            [first, rest @ ..] => format!(
                "; {} files were not parsed, over {MAX_FILE_TOKENS} tokens each: {first} and {} more",
                rest.len() + 1,
                rest.len()
            ),
        }
    }

    /// The declarations `args` names (C-ide-chain-target).
    pub fn target(&self, args: &ChainArgs) -> Result<Vec<usize>, IdeError> {
        let (class, name) = args.parts()?;
        let simple = class.rsplit('.').next().unwrap_or(class);
        let types: Vec<usize> = self
            .by_simple
            .get(simple)
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .copied()
            .filter(|&t| self.names(t, class))
            .collect();
        if types.is_empty() {
            return Err(IdeError::new(
                IdeErrorKind::MethodNotFound,
                format!(
                    "no class, interface, enum or record named {class} in the workspace's Java sources ({} file{} parsed{})",
                    self.files.len(),
                    if self.files.len() == 1 { "" } else { "s" },
                    self.skipped_note()
                ),
            )
            .with("method", args.method.as_str())
            .because(Reason::NoSuchClass)
            .with("skippedFiles", self.skipped.clone()));
        }
        let mut by_type: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        for (i, m) in self.methods.iter().enumerate() {
            if types.contains(&m.ty) && m.name == name {
                by_type.entry(m.ty).or_default().push(i);
            }
        }
        match by_type.len() {
            1 => Ok(by_type.into_values().next().unwrap_or_default()),
            0 => {
                let available: BTreeSet<&str> = self
                    .methods
                    .iter()
                    .filter(|m| types.contains(&m.ty))
                    .map(|m| m.name.as_str())
                    .collect();
                let list: Vec<&str> = available.into_iter().collect();
                Err(IdeError::new(
                    IdeErrorKind::MethodNotFound,
                    format!(
                        "{class} has no method {name}{}",
                        if list.is_empty() {
                            String::from(" (it declares no methods)")
                        } else {
                            format!("; it declares: {}", list.join(", "))
                        }
                    ),
                )
                .with("method", args.method.as_str())
                .because(Reason::NoSuchMethod)
                .with("available", list))
            }
            _ => {
                let candidates: Vec<Value> = by_type
                    .keys()
                    .map(|&t| {
                        let d = &self.types[t];
                        json!({"class": self.qualified(t), "file": self.files[d.file], "line": d.line})
                    })
                    .collect();
                let names: Vec<String> = by_type
                    .keys()
                    .map(|&t| format!("{}.{name}", self.qualified(t)))
                    .collect();
                Err(IdeError::new(
                    IdeErrorKind::AmbiguousMethod,
                    format!(
                        "{} matches {} methods: {}; qualify the class name",
                        args.method,
                        names.len(),
                        names.join(", ")
                    ),
                )
                .with("method", args.method.as_str())
                .with("candidates", candidates))
            }
        }
    }

    fn source(&self, m: &MethodDecl) -> String {
        String::from_utf8_lossy(&self.sources[m.file][m.range.0..m.range.1]).into_owned()
    }

    fn method_node(&self, i: usize, include_source: bool) -> MethodNode {
        let m = &self.methods[i];
        let t = &self.types[m.ty];
        MethodNode {
            method: format!("{}.{}", t.simple, m.name),
            class: self.qualified(m.ty),
            signature: m.signature.clone(),
            file: self.files[m.file].clone(),
            line: m.lines.0,
            end_line: m.lines.1,
            source: include_source.then(|| self.source(m)),
        }
    }

    /// A method's node as a JSON object, for the trees to add members to.
    fn method_object(&self, i: usize, include_source: bool) -> Map<String, Value> {
        match crate::tools::wire::document(&self.method_node(i, include_source)) {
            Value::Object(o) => o,
            _ => Map::new(),
        }
    }

    /// Summarise the call sites `sites` (in scan order, not empty) of one
    /// node; `external` leaves their resolution out. O(k log k) for k sites.
    fn summarise(&self, sites: &[usize], external: bool) -> Sites {
        self.tick(sites.len() as u64);
        let mut shown: Vec<(usize, Option<&'static str>)> = sites
            .iter()
            .map(|&s| {
                let label = (!external).then(|| self.links[s].label());
                (self.calls[s].line, label)
            })
            .collect();
        shown.sort_unstable();
        shown.dedup();
        let cut = shown.len() > MAX_SITES_PER_NODE;
        shown.truncate(MAX_SITES_PER_NODE);
        shown.shrink_to_fit();
        Sites {
            shown,
            calls: sites.len(),
            cut,
            first: sites[0],
        }
    }

    /// Add a node's `callSites`, `calls` and, when cut, `callSitesTruncated`.
    fn put_sites(&self, o: &mut Map<String, Value>, sites: &Sites) {
        self.tick(sites.shown.len() as u64);
        let list: Vec<Value> = sites
            .shown
            .iter()
            .map(|&(line, resolution)| {
                let mut site = Map::with_capacity(2);
                site.insert("line".into(), line.into());
                if let Some(resolution) = resolution {
                    site.insert("resolution".into(), resolution.into());
                }
                Value::Object(site)
            })
            .collect();
        o.insert("callSites".into(), list.into());
        o.insert("calls".into(), sites.calls.into());
        if sites.cut {
            o.insert("callSitesTruncated".into(), true.into());
        }
    }

    /// The declarations a by-name call site links to.
    fn by_name_targets(&self, site: usize) -> impl Iterator<Item = usize> + '_ {
        let call = &self.calls[site];
        self.by_name
            .get(&call.name)
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .copied()
            .filter(move |&m| Self::fits(&self.methods[m], call.args))
    }

    /// The call sites that link to declaration `m`.
    fn sites_calling(&self, m: usize) -> impl Iterator<Item = usize> + '_ {
        let d = &self.methods[m];
        let typed = self.callers_of.get(&m).map_or(&[][..], Vec::as_slice);
        let named = if d.ctor {
            &[][..]
        } else {
            self.name_sites.get(&d.name).map_or(&[][..], Vec::as_slice)
        };
        typed.iter().copied().chain(
            named
                .iter()
                .copied()
                .filter(move |&s| Self::fits(d, self.calls[s].args)),
        )
    }

    /// One level of the tree below a set of methods, sorted; each entry is
    /// turned into a node by [`Index::node`] only if the budget allows.
    /// How call site `s` reads (`repo.save`, `new Order`, `this`): the
    /// receiver's first [`MAX_DISPLAY_CHARS`] characters, whitespace
    /// collapsed, then the name.
    fn display(&self, s: usize) -> String {
        let call = &self.calls[s];
        match (call.kind, call.receiver) {
            (CallKind::New, _) => format!("new {}", call.name),
            (CallKind::This, _) => "this".into(),
            (CallKind::Super, _) => "super".into(),
            (CallKind::Method, None) => call.name.clone(),
            (CallKind::Method, Some((start, end))) => {
                let mut steps = 0;
                let receiver = &self.sources[call.file][start..end];
                let text = display_prefix(receiver, MAX_DISPLAY_CHARS, &mut steps);
                self.tick(steps);
                format!("{text}.{}", call.name)
            }
        }
    }

    fn level(&self, of: &[usize], up: bool) -> Vec<Entry> {
        let mut sites: Vec<usize> = if up {
            of.iter().flat_map(|&m| self.sites_calling(m)).collect()
        } else {
            of.iter()
                .flat_map(|m| self.calls_in.get(m).map_or(&[][..], Vec::as_slice))
                .copied()
                .collect()
        };
        sites.sort_unstable();
        sites.dedup();
        let mut entries: Vec<((usize, usize, usize), Entry)> = Vec::new();
        if up {
            let mut groups: BTreeMap<Caller, Vec<usize>> = BTreeMap::new();
            for s in sites {
                groups.entry(self.calls[s].caller).or_default().push(s);
            }
            for (caller, sites) in groups {
                let key = match caller {
                    Caller::Method(m) => (self.methods[m].file, self.methods[m].lines.0, 0),
                    Caller::Init { .. } => {
                        (self.calls[sites[0]].file, self.calls[sites[0]].line, 0)
                    }
                };
                entries.push((key, Entry::Caller(caller, self.summarise(&sites, false))));
            }
        } else {
            // Resolved callees by declaration, external ones by how they read.
            let mut resolved: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
            let mut external: BTreeMap<String, Vec<usize>> = BTreeMap::new();
            for s in sites {
                match &self.links[s] {
                    Link::External => external.entry(self.display(s)).or_default().push(s),
                    Link::Typed(targets) => {
                        for &t in targets {
                            resolved.entry(t).or_default().push(s);
                        }
                    }
                    Link::ByName => {
                        for t in self.by_name_targets(s) {
                            resolved.entry(t).or_default().push(s);
                        }
                    }
                }
            }
            for (m, sites) in resolved {
                let d = &self.methods[m];
                entries.push((
                    (self.calls[sites[0]].line, d.file, d.lines.0),
                    Entry::Callee(m, self.summarise(&sites, false)),
                ));
            }
            for (display, sites) in external {
                entries.push((
                    (self.calls[sites[0]].line, usize::MAX, 0),
                    Entry::External(display, self.summarise(&sites, true)),
                ));
            }
        }
        entries.sort_by_key(|e| e.0);
        entries.into_iter().map(|(_, e)| e).collect()
    }

    /// The node for one entry, and the method it would expand to.
    fn node(&self, entry: &Entry, include_source: bool) -> (Map<String, Value>, Option<usize>) {
        match entry {
            Entry::Caller(Caller::Method(m), sites) => {
                let mut o = self.method_object(*m, include_source);
                self.put_sites(&mut o, sites);
                (o, Some(*m))
            }
            Entry::Caller(Caller::Init { ty, is_static }, sites) => {
                let t = &self.types[*ty];
                let first = &self.calls[sites.first];
                let mut o = Map::new();
                let name = if *is_static { "<clinit>" } else { "<init>" };
                o.insert("method".into(), format!("{}.{name}", t.simple).into());
                o.insert("class".into(), self.qualified(*ty).into());
                o.insert("file".into(), self.files[first.file].as_str().into());
                o.insert("line".into(), first.line.into());
                self.put_sites(&mut o, sites);
                (o, None)
            }
            Entry::Callee(m, sites) => {
                let mut o = self.method_object(*m, include_source);
                o.insert("external".into(), false.into());
                self.put_sites(&mut o, sites);
                (o, Some(*m))
            }
            Entry::External(display, sites) => {
                let mut o = Map::new();
                o.insert("method".into(), display.as_str().into());
                o.insert("external".into(), true.into());
                self.put_sites(&mut o, sites);
                (o, None)
            }
        }
    }

    /// The callers (`up`) or callees tree of `targets`, built breadth first
    /// to `args.depth` levels and at most [`MAX_NODES`] nodes
    /// (C-ide-chain-depth). Returns the tree and whether it was cut short.
    fn tree(&self, targets: &[usize], up: bool, args: &ChainArgs) -> (Vec<Value>, bool) {
        struct Slot {
            obj: Map<String, Value>,
            method: Option<usize>,
            parent: Option<usize>,
            level: u64,
            children: Option<Vec<usize>>,
        }
        let mut arena: Vec<Slot> = Vec::new();
        // A method shown under many parents is expanded from one list: its
        // level is built once (O(its calls)), not once per appearance.
        let mut levels: HashMap<usize, std::rc::Rc<Vec<Entry>>> = HashMap::new();
        let mut truncated = false;
        let mut roots = Vec::new();
        // `None` stands for the targets themselves.
        let mut queue = std::collections::VecDeque::from([(None::<usize>, 0u64)]);
        while let Some((parent, level)) = queue.pop_front() {
            if truncated {
                // Out of budget: what is still queued stays unexpanded.
                continue;
            }
            // Only the targets and resolved methods are queued (below).
            let level_entries = match parent.and_then(|p| arena[p].method) {
                None => std::rc::Rc::new(self.level(targets, up)),
                Some(m) => levels
                    .entry(m)
                    .or_insert_with(|| std::rc::Rc::new(self.level(&[m], up)))
                    .clone(),
            };
            let mut kids = Vec::new();
            for entry in level_entries.iter() {
                if arena.len() >= MAX_NODES {
                    truncated = true;
                    if let Some(p) = parent {
                        arena[p].obj.insert("truncated".into(), true.into());
                    }
                    break;
                }
                let (mut obj, method) = self.node(entry, args.include_source);
                // A method already on the way from the target is recursive.
                let mut on_path = method.is_some_and(|m| targets.contains(&m));
                let mut up_from = parent;
                while let (Some(p), Some(m), false) = (up_from, method, on_path) {
                    on_path = arena[p].method == Some(m);
                    up_from = arena[p].parent;
                }
                if on_path {
                    obj.insert("recursive".into(), true.into());
                }
                let id = arena.len();
                arena.push(Slot {
                    obj,
                    method: if on_path { None } else { method },
                    parent,
                    level: level + 1,
                    children: None,
                });
                kids.push(id);
                if level + 1 < args.depth && !on_path && method.is_some() {
                    queue.push_back((Some(id), level + 1));
                }
            }
            match parent {
                None => roots = kids,
                Some(p) => arena[p].children = Some(kids),
            }
        }
        // Nodes left unexpanded because the budget ran out say so.
        for slot in arena.iter_mut() {
            if slot.children.is_none() && slot.method.is_some() && slot.level < args.depth {
                slot.obj.insert("truncated".into(), true.into());
            }
        }
        let key = if up { "callers" } else { "callees" };
        fn render(arena: &mut Vec<Slot>, id: usize, key: &str) -> Value {
            let mut obj = std::mem::take(&mut arena[id].obj);
            if let Some(kids) = arena[id].children.take() {
                let list: Vec<Value> = kids.into_iter().map(|k| render(arena, k, key)).collect();
                obj.insert(key.into(), list.into());
            }
            Value::Object(obj)
        }
        let tree = roots
            .into_iter()
            .map(|r| render(&mut arena, r, key))
            .collect();
        (tree, truncated)
    }
}

/// Run the analysis on the workspace of `fs`.
pub fn analyse(fs: &dyn Fs, args: &ChainArgs) -> Result<ChainBody, IdeError> {
    args.check()?;
    let index = Index::build(fs)?;
    let targets = index.target(args)?;
    let declarations = targets
        .iter()
        .map(|&m| index.method_node(m, args.include_source))
        .collect();
    let mut truncated = false;
    let mut tree = |up: bool| {
        let (tree, cut) = index.tree(&targets, up, args);
        truncated |= cut;
        tree
    };
    let callers = (args.direction != ChainDirection::Callees).then(|| tree(true));
    let callees = (args.direction != ChainDirection::Callers).then(|| tree(false));
    Ok(ChainBody {
        method: args.method.clone(),
        direction: match args.direction {
            ChainDirection::Callers => "callers",
            ChainDirection::Callees => "callees",
            ChainDirection::Both => "both",
        },
        depth: args.depth,
        include_source: args.include_source,
        files_parsed: index.files.len(),
        syntax_errors: index.syntax_errors.clone(),
        skipped_files: index
            .skipped
            .iter()
            .map(|path| SkippedFile {
                path: path.clone(),
                reason: "too_large",
                limit: MAX_FILE_TOKENS,
            })
            .collect(),
        declarations,
        callers,
        callees,
        truncated,
    })
}

/// The `call_chain` tool, as [`crate::tools::REGISTRY`] runs it
/// ([`crate::tools::ide::run_with`]).
pub struct CallChain;

impl IdeTool for CallChain {
    type Args = ChainArgs;
    type Body = ChainBody;
    fn parse(params: &Value) -> Result<ChainArgs, IdeError> {
        parse(params)
    }
    fn execute(fs: &dyn Fs, args: &ChainArgs) -> Result<ChainBody, IdeError> {
        analyse(fs, args)
    }
}

#[cfg(test)]
mod tests;
