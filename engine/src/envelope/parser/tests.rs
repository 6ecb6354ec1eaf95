//! Every accepted form and every error, through [`check`]; then
//! properties over arbitrary bytes and grammar-ish line sequences.

use std::fmt::Write as _;

use proptest::prelude::*;

use super::{parse, parse_bytes};
use crate::envelope::{LineKind, Patch, SectionKind};

/// A compact dump of a patch, with the envelope line of every section,
/// hunk and hunk line.
fn dump(patch: &Patch<'_>) -> String {
    let mut out = String::new();
    for section in &patch.sections {
        let line = section.span.line;
        match &section.kind {
            SectionKind::Add {
                path,
                lines,
                no_newline_at_end,
            } => {
                writeln!(out, "{line}: add {path:?}").unwrap();
                for l in lines {
                    writeln!(out, "  +{l:?}").unwrap();
                }
                if *no_newline_at_end {
                    writeln!(out, "  no newline at end").unwrap();
                }
            }
            SectionKind::Update {
                path,
                move_to,
                hunks,
            } => {
                match move_to {
                    None => writeln!(out, "{line}: update {path:?}").unwrap(),
                    Some(to) => writeln!(out, "{line}: update {path:?} -> {to:?}").unwrap(),
                }
                for hunk in hunks {
                    write!(out, "  {}:", hunk.span.line).unwrap();
                    for header in &hunk.headers {
                        write!(out, " @@ {header:?}").unwrap();
                    }
                    out.push('\n');
                    for l in &hunk.lines {
                        let kind = match l.kind {
                            LineKind::Context => "ctx",
                            LineKind::Remove => "del",
                            LineKind::Add => "add",
                        };
                        let nl = if l.no_newline { " no newline" } else { "" };
                        writeln!(out, "    {}: {kind} {:?}{nl}", l.span.line, l.text).unwrap();
                    }
                    if hunk.end_of_file {
                        writeln!(out, "    end of file").unwrap();
                    }
                }
            }
            SectionKind::Delete { path } => writeln!(out, "{line}: delete {path:?}").unwrap(),
        }
    }
    out
}

/// Drop the first line if blank and the common indentation.
fn trim_indent(text: &str) -> String {
    let text = text.strip_prefix('\n').unwrap_or(text).trim_end();
    let indent = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    text.lines()
        .map(|l| l.get(indent..).unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The envelope made of these lines, each ended by `\n`.
fn env(lines: &[&str]) -> String {
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

/// Parse `input`; compare the dump (or the error's display) to
/// `expected`. A patch that parses must also survive render → parse.
#[track_caller]
fn check(input: &str, expected: &str) {
    let actual = match parse(input) {
        Ok(patch) => {
            assert_round_trip(&patch);
            dump(&patch)
        }
        Err(e) => e.to_string(),
    };
    assert_eq!(actual.trim_end(), trim_indent(expected), "input: {input:?}");
}

/// `parse(render(p)) == p`, also through a CRLF copy of the rendering.
#[track_caller]
fn assert_round_trip(patch: &Patch<'_>) {
    let rendered = patch.render();
    assert_eq!(
        parse(&rendered).as_ref(),
        Ok(patch),
        "rendered: {rendered:?}"
    );
    let crlf = rendered.replace('\n', "\r\n");
    assert_eq!(
        parse(&crlf).as_ref(),
        Ok(patch),
        "rendered as CRLF: {crlf:?}"
    );
}

// ---- accepted forms -------------------------------------------------

#[test]
fn the_spec_full_example() {
    check(
        &env(&[
            "*** Begin Patch",
            "*** Add File: src/utils/clamp.ts",
            "+export const clamp = (n: number, lo: number, hi: number): number =>",
            "+ Math.min(Math.max(n, lo), hi);",
            "*** Update File: src/index.ts",
            "@@",
            " import { foo } from \"./foo\";",
            "+import { clamp } from \"./utils/clamp\";",
            " export { foo };",
            "+export { clamp };",
            "*** Delete File: src/legacy.ts",
            "*** End Patch",
        ]),
        r#"
            2: add "src/utils/clamp.ts"
              +"export const clamp = (n: number, lo: number, hi: number): number =>"
              +" Math.min(Math.max(n, lo), hi);"
            5: update "src/index.ts"
              6: @@ ""
                7: ctx "import { foo } from \"./foo\";"
                8: add "import { clamp } from \"./utils/clamp\";"
                9: ctx "export { foo };"
                10: add "export { clamp };"
            11: delete "src/legacy.ts"
            "#,
    );
}

#[test]
fn add_forms() {
    // An empty body is an empty file; `+` alone is an empty line;
    // directive-looking text after `+` is content.
    check(
        &env(&[
            "*** Begin Patch",
            "*** Add File: empty",
            "*** Add File: a",
            "+",
            "+*** End Patch",
            "+@@ x",
            "+   ",
            "*** Add File: b",
            "+no newline",
            "\\ No newline at end of file",
            "*** End Patch",
        ]),
        r#"
            2: add "empty"
            3: add "a"
              +""
              +"*** End Patch"
              +"@@ x"
              +"   "
            8: add "b"
              +"no newline"
              no newline at end
            "#,
    );
}

#[test]
fn hunk_headers() {
    // One separating space is removed; `@@x` needs none.
    check(
        &env(&[
            "*** Begin Patch",
            "*** Update File: a",
            "@@",
            " 1",
            "@@ ",
            " 2",
            "@@ fn main() {",
            " 3",
            "@@fn main() {",
            " 4",
            "@@   indented",
            " 5",
            "@@ @@ -1,3 +1,4 @@",
            " 6",
            "*** End Patch",
        ]),
        r#"
            2: update "a"
              3: @@ ""
                4: ctx "1"
              5: @@ ""
                6: ctx "2"
              7: @@ "fn main() {"
                8: ctx "3"
              9: @@ "fn main() {"
                10: ctx "4"
              11: @@ "  indented"
                12: ctx "5"
              13: @@ "@@ -1,3 +1,4 @@"
                14: ctx "6"
            "#,
    );
}

#[test]
fn stacked_hunk_headers() {
    // Consecutive `@@` lines form one hunk's header (C-env-stacked-headers);
    // an `@@` line after body lines still starts the next hunk.
    check(
        &env(&[
            "*** Begin Patch",
            "*** Update File: a",
            "@@ class Foo",
            "@@     def bar(self):",
            " 1",
            "-2",
            "@@",
            "@@",
            "@@x",
            "+3",
            "*** End of File",
            "@@ again",
            " 4",
            "*** End Patch",
        ]),
        r#"
            2: update "a"
              3: @@ "class Foo" @@ "    def bar(self):"
                5: ctx "1"
                6: del "2"
              7: @@ "" @@ "" @@ "x"
                10: add "3"
                end of file
              12: @@ "again"
                13: ctx "4"
            "#,
    );
    // A no-newline marker after a stacked header still needs a body line.
    check(
        &env(&[
            "*** Begin Patch",
            "*** Update File: a",
            "@@ a",
            "@@ b",
            "\\ No newline at end of file",
            "*** End Patch",
        ]),
        "line 5: '\\ No newline at end of file' must follow a hunk line, not '@@'",
    );
}

#[test]
fn hunk_body_lines() {
    // Context-only hunks are allowed; a line of spaces is context.
    check(
        &env(&[
            "*** Begin Patch",
            "*** Update File: a",
            "@@",
            " keep",
            "-drop",
            "+add",
            " ",
            "   ",
            "--",
            "++",
            "@@ context only",
            " x",
            "*** End Patch",
        ]),
        r#"
            2: update "a"
              3: @@ ""
                4: ctx "keep"
                5: del "drop"
                6: add "add"
                7: ctx ""
                8: ctx "  "
                9: del "-"
                10: add "+"
              11: @@ "context only"
                12: ctx "x"
            "#,
    );
}

#[test]
fn move_spellings() {
    check(
        &env(&[
            "*** Begin Patch",
            "*** Move File: old/a.ts -> new/a.ts",
            "*** Move File: b -> c",
            "@@",
            "-x",
            "+y",
            "*** Update File: d",
            "*** Move to: e",
            "*** Update File: f",
            "*** Move to: g",
            "@@",
            " z",
            "*** Move File: h -> i -> j",
            "*** Update File: k -> l",
            "*** Move to: m -> n",
            "*** Update File: o -> p",
            "@@",
            " q",
            "*** End Patch",
        ]),
        r#"
            2: update "old/a.ts" -> "new/a.ts"
            3: update "b" -> "c"
              4: @@ ""
                5: del "x"
                6: add "y"
            7: update "d" -> "e"
            9: update "f" -> "g"
              11: @@ ""
                12: ctx "z"
            13: update "h" -> "i -> j"
            14: update "k -> l" -> "m -> n"
            16: update "o -> p"
              17: @@ ""
                18: ctx "q"
            "#,
    );
}

#[test]
fn a_move_onto_itself_is_left_to_the_planner() {
    check(
        &env(&[
            "*** Begin Patch",
            "*** Move File: a -> a",
            "*** Update File: b",
            "*** Move to: b",
            "*** End Patch",
        ]),
        r#"
            2: update "a" -> "a"
            3: update "b" -> "b"
            "#,
    );
}

#[test]
fn end_of_file_marker() {
    check(
        &env(&[
            "*** Begin Patch",
            "*** Update File: a",
            "@@",
            " x",
            "+y",
            "*** End of File",
            "@@",
            "-z",
            "*** End of File",
            "*** Update File: b",
            "@@",
            " w",
            "\\ No newline at end of file",
            "*** End of File",
            "*** End Patch",
        ]),
        r#"
            2: update "a"
              3: @@ ""
                4: ctx "x"
                5: add "y"
                end of file
              7: @@ ""
                8: del "z"
                end of file
            10: update "b"
              11: @@ ""
                12: ctx "w" no newline
                end of file
            "#,
    );
}

#[test]
fn no_newline_markers_in_every_position() {
    check(
        &env(&[
            "*** Begin Patch",
            "*** Update File: a",
            "@@",
            "-old",
            "\\ No newline at end of file",
            "+new",
            "\\ No newline at end of file",
            "@@",
            " ctx",
            "\\ No newline at end of file",
            "@@",
            "-x",
            "+y",
            "\\ No newline at end of file",
            "*** End Patch",
        ]),
        r#"
            2: update "a"
              3: @@ ""
                4: del "old" no newline
                6: add "new" no newline
              8: @@ ""
                9: ctx "ctx" no newline
              11: @@ ""
                12: del "x"
                13: add "y" no newline
            "#,
    );
    // A marker must follow the last line of its side: ` z` continues
    // the new side after `+y`, so the marker on `+y` is misplaced.
    check(
        &env(&[
            "*** Begin Patch",
            "*** Update File: a",
            "@@",
            "-x",
            "+y",
            "\\ No newline at end of file",
            " z",
            "*** End Patch",
        ]),
        "line 6: '\\ No newline at end of file' may only follow the last line of the side it speaks for \
         (the last '-' or ' ' line for the old side, the last '+' or ' ' line for the new)",
    );
    check(
        &env(&[
            "*** Begin Patch",
            "*** Update File: a",
            "@@",
            "-a",
            "\\ No newline at end of file",
            "-b",
            "*** End Patch",
        ]),
        "line 5: '\\ No newline at end of file' may only follow the last line of the side it speaks for \
         (the last '-' or ' ' line for the old side, the last '+' or ' ' line for the new)",
    );
}

#[test]
fn envelope_terminators() {
    let expected = r#"2: delete "a""#;
    check(
        "*** Begin Patch\n*** Delete File: a\n*** End Patch",
        expected,
    );
    check(
        "*** Begin Patch\n*** Delete File: a\n*** End Patch\n",
        expected,
    );
    check(
        "*** Begin Patch\r\n*** Delete File: a\r\n*** End Patch\r\n",
        expected,
    );
    check(
        "*** Begin Patch\r\n*** Delete File: a\r\n*** End Patch",
        expected,
    );
}

#[test]
fn crlf_envelope_strips_one_cr_per_line() {
    check(
        "*** Begin Patch\r\n*** Add File: a\r\n+x\r\n+y\r\r\n+z\n\\ No newline at end of file\r\n*** End Patch\r\n",
        r#"
            2: add "a"
              +"x"
              +"y\r"
              +"z"
              no newline at end
            "#,
    );
    check(
        "*** Begin Patch\r\n*** Update File: a\r\n@@ h\r\n x\r\n-\r\r\n*** End of File\r\n*** End Patch\r\n",
        r#"
            2: update "a"
              3: @@ "h"
                4: ctx "x"
                5: del "\r"
                end of file
            "#,
    );
}

#[test]
fn lf_envelope_keeps_cr_as_content() {
    check(
        &env(&[
            "*** Begin Patch",
            "*** Update File: a\rb",
            "@@ h\r",
            " x\r",
            "+\r",
            "*** End Patch",
        ]),
        r#"
            2: update "a\rb"
              3: @@ "h\r"
                4: ctx "x\r"
                5: add "\r"
            "#,
    );
}

#[test]
fn unicode() {
    check(
        &env(&[
            "*** Begin Patch",
            "*** Update File: 日本/ファイル.txt",
            "@@ ünïcödé",
            "-héllo",
            "+héllo 🌍",
            "*** End Patch",
        ]),
        r#"
            2: update "日本/ファイル.txt"
              3: @@ "ünïcödé"
                4: del "héllo"
                5: add "héllo 🌍"
            "#,
    );
}

// ---- errors around the envelope -------------------------------------

#[test]
fn text_before_begin_patch() {
    let tail = "\n*** Begin Patch\n*** Delete File: a\n*** End Patch\n";
    check(
        "",
        "line 1: expected '*** Begin Patch', found an empty envelope",
    );
    check(
        "\n",
        "line 1: expected '*** Begin Patch', found an empty line",
    );
    check(
        tail,
        "line 1: expected '*** Begin Patch', found an empty line",
    );
    check(
        &format!("```{tail}```\n"),
        r#"line 1: expected '*** Begin Patch', found "```""#,
    );
    check(
        &format!("```diff{tail}"),
        r#"line 1: expected '*** Begin Patch', found "```diff""#,
    );
    check(
        &format!("apply_patch <<'EOF'{tail}EOF\n"),
        r#"line 1: expected '*** Begin Patch', found "apply_patch <<'EOF'""#,
    );
    check(
        &format!("Here is the patch:{tail}"),
        r#"line 1: expected '*** Begin Patch', found "Here is the patch:""#,
    );
    check(
        "\u{feff}*** Begin Patch\n*** Delete File: a\n*** End Patch\n",
        r#"line 1: expected '*** Begin Patch', found "\u{feff}*** Begin Patch" (a UTF-8 byte order mark)"#,
    );
    check(
        "*** Begin Patch \n*** End Patch\n",
        "line 1: trailing whitespace after '*** Begin Patch'",
    );
    check(
        "*** Begin Patch\t\r\n*** End Patch\n",
        "line 1: trailing whitespace after '*** Begin Patch'",
    );
    check(
        "*** Begin Patch\r\r\n*** End Patch\n",
        "line 1: trailing whitespace after '*** Begin Patch'",
    );
    check(
        "*** begin patch\n",
        r#"line 1: expected '*** Begin Patch', found "*** begin patch""#,
    );
}

#[test]
fn text_after_end_patch() {
    let head = "*** Begin Patch\n*** Delete File: a\n*** End Patch";
    check(
        &format!("{head}\n\n"),
        "line 4: unexpected text after '*** End Patch'",
    );
    check(
        &format!("{head}\n\n\n"),
        "line 4: unexpected text after '*** End Patch'",
    );
    check(
        &format!("{head}\nEOF\n"),
        "line 4: unexpected text after '*** End Patch'",
    );
    check(
        &format!("{head}\n```"),
        "line 4: unexpected text after '*** End Patch'",
    );
    check(
        &format!("{head}\n*** End Patch\n"),
        "line 4: unexpected text after '*** End Patch'",
    );
    check(
        &format!("{head}\n "),
        "line 4: unexpected text after '*** End Patch'",
    );
    check(
        &format!("{head}\r\n"),
        "line 3: trailing whitespace after '*** End Patch'",
    );
    check(
        &format!("{head}  \n"),
        "line 3: trailing whitespace after '*** End Patch'",
    );
    check(
        "*** Begin Patch\r\n*** Delete File: a\r\n*** End Patch\r\n\r\n",
        "line 4: unexpected text after '*** End Patch'",
    );
    check(
        "*** Begin Patch\r\n*** Delete File: a\r\n*** End Patch\r\n\r",
        "line 4: unexpected text after '*** End Patch'",
    );
}

#[test]
fn missing_end_patch() {
    let message = "expected '*** End Patch' before the end of the envelope";
    check("*** Begin Patch", &format!("line 2: {message}"));
    check("*** Begin Patch\n", &format!("line 2: {message}"));
    check(
        "*** Begin Patch\n*** Add File: a\n+x\n",
        &format!("line 4: {message}"),
    );
    check(
        "*** Begin Patch\n*** Add File: a\n+x",
        &format!("line 4: {message}"),
    );
    check(
        "*** Begin Patch\n*** Update File: a\n",
        &format!("line 3: {message}"),
    );
    check(
        "*** Begin Patch\n*** Update File: a\n@@\n",
        &format!("line 4: {message}"),
    );
    check(
        "*** Begin Patch\n*** Update File: a\n@@\n x\n*** End of File\n",
        &format!("line 6: {message}"),
    );
    check(
        "*** Begin Patch\n*** Delete File: a\n",
        &format!("line 3: {message}"),
    );
    check(
        "*** Begin Patch\n*** Add File: a\n+x\n\\ No newline at end of file\n",
        &format!("line 5: {message}"),
    );
}

#[test]
fn no_sections() {
    check(
        "*** Begin Patch\n*** End Patch\n",
        "line 2: the envelope has no file sections",
    );
    check(
        "*** Begin Patch\n*** End Patch\n\n",
        "line 2: the envelope has no file sections",
    );
}

// ---- errors in directives --------------------------------------------

#[test]
fn unknown_and_malformed_directives() {
    let directives = "the directives are '*** Add File: <path>', '*** Update File: <path>', \
         '*** Move to: <path>', '*** Delete File: <path>', '*** Move File: <from> -> <to>', \
         '*** End of File' and '*** End Patch'";
    let at3 = |line: &str| {
        env(&[
            "*** Begin Patch",
            "*** Delete File: z",
            line,
            "*** End Patch",
        ])
    };
    check(
        &at3("*** Rename File: a"),
        &format!(r#"line 3: unknown directive "*** Rename File: a"; {directives}"#),
    );
    check(
        &at3("*** add file: a"),
        &format!(r#"line 3: unknown directive "*** add file: a"; {directives}"#),
    );
    check(
        &at3("***"),
        &format!(r#"line 3: unknown directive "***"; {directives}"#),
    );
    check(
        &at3("*** End Patch!"),
        &format!(r#"line 3: unknown directive "*** End Patch!"; {directives}"#),
    );
    check(
        &at3("*** End of File  "),
        "line 3: trailing whitespace after '*** End of File'",
    );
    check(
        &at3("*** Add File:"),
        "line 3: missing path after '*** Add File:'",
    );
    check(
        &at3("*** Add File: "),
        "line 3: missing path after '*** Add File:'",
    );
    check(
        &at3("*** Update File:  "),
        "line 3: missing path after '*** Update File:'",
    );
    check(
        &at3("*** Delete File:a"),
        r#"line 3: expected a space after '*** Delete File:', found "a""#,
    );
    check(
        &at3("*** Add File:  a"),
        r#"line 3: path " a" has leading or trailing whitespace"#,
    );
    check(
        &at3("*** Add File: a "),
        r#"line 3: path "a " has leading or trailing whitespace"#,
    );
    check(
        &at3("*** Add File: a\t"),
        r#"line 3: path "a\t" has leading or trailing whitespace"#,
    );
    check(
        &at3("*** Move to: a "),
        r#"line 3: path "a " has leading or trailing whitespace"#,
    );
    check(
        &at3("*** Move File: a"),
        r#"line 3: expected '*** Move File: <from> -> <to>', found "*** Move File: a""#,
    );
    check(
        &at3("*** Move File: a->b"),
        r#"line 3: expected '*** Move File: <from> -> <to>', found "*** Move File: a->b""#,
    );
    check(
        &at3("*** Move File:  -> b"),
        "line 3: move source: the path is empty",
    );
    check(
        &at3("*** Move File: a -> "),
        "line 3: move destination: the path is empty",
    );
    check(
        &at3("*** Move File: a ->  b"),
        r#"line 3: move destination: path " b" has leading or trailing whitespace"#,
    );
    check(
        &at3("*** Move File:  a -> b"),
        r#"line 3: move source: path " a" has leading or trailing whitespace"#,
    );
}

#[test]
fn misplaced_directives() {
    check(
        &env(&[
            "*** Begin Patch",
            "*** Begin Patch",
            "*** Delete File: a",
            "*** End Patch",
        ]),
        "line 2: '*** Begin Patch' may only stand on line 1",
    );
    check(
        &env(&["*** Begin Patch", "*** Move to: b", "*** End Patch"]),
        "line 2: '*** Move to:' must directly follow an '*** Update File:' line",
    );
    check(
        &env(&[
            "*** Begin Patch",
            "*** Move File: a -> b",
            "*** Move to: c",
            "*** End Patch",
        ]),
        "line 3: '*** Move to:' must directly follow an '*** Update File:' line",
    );
    check(
        &env(&[
            "*** Begin Patch",
            "*** Update File: a",
            "@@",
            " x",
            "*** Move to: c",
            "*** End Patch",
        ]),
        "line 5: '*** Move to:' must directly follow an '*** Update File:' line",
    );
    check(
        &env(&[
            "*** Begin Patch",
            "*** Update File: a",
            "*** Move to: b",
            "*** Move to: c",
            "*** End Patch",
        ]),
        "line 4: '*** Move to:' must directly follow an '*** Update File:' line",
    );
    check(
        &env(&[
            "*** Begin Patch",
            "*** Delete File: a",
            "*** Move to: b",
            "*** End Patch",
        ]),
        "line 3: '*** Move to:' must directly follow an '*** Update File:' line",
    );
    check(
        &env(&[
            "*** Begin Patch",
            "*** Add File: a",
            "+x",
            "*** End of File",
            "*** End Patch",
        ]),
        "line 4: '*** End of File' may only close a hunk, after at least one hunk line",
    );
    check(
        &env(&["*** Begin Patch", "*** End of File", "*** End Patch"]),
        "line 2: '*** End of File' may only close a hunk, after at least one hunk line",
    );
    check(
        &env(&[
            "*** Begin Patch",
            "*** Update File: a",
            "@@",
            " x",
            "*** Begin Patch",
            "*** End Patch",
        ]),
        "line 5: '*** Begin Patch' may only stand on line 1",
    );
}

#[test]
fn top_level_junk() {
    let expected = "expected a file section ('*** Add File:', '*** Update File:', \
         '*** Delete File:' or '*** Move File:') or '*** End Patch'";
    check(
        &env(&["*** Begin Patch", "@@", " x", "*** End Patch"]),
        &format!(r#"line 2: {expected}, found "@@""#),
    );
    check(
        &env(&["*** Begin Patch", "", "*** End Patch"]),
        &format!("line 2: {expected}, found an empty line (remove it: the envelope has no blank separator lines)"),
    );
    check(
        &env(&[
            "*** Begin Patch",
            "\\ No newline at end of file",
            "*** End Patch",
        ]),
        &format!(r#"line 2: {expected}, found "\\ No newline at end of file""#),
    );
}

// ---- errors in bodies -------------------------------------------------

#[test]
fn add_body_errors() {
    let add = |lines: &[&str]| {
        let mut all = vec!["*** Begin Patch", "*** Add File: a"];
        all.extend_from_slice(lines);
        all.push("*** End Patch");
        env(&all)
    };
    check(
        &add(&["+x", " y"]),
        r#"line 4: expected a '+' line or the next section, found " y""#,
    );
    check(
        &add(&["-y"]),
        r#"line 3: expected a '+' line or the next section, found "-y""#,
    );
    check(
        &add(&["+x", ""]),
        "line 4: expected a '+' line or the next section, found an empty line (remove it: the envelope has no blank separator lines)",
    );
    check(
        &add(&["@@"]),
        r#"line 3: expected a '+' line or the next section, found "@@""#,
    );
    check(
        &add(&["\\ No newline at end of file"]),
        "line 3: '\\ No newline at end of file' must follow a '+' line",
    );
    check(
        &add(&["+x", "\\ No newline at end of file", "+y"]),
        "line 5: '\\ No newline at end of file' ends an added file; \
         expected the next file section or '*** End Patch', found \"+y\"",
    );
    check(
        &add(&["+x", "\\ No newline at end of file", "\\ No newline at end of file"]),
        "line 5: '\\ No newline at end of file' ends an added file; \
         expected the next file section or '*** End Patch', found \"\\\\ No newline at end of file\"",
    );
    check(
        &add(&["+x", "\\ No newline at end of file "]),
        "line 4: trailing whitespace after '\\ No newline at end of file'",
    );
}

#[test]
fn update_needs_a_hunk() {
    let expected =
        "expected '@@' to start the first hunk of \"a\" (an update needs at least one hunk)";
    check(
        &env(&["*** Begin Patch", "*** Update File: a", "*** End Patch"]),
        &format!(r#"line 3: {expected}, found "*** End Patch""#),
    );
    check(
        &env(&[
            "*** Begin Patch",
            "*** Update File: a",
            "*** Delete File: b",
            "*** End Patch",
        ]),
        &format!(r#"line 3: {expected}, found "*** Delete File: b""#),
    );
    // The first hunk needs its `@@` too.
    check(
        &env(&[
            "*** Begin Patch",
            "*** Update File: a",
            "-x",
            "+y",
            "*** End Patch",
        ]),
        &format!(r#"line 3: {expected}, found "-x""#),
    );
    check(
        &env(&[
            "*** Begin Patch",
            "*** Move File: a -> b",
            "-x",
            "*** End Patch",
        ]),
        r#"line 3: expected '@@' to start a hunk, the next file section or '*** End Patch', found "-x""#,
    );
}

#[test]
fn empty_hunks() {
    let expected =
        "empty hunk: expected at least one line starting with ' ', '-' or '+' after '@@'";
    let update = |lines: &[&str]| {
        let mut all = vec!["*** Begin Patch", "*** Update File: a"];
        all.extend_from_slice(lines);
        all.push("*** End Patch");
        env(&all)
    };
    check(
        &update(&["@@"]),
        &format!(r#"line 4: {expected}, found "*** End Patch""#),
    );
    // Stacked headers are one header: with no body after them, the
    // error stands where the body should have started.
    check(
        &update(&["@@ one", "@@ two"]),
        &format!(r#"line 5: {expected}, found "*** End Patch""#),
    );
    check(
        &update(&["@@", " x", "@@ one", "@@ two", "*** End of File"]),
        &format!(r#"line 7: {expected}, found "*** End of File""#),
    );
    check(
        &update(&["@@", " x", "@@"]),
        &format!(r#"line 6: {expected}, found "*** End Patch""#),
    );
    check(
        &update(&["@@", "*** End of File"]),
        &format!(r#"line 4: {expected}, found "*** End of File""#),
    );
    check(
        &update(&["@@", "*** Add File: b"]),
        &format!(r#"line 4: {expected}, found "*** Add File: b""#),
    );
}

#[test]
fn hunk_line_errors() {
    let update = |lines: &[&str]| {
        let mut all = vec!["*** Begin Patch", "*** Update File: a", "@@"];
        all.extend_from_slice(lines);
        all.push("*** End Patch");
        env(&all)
    };
    check(
        &update(&[" x", "", " y"]),
        "line 5: expected a hunk line starting with ' ', '-', '+' or '@@', found an empty line \
         (a blank context line needs its leading space)",
    );
    // An empty line before the next `@@`, a directive or the end is a
    // separator to remove, not a blank context line.
    for after in [&["@@", "-y"][..], &["*** End of File"], &[]] {
        let mut lines = vec![" x", ""];
        lines.extend_from_slice(after);
        check(
            &update(&lines),
            "line 5: expected a hunk line starting with ' ', '-', '+' or '@@', found an empty line \
             between hunks or before a directive (remove it: the envelope has no blank separator lines)",
        );
    }
    check(
        &update(&[" a", " b", " c", "foo"]),
        r#"line 7: expected a hunk line starting with ' ', '-', '+' or '@@', found "foo""#,
    );
    check(
        &update(&["\tx"]),
        r#"line 4: expected a hunk line starting with ' ', '-', '+' or '@@', found "\tx""#,
    );
    check(
        &update(&[" x", "@ y"]),
        r#"line 5: expected a hunk line starting with ' ', '-', '+' or '@@', found "@ y""#,
    );
    check(
        &update(&[" x", "\\ no newline at end of file"]),
        r#"line 5: expected a hunk line starting with ' ', '-', '+' or '@@', found "\\ no newline at end of file""#,
    );
    let long = "x".repeat(100);
    check(
        &update(&[&long]),
        &format!(
            r#"line 4: expected a hunk line starting with ' ', '-', '+' or '@@', found "{}"..."#,
            "x".repeat(60)
        ),
    );
    let long_unicode = "é".repeat(100);
    check(
        &update(&[&long_unicode]),
        &format!(
            r#"line 4: expected a hunk line starting with ' ', '-', '+' or '@@', found "{}"..."#,
            "é".repeat(60)
        ),
    );
}

#[test]
fn no_newline_marker_errors() {
    let update = |lines: &[&str]| {
        let mut all = vec!["*** Begin Patch", "*** Update File: a"];
        all.extend_from_slice(lines);
        all.push("*** End Patch");
        env(&all)
    };
    check(
        &update(&["@@", "\\ No newline at end of file", " x"]),
        "line 4: '\\ No newline at end of file' must follow a hunk line, not '@@'",
    );
    check(
        &update(&[
            "@@",
            " x",
            "\\ No newline at end of file",
            "\\ No newline at end of file",
        ]),
        "line 6: '\\ No newline at end of file' must follow a hunk line, not another marker",
    );
    check(
        &update(&["\\ No newline at end of file", "@@", " x"]),
        "line 3: expected '@@' to start the first hunk of \"a\" (an update needs at least one hunk), \
         found \"\\\\ No newline at end of file\"",
    );
    check(
        &update(&[
            "@@",
            " x",
            "*** End of File",
            "\\ No newline at end of file",
        ]),
        "line 6: expected '@@', the next file section or '*** End Patch' after '*** End of File', \
         found \"\\\\ No newline at end of file\"",
    );
    check(
        &update(&["@@", " x", "\\ No newline at end of file\t"]),
        "line 5: trailing whitespace after '\\ No newline at end of file'",
    );
}

#[test]
fn end_of_file_errors() {
    let update = |lines: &[&str]| {
        let mut all = vec![
            "*** Begin Patch",
            "*** Update File: a",
            "@@",
            " x",
            "*** End of File",
        ];
        all.extend_from_slice(lines);
        all.push("*** End Patch");
        env(&all)
    };
    let expected =
        "expected '@@', the next file section or '*** End Patch' after '*** End of File'";
    check(
        &update(&[" y"]),
        &format!(r#"line 6: {expected}, found " y""#),
    );
    check(
        &update(&[""]),
        &format!("line 6: {expected}, found an empty line (remove it: the envelope has no blank separator lines)"),
    );
    check(
        &update(&["*** End of File"]),
        &format!(r#"line 6: {expected}, found "*** End of File""#),
    );
}

#[test]
fn delete_has_no_body() {
    let expected =
        "'*** Delete File:' takes no body; expected the next file section or '*** End Patch'";
    check(
        &env(&[
            "*** Begin Patch",
            "*** Delete File: a",
            "-x",
            "*** End Patch",
        ]),
        &format!(r#"line 3: {expected}, found "-x""#),
    );
    check(
        &env(&[
            "*** Begin Patch",
            "*** Delete File: a",
            "@@",
            "-x",
            "*** End Patch",
        ]),
        &format!(r#"line 3: {expected}, found "@@""#),
    );
    check(
        &env(&["*** Begin Patch", "*** Delete File: a", "", "*** End Patch"]),
        &format!("line 3: {expected}, found an empty line (remove it: the envelope has no blank separator lines)"),
    );
}

#[test]
fn a_path_appears_in_one_section() {
    let used = |path: &str, line: usize| {
        format!("path \"{path}\" is already used by the section at line {line}; each path may appear in one section")
    };
    check(
        &env(&[
            "*** Begin Patch",
            "*** Add File: a",
            "*** Add File: a",
            "*** End Patch",
        ]),
        &format!("line 3: {}", used("a", 2)),
    );
    check(
        &env(&[
            "*** Begin Patch",
            "*** Update File: a",
            "@@",
            " x",
            "*** Delete File: a",
            "*** End Patch",
        ]),
        &format!("line 5: {}", used("a", 2)),
    );
    // A move's destination and source count, in both spellings.
    check(
        &env(&[
            "*** Begin Patch",
            "*** Move File: a -> b",
            "*** Add File: b",
            "*** End Patch",
        ]),
        &format!("line 3: {}", used("b", 2)),
    );
    check(
        &env(&[
            "*** Begin Patch",
            "*** Delete File: b",
            "*** Move File: a -> b",
            "*** End Patch",
        ]),
        &format!("line 3: {}", used("b", 2)),
    );
    check(
        &env(&[
            "*** Begin Patch",
            "*** Delete File: a",
            "*** Move File: a -> b",
            "*** End Patch",
        ]),
        &format!("line 3: {}", used("a", 2)),
    );
    // Reported on the `*** Move to:` line, naming the earlier section.
    check(
        &env(&[
            "*** Begin Patch",
            "*** Add File: c",
            "*** Update File: a",
            "*** Move to: c",
            "*** End Patch",
        ]),
        &format!("line 4: {}", used("c", 2)),
    );
    check(
        &env(&[
            "*** Begin Patch",
            "*** Update File: a",
            "*** Move to: c",
            "*** Update File: c",
            "@@",
            " x",
            "*** End Patch",
        ]),
        &format!("line 4: {}", used("c", 2)),
    );
    // Exact strings: the planner compares normalised paths later.
    check(
        &env(&[
            "*** Begin Patch",
            "*** Delete File: a",
            "*** Delete File: ./a",
            "*** End Patch",
        ]),
        "2: delete \"a\"\n3: delete \"./a\"",
    );
}

#[test]
fn parse_bytes_reports_invalid_utf8_at_its_line() {
    assert_eq!(
        parse_bytes(b"*** Begin Patch\n*** Add File: a\n+\xff\n*** End Patch\n")
            .map_err(|e| e.to_string()),
        Err("line 3: the envelope is not valid UTF-8".to_string()),
    );
    assert_eq!(
        parse_bytes(b"*** Begin Patch\n*** Delete File: a\n*** End Patch\n")
            .map(|p| p.sections.len()),
        Ok(1),
    );
}

#[test]
fn large_envelopes_parse_in_linear_time() {
    // 50 MB: one Add of 2.5 M short lines, an Update with as many hunk
    // lines, a 10 MB single line, and 100 000 sections (duplicate check).
    let mut text = String::with_capacity(60 << 20);
    text.push_str("*** Begin Patch\n*** Add File: big\n");
    for i in 0..2_500_000 {
        writeln!(text, "+line {i}").unwrap();
    }
    text.push_str("*** Update File: big2\n@@\n");
    for i in 0..2_500_000 {
        writeln!(text, "{}line {i}", [' ', '-', '+'][i % 3]).unwrap();
    }
    text.push_str("*** Add File: wide\n+");
    text.push_str(&"w".repeat(10 << 20));
    text.push('\n');
    for i in 0..100_000 {
        writeln!(text, "*** Delete File: d/{i}").unwrap();
    }
    text.push_str("*** End Patch\n");
    // Steps are counted, not timed (the time is the `parse` benchmark's):
    // a line is classified a bounded number of times, a path claimed once.
    let lines = text.lines().count() as u64;
    super::WORK.with(|w| w.set(0));
    let patch = parse(&text).expect("parses");
    let work = super::WORK.with(|w| w.get());
    assert!(
        work <= 2 * lines,
        "{work} parser steps for {lines} lines: more than 2 a line (it takes 1.04)"
    );
    assert_eq!(patch.sections.len(), 100_003);
    assert_eq!(patch.render(), text);

    // An error at the end of a long envelope is found and short.
    let err = parse(&text.replace("*** End Patch\n", "*** End Patch\n\n")).unwrap_err();
    assert_eq!(err.message, "unexpected text after '*** End Patch'");
    let huge_junk = format!("*** Begin Patch\n{}\n", "j".repeat(10 << 20));
    assert!(parse(&huge_junk).unwrap_err().message.len() < 300);
}

// ---- properties ---------------------------------------------------------

/// The number of lines of `text` (a final `\n` ends the last line).
fn line_count(text: &[u8]) -> usize {
    let newlines = text.iter().filter(|&&b| b == b'\n').count();
    if text.is_empty() || text.ends_with(b"\n") {
        newlines
    } else {
        newlines + 1
    }
}

/// A line that is, or nearly is, a line of the grammar.
fn grammarish_line() -> impl Strategy<Value = String> {
    const FIXED: &[&str] = &[
        "*** Begin Patch",
        "*** End Patch",
        "*** End Patch ",
        "*** End of File",
        "*** Add File: a",
        "*** Add File: b",
        "*** Update File: a",
        "*** Update File: c",
        "*** Update File: a -> b",
        "*** Delete File: b",
        "*** Delete File: d",
        "*** Move File: a -> e",
        "*** Move File: c -> d -> f",
        "*** Move File: a->b",
        "*** Move to: g",
        "*** Move to: a",
        "*** Add File:",
        "*** Frob",
        "\\ No newline at end of file",
        "\\ No newline at end of file ",
        "@@",
        "@@ ",
        "@@  h",
        "@@h",
        "",
        " ",
        "+",
        "-",
        "\r",
        "```",
    ];
    prop_oneof![
        3 => proptest::sample::select(FIXED).prop_map(str::to_owned),
        1 => "[ +\\-@\\\\*]{0,3}[a-z\r\t é]{0,4}",
        1 => "\\*\\*\\* (Add|Update|Delete|Move) (File|to): [a-g ]{0,3}",
    ]
}

/// Parse `text`; it must not panic, an error's line must stand within
/// the text (or one past its end), and a patch must round-trip.
fn check_any(text: &[u8]) -> Result<(), TestCaseError> {
    match parse_bytes(text) {
        Ok(patch) => {
            let rendered = patch.render();
            let reparsed = parse(&rendered);
            prop_assert_eq!(reparsed.as_ref(), Ok(&patch));
            let crlf = rendered.replace('\n', "\r\n");
            let reparsed = parse(&crlf);
            prop_assert_eq!(reparsed.as_ref(), Ok(&patch));
        }
        Err(e) => {
            let lines = line_count(text);
            prop_assert!(
                (1..=lines + 1).contains(&e.line),
                "error {} outside 1..={} for {:?}",
                e,
                lines + 1,
                String::from_utf8_lossy(text)
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        check_any(&bytes)?;
    }

    #[test]
    fn arbitrary_text_after_begin_never_panics(
        tail in proptest::collection::vec(any::<u8>(), 0..300),
        crlf in any::<bool>(),
    ) {
        let mut text = if crlf { b"*** Begin Patch\r\n".to_vec() } else { b"*** Begin Patch\n".to_vec() };
        text.extend_from_slice(&tail);
        check_any(&text)?;
    }

    #[test]
    fn grammarish_lines_never_panic(
        lines in proptest::collection::vec(grammarish_line(), 0..14),
        begin in proptest::bool::weighted(0.9),
        end in proptest::bool::weighted(0.8),
        crlf in proptest::bool::weighted(0.2),
        final_newline in any::<bool>(),
    ) {
        let mut all = Vec::new();
        if begin {
            all.push("*** Begin Patch".to_string());
        }
        all.extend(lines);
        if end {
            all.push("*** End Patch".to_string());
        }
        let mut text = all.join(if crlf { "\r\n" } else { "\n" });
        if final_newline {
            text.push_str(if crlf { "\r\n" } else { "\n" });
        }
        check_any(text.as_bytes())?;
    }
}
