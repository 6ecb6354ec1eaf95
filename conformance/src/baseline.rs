//! The baseline: a strict list of known failures (protobuf conformance's
//! "failure list").
//!
//! File format (stable): a JSON array of `{"id", "outcome", "reason"?,
//! "issue"?}` with `outcome` either `fail` or `error`, sorted by id. Main
//! type: [`Baseline`]. [`classify`] turns a [`RawOutcome`] into an
//! [`Outcome`]: a listed case failing exactly as listed is `xfail`; a listed
//! case that passes is `xpass` (unexpected: remove it from the list); a listed
//! case failing with the other outcome keeps its raw outcome and is
//! unexpected. [`Baseline::stale`] finds listed ids that are no longer in the
//! corpus: also unexpected. Rewriting ([`Baseline::rewritten`]) is only
//! allowed on a full run with every case run: [`Baseline::update`] refuses a
//! run with cases left unrun, the command a filtered one. A
//! skipped case (by `--skip-tool`/`--skip-tag` or the executor's declaration)
//! was not judged, so a rewrite keeps its entry as it was.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, ErrorKind};
use crate::outcome::{Outcome, RawOutcome};

/// How a known failure fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Expected {
    /// A wrong answer.
    Fail,
    /// No valid answer.
    Error,
}

impl Expected {
    /// `fail` or `error`.
    pub fn as_str(self) -> &'static str {
        match self {
            Expected::Fail => "fail",
            Expected::Error => "error",
        }
    }
}

/// One known failure.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// The case id.
    pub id: String,
    /// How it fails.
    pub outcome: Expected,
    /// Why, for humans.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// A link to the issue tracking it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issue: Option<String>,
}

/// The known failures, by id.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Baseline {
    entries: BTreeMap<String, Entry>,
}

impl Baseline {
    /// Read a baseline file. A missing file is an error (use `--update-baseline` to create one).
    pub fn load(path: &Path) -> Result<Baseline, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read baseline {}: {e}", path.display()))?;
        Baseline::parse(&text).map_err(|e| format!("baseline {}: {e}", path.display()))
    }

    /// Parse baseline JSON.
    pub fn parse(text: &str) -> Result<Baseline, String> {
        let list: Vec<Entry> = serde_json::from_str(text).map_err(|e| {
            format!("not a baseline (a JSON array of {{id, outcome, reason?, issue?}}): {e}")
        })?;
        let mut entries = BTreeMap::new();
        for e in list {
            if let Some(dup) = entries.insert(e.id.clone(), e) {
                return Err(format!("id {:?} is listed twice", dup.id));
            }
        }
        Ok(Baseline { entries })
    }

    /// The entry for an id.
    pub fn get(&self, id: &str) -> Option<&Entry> {
        self.entries.get(id)
    }

    /// Listed ids that are not in the corpus.
    pub fn stale(&self, corpus_ids: &BTreeSet<&str>) -> Vec<String> {
        self.entries
            .keys()
            .filter(|id| !corpus_ids.contains(id.as_str()))
            .cloned()
            .collect()
    }

    /// The baseline a full run implies: every fail/error, keeping the reason
    /// and issue of entries that are still there, and the entries of skipped
    /// cases unchanged (a skip judges nothing).
    pub fn rewritten<'a>(
        &self,
        results: impl IntoIterator<Item = (&'a str, RawOutcome)>,
    ) -> Baseline {
        let mut entries = BTreeMap::new();
        for (id, raw) in results {
            let old = self.entries.get(id);
            let outcome = match raw {
                RawOutcome::Fail => Expected::Fail,
                RawOutcome::Error => Expected::Error,
                RawOutcome::Pass => continue,
                RawOutcome::Skip => match old {
                    Some(kept) => kept.outcome,
                    None => continue,
                },
            };
            entries.insert(
                id.to_owned(),
                Entry {
                    id: id.to_owned(),
                    outcome,
                    reason: old.and_then(|o| o.reason.clone()),
                    issue: old.and_then(|o| o.issue.clone()),
                },
            );
        }
        Baseline { entries }
    }

    /// `--update-baseline`: this baseline rewritten from a whole run
    /// ([`Baseline::rewritten`]) and written to `path`. Refused when
    /// `not_run` cases were left unrun (their entries cannot be judged);
    /// returns the baseline written.
    pub fn update<'a>(
        &self,
        path: &Path,
        not_run: usize,
        results: impl IntoIterator<Item = (&'a str, RawOutcome)>,
    ) -> Result<Baseline, Error> {
        if not_run > 0 {
            return Err(Error::new(ErrorKind::Baseline(format!(
                "refusing to rewrite the baseline: {not_run} case(s) were not run"
            ))));
        }
        let new = self.rewritten(results);
        std::fs::write(path, new.to_json())
            .map_err(|e| Error::io(format!("cannot write {}: {e}", path.display())))?;
        Ok(new)
    }

    /// The file text: a pretty JSON array sorted by id, with a final newline.
    pub fn to_json(&self) -> String {
        let list: Vec<&Entry> = self.entries.values().collect();
        let mut text =
            serde_json::to_string_pretty(&list).expect("baseline entries always serialise");
        text.push('\n');
        text
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// No entries?
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// The verdict for a raw outcome given the case's baseline entry.
pub fn classify(raw: RawOutcome, listed: Option<&Entry>) -> Outcome {
    match (raw, listed.map(|e| e.outcome)) {
        (RawOutcome::Skip, _) => Outcome::Skip,
        (RawOutcome::Pass, None) => Outcome::Pass,
        (RawOutcome::Pass, Some(_)) => Outcome::Xpass,
        (RawOutcome::Fail, Some(Expected::Fail)) | (RawOutcome::Error, Some(Expected::Error)) => {
            Outcome::Xfail
        }
        (RawOutcome::Fail, None | Some(Expected::Error)) => Outcome::Fail,
        (RawOutcome::Error, None | Some(Expected::Fail)) => Outcome::Error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classification_table() {
        let fail = Entry {
            id: "a".into(),
            outcome: Expected::Fail,
            reason: None,
            issue: None,
        };
        let error = Entry {
            outcome: Expected::Error,
            ..fail.clone()
        };
        let table = [
            (RawOutcome::Pass, None, Outcome::Pass),
            (RawOutcome::Pass, Some(&fail), Outcome::Xpass),
            (RawOutcome::Fail, None, Outcome::Fail),
            (RawOutcome::Fail, Some(&fail), Outcome::Xfail),
            (RawOutcome::Fail, Some(&error), Outcome::Fail),
            (RawOutcome::Error, Some(&error), Outcome::Xfail),
            (RawOutcome::Error, Some(&fail), Outcome::Error),
            (RawOutcome::Skip, Some(&fail), Outcome::Skip),
        ];
        for (raw, listed, want) in table {
            assert_eq!(classify(raw, listed), want, "{raw:?} with {listed:?}");
        }
    }

    #[test]
    fn parse_rejects_duplicates_and_unknown_outcomes() {
        assert!(
            Baseline::parse(r#"[{"id":"a","outcome":"fail"},{"id":"a","outcome":"error"}]"#)
                .is_err()
        );
        assert!(Baseline::parse(r#"[{"id":"a","outcome":"pass"}]"#).is_err());
        let b = Baseline::parse(r#"[{"id":"a","outcome":"fail","reason":"r"}]"#).expect("valid");
        let re = b.rewritten([("a", RawOutcome::Error), ("b", RawOutcome::Pass)]);
        assert_eq!(re.to_json(), "[\n  {\n    \"id\": \"a\",\n    \"outcome\": \"error\",\n    \"reason\": \"r\"\n  }\n]\n");
        // A skipped case keeps its entry as it was; an unlisted one gets none.
        let re = b.rewritten([("a", RawOutcome::Skip), ("b", RawOutcome::Skip)]);
        assert_eq!(re, b);
    }
}
