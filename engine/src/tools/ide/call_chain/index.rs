//! Building the `call_chain` [`Index`]: every `.java` file of the walk
//! parsed with tree-sitter-java and scanned once, with explicit stacks, for
//! type declarations, method and constructor declarations and call sites
//! (the cost bound is in the parent module's doc).

use std::collections::HashMap;

use tree_sitter::Parser;

use super::*;

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
        // An array is no workspace type: a call on a `T[]` variable is the
        // array's (`clone`), external, never `T`'s (C-ide-chain-resolution).
        "array_type" => Some(text(node, src).split_whitespace().collect()),
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
            "formal_parameter" | "spread_parameter" => {
                if let Some((name, ty)) = parameter(n, src) {
                    out.insert(name, ty);
                }
            }
            "enhanced_for_statement" | "resource" => put(
                n.child_by_field_name("name"),
                n.child_by_field_name("type"),
                &mut out,
            ),
            "instanceof_expression" => put(
                n.child_by_field_name("name"),
                n.child_by_field_name("right"),
                &mut out,
            ),
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

/// The name and declared type of a method's or a record's parameter:
/// `T x` is `T`; `T... xs` declares an array, as `T[] xs` does, so it is
/// `T[]`. `None` for a primitive or `var`, and for any other node.
fn parameter(node: Node<'_>, src: &[u8]) -> Option<(String, String)> {
    match node.kind() {
        "formal_parameter" => {
            let ty = simple_type(node.child_by_field_name("type")?, src)?;
            Some((text(node.child_by_field_name("name")?, src), ty))
        }
        "spread_parameter" => {
            let kids = named(node);
            let ty = kids.iter().find_map(|k| simple_type(*k, src))?;
            let name = kids
                .iter()
                .find(|k| k.kind() == "variable_declarator")
                .and_then(|d| d.child_by_field_name("name"))?;
            Some((text(name, src), ty + "[]"))
        }
        _ => None,
    }
}

/// How many parameters a method, constructor or record declares, and
/// whether the last is varargs.
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
    /// Parse every `.java` file of the workspace of `fs` (listed and read through it).
    pub fn build(fs: &dyn Fs) -> Result<Index, IdeError> {
        let internal = |e: ignore::Error| {
            IdeError::new(
                IdeErrorKind::InternalError,
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
                    IdeErrorKind::InternalError,
                    format!("the Java grammar cannot be loaded: {e}"),
                )
            })?;
        let mut index = Index::default();
        let mut locals: Vec<HashMap<String, String>> = Vec::new();
        for path in walk_files(fs, "", types.as_ref())? {
            // A file that vanished or cannot be read is skipped.
            let Ok(bytes) = fs.read(&path) else { continue };
            let mut steps = 0;
            let tokens = java_tokens(&bytes, MAX_FILE_TOKENS, &mut steps);
            index.tick(steps);
            if tokens > MAX_FILE_TOKENS {
                // Not parsed: its syntax tree would cost 50 to 110 bytes a
                // token (C-ide-chain-file-size).
                index.skipped.push(path);
                continue;
            }
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
                        IdeErrorKind::NestingTooDeep,
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
                // A record's components are its fields (a varargs one an
                // array, as a varargs parameter is).
                let mut fields = HashMap::new();
                if let Some(params) = node.child_by_field_name("parameters") {
                    fields.extend(named(params).into_iter().filter_map(|p| parameter(p, src)));
                }
                self.types.push(TypeDecl {
                    simple: name,
                    file,
                    line: line(node),
                    supers,
                    outer: ctx.ty,
                    nesting,
                    fields,
                    components: params_of(node),
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
                        // Not the typed fields: a component of a primitive
                        // type is a parameter too.
                        self.types[ty].components
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
}

/// What a comment counts for [`java_tokens`]: tree-sitter keeps a comment
/// as an extra node, measured at about three tokens' worth of memory (a
/// file of 240,000 `/**/` took 128 MB, the same count of `;` 57 MB).
const COMMENT_TOKENS: usize = 3;

/// How many Java tokens `src` holds, counting no further than one past
/// `stop_after` (C-ide-chain-file-size): a run of identifier characters
/// (letters, digits, `_`, `$`, any non-ASCII byte) is one token, so is a
/// string, character or text-block literal; a comment counts
/// [`COMMENT_TOKENS`]; whitespace is none; any other byte is one (so `>>=`
/// counts three: an upper bound of what the parser sees). One pass,
/// `steps` counting the bytes read.
pub(super) fn java_tokens(src: &[u8], stop_after: usize, steps: &mut u64) -> usize {
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80;
    // Where the first `end` after `from` finishes, or the end of the source.
    let past = |from: usize, end: &[u8]| {
        memchr::memmem::find(&src[from..], end).map_or(src.len(), |e| from + e + end.len())
    };
    let mut tokens = 0;
    let mut i = 0;
    while i < src.len() && tokens <= stop_after {
        let start = i;
        let b = src[i];
        let rest = &src[i..];
        let is_token = if b.is_ascii_whitespace() {
            i += 1;
            false
        } else if rest.starts_with(b"//") {
            i = memchr::memchr(b'\n', rest).map_or(src.len(), |e| i + e);
            tokens += COMMENT_TOKENS - 1;
            true
        } else if rest.starts_with(b"/*") {
            i = past(i + 2, b"*/");
            tokens += COMMENT_TOKENS - 1;
            true
        } else if rest.starts_with(b"\"\"\"") {
            i = past(i + 3, b"\"\"\"");
            true
        } else if b == b'"' || b == b'\'' {
            i += 1;
            while i < src.len() && src[i] != b && src[i] != b'\n' {
                i += if src[i] == b'\\' { 2 } else { 1 };
            }
            i = (i + 1).min(src.len());
            true
        } else if word(b) {
            while i < src.len() && word(src[i]) {
                i += 1;
            }
            true
        } else {
            i += 1;
            true
        };
        tokens += usize::from(is_token);
        *steps += (i - start) as u64;
    }
    tokens
}
