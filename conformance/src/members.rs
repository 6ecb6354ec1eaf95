//! The documented members of each tool's result documents, and what the
//! corpus does with them.
//!
//! The members come from the catalog's result schemas
//! (`patchspec_engine::catalog`, derived from the very types the engine
//! serialises; docs/schemas/ holds them rendered), never from a hand list:
//! a member added to a result type shows up here by itself. Two users:
//!
//! - **Member coverage** (`patchspec coverage`, [`MemberCoverage`]): for
//!   each tool, each documented member (`$.error.kind`,
//!   `$.result.files[].newSha256`) and the cases whose pattern pins it
//!   *exactly* ([`pins_of`]: a literal, `$exact`, `$equals`, `$sha256Of`
//!   or `$unique`, not a format check). A member no case pins is a gap,
//!   unless docs/spec-clauses.md lists it in its "Members" section as free
//!   text (its wording is never judged: pinned by `$contains`, `$regex` or
//!   `$nonEmpty` as well) or as unobservable, pinned by a named engine test.
//!   Every `message` member is free text.
//! - **Exact mode** ([`undocumented`]): a result object may hold only the
//!   members its tool documents; an undocumented one is a mismatch, except
//!   at a place open for extensions: an object whose schema allows any
//!   member (`additionalProperties`, or no declared members: `details`,
//!   `diagnosis`, the `call_chain` trees), or a value the case's pattern
//!   wraps in `$open`. A tool the catalog does not know (a generated
//!   corpus's own tool) is not checked. The decision and its reasons are in
//!   docs/clarifications.md (C-exact-members).
//!
//! What it leaves out: which variant of a document (success or failure)
//! documents a member. The members of every variant are allowed in every
//! document of the tool; the patterns pin which variant a case expects.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::Path;
use std::sync::OnceLock;

use serde_json::{json, Value};

use crate::case::Corpus;
use crate::coverage::{resolve_test, TestRef};
use crate::pattern::{child, show, Mismatch};

/// One tool's documented members.
#[derive(Clone, Debug, Default)]
pub struct Members {
    /// Every documented member, in schema order: `$.data.changedFiles[].path`
    /// (`[]` stands for any element of an array).
    pub paths: Vec<String>,
    /// For each place an object may stand (`$`, `$.error`,
    /// `$.result.files[]`): the member names it documents, `None` when it is
    /// open for extensions.
    places: BTreeMap<String, Option<BTreeSet<String>>>,
}

/// What the walk gathers about one place.
#[derive(Default)]
struct Place {
    declared: BTreeSet<String>,
    open: bool,
}

impl Members {
    /// The members of a result schema (draft 2020-12, inlined).
    pub fn of_schema(schema: &Value) -> Members {
        let mut paths = Vec::new();
        let mut places: BTreeMap<String, Place> = BTreeMap::new();
        walk_schema(schema, "$", &mut paths, &mut places);
        Members {
            paths,
            places: places
                .into_iter()
                .map(|(p, place)| {
                    let open = place.open || place.declared.is_empty();
                    (p, (!open).then_some(place.declared))
                })
                .collect(),
        }
    }

    /// The documented members below `place`, or `None` when it is open (or
    /// not a place the schema knows, which only happens below an open one).
    fn documented_at(&self, place: &str) -> Option<&BTreeSet<String>> {
        self.places.get(place).and_then(Option::as_ref)
    }
}

fn walk_schema(
    schema: &Value,
    at: &str,
    paths: &mut Vec<String>,
    places: &mut BTreeMap<String, Place>,
) {
    let Some(map) = schema.as_object() else {
        // `true`: anything goes here.
        places.entry(at.to_owned()).or_default().open |= schema == &Value::Bool(true);
        return;
    };
    places.entry(at.to_owned()).or_default();
    for branch_key in ["anyOf", "oneOf", "allOf"] {
        for branch in map
            .get(branch_key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            walk_schema(branch, at, paths, places);
        }
    }
    match map.get("additionalProperties") {
        Some(Value::Bool(false)) | None => {}
        Some(_) => places.entry(at.to_owned()).or_default().open = true,
    }
    if let Some(items) = map.get("items") {
        walk_schema(items, &format!("{at}[]"), paths, places);
    }
    if let Some(props) = map.get("properties").and_then(Value::as_object) {
        for (name, sub) in props {
            let path = format!("{at}.{name}");
            places
                .entry(at.to_owned())
                .or_default()
                .declared
                .insert(name.clone());
            if !paths.contains(&path) {
                paths.push(path.clone());
            }
            walk_schema(sub, &path, paths, places);
        }
    }
}

/// The members of every tool the engine's catalog has, computed once.
pub fn catalog_members() -> &'static BTreeMap<String, Members> {
    static MEMBERS: OnceLock<BTreeMap<String, Members>> = OnceLock::new();
    MEMBERS.get_or_init(|| {
        patchspec_engine::catalog::catalog()
            .into_iter()
            .map(|t| (t.name.to_owned(), Members::of_schema(&t.result_schema)))
            .collect()
    })
}

/// Exact mode: a mismatch for each member of `document` that `tool` does
/// not document, outside the places open for extensions and the JSON paths
/// in `open` (the values a pattern wrapped in `$open`, with everything
/// below them). An unknown tool gets no check.
pub fn undocumented(tool: &str, document: &Value, open: &[String]) -> Vec<Mismatch> {
    let Some(members) = catalog_members().get(tool) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    check_members(tool, members, document, "$", "$", open, &mut out);
    out
}

fn is_below(path: &str, open: &[String]) -> bool {
    open.iter().any(|o| {
        path == o
            || path
                .strip_prefix(o.as_str())
                .is_some_and(|rest| rest.starts_with(['.', '[']))
    })
}

fn check_members(
    tool: &str,
    members: &Members,
    value: &Value,
    place: &str,
    at: &str,
    open: &[String],
    out: &mut Vec<Mismatch>,
) {
    if is_below(at, open) {
        return;
    }
    match value {
        Value::Object(map) => {
            let Some(documented) = members.documented_at(place) else {
                return;
            };
            for (key, sub) in map {
                let here = child(at, key);
                if documented.contains(key) {
                    check_members(
                        tool,
                        members,
                        sub,
                        &format!("{place}.{key}"),
                        &here,
                        open,
                        out,
                    );
                } else if !is_below(&here, open) {
                    out.push(Mismatch {
                        path: here,
                        expected: format!(
                            "no such member: {tool} documents no {key:?} here (exact mode: undocumented members are allowed only where the case marks $open)"
                        ),
                        got: show(sub),
                    });
                }
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                check_members(
                    tool,
                    members,
                    item,
                    &format!("{place}[]"),
                    &format!("{at}[{i}]"),
                    open,
                    out,
                );
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => {}
    }
}

/// What a pattern pins, by member path (`[]` for any element).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pins {
    /// Members given an exact value: a literal, `$exact` (and every member
    /// of its value), `$sha256Of`, `$unique`.
    pub exact: BTreeSet<String>,
    /// Members tied by `$equals` to another value of the document: they and
    /// everything below them are pinned.
    pub deep: BTreeSet<String>,
    /// Members checked by `$contains`, `$regex` or `$nonEmpty`: enough for
    /// free text only.
    pub text: BTreeSet<String>,
}

/// The members a result pattern pins.
pub fn pins_of(pattern: &Value) -> Pins {
    let mut pins = Pins::default();
    collect_pins(pattern, "$", &mut pins);
    pins
}

fn collect_pins(pattern: &Value, at: &str, pins: &mut Pins) {
    match pattern {
        Value::Object(map) => {
            let matcher = (map.len() == 1)
                .then(|| map.iter().next())
                .flatten()
                .filter(|(k, _)| k.starts_with('$'));
            match matcher {
                Some((name, arg)) => match name.as_str() {
                    "$exact" => literal_pins(arg, at, pins),
                    "$sha256Of" | "$unique" => {
                        pins.exact.insert(at.to_owned());
                    }
                    "$equals" => {
                        pins.deep.insert(at.to_owned());
                    }
                    "$all" => {
                        for p in arg.as_array().into_iter().flatten() {
                            collect_pins(p, at, pins);
                        }
                    }
                    "$each" => collect_pins(arg, &format!("{at}[]"), pins),
                    "$open" => collect_pins(arg, at, pins),
                    // What an executor that sends the member must send.
                    "$ifPresent" => collect_pins(arg, at, pins),
                    "$contains" | "$regex" | "$nonEmpty" => {
                        pins.text.insert(at.to_owned());
                    }
                    _ => {}
                },
                None => {
                    pins.exact.insert(at.to_owned());
                    for (k, v) in map {
                        collect_pins(v, &format!("{at}.{k}"), pins);
                    }
                }
            }
        }
        Value::Array(items) => {
            pins.exact.insert(at.to_owned());
            for item in items {
                collect_pins(item, &format!("{at}[]"), pins);
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => {
            pins.exact.insert(at.to_owned());
        }
    }
}

fn literal_pins(value: &Value, at: &str, pins: &mut Pins) {
    pins.exact.insert(at.to_owned());
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                literal_pins(v, &format!("{at}.{k}"), pins);
            }
        }
        Value::Array(items) => {
            for item in items {
                literal_pins(item, &format!("{at}[]"), pins);
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => {}
    }
}

impl Pins {
    /// `member` is pinned: exactly, by a deep tie on it or above it, or —
    /// for free text — by a text matcher.
    pub fn pin(&self, member: &str, free_text: bool) -> bool {
        self.exact.contains(member)
            || (free_text && self.text.contains(member))
            || self
                .deep
                .iter()
                .any(|d| is_below(member, std::slice::from_ref(d)))
    }
}

/// A member the clause list says no case pins exactly, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Exemption {
    /// Its wording is free (`(free text)`): text matchers pin it.
    FreeText,
    /// No black-box case can observe it; a named engine test pins it
    /// (`(pinned by test: FILE::…::NAME)`), resolved under the repository.
    Unobservable(String, TestRef),
}

/// The marker of a member line in docs/spec-clauses.md.
const MEMBER_LINE: &str = "- member `";

/// The exemptions of docs/spec-clauses.md's "Members" section: lines
/// ``- member `TOOL $.path`: why (free text)`` or
/// ``… (pinned by test: FILE::…::NAME)``, keyed by (tool, path).
pub fn exemptions(text: &str, repo: &Path) -> BTreeMap<(String, String), Exemption> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let Some(rest) = line.trim_start().strip_prefix(MEMBER_LINE) else {
            continue;
        };
        let Some((name, why)) = rest.split_once("`:") else {
            continue;
        };
        let Some((tool, path)) = name.split_once(' ') else {
            continue;
        };
        let exemption = if let Some(at) = why.find("(pinned by test: ") {
            let marker = why[at + "(pinned by test: ".len()..]
                .split(')')
                .next()
                .unwrap_or_default()
                .trim()
                .to_owned();
            let found = resolve_test(repo, &marker);
            Exemption::Unobservable(marker, found)
        } else if why.contains("(free text)") {
            Exemption::FreeText
        } else {
            continue;
        };
        out.insert((tool.to_owned(), path.trim().to_owned()), exemption);
    }
    out
}

/// One documented member with what pins it.
#[derive(Clone, Debug)]
pub struct MemberRow<'a> {
    /// The tool's wire name.
    pub tool: String,
    /// The member's path (`$.error.details`).
    pub path: String,
    /// The cases that pin it, in corpus order.
    pub cases: Vec<&'a str>,
    /// Why no case has to, when the clause list says so.
    pub exemption: Option<Exemption>,
}

impl MemberRow<'_> {
    /// Nothing pins the member: no case, and no test for an unobservable one.
    pub fn is_gap(&self) -> bool {
        match &self.exemption {
            Some(Exemption::Unobservable(_, found)) => *found != TestRef::Found,
            Some(Exemption::FreeText) | None => self.cases.is_empty(),
        }
    }
}

/// Every documented member of every tool the corpus has cases for.
#[derive(Clone, Debug)]
pub struct MemberCoverage<'a> {
    /// Tool by tool (sorted), member by member (schema order).
    pub rows: Vec<MemberRow<'a>>,
}

impl<'a> MemberCoverage<'a> {
    /// The members of `catalog` (tool → members) matched with the corpus's
    /// patterns, with `exempt` from [`exemptions`].
    pub fn new(
        corpus: &'a Corpus,
        catalog: &BTreeMap<String, Members>,
        exempt: &BTreeMap<(String, String), Exemption>,
    ) -> MemberCoverage<'a> {
        let mut by_tool: BTreeMap<&str, Vec<(&'a str, Pins)>> = BTreeMap::new();
        for c in &corpus.cases {
            by_tool
                .entry(c.tool.as_str())
                .or_default()
                .push((c.id.as_str(), pins_of(&c.expect.result)));
        }
        let mut rows = Vec::new();
        for (tool, members) in catalog {
            let Some(cases) = by_tool.get(tool.as_str()) else {
                continue;
            };
            for path in &members.paths {
                let exemption = exempt.get(&(tool.clone(), path.clone())).cloned();
                let free = path.ends_with(".message") || exemption == Some(Exemption::FreeText);
                rows.push(MemberRow {
                    tool: tool.clone(),
                    path: path.clone(),
                    cases: cases
                        .iter()
                        .filter(|(_, pins)| pins.pin(path, free))
                        .map(|(id, _)| *id)
                        .collect(),
                    exemption,
                });
            }
        }
        MemberCoverage { rows }
    }

    /// The members nothing pins.
    pub fn gaps(&self) -> Vec<&MemberRow<'a>> {
        self.rows.iter().filter(|r| r.is_gap()).collect()
    }

    /// The members only a named engine test pins.
    pub fn unobservable(&self) -> Vec<&MemberRow<'a>> {
        self.rows
            .iter()
            .filter(|r| matches!(r.exemption, Some(Exemption::Unobservable(..))))
            .collect()
    }

    /// `coverage --json`'s `members`: each member with its cases (ids), how
    /// it is pinned, and the gaps.
    pub fn to_json(&self) -> Value {
        json!({
            "members": self.rows.iter().map(|r| json!({
                "tool": r.tool,
                "member": r.path,
                "cases": r.cases,
                "pinnedBy": match (&r.exemption, r.is_gap()) {
                    (_, true) => "nothing".to_owned(),
                    (Some(Exemption::Unobservable(test, _)), false) => format!("test {test}"),
                    (Some(Exemption::FreeText), false) => "cases (free text)".to_owned(),
                    (None, false) => "cases".to_owned(),
                },
            })).collect::<Vec<_>>(),
            "gaps": self.gaps().iter().map(|r| format!("{} {}", r.tool, r.path)).collect::<Vec<_>>(),
        })
    }

    /// `coverage [--gaps]`'s member part: each member (only the gaps with
    /// `gaps_only`) with its number of cases and up to three of them, then
    /// the totals.
    pub fn write_text(&self, out: &mut dyn Write, gaps_only: bool) -> std::io::Result<()> {
        let mut tool = "";
        for row in &self.rows {
            if gaps_only && !row.is_gap() {
                continue;
            }
            if row.tool != tool {
                tool = &row.tool;
                writeln!(out, "members of {tool}:")?;
            }
            let n = row.cases.len();
            let how = match &row.exemption {
                Some(Exemption::Unobservable(test, TestRef::Found)) => {
                    format!("unobservable, pinned by test {test}")
                }
                Some(Exemption::Unobservable(test, _)) => {
                    format!("unobservable, but the test {test} is not found")
                }
                Some(Exemption::FreeText) => format!("free text, {n} case(s)"),
                None => format!("{n} case(s)"),
            };
            writeln!(out, "  {}  ({how})", row.path)?;
            if !gaps_only {
                for id in row.cases.iter().take(3) {
                    writeln!(out, "      {id}")?;
                }
            }
        }
        writeln!(
            out,
            "members: {} documented, {} pinned by cases, {} unobservable (pinned by an engine test), {} gaps",
            self.rows.len(),
            self.rows
                .iter()
                .filter(|r| {
                    !r.cases.is_empty()
                        && !matches!(r.exemption, Some(Exemption::Unobservable(..)))
                })
                .count(),
            self.unobservable().len(),
            self.gaps().len()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema() -> Value {
        json!({"anyOf": [
            {"type": "object", "properties": {
                "success": {"type": "boolean"},
                "items": {"type": "array", "items": {"type": "object", "properties": {"id": {"type": "string"}}}},
                "tree": {"type": ["array", "null"], "items": true}
            }},
            {"type": "object", "properties": {
                "success": {"type": "boolean"},
                "error": {"type": "object", "properties": {
                    "kind": {"type": "string"},
                    "details": {"type": "object", "additionalProperties": true}
                }}
            }}
        ]})
    }

    #[test]
    fn members_come_from_every_branch_in_schema_order() {
        let m = Members::of_schema(&schema());
        assert_eq!(
            m.paths,
            [
                "$.success",
                "$.items",
                "$.items[].id",
                "$.tree",
                "$.error",
                "$.error.kind",
                "$.error.details"
            ]
        );
        assert!(m.documented_at("$.error.details").is_none());
        assert!(m.documented_at("$.tree[]").is_none());
        assert!(m.documented_at("$.items[]").is_some());
    }

    fn undocumented_in(doc: Value, open: &[&str]) -> Vec<String> {
        let m = Members::of_schema(&schema());
        let open: Vec<String> = open.iter().map(|s| (*s).to_owned()).collect();
        let mut out = Vec::new();
        check_members("t", &m, &doc, "$", "$", &open, &mut out);
        out.iter().map(|m| m.path.clone()).collect()
    }

    #[test]
    fn exact_mode_flags_undocumented_members_outside_open_places() {
        assert!(undocumented_in(
            json!({"success": false, "error": {"kind": "x", "details": {"any": 1}}}),
            &[]
        )
        .is_empty());
        assert_eq!(
            undocumented_in(
                json!({"success": true, "items": [{"id": "a"}, {"id": "b", "extra": 1}], "more": 2}),
                &[]
            ),
            ["$.items[1].extra", "$.more"]
        );
        assert!(undocumented_in(json!({"tree": [{"any": {"thing": 1}}]}), &[]).is_empty());
        assert_eq!(
            undocumented_in(
                json!({"items": [{"x": 1}], "more": 2}),
                &["$.items", "$.more"]
            ),
            Vec::<String>::new()
        );
    }

    #[test]
    fn pins_are_exact_values_not_formats() {
        let p = pins_of(&json!({
            "success": false,
            "items": {"$each": {"id": {"$regex": "^a"}}},
            "error": {"kind": {"$all": [{"$type": "string"}, {"$exact": "x"}]},
                      "message": {"$contains": "a.txt"},
                      "details": {"$equals": "/other"}}
        }));
        assert!(p.pin("$.success", false));
        assert!(!p.pin("$.items[].id", false));
        assert!(p.pin("$.error.kind", false));
        assert!(!p.pin("$.error.message", false));
        assert!(p.pin("$.error.message", true));
        assert!(p.pin("$.error.details", false));
        assert!(p.pin("$.error.details.path", false));
        assert!(!p.pin("$.error.detailsX", false));
    }

    #[test]
    fn exemptions_are_read_from_member_lines() {
        let text = "## Members\n- member `wp $.errors[].step`: the step (pinned by test: pending)\n- member `rf $.errors[]`: messages (free text)\n- `doc#a`: a clause\n";
        let e = exemptions(text, Path::new("/nonexistent"));
        assert_eq!(e.len(), 2);
        assert_eq!(
            e[&("rf".to_owned(), "$.errors[]".to_owned())],
            Exemption::FreeText
        );
        assert!(matches!(
            &e[&("wp".to_owned(), "$.errors[].step".to_owned())],
            Exemption::Unobservable(m, TestRef::Pending) if m == "pending"
        ));
    }

    #[test]
    fn every_catalog_tool_has_members() {
        let all = catalog_members();
        assert!(all.len() >= 8, "{:?}", all.keys());
        for (tool, m) in all {
            assert!(m.paths.contains(&"$.success".to_owned()), "{tool}");
        }
    }
}
