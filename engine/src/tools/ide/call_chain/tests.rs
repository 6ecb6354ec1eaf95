//! Tests of `call_chain`: the index, the walk's faults, the params, the
//! traversal bounds.

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
    analyse(&fs, &parse(&v)?).map(|body| match crate::tools::wire::document(&body) {
        Value::Object(m) => m,
        other => panic!("not an object: {other}"),
    })
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
        // Counting tokens reads each byte once; indexing visits the nodes
        // once each and reads no receiver.
        let work = index.work.get();
        let bound = 3 * src.len();
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
        index_of("class A { void m() { a.b.c(); new B(); this.d(); } A() { this(1); } }").unwrap();
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
    assert_eq!(e.kind, IdeErrorKind::NestingTooDeep);
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
    assert_eq!(a, ChainArgs::new("a.b.Foo.bar"));
    assert_eq!(a.parts().unwrap(), ("a.b.Foo", "bar"));
    assert_eq!(
        (a.direction, a.depth, a.include_source),
        (ChainDirection::Both, 1, false)
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
        (IdeErrorKind::MethodNotFound, &json!("no_such_class"))
    );
    let e = chain(&dir, json!({"method": "Inventory.nope"})).unwrap_err();
    assert_eq!(e.details["available"], json!(["check", "reserve"]));
    let dir = ws(&[
        ("a/Foo.java", "package a; class Foo { void x() {} }"),
        ("b/Foo.java", "package b; class Foo { void x() {} }"),
    ]);
    let e = chain(&dir, json!({"method": "Foo.x"})).unwrap_err();
    assert_eq!(e.kind, IdeErrorKind::AmbiguousMethod);
    assert!(chain(&dir, json!({"method": "b.Foo.x"})).is_ok());
}

/// A class whose `a` calls `b0`…`b{k-1}`, each of which calls `p`, which
/// calls `e` on `s` lines: `p` is shown under `k` parents.
fn fan_in(k: usize, s: usize) -> String {
    let mut src = String::from("class X {\n  void a() {\n");
    src.extend((0..k).map(|i| format!("    b{i}();\n")));
    src.push_str("  }\n");
    src.extend((0..k).map(|i| format!("  void b{i}() {{ p(); }}\n")));
    src.push_str("  void p() {\n");
    src.extend((0..s).map(|_| "    e();\n".to_string()));
    src.push_str("  }\n  void e() {}\n}\n");
    src
}

/// The audit's second call_chain shape: a method with S call sites shown
/// under each of k parents made an answer of k × S entries (70 KB of
/// source: a 360 MB answer). Now each method's level is built once and
/// each node shows at most MAX_SITES_PER_NODE lines: the work of building
/// the tree is within the calls plus the nodes shown, whatever k × S is.
#[test]
fn a_method_shown_under_many_parents_is_summarised_once() {
    for (k, s) in [(20, 200), (300, 200), (300, 3000)] {
        let dir = ws(&[("X.java", &fan_in(k, s))]);
        let fs = crate::fs::RealFs::open(dir.path()).unwrap();
        let index = Index::build(&fs).unwrap();
        let args = parse(&json!({"method": "X.a", "direction": "callees", "depth": 3})).unwrap();
        let targets = index.target(&args).unwrap();
        let before = index.work.get();
        let (tree, truncated) = index.tree(&targets, false, &args);
        let work = index.work.get() - before;
        let nodes = 3 * k; // b_i, p under it, e under that
        let bound = 2 * index.calls.len() + nodes * MAX_SITES_PER_NODE;
        assert!(work <= bound as u64, "k={k} s={s}: {work} steps > {bound}");
        assert!(!truncated);
        assert_eq!(tree.len(), k);
        let e = &tree[k - 1]["callees"][0]["callees"][0];
        assert_eq!(e["method"], "X.e");
        assert_eq!(e["calls"], s);
        let shown = e["callSites"].as_array().unwrap();
        assert_eq!(shown.len(), s.min(MAX_SITES_PER_NODE));
        assert_eq!(shown[0]["line"], 2 + k + 1 + k + 2);
        assert_eq!(
            e.get("callSitesTruncated"),
            (s > MAX_SITES_PER_NODE).then_some(&json!(true))
        );
    }
}

/// Calls on one line are one `callSites` entry; `calls` counts them.
#[test]
fn calls_on_one_line_are_one_site() {
    let dir = ws(&[(
        "A.java",
        "class A {\n  A c() { return this.c().c().c(); }\n  void d() { c(); c();\n c(); }\n}\n",
    )]);
    let doc = chain(&dir, json!({"method": "A.c", "direction": "callers"})).unwrap();
    let callers = doc["callers"].as_array().unwrap();
    assert_eq!(callers.len(), 2);
    assert_eq!(callers[0]["method"], "A.c");
    assert_eq!(
        callers[0]["callSites"],
        json!([{"line": 2, "resolution": "name"}, {"line": 2, "resolution": "type"}])
    );
    assert_eq!(callers[0]["calls"], 3);
    assert_eq!(
        callers[1]["callSites"],
        json!([{"line": 3, "resolution": "type"}, {"line": 4, "resolution": "type"}])
    );
    assert_eq!(callers[1]["calls"], 3);
}

/// The token count: one pass, every byte read once, comments weighted.
#[test]
fn tokens_are_counted_in_one_pass() {
    let src: &[u8] =
        b"class A { // note\n  String s = \"a \\\" b\"; /* c */ char c = '\\''; int x = a>>=2; }";
    let mut steps = 0;
    assert_eq!(index::java_tokens(src, usize::MAX, &mut steps), 29);
    assert_eq!(steps, src.len() as u64);
    // Text blocks, unterminated literals and comments end at the end.
    for (text, tokens) in [
        (&b"\"\"\" a \" b \"\"\" x"[..], 2),
        (b"\"open", 1),
        (b"/* open", 3),
        (b"// end", 3),
        (b"\xc3\xa9t\xc3\xa9 = 1", 3),
    ] {
        let mut steps = 0;
        assert_eq!(
            index::java_tokens(text, usize::MAX, &mut steps),
            tokens,
            "{text:?}"
        );
        assert_eq!(steps, text.len() as u64);
    }
    // Counting stops one token past the limit.
    let mut steps = 0;
    assert_eq!(index::java_tokens(&[b';'; 1000], 10, &mut steps), 11);
    assert_eq!(steps, 11);
}

/// A file over MAX_FILE_TOKENS is counted, not parsed: listed as
/// skipped, the rest indexed; counting it reads each byte once.
#[test]
fn a_file_over_the_token_limit_is_skipped() {
    let big = format!(
        "class Big {{ void f() {{ {} }} }}",
        ";".repeat(MAX_FILE_TOKENS)
    );
    let dir = ws(&[
        (
            "App.java",
            "class App { void run() { help(); } void help() {} }",
        ),
        ("gen/Big.java", &big),
    ]);
    let fs = crate::fs::RealFs::open(dir.path()).unwrap();
    let index = Index::build(&fs).unwrap();
    assert_eq!(index.files, ["App.java"]);
    assert_eq!(index.skipped, ["gen/Big.java"]);
    assert!(index.work.get() < 2 * big.len() as u64);
    let doc = chain(&dir, json!({"method": "App.help"})).unwrap();
    assert_eq!(
        doc["skippedFiles"],
        json!([{"path": "gen/Big.java", "reason": "too_large", "limit": MAX_FILE_TOKENS}])
    );
    assert_eq!(doc["filesParsed"], 1);
    let err = chain(&dir, json!({"method": "Big.f"})).unwrap_err();
    assert_eq!(err.kind, IdeErrorKind::MethodNotFound);
    assert!(
        err.message.contains("gen/Big.java was not parsed"),
        "{}",
        err.message
    );
}

/// A record's components are its fields (a varargs one an array), and its
/// compact constructor takes every one of them.
#[test]
fn record_components_are_fields_and_compact_constructor_parameters() {
    let dir = ws(&[
        (
            "Item.java",
            "class Item {\n  public Item clone() { return this; }\n}\n",
        ),
        (
            "Bag.java",
            "record Bag(Item first, Item... rest) {\n  Bag { first.clone(); }\n  \
             void all() { rest.clone(); }\n}\n",
        ),
        (
            "Point.java",
            "record Point(int x, int y) {\n  Point { }\n}\n",
        ),
        (
            "Use.java",
            "class Use {\n  void make(Item a) {\n    new Bag(a, a, a);\n    new Bag(a);\n    \
             new Point(1, 2);\n    new Point(1);\n  }\n}\n",
        ),
    ]);
    // A varargs component is an array: its `clone` is external.
    let doc = chain(&dir, json!({"method": "Bag.all", "direction": "callees"})).unwrap();
    assert_eq!(doc["callees"][0]["method"], "rest.clone");
    assert_eq!(doc["callees"][0]["external"], true);
    // The compact constructor takes every component, varargs and
    // primitive ones included.
    let doc = chain(&dir, json!({"method": "Use.make", "direction": "callees"})).unwrap();
    let linked: Vec<(String, u64)> = doc["callees"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["method"].as_str().unwrap().to_string(),
                c["callSites"][0]["line"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        linked,
        [
            ("Bag.Bag".to_string(), 3),
            ("Point.Point".to_string(), 5),
            ("new Point".to_string(), 6)
        ]
    );
}

/// An array variable (`T[]`, varargs `T...`) is no workspace type: a call
/// on it is external, and it shadows a field of the same name.
#[test]
fn array_variables_are_not_their_element_type() {
    let dir = ws(&[
        ("Item.java", "class Item {\n  public Item clone() { return this; }\n}\n"),
        (
            "Batch.java",
            "class Batch {\n  Item item;\n  void all(Item... items) { items.clone(); }\n  \
             void shadowed(Item[] item) { item.clone(); }\n  void local() { Item [] xs = null; xs.clone(); }\n  \
             void one(Item it) { it.clone(); }\n}\n",
        ),
    ]);
    let doc = chain(
        &dir,
        json!({"method": "Item.clone", "direction": "callers"}),
    )
    .unwrap();
    let callers: Vec<_> = doc["callers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["method"].as_str().unwrap())
        .collect();
    assert_eq!(callers, ["Batch.one"]);
    for (method, callee) in [
        ("Batch.all", "items.clone"),
        ("Batch.shadowed", "item.clone"),
        ("Batch.local", "xs.clone"),
    ] {
        let doc = chain(&dir, json!({"method": method, "direction": "callees"})).unwrap();
        assert_eq!(doc["callees"][0]["method"], callee, "{method}");
        assert_eq!(doc["callees"][0]["external"], true, "{method}");
    }
}
