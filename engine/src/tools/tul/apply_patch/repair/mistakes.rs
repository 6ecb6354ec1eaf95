//! The mechanical mistakes models make in `apply_patch` envelopes, made
//! on purpose: shared by the labelled set (`engine/tests/repairs.rs`) and
//! the fuzzed safety property (`oracles/tests/repair_safety.rs`). Test
//! support only (the `testing` feature): the repairs never call it.

/// A correct single-hunk edit: the hunk's body lines with their prefixes.
#[derive(Clone)]
pub struct Edit {
    /// The hunk's body lines, each with its ` `, `-` or `+` prefix.
    pub body: Vec<String>,
    /// The hunk ends at the file's last line.
    pub at_end: bool,
}

/// The correct envelope updating `path` with one hunk of `body`.
pub fn render(path: &str, body: &[String]) -> String {
    let mut s = format!("*** Begin Patch\n*** Update File: {path}\n@@\n");
    for l in body {
        s.push_str(l);
        s.push('\n');
    }
    s.push_str("*** End Patch\n");
    s
}

/// The mechanical mistakes, by the repair cause that corrects them.
pub const MISTAKES: &[&str] = &[
    "blank_separator_line",
    "missing_context_prefix",
    "literal_tab_escape",
    "literal_newline_escape",
    "escaped_quotes",
    "missing_begin_patch",
    "missing_end_patch",
    "json_escaped_envelope",
    "missing_hunk_header",
    "blank_line_past_end_of_file",
    "indentation",
    "wrapper",
    "marker_whitespace",
];

/// `patch` (correct, LF) with `mistake` made; `None` when the mistake
/// cannot be made on this edit.
///
/// # Panics
///
/// When `which` is not one of [`MISTAKES`].
pub fn mistake(patch: &str, edit: &Edit, which: &str, variant: usize) -> Option<String> {
    let old = |l: &&String| l.starts_with(' ') || l.starts_with('-');
    let lines: Vec<&str> = patch.lines().collect();
    Some(match which {
        "blank_separator_line" => {
            if variant.is_multiple_of(2) {
                patch.replace("\n*** End Patch", "\n\n*** End Patch")
            } else {
                patch.replacen("\n@@\n", "\n\n@@\n", 1)
            }
        }
        "missing_context_prefix" => {
            if variant.is_multiple_of(2) {
                // Only the blank context lines lost their space.
                if !edit.body.iter().any(|l| l == " ") {
                    return None;
                }
                patch.replace("\n \n", "\n\n").replace("\n \n", "\n\n")
            } else {
                let mut out = String::new();
                for l in &lines {
                    match l.strip_prefix(' ') {
                        Some(rest) => out.push_str(rest),
                        None => out.push_str(l),
                    }
                    out.push('\n');
                }
                out
            }
        }
        "literal_tab_escape" => {
            if !edit.body.iter().filter(old).any(|l| l.contains('\t')) {
                return None;
            }
            patch.replace('\t', "\\t")
        }
        "literal_newline_escape" => {
            // Two context lines before the change written as one.
            let at = edit.body.windows(2).position(|w| {
                w[0].starts_with(' ') && w[1].starts_with(' ') && !w[0][1..].trim().is_empty()
            })?;
            let mut body = edit.body.clone();
            let joined = format!("{}\\n{}", body[at], &body[at + 1][1..]);
            body.splice(at..at + 2, [joined]);
            let path = lines[1].strip_prefix("*** Update File: ")?;
            render(path, &body)
        }
        "escaped_quotes" => {
            if !edit.body.iter().filter(old).any(|l| l.contains('"')) {
                return None;
            }
            let mut out = String::new();
            for (k, l) in lines.iter().enumerate() {
                if k >= 3 && !l.starts_with("***") {
                    out.push_str(&l.replace('"', "\\\""));
                } else {
                    out.push_str(l);
                }
                out.push('\n');
            }
            out
        }
        "missing_begin_patch" => patch.strip_prefix("*** Begin Patch\n")?.to_string(),
        "missing_end_patch" => patch.strip_suffix("*** End Patch\n")?.to_string(),
        "json_escaped_envelope" => {
            // A `str` always serialises: the `?` never returns.
            let s = serde_json::to_string(patch).ok()?;
            if variant.is_multiple_of(2) {
                s
            } else {
                s[1..s.len() - 1].to_string()
            }
        }
        "missing_hunk_header" => patch.replacen("\n@@\n", "\n", 1),
        "blank_line_past_end_of_file" => {
            if !edit.at_end {
                return None;
            }
            patch.replace("\n*** End Patch", "\n \n*** End Patch")
        }
        "indentation" => {
            // The hunk dedented by one level.
            let unit = if edit.body.iter().any(|l| l.get(1..2) == Some("\t")) {
                "\t"
            } else {
                "    "
            };
            // A shift only the added lines show is not a mistake anything
            // can see: the old side must have a line to shift.
            if !edit
                .body
                .iter()
                .filter(old)
                .any(|l| !l[1..].trim().is_empty())
            {
                return None;
            }
            let nonblank: Vec<&String> = edit
                .body
                .iter()
                .filter(|l| !l[1..].trim().is_empty())
                .collect();
            if nonblank.is_empty() || !nonblank.iter().all(|l| l[1..].starts_with(unit)) {
                return None;
            }
            let body: Vec<String> = edit
                .body
                .iter()
                .map(|l| match l[1..].strip_prefix(unit) {
                    Some(rest) => format!("{}{rest}", &l[..1]),
                    None => l.clone(),
                })
                .collect();
            let path = lines[1].strip_prefix("*** Update File: ")?;
            render(path, &body)
        }
        "wrapper" => match variant % 3 {
            0 => format!("```diff\n{patch}```\n"),
            1 => format!("apply_patch <<'EOF'\n{patch}EOF\n"),
            _ => format!("%%bash\napply_patch <<\"PATCH\"\n{patch}PATCH\n"),
        },
        "marker_whitespace" => patch.replace("*** End Patch\n", "*** End Patch  \n"),
        _ => unreachable!("unknown mistake {which}"),
    })
}

/// The second mistakes made on top of a first, for the two-at-once items.
pub const SECOND: &[&str] = &["missing_end_patch", "blank_separator_line", "wrapper"];

/// `patch` with the second mistake `which` (one of [`SECOND`]) made;
/// `None` when it cannot be made on this envelope.
pub fn second_mistake(patch: &str, which: &str) -> Option<String> {
    match which {
        "missing_end_patch" => patch.strip_suffix("*** End Patch\n").map(str::to_string),
        "blank_separator_line" => patch
            .contains("\n*** End Patch")
            .then(|| patch.replace("\n*** End Patch", "\n\n*** End Patch")),
        _ => patch
            .starts_with("*** ")
            .then(|| format!("```\n{patch}```\n")),
    }
}
