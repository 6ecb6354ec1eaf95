//! From a case's clause reference (`patch-envelope#add-file-already-exists`)
//! to the repository's own words for it: the clause's sentence in
//! `docs/spec-clauses.md` and the section of the docs that explains it
//! (`docs/tools.md`, `docs/ide-tools.md`, `docs/protocol.md` or
//! `docs/clarifications.md`), so a failure report sends its reader to a
//! page every clone has, not to specs a user does not have.
//!
//! Both documents are compiled in (like the corpus), so an installed binary
//! still names the clause. A test holds that every clause listed in
//! spec-clauses.md maps to an anchor that exists.

/// `docs/spec-clauses.md`, as built.
const SPEC_CLAUSES: &str = include_str!("../../docs/spec-clauses.md");
/// `docs/clarifications.md`, as built (for its headings' anchors).
const CLARIFICATIONS: &str = include_str!("../../docs/clarifications.md");

/// The one-sentence statement of a clause, from docs/spec-clauses.md.
pub fn sentence(clause: &str) -> Option<&'static str> {
    let prefix = format!("- `{clause}`: ");
    SPEC_CLAUSES
        .lines()
        .find_map(|line| line.strip_prefix(prefix.as_str()))
        .map(|rest| rest.split(" (pinned by test: ").next().unwrap_or(rest))
}

/// The docs section (a path from the repository root, with its anchor)
/// that explains a clause, or `None` for a reference to no known document.
pub fn section(clause: &str) -> Option<String> {
    let (doc, anchor) = clause.split_once('#').unwrap_or((clause, ""));
    let tools = |a: &str| Some(format!("docs/tools.md#{a}"));
    match doc {
        "patch-envelope" => {
            let part = [
                ("envelope-", "apply-patch-envelope"),
                ("paths-", "apply-patch-paths"),
                ("add-file", "apply-patch-add-file"),
                ("update-file", "apply-patch-update-file"),
                ("delete-file", "apply-patch-delete-file"),
                ("move-file", "apply-patch-move-file"),
                ("stale-", "apply-patch-stale"),
                ("atomic-", "apply-patch-atomic"),
                ("result-", "apply-patch-result"),
            ]
            .iter()
            .find(|(prefix, _)| anchor.starts_with(prefix))
            .map_or("apply-patch", |(_, section)| section);
            tools(part)
        }
        "tul-001-workspace-read-file" => tools("workspace-read-file"),
        "tul-002-workspace-write-patch" => tools("workspace-write-patch"),
        "tul-004-workspace-create-file" => tools("workspace-create-file"),
        "websocket-tool-protocol" => {
            let tool = ["read-file", "grep-file", "apply-change", "call-chain"]
                .into_iter()
                .find(|t| anchor.starts_with(t));
            Some(match tool {
                Some(t) => format!("docs/ide-tools.md#{}", t.replace('-', "_")),
                None => "docs/protocol.md#transport-websocket".to_owned(),
            })
        }
        "clarifications" => Some(match clarification_heading(anchor) {
            Some(heading) => format!("docs/clarifications.md#{}", github_slug(heading)),
            None => "docs/clarifications.md".to_owned(),
        }),
        _ => None,
    }
}

/// A clause for a failure report: the reference, its sentence and where
/// the docs explain it, e.g. ``patch-envelope#add-file-already-exists: Add
/// File fails with `already_exists` … (docs/tools.md#apply-patch-add-file)``.
pub fn describe(clause: &str) -> String {
    let mut out = clause.to_owned();
    if let Some(text) = sentence(clause) {
        out.push_str(": ");
        out.push_str(text);
    }
    if let Some(link) = section(clause) {
        out.push_str(&format!(" ({link})"));
    }
    out
}

/// The text of the `### C-…` heading of clarifications.md with this id.
fn clarification_heading(id: &str) -> Option<&'static str> {
    CLARIFICATIONS.lines().find_map(|line| {
        let heading = line.strip_prefix("### ")?;
        let rest = heading.strip_prefix(id)?;
        (rest.is_empty() || rest.starts_with(' ')).then_some(heading)
    })
}

/// The anchor GitHub gives a heading: lowercase; letters, digits, `-` and
/// `_` kept; each space a `-`; everything else dropped.
fn github_slug(heading: &str) -> String {
    heading
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every clause reference listed in docs/spec-clauses.md.
    fn listed() -> Vec<&'static str> {
        SPEC_CLAUSES
            .lines()
            .filter_map(|l| l.strip_prefix("- `")?.split_once("`: ").map(|(c, _)| c))
            .collect()
    }

    #[test]
    fn every_listed_clause_has_a_sentence_and_a_section_that_exists() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let clauses = listed();
        assert!(clauses.len() > 200, "{} clauses", clauses.len());
        for clause in clauses {
            assert!(sentence(clause).is_some(), "{clause}");
            let link = section(clause).unwrap_or_else(|| panic!("{clause}: no section"));
            let (file, anchor) = link.split_once('#').unwrap_or((&link, ""));
            let text = std::fs::read_to_string(root.join(file))
                .unwrap_or_else(|e| panic!("{clause}: {file}: {e}"));
            if anchor.is_empty() {
                panic!("{clause}: {link} has no anchor");
            }
            let explicit = text.contains(&format!("<a id=\"{anchor}\"></a>"));
            let heading = text
                .lines()
                .filter(|l| l.starts_with('#'))
                .filter_map(|l| l.trim_start_matches('#').strip_prefix(' '))
                .any(|h| github_slug(h) == anchor);
            assert!(explicit || heading, "{clause}: {link}: no such anchor");
        }
    }

    #[test]
    fn a_clause_reads_as_its_sentence_and_its_section() {
        assert_eq!(
            describe("patch-envelope#add-file-already-exists"),
            "patch-envelope#add-file-already-exists: Add File fails with `already_exists` if the path already exists (docs/tools.md#apply-patch-add-file)"
        );
        assert_eq!(
            section("clarifications#C-env-crlf").as_deref(),
            Some("docs/clarifications.md#c-env-crlf--crlf-envelopes")
        );
        assert_eq!(
            section("websocket-tool-protocol#grep-file-params").as_deref(),
            Some("docs/ide-tools.md#grep_file")
        );
        assert_eq!(describe("nowhere#x"), "nowhere#x");
    }

    #[test]
    fn slugs_follow_github() {
        assert_eq!(
            github_slug("C-env-first-hunk-header — `@@` is required"),
            "c-env-first-hunk-header---is-required"
        );
        assert_eq!(github_slug("`read_file`"), "read_file");
    }
}
