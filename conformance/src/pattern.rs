//! The pattern language of `expect.result`: how a result document is judged.
//!
//! A pattern is JSON. Objects match as subsets (every key of the pattern must
//! match; other keys of the value are free), arrays element by element (same
//! length), scalars by equality (numbers by numeric value, so `1` equals
//! `1.0`). An object with a single `$`-prefixed key is a *matcher*:
//!
//! | matcher | matches |
//! |---|---|
//! | `{"$any": true}` | any value (the key must be present) |
//! | `{"$absent": true}` | the key is not present (only as an object member) |
//! | `{"$type": "string"}` or `{"$type": ["string", "null"]}` | a JSON type: `string`, `number`, `integer`, `boolean`, `null`, `array`, `object` |
//! | `{"$nonEmpty": true}` | a non-empty string, array or object |
//! | `{"$contains": "sub"}` | a string containing `sub` |
//! | `{"$regex": "^chg-"}` | a string the regex finds a match in (unanchored; anchor it yourself) |
//! | `{"$len": 3}` | an array of 3 elements, an object of 3 members, or a string of 3 characters |
//! | `{"$each": P}` | an array whose every element matches `P` |
//! | `{"$unique": "group"}` | a string or number distinct from every other value matched by `$unique` with the same group in this result |
//! | `{"$all": [P, Q]}` | a value matching every pattern in the list |
//! | `{"$exact": V}` | a value deeply equal to `V`, taken literally (no subset, no matchers) |
//! | `{"$equals": "/json/pointer"}` | a value deeply equal to the one the JSON Pointer (RFC 6901) names in the same result document |
//! | `{"$sha256Of": "path"}` | the lowercase hex SHA-256 of the file `path` of the tree the case expects after the call |
//! | `{"$open": P}` | a value matching `P`, below which members the tool does not document are allowed (exact mode: [`crate::members`]) |
//! | `{"$ifPresent": P}` | an optional member (an extension executors may omit): absent, or matching `P` (only as an object member) |
//!
//! The main entry points are [`matches()`] (returns every [`Mismatch`], each
//! with its JSON path), [`judge_document`] (the same, with a [`Context`],
//! and what the run-wide checks need: the `$unique` bindings and the places
//! marked `$open`) and [`check_pattern`] (is a pattern well formed?).
//! [`RunUnique`] holds the `$unique` values of a whole run, so that a value
//! must differ from every value of its group in every other case too (IDs
//! fresh per call). What it leaves out: arithmetic, and captures across the
//! calls of one case (those are the multi-step cases' substitutions).

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::Mutex;

use serde_json::{Map, Value};

/// One place where the value does not match the pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// JSON path of the place, `$` being the document (`$.error.details.hunkIndex`).
    pub path: String,
    /// What the pattern wanted, readable.
    pub expected: String,
    /// What was there, readable (`(absent)` for a missing key).
    pub got: String,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: expected {}, got {}",
            self.path, self.expected, self.got
        )
    }
}

const MATCHERS: &[&str] = &[
    "$any",
    "$absent",
    "$type",
    "$nonEmpty",
    "$contains",
    "$regex",
    "$len",
    "$each",
    "$unique",
    "$all",
    "$exact",
    "$equals",
    "$sha256Of",
    "$open",
    "$ifPresent",
];
const TYPES: &[&str] = &[
    "string", "number", "integer", "boolean", "null", "array", "object",
];

/// Match `actual` against `pattern`; returns every mismatch (empty = match).
pub fn matches(pattern: &Value, actual: &Value) -> Vec<Mismatch> {
    judge_document(pattern, actual, &Context::default()).mismatches
}

/// What a pattern may refer to beyond the document it matches.
#[derive(Clone, Copy, Debug, Default)]
pub struct Context<'a> {
    /// The regular files of the tree the case expects after the call (path
    /// → bytes; the given files when the tree is `"unchanged"`), for
    /// `$sha256Of`. `None`: no tree is known, and `$sha256Of` fails.
    pub files: Option<&'a BTreeMap<String, Vec<u8>>>,
}

/// One value matched by `$unique`: its group, the value, and its JSON path.
#[derive(Clone, Debug, PartialEq)]
pub struct UniqueBinding {
    /// The group named by the matcher.
    pub group: String,
    /// The value.
    pub value: Value,
    /// Where it is in the document (`$.result.batchId`).
    pub path: String,
}

/// A result document judged against a pattern: the mismatches, and what
/// the checks beyond one document need.
#[derive(Clone, Debug, Default)]
pub struct Judged {
    /// Every mismatch (empty = match).
    pub mismatches: Vec<Mismatch>,
    /// The values matched by `$unique` (each distinct within its group in
    /// this document), for [`RunUnique::bind`].
    pub unique: Vec<UniqueBinding>,
    /// The JSON paths of the values matched by `$open`: below them, members
    /// the tool does not document are allowed.
    pub open: Vec<String>,
}

/// Match `document` against `pattern` with a [`Context`]: `$equals`
/// pointers resolve in `document`, `$sha256Of` hashes a file of
/// `context.files`.
pub fn judge_document(pattern: &Value, document: &Value, context: &Context<'_>) -> Judged {
    let mut m = Matcher {
        root: Some(document),
        files: context.files,
        ..Matcher::default()
    };
    m.value("$", pattern, document);
    let unique = m
        .unique
        .into_iter()
        .flat_map(|(group, seen)| {
            seen.into_iter().map(move |(value, path)| UniqueBinding {
                group: group.clone(),
                value,
                path,
            })
        })
        .collect();
    Judged {
        mismatches: m.mismatches,
        unique,
        open: m.open,
    }
}

/// The `$unique` values of a whole run, by group: a value must differ from
/// every value of its group matched in any other case of the run (IDs are
/// fresh per call, C-wp-ids). Shared by the run's worker threads.
///
/// A run may be long (`patchspec fuzz` judges a million calls and more), so
/// a value costs about 30 bytes, not its text: the map keeps 128 bits of
/// the SHA-256 of (group, value), and where it was first seen as indexes
/// into the run's case ids and its (few, repeated) JSON paths. A million
/// calls held 320 MB as strings.
#[derive(Debug, Default)]
pub struct RunUnique {
    seen: Mutex<UniqueSeen>,
}

#[derive(Debug, Default)]
struct UniqueSeen {
    /// Key of (group, value) → (index in `cases`, index in `paths`).
    first: HashMap<u128, (u32, u32)>,
    /// The ids of the cases that bound a value first, in that order.
    cases: Vec<Box<str>>,
    /// Every JSON path a value was first bound at, once.
    paths: Vec<Box<str>>,
    path_index: HashMap<Box<str>, u32>,
}

impl UniqueSeen {
    /// The key of a value in its group: 128 bits of SHA-256 (a collision
    /// among even 10^12 values has odds below 10^-14).
    fn key(group: &str, value: &Value) -> u128 {
        let digest = patchspec_engine::hash::sha256_hex_of_parts([
            group.as_bytes(),
            &[0u8][..],
            canonical(value).as_bytes(),
        ]);
        // 64 hex digits, always: the first 32 are 128 bits.
        u128::from_str_radix(&digest[..32], 16).unwrap_or_default()
    }

    fn path(&mut self, path: &str) -> u32 {
        if let Some(&i) = self.path_index.get(path) {
            return i;
        }
        let i = u32::try_from(self.paths.len()).unwrap_or(u32::MAX);
        self.paths.push(path.into());
        self.path_index.insert(path.into(), i);
        i
    }

    /// Where a value was first seen: (case id, JSON path).
    fn place(&self, (case, path): (u32, u32)) -> (&str, &str) {
        (
            self.cases
                .get(case as usize)
                .map_or("(an earlier case)", |s| s),
            self.paths.get(path as usize).map_or("(a path)", |s| s),
        )
    }
}

impl RunUnique {
    /// Record the `bindings` of case `case`; returns a mismatch for each
    /// value already bound in its group by another case (or another call of
    /// the same case). A value already seen is not re-recorded, so the
    /// first case keeps it.
    pub fn bind(&self, case: &str, bindings: &[UniqueBinding]) -> Vec<Mismatch> {
        let mut seen = self
            .seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut out = Vec::new();
        let mut case_index = None;
        for b in bindings {
            let key = UniqueSeen::key(&b.group, &b.value);
            match seen.first.get(&key) {
                Some(&first) => {
                    let (first_case, first_path) = seen.place(first);
                    out.push(Mismatch {
                        path: b.path.clone(),
                        expected: format!(
                            "a value unique in group {:?} across the run (the same value was at {first_path} of case {first_case})",
                            b.group
                        ),
                        got: show(&b.value),
                    })
                }
                None => {
                    let case = *case_index.get_or_insert_with(|| {
                        seen.cases.push(case.into());
                        u32::try_from(seen.cases.len() - 1).unwrap_or(u32::MAX)
                    });
                    let path = seen.path(&b.path);
                    seen.first.insert(key, (case, path));
                }
            }
        }
        out
    }
}

/// A value's key for [`RunUnique`]: numbers by value (`1` and `1.0` alike).
fn canonical(value: &Value) -> String {
    match value.as_f64() {
        Some(f) if value.is_number() && f.fract() == 0.0 && f.abs() < 9.0e15 => format!("{f:.0}"),
        _ => serde_json::to_string(value).unwrap_or_default(),
    }
}

/// Check a pattern is well formed; returns `(json path, message)` problems.
pub fn check_pattern(pattern: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    check(&mut out, "$", pattern, false);
    out
}

fn check(out: &mut Vec<(String, String)>, at: &str, pattern: &Value, member: bool) {
    match pattern {
        Value::Object(map) => match matcher_of(map) {
            Some(Ok((name, arg))) => {
                let bad = |out: &mut Vec<(String, String)>, want: &str| {
                    out.push((at.to_owned(), format!("{name} takes {want}")))
                };
                match name {
                    "$any" | "$nonEmpty" => {
                        if arg != &Value::Bool(true) {
                            bad(out, "true");
                        }
                    }
                    "$absent" => {
                        if arg != &Value::Bool(true) {
                            bad(out, "true");
                        }
                        if !member {
                            out.push((
                                at.to_owned(),
                                "$absent is only meaningful as an object member".into(),
                            ));
                        }
                    }
                    "$type" => {
                        let names: Vec<&Value> = match arg {
                            Value::Array(list) if !list.is_empty() => list.iter().collect(),
                            other => vec![other],
                        };
                        if !names
                            .iter()
                            .all(|n| n.as_str().is_some_and(|s| TYPES.contains(&s)))
                        {
                            bad(
                                out,
                                &format!(
                                    "a type name or a non-empty list of them ({})",
                                    TYPES.join(", ")
                                ),
                            );
                        }
                    }
                    "$contains" | "$unique" => {
                        if !arg.is_string() {
                            bad(out, "a string");
                        }
                    }
                    "$regex" => match arg.as_str() {
                        Some(re) => {
                            if let Err(e) = regex::Regex::new(re) {
                                out.push((at.to_owned(), format!("invalid regex: {e}")));
                            }
                        }
                        None => bad(out, "a string"),
                    },
                    "$len" => {
                        if !arg.is_u64() {
                            bad(out, "a non-negative integer");
                        }
                    }
                    "$each" => check(out, &format!("{at}.$each"), arg, false),
                    "$all" => match arg {
                        Value::Array(list) => {
                            for (i, p) in list.iter().enumerate() {
                                check(out, &format!("{at}.$all[{i}]"), p, member);
                            }
                        }
                        _ => bad(out, "an array of patterns"),
                    },
                    "$exact" => {}
                    "$equals" => match arg.as_str() {
                        Some(p) if p.is_empty() || p.starts_with('/') => {}
                        _ => bad(
                            out,
                            "a JSON Pointer into the result document (\"\" or starting with `/`)",
                        ),
                    },
                    "$sha256Of" => match arg.as_str() {
                        Some(p) if !p.is_empty() => {}
                        _ => bad(out, "the path of a file of the expected tree"),
                    },
                    "$open" => check(out, at, arg, member),
                    "$ifPresent" => {
                        if !member {
                            out.push((
                                at.to_owned(),
                                "$ifPresent is only meaningful as an object member".into(),
                            ));
                        }
                        check(out, &format!("{at}.$ifPresent"), arg, false);
                    }
                    other => out.push((at.to_owned(), format!("unknown matcher {other}"))),
                }
            }
            Some(Err(message)) => out.push((at.to_owned(), message)),
            None => {
                for (k, v) in map {
                    check(out, &child(at, k), v, true);
                }
            }
        },
        Value::Array(list) => {
            for (i, p) in list.iter().enumerate() {
                check(out, &format!("{at}[{i}]"), p, false);
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => {}
    }
}

/// `Some(Ok((name, arg)))` for a matcher object, `Some(Err)` for an object
/// mixing `$` keys with others, `None` for a plain object.
fn matcher_of(map: &Map<String, Value>) -> Option<Result<(&str, &Value), String>> {
    let dollar: Vec<&String> = map.keys().filter(|k| k.starts_with('$')).collect();
    match (dollar.len(), map.len()) {
        (0, _) => None,
        (1, 1) => {
            let (k, v) = map.iter().next().expect("the map has one member");
            if MATCHERS.contains(&k.as_str()) {
                Some(Ok((k.as_str(), v)))
            } else {
                Some(Err(format!("unknown matcher {k} (known: {})", MATCHERS.join(", "))))
            }
        }
        _ => Some(Err("a matcher is an object with a single `$` key (combine matchers with $all; match a literal `$` key with $exact)".into())),
    }
}

/// The JSON path of a member.
pub fn child(at: &str, key: &str) -> String {
    let ident = !key.is_empty()
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !key.starts_with(|c: char| c.is_ascii_digit());
    if ident {
        format!("{at}.{key}")
    } else {
        format!("{at}[{}]", quote(key))
    }
}

/// A value, compact and cut to a readable length.
pub fn show(value: &Value) -> String {
    let text = serde_json::to_string(value).unwrap_or_default();
    if text.chars().count() > 120 {
        let cut: String = text.chars().take(117).collect();
        format!("{cut}...")
    } else {
        text
    }
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn is_type(value: &Value, name: &str) -> bool {
    match name {
        "number" => value.is_number(),
        "integer" => {
            value.is_i64() || value.is_u64() || value.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        other => type_name(value) == other,
    }
}

/// Deep equality with numbers compared by value.
pub fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            match (x.as_i64(), y.as_i64(), x.as_u64(), y.as_u64()) {
                (Some(i), Some(j), _, _) => i == j,
                (_, _, Some(i), Some(j)) => i == j,
                _ => x.as_f64() == y.as_f64(),
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| equal(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| equal(v, w)))
        }
        _ => a == b,
    }
}

#[derive(Default)]
struct Matcher<'a> {
    mismatches: Vec<Mismatch>,
    /// `$unique` group → values seen, with the path where each was seen.
    unique: BTreeMap<String, Vec<(Value, String)>>,
    /// The whole document, for `$equals`.
    root: Option<&'a Value>,
    /// The expected tree's files, for `$sha256Of`.
    files: Option<&'a BTreeMap<String, Vec<u8>>>,
    /// Paths of the values matched by `$open`.
    open: Vec<String>,
}

impl Matcher<'_> {
    fn miss(&mut self, at: &str, expected: impl Into<String>, got: &Value) {
        self.mismatches.push(Mismatch {
            path: at.to_owned(),
            expected: expected.into(),
            got: show(got),
        });
    }

    fn value(&mut self, at: &str, pattern: &Value, actual: &Value) {
        match pattern {
            Value::Object(map) => match matcher_of(map) {
                Some(Ok((name, arg))) => self.matcher(at, name, arg, actual),
                Some(Err(message)) => self.mismatches.push(Mismatch {
                    path: at.to_owned(),
                    expected: format!("a valid pattern ({message})"),
                    got: show(actual),
                }),
                None => match actual {
                    Value::Object(obj) => {
                        for (key, sub) in map {
                            let here = child(at, key);
                            let absent = matches!(sub, Value::Object(m) if m.len() == 1 && m.contains_key("$absent"));
                            let optional = matches!(sub, Value::Object(m) if m.len() == 1 && m.contains_key("$ifPresent"));
                            if optional && !obj.contains_key(key) {
                                continue;
                            }
                            match (obj.get(key), absent) {
                                (None, true) => {}
                                (Some(v), true) => self.miss(&here, "no such key", v),
                                (None, false) => self.mismatches.push(Mismatch {
                                    path: here,
                                    expected: describe(sub),
                                    got: "(absent)".into(),
                                }),
                                (Some(v), false) => self.value(&here, sub, v),
                            }
                        }
                    }
                    other => self.miss(at, "an object", other),
                },
            },
            Value::Array(items) => match actual {
                Value::Array(values) if values.len() == items.len() => {
                    for (i, (p, v)) in items.iter().zip(values).enumerate() {
                        self.value(&format!("{at}[{i}]"), p, v);
                    }
                }
                Value::Array(values) => self.miss(
                    at,
                    format!("an array of {} element(s)", items.len()),
                    &Value::String(format!("{} element(s): {}", values.len(), show(actual))),
                ),
                other => self.miss(at, "an array", other),
            },
            Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => {
                if !equal(pattern, actual) {
                    self.miss(at, show(pattern), actual);
                }
            }
        }
    }

    fn matcher(&mut self, at: &str, name: &str, arg: &Value, actual: &Value) {
        match name {
            "$any" => {}
            "$absent" => self.miss(at, "no such key", actual),
            "$type" => {
                let names: Vec<&str> = match arg {
                    Value::Array(list) => list.iter().filter_map(Value::as_str).collect(),
                    other => other.as_str().into_iter().collect(),
                };
                if !names.iter().any(|n| is_type(actual, n)) {
                    self.miss(
                        at,
                        format!("a value of type {}", names.join(" or ")),
                        actual,
                    );
                }
            }
            "$nonEmpty" => {
                let ok = match actual {
                    Value::String(s) => !s.is_empty(),
                    Value::Array(a) => !a.is_empty(),
                    Value::Object(o) => !o.is_empty(),
                    Value::Null | Value::Bool(_) | Value::Number(_) => false,
                };
                if !ok {
                    self.miss(at, "a non-empty string, array or object", actual);
                }
            }
            "$contains" => {
                let sub = arg.as_str().unwrap_or_default();
                if !actual.as_str().is_some_and(|s| s.contains(sub)) {
                    self.miss(at, format!("a string containing {}", show(arg)), actual);
                }
            }
            "$regex" => {
                let re = arg.as_str().and_then(|r| regex::Regex::new(r).ok());
                match (re, actual.as_str()) {
                    (Some(re), Some(s)) if re.is_match(s) => {}
                    _ => self.miss(
                        at,
                        format!("a string matching /{}/", arg.as_str().unwrap_or_default()),
                        actual,
                    ),
                }
            }
            "$len" => {
                let want = arg.as_u64().unwrap_or(u64::MAX);
                let got = match actual {
                    Value::String(s) => Some(s.chars().count()),
                    Value::Array(a) => Some(a.len()),
                    Value::Object(o) => Some(o.len()),
                    Value::Null | Value::Bool(_) | Value::Number(_) => None,
                };
                if got.map(|n| n as u64) != Some(want) {
                    let got_text = match got {
                        Some(n) => Value::String(format!("length {n}: {}", show(actual))),
                        None => actual.clone(),
                    };
                    self.miss(at, format!("length {want}"), &got_text);
                }
            }
            "$each" => match actual {
                Value::Array(values) => {
                    for (i, v) in values.iter().enumerate() {
                        self.value(&format!("{at}[{i}]"), arg, v);
                    }
                }
                other => self.miss(at, "an array", other),
            },
            "$unique" => {
                let group = arg.as_str().unwrap_or_default().to_owned();
                if !(actual.is_string() || actual.is_number()) {
                    self.miss(
                        at,
                        format!("a string or number (unique in group {group:?})"),
                        actual,
                    );
                    return;
                }
                let seen = self.unique.entry(group.clone()).or_default();
                if let Some((_, first)) = seen.iter().find(|(v, _)| equal(v, actual)) {
                    let message =
                        format!("a value unique in group {group:?} (the same value is at {first})");
                    self.miss(at, message, actual);
                } else {
                    seen.push((actual.clone(), at.to_owned()));
                }
            }
            "$all" => {
                for p in arg.as_array().map(Vec::as_slice).unwrap_or_default() {
                    self.value(at, p, actual);
                }
            }
            "$exact" => {
                if !equal(arg, actual) {
                    self.miss(at, format!("exactly {}", show(arg)), actual);
                }
            }
            "$equals" => self.equals(at, arg.as_str().unwrap_or_default(), actual),
            "$sha256Of" => self.sha256_of(at, arg.as_str().unwrap_or_default(), actual),
            "$open" => {
                self.open.push(at.to_owned());
                self.value(at, arg, actual);
            }
            // Present (an absent member was let through by the object).
            "$ifPresent" => self.value(at, arg, actual),
            other => self.miss(at, format!("a known matcher, not {other}"), actual),
        }
    }
}

impl Matcher<'_> {
    /// `$equals`: the value the pointer names in the document, deeply equal.
    fn equals(&mut self, at: &str, pointer: &str, actual: &Value) {
        match self.root.and_then(|root| root.pointer(pointer)) {
            Some(target) if equal(target, actual) => {}
            Some(target) => {
                let message = format!("the value at {pointer} ({})", show(target));
                self.miss(at, message, actual);
            }
            None => self.miss(
                at,
                format!("the value at {pointer}, but the pointer names nothing in this document"),
                actual,
            ),
        }
    }

    /// `$sha256Of`: the lowercase hex SHA-256 of a file of the expected tree.
    fn sha256_of(&mut self, at: &str, path: &str, actual: &Value) {
        match self.files.and_then(|files| files.get(path)) {
            Some(bytes) => {
                let want = patchspec_engine::hash::sha256_hex(bytes);
                if actual.as_str() != Some(want.as_str()) {
                    self.miss(
                        at,
                        format!("the SHA-256 of the expected {path} ({want})"),
                        actual,
                    );
                }
            }
            None => self.miss(
                at,
                format!(
                    "the SHA-256 of the expected {path}, but the expected tree has no such file"
                ),
                actual,
            ),
        }
    }
}

/// A short description of what a pattern wants (for an absent key).
fn describe(pattern: &Value) -> String {
    match pattern {
        Value::Object(map) => match matcher_of(map) {
            Some(Ok(("$any", _))) => "a value".into(),
            Some(Ok((name, arg))) => format!("{{{name}: {}}}", show(arg)),
            Some(Err(_)) | None => "an object".into(),
        },
        other => show(other),
    }
}

/// A map key as it appears in a JSON path: `.name` for identifiers, `["..."]` otherwise.
pub fn quote(key: &str) -> String {
    serde_json::to_string(key).unwrap_or_else(|_| format!("{key:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// One helper for every pattern test: the mismatches, rendered.
    fn check_match(pattern: Value, actual: Value, expected: &[&str]) {
        let got: Vec<String> = matches(&pattern, &actual)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(got, expected, "pattern {pattern} against {actual}");
    }

    #[test]
    fn literals_objects_arrays() {
        check_match(json!({"a": 1}), json!({"a": 1.0, "b": 2}), &[]);
        check_match(
            json!({"error": {"details": {"hunkIndex": 0}}}),
            json!({"error": {"details": {"hunkIndex": 1}}}),
            &["$.error.details.hunkIndex: expected 0, got 1"],
        );
        check_match(
            json!([1, 2]),
            json!([1, 2, 3]),
            &["$: expected an array of 2 element(s), got \"3 element(s): [1,2,3]\""],
        );
        check_match(
            json!({"a": "x"}),
            json!({}),
            &["$.a: expected \"x\", got (absent)"],
        );
        check_match(
            json!({"a b": [true]}),
            json!({"a b": [false]}),
            &["$[\"a b\"][0]: expected true, got false"],
        );
        check_match(json!({"a": null}), json!({"a": null}), &[]);
    }

    #[test]
    fn matchers() {
        check_match(json!({"a": {"$any": true}}), json!({"a": null}), &[]);
        check_match(
            json!({"a": {"$any": true}}),
            json!({}),
            &["$.a: expected a value, got (absent)"],
        );
        check_match(json!({"a": {"$absent": true}}), json!({"b": 1}), &[]);
        check_match(
            json!({"a": {"$absent": true}}),
            json!({"a": 1}),
            &["$.a: expected no such key, got 1"],
        );
        check_match(json!({"$type": ["string", "null"]}), json!(null), &[]);
        check_match(
            json!({"$type": "integer"}),
            json!(1.5),
            &["$: expected a value of type integer, got 1.5"],
        );
        check_match(
            json!({"$nonEmpty": true}),
            json!(""),
            &["$: expected a non-empty string, array or object, got \"\""],
        );
        check_match(json!({"$contains": "ell"}), json!("hello"), &[]);
        check_match(json!({"$regex": "^chg-[0-9]+$"}), json!("chg-12"), &[]);
        check_match(
            json!({"$regex": "^chg-"}),
            json!("x"),
            &["$: expected a string matching /^chg-/, got \"x\""],
        );
        check_match(json!({"$len": 2}), json!([1, 2]), &[]);
        check_match(
            json!({"$each": {"$type": "string"}}),
            json!(["a", 1]),
            &["$[1]: expected a value of type string, got 1"],
        );
        check_match(
            json!({"$all": [{"$len": 1}, {"$each": 1}]}),
            json!([1]),
            &[],
        );
        check_match(
            json!({"$exact": {"a": 1}}),
            json!({"a": 1, "b": 2}),
            &["$: expected exactly {\"a\":1}, got {\"a\":1,\"b\":2}"],
        );
    }

    #[test]
    fn unique_ids_within_one_result() {
        let p = json!({"changes": {"$each": {"id": {"$unique": "change"}}}});
        check_match(
            p.clone(),
            json!({"changes": [{"id": "a"}, {"id": "b"}]}),
            &[],
        );
        check_match(p, json!({"changes": [{"id": "a"}, {"id": "a"}]}), &["$.changes[1].id: expected a value unique in group \"change\" (the same value is at $.changes[0].id), got \"a\""]);
    }

    #[test]
    fn malformed_patterns_are_reported() {
        let problems = check_pattern(
            &json!({"a": {"$nope": 1}, "b": {"$regex": "("}, "c": [{"$absent": true}], "d": {"$len": 1, "x": 2}}),
        );
        let at: Vec<&str> = problems.iter().map(|p| p.0.as_str()).collect();
        assert_eq!(at, ["$.a", "$.b", "$.c[0]", "$.d"], "{problems:?}");
    }

    #[test]
    fn equals_ties_a_value_to_another_of_the_same_document() {
        let doc = json!({"changes": [{"id": "chg-1"}], "errors": [{"changeId": "chg-1"}]});
        let p = json!({"errors": [{"changeId": {"$equals": "/changes/0/id"}}]});
        check_match(p, doc.clone(), &[]);
        let foreign = json!({"changes": [{"id": "chg-1"}], "errors": [{"changeId": "chg-9"}]});
        let p = json!({"errors": [{"changeId": {"$equals": "/changes/0/id"}}]});
        check_match(
            p,
            foreign,
            &["$.errors[0].changeId: expected the value at /changes/0/id (\"chg-1\"), got \"chg-9\""],
        );
        check_match(
            json!({"a": {"$equals": "/nope"}}),
            json!({"a": 1}),
            &["$.a: expected the value at /nope, but the pointer names nothing in this document, got 1"],
        );
    }

    #[test]
    fn sha256_of_hashes_the_expected_file() {
        let files: BTreeMap<String, Vec<u8>> = [("a.txt".to_owned(), b"abc".to_vec())].into();
        let ctx = Context {
            files: Some(&files),
        };
        let abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        let p = json!({"sha": {"$sha256Of": "a.txt"}});
        assert!(judge_document(&p, &json!({"sha": abc}), &ctx)
            .mismatches
            .is_empty());
        let upper = judge_document(&p, &json!({"sha": abc.to_uppercase()}), &ctx).mismatches;
        assert_eq!(upper.len(), 1, "{upper:?}");
        let missing = judge_document(
            &json!({"sha": {"$sha256Of": "b.txt"}}),
            &json!({"sha": abc}),
            &ctx,
        );
        assert!(
            missing.mismatches[0].expected.contains("no such file"),
            "{:?}",
            missing.mismatches
        );
        // Without a tree, nothing can be hashed: the matcher fails, never passes.
        assert_eq!(matches(&p, &json!({"sha": abc})).len(), 1);
    }

    #[test]
    fn if_present_lets_an_absent_member_through_and_checks_a_present_one() {
        let p = json!({"details": {"repair": {"$ifPresent": {"patch": "x"}}}});
        check_match(p.clone(), json!({"details": {}}), &[]);
        check_match(
            p.clone(),
            json!({"details": {"repair": {"patch": "x", "fixes": []}}}),
            &[],
        );
        check_match(
            p,
            json!({"details": {"repair": {"patch": "y"}}}),
            &["$.details.repair.patch: expected \"x\", got \"y\""],
        );
        assert_eq!(
            check_pattern(&json!({"$ifPresent": 1})),
            vec![(
                "$".to_string(),
                "$ifPresent is only meaningful as an object member".to_string()
            )]
        );
    }

    #[test]
    fn open_marks_its_place_and_matches_its_pattern() {
        let j = judge_document(
            &json!({"error": {"$open": {"kind": "x"}}}),
            &json!({"error": {"kind": "x", "extra": 1}}),
            &Context::default(),
        );
        assert!(j.mismatches.is_empty());
        assert_eq!(j.open, ["$.error"]);
        let j = judge_document(
            &json!({"$open": {"kind": "x"}}),
            &json!({"kind": "y"}),
            &Context::default(),
        );
        assert_eq!(j.mismatches.len(), 1);
    }

    #[test]
    fn unique_values_must_differ_across_the_cases_of_a_run() {
        let run = RunUnique::default();
        let p = json!({"id": {"$unique": "chg"}});
        let first = judge_document(&p, &json!({"id": "chg-1"}), &Context::default());
        assert!(run.bind("case/a", &first.unique).is_empty());
        let again = judge_document(&p, &json!({"id": "chg-1"}), &Context::default());
        let clash: Vec<String> = run
            .bind("case/b", &again.unique)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(clash, ["$.id: expected a value unique in group \"chg\" across the run (the same value was at $.id of case case/a), got \"chg-1\""]);
        let other_group = judge_document(
            &json!({"id": {"$unique": "fp"}}),
            &json!({"id": "chg-1"}),
            &Context::default(),
        );
        assert!(run.bind("case/c", &other_group.unique).is_empty());
        let number = judge_document(
            &json!({"n": {"$unique": "n"}}),
            &json!({"n": 1}),
            &Context::default(),
        );
        assert!(run.bind("case/d", &number.unique).is_empty());
        let same_number = judge_document(
            &json!({"n": {"$unique": "n"}}),
            &json!({"n": 1.0}),
            &Context::default(),
        );
        assert_eq!(run.bind("case/e", &same_number.unique).len(), 1);
    }

    #[test]
    fn new_matchers_are_checked_for_their_arguments() {
        let problems = check_pattern(
            &json!({"a": {"$equals": "changes/0"}, "b": {"$sha256Of": ""}, "c": {"$open": {"$nope": 1}}, "d": {"$equals": ""}}),
        );
        let at: Vec<&str> = problems.iter().map(|p| p.0.as_str()).collect();
        assert_eq!(at, ["$.a", "$.b", "$.c"], "{problems:?}");
    }
}
