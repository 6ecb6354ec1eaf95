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
//! Cost, for S bytes of Java source: parsing (tree-sitter) and indexing are
//! one pass each, every syntax node visited once with explicit stacks (no
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
//! link reaches. Each answer tree holds at most [`MAX_NODES`] nodes. The
//! `work_is_linear_*` / `*_is_bounded` tests count the steps.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde_json::{json, Map, Value};
use tree_sitter::{Node, Parser};

use crate::fs::Fs;
use crate::tools::ide::{walk_files, IdeError, IdeTool, Params};

/// The largest `depth` accepted.
pub const MAX_DEPTH: u64 = 10;

/// At most this many nodes in each of the callers and callees trees; past
/// it the tree is cut (`truncated`), breadth first (C-ide-chain-depth).
pub const MAX_NODES: usize = 1000;

/// The deepest nesting of type declarations indexed (a top-level class is
/// level 1): a file nesting deeper is refused, `nesting_too_deep`
/// (C-ide-chain-nesting). Resolving an unqualified call walks the enclosing
/// types outward, so this bounds that walk, and the length of a qualified
/// name in segments.
pub const MAX_TYPE_NESTING: usize = 64;

/// The longest receiver text kept for an external callee's `method`, in
/// characters (longer ones are cut with `...`).
const MAX_DISPLAY_CHARS: usize = 60;

/// Which way to follow calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Who calls the method.
    Callers,
    /// What the method calls.
    Callees,
    /// Both.
    Both,
}

/// Checked params.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChainArgs {
    /// `method` as given.
    pub method: String,
    /// The class part (`a.b.Foo` in `a.b.Foo.bar`).
    pub class: String,
    /// The method name.
    pub name: String,
    /// `direction` (default both).
    pub direction: Direction,
    /// `depth` (default 1, at most [`MAX_DEPTH`]).
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

/// Check the params (C-ide-params), before any I/O.
pub fn parse(params: &Value) -> Result<ChainArgs, IdeError> {
    let p = Params::of(params)?;
    let method = p.req_str("method", false)?;
    let bad_method = || {
        IdeError::invalid(
            "method",
            "invalid_value",
            format!("'method' must be ClassName.methodName (e.g. OrderService.placeOrder), got {method:?}"),
        )
    };
    let (class, name) = method.rsplit_once('.').ok_or_else(bad_method)?;
    if !is_ident(name) || class.split('.').any(|c| !is_ident(c)) {
        return Err(bad_method());
    }
    let direction = match p.opt_str("direction")? {
        None | Some("both") => Direction::Both,
        Some("callers") => Direction::Callers,
        Some("callees") => Direction::Callees,
        Some(other) => {
            return Err(IdeError::invalid(
                "direction",
                "invalid_value",
                format!("'direction' must be \"callers\", \"callees\" or \"both\", got {other:?}"),
            ))
        }
    };
    let depth = p.int("depth", 1, MAX_DEPTH)?.unwrap_or(1);
    let include_source = p.bool_or("includeSource", false)?;
    Ok(ChainArgs {
        method: method.to_string(),
        class: class.to_string(),
        name: name.to_string(),
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
enum Entry {
    /// A caller and its call sites.
    Caller(Caller, Vec<usize>),
    /// A resolved callee and the call sites that reach it.
    Callee(usize, Vec<usize>),
    /// An external callee, by how it reads, and its call sites.
    External(String, Vec<usize>),
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

#[derive(Clone, Copy, PartialEq, Eq)]
struct Ctx {
    ty: Option<usize>,
    caller: Option<Caller>,
    locals: Option<usize>,
    anon: bool,
}

/// The kind of a pending node's parent, as far as the scan asks.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Parent {
    /// A `class_body`: a `block` in it is an instance initializer.
    ClassBody,
    /// `new T() { … }` or an enum constant: a `class_body` in it is an
    /// anonymous class.
    Creation,
    /// Anything else.
    Other,
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

/// The simple name of a type node (`List<Foo>` → `List`, `a.b.Foo` → `Foo`);
/// `None` for primitives, arrays and `var`.
fn simple_type(node: Node<'_>, src: &[u8]) -> Option<String> {
    match node.kind() {
        "type_identifier" => {
            let t = text(node, src);
            (t != "var").then_some(t)
        }
        "generic_type" => named(node).first().and_then(|n| simple_type(*n, src)),
        "scoped_type_identifier" => named(node)
            .iter()
            .rev()
            .find(|n| n.kind() == "type_identifier")
            .map(|n| text(*n, src)),
        "annotated_type" => named(node).last().and_then(|n| simple_type(*n, src)),
        _ => None,
    }
}

/// Simple names of the types in a `superclass` / `super_interfaces` /
/// `extends_interfaces` node.
fn type_names_in(node: Node<'_>, src: &[u8], out: &mut Vec<String>) {
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        if let Some(t) = simple_type(n, src) {
            out.push(t);
        } else if matches!(
            n.kind(),
            "superclass" | "super_interfaces" | "extends_interfaces" | "type_list"
        ) {
            stack.extend(named(n).into_iter().rev());
        }
    }
}

/// `name → declared type` for every typed variable declared inside `node`
/// (parameters, locals, for-each, catch, resources, patterns).
fn locals_of(node: Node<'_>, src: &[u8], steps: &mut u64) -> HashMap<String, String> {
    let mut out = HashMap::new();
    let mut stack = vec![node];
    let put = |name: Option<Node<'_>>, ty: Option<Node<'_>>, out: &mut HashMap<String, String>| {
        if let (Some(name), Some(ty)) = (name, ty) {
            if let Some(t) = simple_type(ty, src) {
                out.insert(text(name, src), t);
            }
        }
    };
    while let Some(n) = stack.pop() {
        *steps += 1;
        match n.kind() {
            "formal_parameter" | "enhanced_for_statement" | "resource" => put(
                n.child_by_field_name("name"),
                n.child_by_field_name("type"),
                &mut out,
            ),
            "instanceof_expression" => put(
                n.child_by_field_name("name"),
                n.child_by_field_name("right"),
                &mut out,
            ),
            "spread_parameter" => {
                let kids = named(n);
                let ty = kids
                    .iter()
                    .find(|k| simple_type(**k, src).is_some())
                    .copied();
                let name = kids
                    .iter()
                    .find(|k| k.kind() == "variable_declarator")
                    .and_then(|d| d.child_by_field_name("name"));
                put(name, ty, &mut out);
            }
            "catch_formal_parameter" => {
                let ty = named(n)
                    .into_iter()
                    .find(|k| k.kind() == "catch_type")
                    .and_then(|c| named(c).into_iter().next());
                put(n.child_by_field_name("name"), ty, &mut out);
            }
            "local_variable_declaration" => {
                let ty = n.child_by_field_name("type");
                let mut c = n.walk();
                let decls: Vec<_> = n.children_by_field_name("declarator", &mut c).collect();
                for d in decls {
                    put(d.child_by_field_name("name"), ty, &mut out);
                }
            }
            _ => {}
        }
        // A local class's methods have their own locals (and their own
        // call to this function): not descending keeps every node read by
        // one call only, whatever the nesting.
        stack.extend(named(n).into_iter().filter(|k| !is_type_decl(k.kind())));
    }
    out
}

fn params_of(node: Node<'_>) -> (usize, bool) {
    let Some(p) = node.child_by_field_name("parameters") else {
        return (0, false);
    };
    let kids: Vec<_> = named(p)
        .into_iter()
        .filter(|k| matches!(k.kind(), "formal_parameter" | "spread_parameter"))
        .collect();
    let varargs = kids.last().is_some_and(|k| k.kind() == "spread_parameter");
    (kids.len(), varargs)
}

fn arg_count(node: Node<'_>) -> usize {
    node.child_by_field_name("arguments")
        .map_or(0, |a| named(a).len())
}

fn is_type_decl(kind: &str) -> bool {
    matches!(
        kind,
        "class_declaration"
            | "interface_declaration"
            | "enum_declaration"
            | "record_declaration"
            | "annotation_type_declaration"
    )
}

fn has_static(node: Node<'_>, src: &[u8]) -> bool {
    named(node)
        .into_iter()
        .find(|k| k.kind() == "modifiers")
        .is_some_and(|m| text(m, src).split_whitespace().any(|w| w == "static"))
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

    /// Parse every `.java` file of the workspace of `fs` (listed and read through it).
    pub fn build(fs: &dyn Fs) -> Result<Index, IdeError> {
        let internal = |e: ignore::Error| {
            IdeError::new(
                "internal_error",
                format!("the *.java filter cannot be built: {e}"),
            )
        };
        let mut tb = ignore::types::TypesBuilder::new();
        tb.add("javasource", "*.java").map_err(internal)?;
        let types = Some(tb.select("javasource").build().map_err(internal)?);
        let mut parser = Parser::new();
        parser
            .set_language(&tree_sitter_java::LANGUAGE.into())
            .map_err(|e| {
                IdeError::new(
                    "internal_error",
                    format!("the Java grammar cannot be loaded: {e}"),
                )
            })?;
        let mut index = Index::default();
        let mut locals: Vec<HashMap<String, String>> = Vec::new();
        for path in walk_files(fs, "", types.as_ref())? {
            // A file that vanished or cannot be read is skipped.
            let Ok(bytes) = fs.read(&path) else { continue };
            let Some(tree) = parser.parse(&bytes, None) else {
                continue;
            };
            let file = index.files.len();
            if tree.root_node().has_error() {
                index.syntax_errors.push(path.clone());
            }
            index.files.push(path);
            index.scan(file, tree.root_node(), &bytes, &mut locals)?;
            index.sources.push(bytes);
        }
        for (i, t) in index.types.iter().enumerate() {
            index.by_simple.entry(t.simple.clone()).or_default().push(i);
            for s in &t.supers {
                index.subs.entry(s.clone()).or_default().push(i);
            }
        }
        for (i, m) in index.methods.iter().enumerate() {
            if m.ctor {
                index.ctors.entry(m.ty).or_default().push(i);
            } else {
                index.by_name.entry(m.name.clone()).or_default().push(i);
                index.members.entry(m.ty).or_default().push(i);
            }
        }
        index.links = (0..index.calls.len()).map(|i| index.link(i)).collect();
        for (s, link) in index.links.iter().enumerate() {
            match link {
                Link::Typed(targets) => {
                    for &t in targets {
                        index.callers_of.entry(t).or_default().push(s);
                    }
                }
                Link::ByName => index
                    .name_sites
                    .entry(index.calls[s].name.clone())
                    .or_default()
                    .push(s),
                Link::External => {}
            }
            if let Caller::Method(m) = index.calls[s].caller {
                index.calls_in.entry(m).or_default().push(s);
            }
        }
        Ok(index)
    }

    /// Index the declarations and calls of one parsed file: one pass over
    /// its syntax tree, each node visited once, with an explicit stack (no
    /// recursion, whatever the nesting) that carries each node's parent kind
    /// (tree-sitter's `parent()` walks down from the root: O(depth)).
    fn scan(
        &mut self,
        file: usize,
        root: Node<'_>,
        src: &[u8],
        locals: &mut Vec<HashMap<String, String>>,
    ) -> Result<(), IdeError> {
        let package = named(root)
            .into_iter()
            .find(|n| n.kind() == "package_declaration")
            .and_then(|p| {
                named(p)
                    .into_iter()
                    .find(|k| matches!(k.kind(), "scoped_identifier" | "identifier"))
            })
            .map(|n| collapse(&text(n, src)).replace(' ', ""));
        self.packages.push(package);
        // The contexts in force, each stored once: a stack entry names its
        // context by index and its parent's kind by [`Parent`], so a pending
        // node costs 48 bytes, whatever the context holds.
        let mut ctxs = vec![Ctx {
            ty: None,
            caller: None,
            locals: None,
            anon: false,
        }];
        let mut stack: Vec<(Node<'_>, usize, Parent)> = vec![(root, 0, Parent::Other)];
        let mut cursor = root.walk();
        while let Some((node, ctx_id, parent_kind)) = stack.pop() {
            self.tick(1);
            let ctx = ctxs[ctx_id];
            let mut child_ctx = ctx;
            let kind = node.kind();
            if is_type_decl(kind) {
                let Some(name) = node.child_by_field_name("name").map(|n| text(n, src)) else {
                    continue;
                };
                let nesting = ctx.ty.map_or(1, |o| self.types[o].nesting + 1);
                if nesting > MAX_TYPE_NESTING {
                    let path = self.files[file].as_str();
                    return Err(IdeError::new(
                        "nesting_too_deep",
                        format!(
                            "{path}: type declarations nest more than {MAX_TYPE_NESTING} deep at line {}; call_chain indexes at most {MAX_TYPE_NESTING} levels of nested types",
                            line(node)
                        ),
                    )
                    .with("path", path)
                    .with("line", line(node))
                    .with("limit", MAX_TYPE_NESTING));
                }
                let mut supers = Vec::new();
                for field in ["superclass", "interfaces"] {
                    if let Some(s) = node.child_by_field_name(field) {
                        type_names_in(s, src, &mut supers);
                    }
                }
                for k in named(node) {
                    if k.kind() == "extends_interfaces" {
                        type_names_in(k, src, &mut supers);
                    }
                }
                let mut fields = HashMap::new();
                if let Some(params) = node.child_by_field_name("parameters") {
                    for p in named(params) {
                        if let (Some(n), Some(t)) = (
                            p.child_by_field_name("name"),
                            p.child_by_field_name("type")
                                .and_then(|t| simple_type(t, src)),
                        ) {
                            fields.insert(text(n, src), t);
                        }
                    }
                }
                self.types.push(TypeDecl {
                    simple: name,
                    file,
                    line: line(node),
                    supers,
                    outer: ctx.ty,
                    nesting,
                    fields,
                });
                child_ctx = Ctx {
                    ty: Some(self.types.len() - 1),
                    caller: None,
                    locals: None,
                    anon: false,
                };
            } else if matches!(
                kind,
                "method_declaration"
                    | "constructor_declaration"
                    | "compact_constructor_declaration"
            ) && !ctx.anon
            {
                if let Some(ty) = ctx.ty {
                    let ctor = kind != "method_declaration";
                    let name = if ctor {
                        self.types[ty].simple.clone()
                    } else {
                        node.child_by_field_name("name")
                            .map_or_else(String::new, |n| text(n, src))
                    };
                    let (params, varargs) = if kind == "compact_constructor_declaration" {
                        (self.types[ty].fields.len(), false)
                    } else {
                        params_of(node)
                    };
                    let plist = node
                        .child_by_field_name("parameters")
                        .map_or_else(String::new, |p| collapse(&text(p, src)));
                    self.methods.push(MethodDecl {
                        ty,
                        signature: format!("{name}{plist}"),
                        name,
                        ctor,
                        params,
                        varargs,
                        file,
                        lines: (line(node), node.end_position().row + 1),
                        range: (node.start_byte(), node.end_byte()),
                    });
                    let mut steps = 0;
                    locals.push(locals_of(node, src, &mut steps));
                    self.tick(steps);
                    child_ctx.caller = Some(Caller::Method(self.methods.len() - 1));
                    child_ctx.locals = Some(locals.len() - 1);
                }
            } else if kind == "field_declaration" && ctx.caller.is_none() && !ctx.anon {
                if let Some(ty) = ctx.ty {
                    let fty = node
                        .child_by_field_name("type")
                        .and_then(|t| simple_type(t, src));
                    let mut c = node.walk();
                    let decls: Vec<_> = node.children_by_field_name("declarator", &mut c).collect();
                    for d in decls {
                        if let (Some(n), Some(t)) = (d.child_by_field_name("name"), &fty) {
                            self.types[ty].fields.insert(text(n, src), t.clone());
                        }
                    }
                    child_ctx.caller = Some(Caller::Init {
                        ty,
                        is_static: has_static(node, src),
                    });
                }
            } else if kind == "static_initializer" && ctx.caller.is_none() {
                if let Some(ty) = ctx.ty {
                    child_ctx.caller = Some(Caller::Init {
                        ty,
                        is_static: true,
                    });
                }
            } else if kind == "block" && ctx.caller.is_none() && parent_kind == Parent::ClassBody {
                if let Some(ty) = ctx.ty {
                    child_ctx.caller = Some(Caller::Init {
                        ty,
                        is_static: false,
                    });
                }
            } else if kind == "class_body" && parent_kind == Parent::Creation {
                // An anonymous class: its methods are not declarations of
                // their own; their calls belong to the enclosing member.
                child_ctx.anon = true;
                if child_ctx.caller.is_none() {
                    child_ctx.caller = ctx.ty.map(|ty| Caller::Init {
                        ty,
                        is_static: true,
                    });
                }
            } else if matches!(
                kind,
                "method_invocation"
                    | "object_creation_expression"
                    | "explicit_constructor_invocation"
            ) {
                self.call(file, node, src, ctx, locals);
            }
            let child_id = if child_ctx == ctx {
                ctx_id
            } else {
                ctxs.push(child_ctx);
                ctxs.len() - 1
            };
            let as_parent = match kind {
                "class_body" => Parent::ClassBody,
                "object_creation_expression" | "enum_constant" => Parent::Creation,
                _ => Parent::Other,
            };
            // A child with no named children of its own (an identifier, `()`,
            // an empty block) declares and calls nothing: it is counted, not
            // pushed, so a long chain (`this.c().c()…`) keeps one pending
            // node per level instead of three.
            let start = stack.len();
            for k in node.named_children(&mut cursor) {
                if k.is_extra() {
                    continue;
                }
                if k.named_child_count() == 0 {
                    self.tick(1);
                } else {
                    stack.push((k, child_id, as_parent));
                }
            }
            stack[start..].reverse();
            #[cfg(test)]
            {
                self.peak_pending = self.peak_pending.max(stack.len());
            }
        }
        Ok(())
    }

    fn call(
        &mut self,
        file: usize,
        node: Node<'_>,
        src: &[u8],
        ctx: Ctx,
        locals: &[HashMap<String, String>],
    ) {
        let Some(ty) = ctx.ty else { return };
        // Calls in enum constants' arguments and the like run at class init.
        let caller = ctx.caller.unwrap_or(Caller::Init {
            ty,
            is_static: true,
        });
        let args = arg_count(node);
        let local = |name: &str| ctx.locals.and_then(|l| locals[l].get(name).cloned());
        let (name, kind, recv, receiver) = match node.kind() {
            "method_invocation" => {
                let Some(name) = node.child_by_field_name("name").map(|n| text(n, src)) else {
                    return;
                };
                let object = node.child_by_field_name("object");
                let recv = match object {
                    None => Recv::Implicit,
                    Some(o) => match o.kind() {
                        "this" => Recv::Implicit,
                        "super" => Recv::Super,
                        "identifier" => {
                            let id = text(o, src);
                            local(&id).map_or(Recv::Ident(id), Recv::Typed)
                        }
                        "field_access" => {
                            let is_this = o
                                .child_by_field_name("object")
                                .is_some_and(|x| x.kind() == "this");
                            match (is_this, o.child_by_field_name("field")) {
                                (true, Some(f)) => Recv::ThisField(text(f, src)),
                                _ => Recv::Unknown,
                            }
                        }
                        "object_creation_expression" => o
                            .child_by_field_name("type")
                            .and_then(|t| simple_type(t, src))
                            .map_or(Recv::Unknown, Recv::Typed),
                        _ => Recv::Unknown,
                    },
                };
                let receiver = object.map(|o| (o.start_byte(), o.end_byte()));
                (name, CallKind::Method, recv, receiver)
            }
            "object_creation_expression" => {
                let Some(t) = node
                    .child_by_field_name("type")
                    .and_then(|t| simple_type(t, src))
                else {
                    return;
                };
                (t.clone(), CallKind::New, Recv::Typed(t), None)
            }
            _ => {
                let is_super = node
                    .child_by_field_name("constructor")
                    .is_some_and(|c| c.kind() == "super");
                if is_super {
                    (String::new(), CallKind::Super, Recv::Super, None)
                } else {
                    (String::new(), CallKind::This, Recv::Implicit, None)
                }
            }
        };
        self.calls.push(CallSite {
            file,
            line: line(node),
            caller,
            name,
            kind,
            args,
            recv,
            receiver,
            ty,
        });
    }

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

    /// The declarations `args` names (C-ide-chain-target).
    pub fn target(&self, args: &ChainArgs) -> Result<Vec<usize>, IdeError> {
        let class = args.class.as_str();
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
                "method_not_found",
                format!(
                    "no class, interface, enum or record named {class} in the workspace's Java sources ({} file{} parsed)",
                    self.files.len(),
                    if self.files.len() == 1 { "" } else { "s" }
                ),
            )
            .with("method", args.method.as_str())
            .with("reason", "no_such_class"));
        }
        let mut by_type: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        for (i, m) in self.methods.iter().enumerate() {
            if types.contains(&m.ty) && m.name == args.name {
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
                    "method_not_found",
                    format!(
                        "{class} has no method {}{}",
                        args.name,
                        if list.is_empty() {
                            String::from(" (it declares no methods)")
                        } else {
                            format!("; it declares: {}", list.join(", "))
                        }
                    ),
                )
                .with("method", args.method.as_str())
                .with("reason", "no_such_method")
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
                    .map(|&t| format!("{}.{}", self.qualified(t), args.name))
                    .collect();
                Err(IdeError::new(
                    "ambiguous_method",
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

    fn method_node(&self, i: usize, include_source: bool) -> Map<String, Value> {
        let m = &self.methods[i];
        let t = &self.types[m.ty];
        let mut o = Map::new();
        o.insert("method".into(), format!("{}.{}", t.simple, m.name).into());
        o.insert("class".into(), self.qualified(m.ty).into());
        o.insert("signature".into(), m.signature.as_str().into());
        o.insert("file".into(), self.files[m.file].as_str().into());
        o.insert("line".into(), m.lines.0.into());
        o.insert("endLine".into(), m.lines.1.into());
        if include_source {
            o.insert("source".into(), self.source(m).into());
        }
        o
    }

    fn sites(&self, sites: &[usize]) -> Value {
        Value::Array(
            sites
                .iter()
                .map(|&s| json!({"line": self.calls[s].line, "resolution": self.links[s].label()}))
                .collect(),
        )
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
                entries.push((key, Entry::Caller(caller, sites)));
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
                    Entry::Callee(m, sites),
                ));
            }
            for (display, sites) in external {
                entries.push((
                    (self.calls[sites[0]].line, usize::MAX, 0),
                    Entry::External(display, sites),
                ));
            }
        }
        entries.sort_by_key(|e| e.0);
        entries.into_iter().map(|(_, e)| e).collect()
    }

    /// The node for one entry, and the method it would expand to.
    fn node(&self, entry: Entry, include_source: bool) -> (Map<String, Value>, Option<usize>) {
        match entry {
            Entry::Caller(Caller::Method(m), sites) => {
                let mut o = self.method_node(m, include_source);
                o.insert("callSites".into(), self.sites(&sites));
                (o, Some(m))
            }
            Entry::Caller(Caller::Init { ty, is_static }, sites) => {
                let t = &self.types[ty];
                let first = &self.calls[sites[0]];
                let mut o = Map::new();
                let name = if is_static { "<clinit>" } else { "<init>" };
                o.insert("method".into(), format!("{}.{name}", t.simple).into());
                o.insert("class".into(), self.qualified(ty).into());
                o.insert("file".into(), self.files[first.file].as_str().into());
                o.insert("line".into(), first.line.into());
                o.insert("callSites".into(), self.sites(&sites));
                (o, None)
            }
            Entry::Callee(m, sites) => {
                let mut o = self.method_node(m, include_source);
                o.insert("external".into(), false.into());
                o.insert("callSites".into(), self.sites(&sites));
                (o, Some(m))
            }
            Entry::External(display, sites) => {
                let lines: Vec<Value> = sites
                    .iter()
                    .map(|&s| json!({"line": self.calls[s].line}))
                    .collect();
                let mut o = Map::new();
                o.insert("method".into(), display.into());
                o.insert("external".into(), true.into());
                o.insert("callSites".into(), lines.into());
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
        let mut truncated = false;
        let mut roots = Vec::new();
        // `None` stands for the targets themselves.
        let mut queue = std::collections::VecDeque::from([(None::<usize>, 0u64)]);
        while let Some((parent, level)) = queue.pop_front() {
            if truncated {
                // Out of budget: what is still queued stays unexpanded.
                continue;
            }
            let of: Vec<usize> = match parent {
                None => targets.to_vec(),
                Some(p) => arena[p].method.into_iter().collect(),
            };
            let mut kids = Vec::new();
            for entry in self.level(&of, up) {
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
pub fn analyse(fs: &dyn Fs, args: &ChainArgs) -> Result<Map<String, Value>, IdeError> {
    let index = Index::build(fs)?;
    let targets = index.target(args)?;
    let mut doc = Map::new();
    doc.insert("method".into(), args.method.as_str().into());
    doc.insert(
        "direction".into(),
        match args.direction {
            Direction::Callers => "callers",
            Direction::Callees => "callees",
            Direction::Both => "both",
        }
        .into(),
    );
    doc.insert("depth".into(), args.depth.into());
    doc.insert("includeSource".into(), args.include_source.into());
    doc.insert("filesParsed".into(), index.files.len().into());
    doc.insert("syntaxErrors".into(), index.syntax_errors.clone().into());
    let decls: Vec<Value> = targets
        .iter()
        .map(|&m| Value::Object(index.method_node(m, args.include_source)))
        .collect();
    doc.insert("declarations".into(), Value::Array(decls));
    let mut truncated = false;
    if args.direction != Direction::Callees {
        let (tree, cut) = index.tree(&targets, true, args);
        doc.insert("callers".into(), tree.into());
        truncated |= cut;
    }
    if args.direction != Direction::Callers {
        let (tree, cut) = index.tree(&targets, false, args);
        doc.insert("callees".into(), tree.into());
        truncated |= cut;
    }
    doc.insert("truncated".into(), truncated.into());
    Ok(doc)
}

/// The `call_chain` tool, as [`crate::tools::REGISTRY`] runs it
/// ([`crate::tools::ide::run_with`]).
pub struct CallChain;

impl IdeTool for CallChain {
    type Args = ChainArgs;
    fn parse(params: &Value) -> Result<ChainArgs, IdeError> {
        parse(params)
    }
    fn execute(fs: &dyn Fs, args: &ChainArgs) -> Result<Map<String, Value>, IdeError> {
        analyse(fs, args)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ws(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (f, c) in files {
            let p = dir.path().join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, c).unwrap();
        }
        dir
    }

    fn chain(dir: &tempfile::TempDir, v: Value) -> Result<Map<String, Value>, IdeError> {
        let fs = crate::fs::RealFs::open(dir.path()).unwrap();
        analyse(&fs, &parse(&v)?)
    }

    /// The index is built from a walk through the workspace's `Fs`: a fault
    /// listing a directory or reading an ignore file is `io_error`.
    #[test]
    fn a_fault_in_the_walk_is_an_io_error() {
        let dir = ws(&[
            (".gitignore", "gen/\n"),
            (
                "p/A.java",
                "package p;\nclass A {\n  void f() { g(); }\n  void g() {}\n}\n",
            ),
        ]);
        let params = json!({"method": "A.f"});
        crate::tools::ide::tests::assert_walk_faults_reach_the_tool(
            crate::tools::ide::run_with::<CallChain>,
            &params,
            dir.path(),
            &[(0, "."), (1, ".gitignore"), (2, "p")],
        );
    }

    const SHOP: &[(&str, &str)] = &[
        (
            "src/shop/OrderService.java",
            "package shop;\n\npublic class OrderService {\n    private final Inventory inventory = new Inventory();\n\n    public void placeOrder(String item) {\n        inventory.reserve(item);\n        log(item);\n        System.out.println(item);\n    }\n\n    private void log(String s) {\n        log(s, 1);\n    }\n\n    private void log(String s, int level) {}\n}\n",
        ),
        (
            "src/shop/Inventory.java",
            "package shop;\n\nclass Inventory {\n    void reserve(String item) {\n        check(item);\n    }\n    void check(String item) {}\n}\n",
        ),
        (
            "src/shop/Api.java",
            "package shop;\n\nclass Api {\n    OrderService service;\n    void submit() {\n        service.placeOrder(\"x\");\n    }\n    void other(OrderService s) {\n        s.placeOrder(\"y\");\n        s.placeOrder(\"z\");\n    }\n}\n",
        ),
    ];

    fn index_of(src: &str) -> Result<Index, IdeError> {
        let dir = ws(&[("A.java", src)]);
        let fs = crate::fs::RealFs::open(dir.path()).unwrap();
        Index::build(&fs)
    }

    /// The audit's shape: `return this.c().c()…;`. Each call's receiver is
    /// the whole chain before it, and its display text was built from all of
    /// it (160 KB: 8.6 s); now the indexing steps stay within a constant
    /// factor of the source, the scan holds one pending node per level, and
    /// a display, built only when shown, reads a fixed 61 characters.
    #[test]
    fn work_is_linear_on_a_long_call_chain() {
        let mut per_byte = Vec::new();
        for n in [500, 2000, 8000] {
            let src = format!("class A {{ A c() {{ return this{}; }} }}", ".c()".repeat(n));
            let index = index_of(&src).unwrap();
            assert_eq!(index.calls.len(), n);
            // Indexing visits the nodes once each and reads no receiver.
            let work = index.work.get();
            let bound = 2 * src.len();
            assert!(work < bound as u64, "n={n}: {work} steps > {bound}");
            // One pending node per level of the chain, not three: the
            // identifiers and `()` are counted, never pushed.
            assert!(
                index.peak_pending <= 4,
                "n={n}: {} pending",
                index.peak_pending
            );
            // Showing every call's display reads at most MAX_DISPLAY_CHARS
            // + 1 characters of each receiver.
            let shown: Vec<String> = (0..n).map(|s| index.display(s)).collect();
            assert_eq!(shown[n - 1], "this.c");
            assert_eq!(shown[0].chars().count(), MAX_DISPLAY_CHARS + 2);
            let all = index.work.get() - work;
            let bound = (MAX_DISPLAY_CHARS + 1) * n;
            assert!(all <= bound as u64, "n={n}: {all} steps > {bound}");
            per_byte.push(index.work.get() as f64 / src.len() as f64);
        }
        assert!(per_byte[2] < per_byte[0] * 1.2, "{per_byte:?}");
    }

    /// A per-call-site record stays small (136 bytes, plus its name and a
    /// receiver type's name on the heap): how it reads is rebuilt from the
    /// source when shown, not stored.
    #[test]
    fn a_call_site_record_is_small() {
        assert!(
            std::mem::size_of::<CallSite>() <= 136,
            "{}",
            std::mem::size_of::<CallSite>()
        );
        let index =
            index_of("class A { void m() { a.b.c(); new B(); this.d(); } A() { this(1); } }")
                .unwrap();
        let shown: Vec<String> = (0..index.calls.len()).map(|s| index.display(s)).collect();
        assert_eq!(shown, ["a.b.c", "new B", "this.d", "this"]);
    }

    /// Nested types, each with a call the outward walk cannot resolve: at
    /// the limit they index (qualified names built from parent links), one
    /// level deeper is `nesting_too_deep`, with the file, line and limit.
    #[test]
    fn type_nesting_is_bounded() {
        let nest = |d: usize| {
            let open: String = (0..d)
                .map(|i| format!("class C{i} {{ void m{i}() {{ f{i}(); }}\n"))
                .collect();
            open + &"}".repeat(d)
        };
        let src = nest(MAX_TYPE_NESTING);
        let index = index_of(&src).unwrap();
        let deepest = index.types.len() - 1;
        let want: Vec<String> = (0..MAX_TYPE_NESTING).map(|i| format!("C{i}")).collect();
        assert_eq!(index.qualified(deepest), want.join("."));
        // Each unresolved call walks its enclosing types once.
        let walk = (MAX_TYPE_NESTING * (MAX_TYPE_NESTING + 1) / 2) as u64;
        assert!(
            index.work.get() < 4 * src.len() as u64 + 2 * walk,
            "{} steps",
            index.work.get()
        );
        let e = index_of(&nest(MAX_TYPE_NESTING + 1)).unwrap_err();
        assert_eq!(e.kind, "nesting_too_deep");
        assert_eq!(e.details["path"], "A.java");
        assert_eq!(e.details["line"], MAX_TYPE_NESTING + 1);
        assert_eq!(e.details["limit"], MAX_TYPE_NESTING);
    }

    /// Local classes inside methods inside local classes: each method's
    /// locals are read from its own body only, not again from the bodies of
    /// the classes nested in it.
    #[test]
    fn locals_are_read_once_per_node() {
        let d = MAX_TYPE_NESTING - 1;
        let open: String = (0..d)
            .map(|i| format!("class L{i} {{ void m() {{ int x{i} = 0; "))
            .collect();
        let src = format!("class A {{ void m() {{ {open}{} }} }}", "} }".repeat(d));
        let index = index_of(&src).unwrap();
        assert!(
            index.work.get() < 3 * src.len() as u64,
            "{} steps for {} bytes",
            index.work.get(),
            src.len()
        );
    }

    proptest::proptest! {
        /// The bounded display text is the whole text collapsed and cut, as
        /// it was computed before.
        #[test]
        fn display_prefix_is_the_collapsed_text_cut(
            bytes in proptest::collection::vec(
                proptest::sample::select(vec![
                    b'a', b' ', b'\n', b'.', 0xC3, 0xA9, 0xFF, 0xF0, 0x9F, 0x98, 0x80,
                ]),
                0..400,
            ),
        ) {
            let mut want = collapse(&String::from_utf8_lossy(&bytes));
            if want.chars().count() > MAX_DISPLAY_CHARS {
                want = want.chars().take(MAX_DISPLAY_CHARS - 3).collect::<String>() + "...";
            }
            let mut steps = 0;
            proptest::prop_assert_eq!(display_prefix(&bytes, MAX_DISPLAY_CHARS, &mut steps), want);
            let lossy: String = lossy_chars(&bytes).collect();
            proptest::prop_assert_eq!(lossy, String::from_utf8_lossy(&bytes));
        }
    }

    #[test]
    fn params() {
        let a = parse(&json!({"method": "a.b.Foo.bar"})).unwrap();
        assert_eq!(
            (
                a.class.as_str(),
                a.name.as_str(),
                a.direction,
                a.depth,
                a.include_source
            ),
            ("a.b.Foo", "bar", Direction::Both, 1, false)
        );
        for bad in ["Foo", "Foo.", ".bar", "Foo..bar", "Foo.bar()", "Foo#bar"] {
            assert_eq!(
                parse(&json!({"method": bad})).unwrap_err().details["field"],
                "method",
                "{bad}"
            );
        }
        assert_eq!(
            parse(&json!({"method": "A.b", "direction": "up"}))
                .unwrap_err()
                .details["field"],
            "direction"
        );
        assert_eq!(
            parse(&json!({"method": "A.b", "depth": 0}))
                .unwrap_err()
                .details["field"],
            "depth"
        );
        assert_eq!(
            parse(&json!({"method": "A.b", "depth": 11}))
                .unwrap_err()
                .details["field"],
            "depth"
        );
    }

    #[test]
    fn callers_and_callees_of_a_method() {
        let dir = ws(SHOP);
        let doc = chain(&dir, json!({"method": "OrderService.placeOrder"})).unwrap();
        assert_eq!(doc["filesParsed"], 3);
        assert_eq!(doc["declarations"][0]["line"], 6);
        assert_eq!(
            doc["declarations"][0]["signature"],
            "placeOrder(String item)"
        );
        let callers = doc["callers"].as_array().unwrap();
        assert_eq!(callers.len(), 2);
        assert_eq!(callers[0]["method"], "Api.submit");
        assert_eq!(
            callers[0]["callSites"],
            json!([{"line": 6, "resolution": "type"}])
        );
        assert_eq!(callers[1]["method"], "Api.other");
        assert_eq!(callers[1]["callSites"].as_array().unwrap().len(), 2);
        let callees: Vec<&str> = doc["callees"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["method"].as_str().unwrap())
            .collect();
        assert_eq!(
            callees,
            vec![
                "Inventory.reserve",
                "OrderService.log",
                "System.out.println"
            ]
        );
        assert!(callers[0].get("callers").is_none());
    }

    #[test]
    fn depth_and_recursion() {
        let dir = ws(SHOP);
        let doc = chain(
            &dir,
            json!({"method": "OrderService.placeOrder", "direction": "callees", "depth": 3}),
        )
        .unwrap();
        assert!(doc.get("callers").is_none());
        let reserve = &doc["callees"][0];
        assert_eq!(reserve["callees"][0]["method"], "Inventory.check");
        assert_eq!(reserve["callees"][0]["callees"], json!([]));
        // log(String) calls log(String, int): arity tells the overloads apart.
        let log = &doc["callees"][1];
        assert_eq!(log["signature"], "log(String s)");
        assert_eq!(log["callees"][0]["signature"], "log(String s, int level)");
    }

    #[test]
    fn the_tree_is_cut_at_max_nodes_breadth_first() {
        let n = MAX_NODES + 5;
        let mut src = String::from("class Many {\n    void t() {}\n");
        for i in 0..n {
            src.push_str(&format!("    void c{i}() {{ t(); }}\n"));
        }
        let all: String = (0..n).map(|i| format!("c{i}(); ")).collect();
        src.push_str(&format!("    void u() {{ {all}}}\n}}\n"));
        let dir = ws(&[("Many.java", &src)]);
        let doc = chain(&dir, json!({"method": "Many.t", "depth": 2})).unwrap();
        assert_eq!(doc["truncated"], true);
        let callers = doc["callers"].as_array().unwrap();
        assert_eq!(callers.len(), MAX_NODES);
        // Breadth first: the budget went to the first level; its nodes are
        // left unexpanded and say so.
        assert_eq!(callers[0]["truncated"], true);
        assert!(callers[0].get("callers").is_none());
        assert_eq!(doc["callees"], json!([]));
        let doc = chain(&dir, json!({"method": "Many.c0", "depth": 2})).unwrap();
        assert_eq!(doc["truncated"], false);
        assert_eq!(doc["callers"][0]["method"], "Many.u");
        assert!(doc["callers"][0].get("truncated").is_none());
    }

    #[test]
    fn errors() {
        let dir = ws(SHOP);
        let e = chain(&dir, json!({"method": "Nope.x"})).unwrap_err();
        assert_eq!(
            (e.kind, &e.details["reason"]),
            ("method_not_found", &json!("no_such_class"))
        );
        let e = chain(&dir, json!({"method": "Inventory.nope"})).unwrap_err();
        assert_eq!(e.details["available"], json!(["check", "reserve"]));
        let dir = ws(&[
            ("a/Foo.java", "package a; class Foo { void x() {} }"),
            ("b/Foo.java", "package b; class Foo { void x() {} }"),
        ]);
        let e = chain(&dir, json!({"method": "Foo.x"})).unwrap_err();
        assert_eq!(e.kind, "ambiguous_method");
        assert!(chain(&dir, json!({"method": "b.Foo.x"})).is_ok());
    }
}
