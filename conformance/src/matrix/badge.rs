//! Badges: one JSON file per implementation in the shields.io *endpoint*
//! format (`https://img.shields.io/endpoint?url=…` renders it).
//!
//! `{"schemaVersion": 1, "label": "patchspec", "message": "87% passing", "color": "yellowgreen"}`.
//! The rate is over the cases judged (pass, fail, error; skips left out) and
//! rounded down, so only a perfect run reads `100%`. In outcome judge mode
//! the label says so (`patchspec (outcome)`): the two rates are not
//! comparable. Nothing judged: `message` is `no cases run`, `color`
//! `lightgrey`.

use serde_json::{json, Value};

use super::model::Tally;
use crate::judge::Judge;

/// The shields.io colour for a pass rate (0.0–1.0).
pub fn color(rate: f64) -> &'static str {
    if rate >= 1.0 {
        "brightgreen"
    } else if rate >= 0.9 {
        "green"
    } else if rate >= 0.75 {
        "yellowgreen"
    } else if rate >= 0.5 {
        "yellow"
    } else if rate >= 0.25 {
        "orange"
    } else {
        "red"
    }
}

/// The badge document for one implementation's totals.
pub fn badge(totals: Tally, judge: Judge) -> Value {
    let label = match judge {
        Judge::Full => "patchspec".to_owned(),
        Judge::Outcome => "patchspec (outcome)".to_owned(),
    };
    match totals.pass_rate() {
        Some(rate) => json!({
            "schemaVersion": 1,
            "label": label,
            "message": format!("{} passing", totals.percent()),
            "color": color(rate),
        }),
        None => json!({
            "schemaVersion": 1,
            "label": label,
            "message": "no cases run",
            "color": "lightgrey",
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn totals(pass: usize, fail: usize, error: usize, skip: usize) -> Tally {
        Tally {
            pass,
            fail,
            error,
            skip,
            not_run: 0,
        }
    }

    #[test]
    fn shields_endpoint_format() {
        assert_eq!(
            badge(totals(87, 10, 3, 50), Judge::Full),
            json!({"schemaVersion": 1, "label": "patchspec", "message": "87% passing", "color": "yellowgreen"})
        );
        assert_eq!(
            badge(totals(10, 0, 0, 0), Judge::Outcome),
            json!({"schemaVersion": 1, "label": "patchspec (outcome)", "message": "100% passing", "color": "brightgreen"})
        );
        assert_eq!(
            badge(totals(0, 0, 0, 4), Judge::Full)["message"],
            json!("no cases run")
        );
    }

    #[test]
    fn only_a_perfect_run_reads_100() {
        let t = totals(999, 1, 0, 0);
        assert_eq!(badge(t, Judge::Full)["message"], json!("99% passing"));
        assert_eq!(badge(t, Judge::Full)["color"], json!("green"));
        assert_eq!(color(0.1), "red");
        assert_eq!(color(0.3), "orange");
        assert_eq!(color(0.6), "yellow");
    }
}
