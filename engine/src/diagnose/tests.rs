//! The diagnosis's unit and property tests: the visible form, the classes of
//! a pair, loose keys, edit distance, and located edits end to end.

use super::classify::classify_pair;
use super::distance::{osa_distance, similarity, SIMILARITY_BUDGET};
use super::*;
use crate::envelope::{Hunk, LineKind};
use crate::text::Lines;

#[test]
fn visible_marks_invisibles_unambiguously() {
    assert_eq!(visible(b"a b  ", 0), "a b··");
    assert_eq!(visible(b"\tx\r", 0), "→x␍");
    assert_eq!(visible("x\u{a0}y".as_bytes(), 0), "x⍽y");
    assert_eq!(visible("a\u{200b}b".as_bytes(), 0), "a⟨U+200B⟩b");
    assert_eq!(visible("a·b".as_bytes(), 0), "a⟨U+00B7⟩b");
    assert_eq!(visible(b"\xff", 0), "⟨0xFF⟩");
    assert_eq!(visible(b"   ", 0), "···");
}

/// The report style marks only trailing whitespace, carriage returns and
/// controls; the diagnosis style is the wire form; `visible_line` never cuts.
#[test]
fn one_renderer_two_styles() {
    let line = "\ta \t\u{0}\u{7f}\u{a0}\u{200b}\r  ".as_bytes();
    assert_eq!(
        visible_line(line, VisibleStyle::Report),
        "\ta \t␀␡\u{a0}\u{200b}␍··"
    );
    assert_eq!(
        visible_line(line, VisibleStyle::Diagnosis),
        "→a →⟨U+0000⟩⟨U+007F⟩⍽⟨U+200B⟩␍··"
    );
    assert_eq!(visible_line(b"x\xff ", VisibleStyle::Report), "x\\xFF·");
    assert_eq!(visible_line(b"x\xff ", VisibleStyle::Diagnosis), "x⟨0xFF⟩·");
    let long = "x".repeat(2 * MAX_SHOWN_BYTES);
    assert_eq!(visible_line(long.as_bytes(), VisibleStyle::Diagnosis), long);
    assert!(visible(long.as_bytes(), 0).ends_with("⟨…⟩"));
}

#[test]
fn pairs_are_classified_by_the_normaliser_they_need() {
    let c = |e: &str, a: &str| classify_pair(e.as_bytes(), a.as_bytes());
    assert_eq!(c("x = 1", "x = 1  "), vec![Cause::TrailingWhitespace]);
    assert_eq!(c("    x", "\tx"), vec![Cause::Indentation]);
    assert_eq!(c("x\r", "x"), vec![Cause::LineEndings]);
    assert_eq!(c("it’s", "it's"), vec![Cause::UnicodeLookalike]);
    assert_eq!(c("caf\u{e9}", "cafe\u{301}"), vec![Cause::UnicodeLookalike]);
    assert_eq!(c("a\u{a0}b", "a b"), vec![Cause::UnicodeLookalike]);
    assert_eq!(c("a  =  b", "a = b"), vec![Cause::InnerWhitespace]);
    assert_eq!(c("foo(1)", "foo(2)"), vec![Cause::ContentDiffers]);
}

#[test]
fn loose_keys_ignore_invisible_differences() {
    assert_eq!(loose_key(b"  foo(a, b)"), loose_key(b"\tfoo(a,b)  "));
    assert_eq!(loose_key("it’s".as_bytes()), loose_key(b"it's"));
    assert_eq!(
        loose_key("caf\u{e9}".as_bytes()),
        loose_key("cafe\u{301}".as_bytes())
    );
    assert_ne!(loose_key(b"foo(1)"), loose_key(b"foo(2)"));
}

#[test]
fn line_number_prefixes_are_recognised() {
    assert_eq!(strip_line_number(b"    12\tfoo"), Some(&b"foo"[..]));
    assert_eq!(strip_line_number(b"12: foo"), Some(&b"foo"[..]));
    assert_eq!(strip_line_number("  7→x".as_bytes()), Some(&b"x"[..]));
    assert_eq!(strip_line_number(b"3 | y"), Some(&b"y"[..]));
    assert_eq!(strip_line_number(b"foo"), None);
    assert_eq!(strip_line_number(b"12345678\tx"), None);
}

/// A source-like file of `n` distinct lines with `special` lines
/// (1-based line, text) put in place.
fn source(n: usize, special: &[(usize, &str)]) -> String {
    let mut lines: Vec<String> = (1..=n)
        .map(|i| match i % 7 {
            0 => "    }".to_string(),
            3 => String::new(),
            _ => format!("        let total_{i} = account_{i}.balance() + fees({i});"),
        })
        .collect();
    for (at, text) in special {
        lines[at - 1] = text.to_string();
    }
    lines.join("\n") + "\n"
}

/// Diagnose the first hunk of an envelope's one Update section.
fn diagnose(file: &str, body: &str) -> Diagnosis {
    let text = format!("*** Begin Patch\n*** Update File: f\n@@\n{body}*** End Patch\n");
    let patch = crate::envelope::parse(&text).expect("the test envelope parses");
    let crate::envelope::SectionKind::Update { hunks, .. } = &patch.sections[0].kind else {
        unreachable!("one Update section")
    };
    let err = crate::matching::apply_hunks(file.as_bytes(), hunks)
        .expect_err("the test hunk does not apply");
    match err.failure {
        crate::matching::HunkFailure::MultipleMatches { count: total, .. } => {
            multiple_matches(file.as_bytes(), hunks, 0, total)
        }
        _ => hunk_not_found(file.as_bytes(), hunks, 0, false),
    }
}

#[test]
fn a_header_above_one_match_names_the_line_that_tells_it_apart() {
    let file = "class A:\n    def run(self):\n        x = 1\n        return x\n\n\
                class B:\n    def run(self):\n        x = 1\n        return x\n";
    let hunk = "-        x = 1\n+        x = 2\n         return x\n";
    // `def run` stands above both matches; `class B` above one.
    let d = diagnose(file, &format!("@@ class B\n@@     def run(self):\n{hunk}"));
    assert_eq!(d.cause(), Cause::AmbiguousContext);
    assert_eq!(
        d.header_found,
        Some(HeaderFound {
            line: 6,
            text: "class B:".into(),
            match_line: 8
        })
    );
    assert!(d.hint.contains("informational"), "{}", d.hint);
    assert!(d.hint.contains("up to line 6"), "{}", d.hint);
    // A header the file does not have: said to be unused, nothing found.
    let d = diagnose(file, &format!("@@ class C\n{hunk}"));
    assert_eq!(d.header_found, None);
    assert!(
        d.hint.contains("\"class C\") is informational"),
        "{}",
        d.hint
    );
    assert!(d.hint.contains("e.g. line 1 (class A:)"), "{}", d.hint);
    // A header above every match tells nothing apart.
    let d = diagnose(file, &format!("@@ def run\n{hunk}"));
    assert_eq!(d.header_found, None);
    // No header text: nothing said about headers.
    let d = diagnose(file, hunk);
    assert!(!d.hint.contains("informational"), "{}", d.hint);
}

#[test]
fn a_typo_among_common_words_is_located_by_its_grams() {
    // Every word of the line is common in the file; the misspelt one
    // is absent. Only the 4-grams of the whole line tell.
    let mut lines: Vec<String> = (0..300)
        .map(|i| format!("        optional($.rule_{i}),"))
        .collect();
    lines[149] = "        optional($.guard),".into();
    let file = lines.join("\n") + "\n";
    let d = diagnose(
        &file,
        "-        optional($.guarrd),\n+        optional($.guard2),\n",
    );
    assert_eq!((d.cause(), d.line), (Cause::ContentDiffers, Some(150)));
}

#[test]
fn a_one_or_two_line_typo_is_located() {
    let file = source(1500, &[(1201, "    print(\"Hello, \" + name)")]);
    let d = diagnose(&file, "-    print(\"Hello, \" + nme)\n+    print(name)\n");
    assert_eq!((d.cause(), d.line), (Cause::ContentDiffers, Some(1201)));
    // Both lines of a two-line hunk misquoted.
    let file = source(
        1500,
        &[
            (900, "    let widget = Widget::new(config);"),
            (901, "    widget.render(&mut frame);"),
        ],
    );
    let d = diagnose(
        &file,
        "-    let widget = Widget::new(cfg);\n-    widget.rendr(&mut frame);\n+    draw();\n",
    );
    assert_eq!((d.cause(), d.line), (Cause::ContentDiffers, Some(900)));
    // A misquoted line between short ones.
    let file = source(
        1500,
        &[
            (700, "    }"),
            (701, "    register_handler(router, \"/health\"));"),
            (702, "));"),
        ],
    );
    let d = diagnose(
        &file,
        " }\n-    register_handlr(router, \"/health\"));\n+    x();\n ));\n",
    );
    assert_eq!((d.cause(), d.line), (Cause::ContentDiffers, Some(700)));
}

#[test]
fn a_blank_line_dropped_after_a_short_first_line_is_named() {
    let file = source(
        1500,
        &[
            (1098, "    }"),
            (1099, ""),
            (1100, "    /// One level of the tree."),
            (1101, "    fn level(&self) -> usize {"),
        ],
    );
    let d = diagnose(
        &file,
        "     }\n     /// One level of the tree.\n-    fn level(&self) -> usize {\n+    fn depth(&self) -> usize {\n",
    );
    assert_eq!((d.cause(), d.line), (Cause::BlankLineMissing, Some(1098)));
}

#[test]
fn similarity_breaks_ties_between_near_duplicates() {
    let file = source(
        300,
        &[
            (100, "    config.retry_limit = compute_limit(alpha);"),
            (200, "    config.retry_limit = compute_limit(beta);"),
        ],
    );
    let d = diagnose(
        &file,
        "-    config.retry_limit = compute_limit(betta);\n+    x();\n",
    );
    assert_eq!((d.cause(), d.line), (Cause::ContentDiffers, Some(200)));
    assert_eq!(d.other_candidates, vec![100]);
}

#[test]
fn among_loose_matches_the_byte_closest_wins() {
    // Line 100 differs from the hunk in indentation and CR, line 200
    // in the CR only.
    let file = source(
        300,
        &[
            (100, "      if (is_relevant(child)) {"),
            (200, "        if (is_relevant(child)) {"),
        ],
    );
    let d = diagnose(
        &file,
        "-        if (is_relevant(child)) {\r\n+        if (x) {\n",
    );
    assert_eq!((d.cause(), d.line), (Cause::LineEndings, Some(200)));
}

#[test]
fn a_content_difference_ranks_first() {
    let file = source(
        300,
        &[(100, "    let alpha = 1;  "), (101, "    let beta = 2;")],
    );
    let d = diagnose(
        &file,
        "-    let alpha = 1;\n-    let betta = 2;\n+    x();\n",
    );
    assert_eq!(
        d.causes,
        vec![Cause::ContentDiffers, Cause::TrailingWhitespace]
    );
    assert_eq!(d.line, Some(100));
}

#[test]
fn lines_each_common_in_the_file_are_still_similar() {
    // Every line of the hunk occurs more than COMMON_KEY times.
    let mut lines = Vec::new();
    for i in 0..100 {
        lines.push(format!("fn f{i}() {{"));
        lines.push("    return result;".to_string());
        lines.push("}".to_string());
    }
    let file = lines.join("\n") + "\n";
    let d = diagnose(&file, "-    return result; \n+    return other;\n }\n");
    assert_eq!(d.cause(), Cause::TrailingWhitespace);
    assert!(d.line.is_some());
}

#[test]
fn no_similar_region_says_check_the_path_only_when_nothing_is_there() {
    let mut lines = Vec::new();
    for i in 0..50 {
        lines.push(format!("fn f{i}() -> u32 {{"));
        lines.push("    return result;".to_string());
        lines.push("}".to_string());
    }
    let file = lines.join("\n") + "\n";
    let d = diagnose(
        &file,
        "-    return result;\n-    frobnicate(widget_handle);\n-    quux_the_thing(now);\n+    x();\n",
    );
    assert_eq!((d.cause(), d.line), (Cause::NoSimilarRegion, None));
    assert!(d.hint.contains("50 times"), "{}", d.hint);
    assert!(!d.hint.contains("check the path"), "{}", d.hint);
    let d = diagnose(&file, "-    frobnicate(widget_handle);\n+    x();\n");
    assert!(d.hint.contains("check the path"), "{}", d.hint);
}

#[test]
fn spacing_and_dashes_are_classified_as_documented() {
    let c = |e: &str, a: &str| classify_pair(e.as_bytes(), a.as_bytes());
    assert_eq!(c("foo(a,b)", "foo(a, b)"), vec![Cause::InnerWhitespace]);
    assert_eq!(c("a -- b", "a \u{2014} b"), vec![Cause::UnicodeLookalike]);
    assert_eq!(c("a - b", "a \u{2014} b"), vec![Cause::UnicodeLookalike]);
    assert_eq!(c("x--", "x-"), vec![Cause::ContentDiffers]);
    assert_eq!(loose_key("a \u{2014} b".as_bytes()), loose_key(b"a--b"));
}

#[test]
fn similarity_is_an_edit_distance_on_a_budget() {
    let mut budget = SIMILARITY_BUDGET;
    assert_eq!(osa_distance(b"name", b"nmae"), 1);
    assert_eq!(osa_distance(b"kitten", b"sitting"), 3);
    let (sim, close) = similarity(b"print(name)", b"print(nme)", &mut budget).unwrap();
    assert!(close && sim > 900);
    let (_, close) = similarity(b"returnNone", b"returnself", &mut budget).unwrap();
    assert!(!close);
    let mut none = 0;
    assert_eq!(similarity(b"abcdef", b"abXYef", &mut none), None);
}

mod props {
    use super::*;
    use crate::envelope::{HunkLine, Span};
    use proptest::prelude::*;

    fn text() -> impl Strategy<Value = String> {
        proptest::collection::vec(
            prop_oneof![
                Just("a".to_string()),
                Just("b b".to_string()),
                Just("".to_string()),
                Just(" \t".to_string()),
                Just("\u{2019}x\r".to_string()),
                Just("1\tc".to_string()),
                Just("e\u{301}".to_string()),
                Just("x\\ny".to_string()),
            ],
            0..12,
        )
        .prop_map(|v| v.join("\n"))
    }

    proptest! {
        /// Every entry point returns a diagnosis with a cause, and
        /// every line it names is inside the file, for any input.
        #[test]
        fn diagnoses_are_total_and_in_bounds(
            file in text(),
            hunk in proptest::collection::vec((0u8..3, text()), 0..10),
            anchored in any::<bool>(),
            start in 0usize..15,
        ) {
            let lines: Vec<HunkLine<'_>> = hunk
                .iter()
                .flat_map(|(k, t)| t.split('\n').map(move |l| (*k, l)))
                .map(|(k, l)| HunkLine {
                    span: Span { line: 1 },
                    kind: [LineKind::Context, LineKind::Remove, LineKind::Add][k as usize],
                    text: l,
                    no_newline: false,
                })
                .collect();
            let hunks = vec![
                Hunk { span: Span { line: 1 }, headers: vec![""], lines: lines.clone(), end_of_file: false },
                Hunk { span: Span { line: 2 }, headers: vec![""], lines, end_of_file: anchored },
            ];
            let n = Lines::new(file.as_bytes()).len();
            let check = |d: &Diagnosis| {
                assert!(!d.causes.is_empty());
                for l in d.line.iter().chain(&d.end_line).chain(&d.found_at_line) {
                    assert!(*l >= 1 && *l <= n.max(1), "line {l} of {n}: {d:?}");
                }
            };
            for i in 0..hunks.len() {
                check(&hunk_not_found(file.as_bytes(), &hunks, i, anchored));
                check(&multiple_matches(file.as_bytes(), &hunks, i, 2));
            }
            if let Some(d) = stale_file(file.as_bytes(), &hunks) {
                check(&d);
            }
            let expected: Vec<String> = hunk.iter().map(|(_, t)| t.replace('\n', " ")).collect();
            check(&line_mismatch(file.as_bytes(), start.max(1), &expected, &["z".to_string()]));
        }
    }
}
