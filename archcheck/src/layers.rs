//! The layer lists of ARCHITECTURE.md and the arrows that break them.
//!
//! Under a `###` heading that names a crate's folder (`` (`conformance/`, ``),
//! lines of the form `- layer N: module, module, …` list that crate's
//! modules by their path under `src/` (`transport::launch`), bottom up:
//! layer 0 (or 1) is the lowest. A module is in the layer of the longest
//! listed path that is it or one of its ancestors. An arrow may go down or
//! stay within a layer, never up; a module of the crate in no layer, and a
//! listed module that does not exist, are faults too. A crate without a list
//! is left to the cycle check.

use std::collections::BTreeMap;

use crate::modules::{in_line, CrateModules};

/// The layer lists ARCHITECTURE.md gives, by crate folder (`conformance`):
/// each listed module and its layer.
pub fn layer_lists(architecture: &str) -> BTreeMap<String, BTreeMap<String, u32>> {
    let mut lists: BTreeMap<String, BTreeMap<String, u32>> = BTreeMap::new();
    let mut section: Option<String> = None;
    for line in architecture.lines() {
        if let Some(heading) = line.strip_prefix("### ") {
            section = heading
                .split('`')
                .skip(1)
                .step_by(2)
                .find(|t| t.ends_with('/'))
                .map(|t| t.trim_end_matches('/').to_owned());
            continue;
        }
        if line.starts_with("## ") {
            section = None;
            continue;
        }
        let Some(rest) = line.trim_start().strip_prefix("- layer ") else {
            continue;
        };
        let Some((n, modules)) = rest.split_once(':') else {
            continue;
        };
        // `- layer 2 (the runs): …` reads as layer 2.
        let digits: String = n.trim().chars().take_while(char::is_ascii_digit).collect();
        let (Some(crate_dir), Ok(n)) = (&section, digits.parse::<u32>()) else {
            continue;
        };
        let list = lists.entry(crate_dir.clone()).or_default();
        for m in modules.split(',') {
            // A module's path, then perhaps words about it: `case` (the format).
            let m = m.split_whitespace().next().unwrap_or("");
            let m = m
                .trim_matches('`')
                .trim_start_matches("crate::")
                .trim_end_matches(['.', ';']);
            if !m.is_empty() {
                list.insert(m.to_owned(), n);
            }
        }
    }
    lists
}

/// What breaks a crate's layer list: listed modules that do not exist,
/// modules in no layer, and arrows that climb, one line each.
pub fn layer_faults(
    crate_name: &str,
    m: &CrateModules,
    list: &BTreeMap<String, u32>,
) -> Vec<String> {
    let mut faults = Vec::new();
    for listed in list.keys() {
        if !m.modules.contains_key(listed) {
            faults.push(format!(
                "{crate_name}: `{listed}` is in a layer list but is no module"
            ));
        }
    }
    let layer = |module: &str| -> Option<u32> {
        let parts: Vec<&str> = module.split("::").collect();
        (1..=parts.len())
            .rev()
            .find_map(|k| list.get(&parts[..k].join("::")).copied())
    };
    for module in m.modules.keys() {
        if !module.is_empty() && layer(module).is_none() {
            faults.push(format!("{crate_name}: `{module}` is in no layer"));
        }
    }
    for arrow in &m.arrows {
        if in_line(&arrow.from, &arrow.to) {
            continue;
        }
        if let (Some(a), Some(b)) = (layer(&arrow.from), layer(&arrow.to)) {
            if a < b {
                faults.push(format!(
                    "{crate_name}: {} (layer {a}) → {} (layer {b}) climbs: {}:{} `{}`",
                    arrow.from, arrow.to, arrow.site.file, arrow.site.line, arrow.site.what
                ));
            }
        }
    }
    faults
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::Site;
    use crate::modules::Arrow;

    #[test]
    fn lists_are_read_per_crate_section() {
        let doc = "## Code map\n### The runner (`conformance/`, crate `patchspec-conformance`)\n\n\
                   - layer 0: protocol, case (the format)\n- layer 1 (runs): `transport`, transport::launch.\n\
                   ### Beside them\n- layer 3: nothing\n";
        let lists = layer_lists(doc);
        assert_eq!(lists.len(), 1);
        let runner = &lists["conformance"];
        assert_eq!(runner["protocol"], 0);
        assert_eq!(runner["transport::launch"], 1);
        assert_eq!(runner.len(), 4);
    }

    #[test]
    fn an_arrow_up_a_missing_module_and_an_unlisted_one_are_faults() {
        let mut m = CrateModules::default();
        for name in ["", "case", "cli", "transport", "transport::launch", "extra"] {
            m.modules.insert(name.to_owned(), format!("{name}.rs"));
        }
        let arrow = |from: &str, to: &str| Arrow {
            from: from.into(),
            to: to.into(),
            site: Site {
                file: format!("{from}.rs"),
                line: 1,
                what: to.into(),
            },
        };
        m.arrows = vec![
            arrow("cli", "case"),
            arrow("transport::launch", "cli"),
            arrow("case", "transport"),
        ];
        let list: BTreeMap<String, u32> = [("case", 0), ("transport", 1), ("cli", 2), ("gone", 1)]
            .map(|(k, v)| (k.to_owned(), v))
            .into();
        let faults = layer_faults("r", &m, &list);
        assert_eq!(
            faults,
            [
                "r: `gone` is in a layer list but is no module",
                "r: `extra` is in no layer",
                "r: transport::launch (layer 1) → cli (layer 2) climbs: transport::launch.rs:1 `cli`",
                "r: case (layer 0) → transport (layer 1) climbs: case.rs:1 `transport`",
            ]
        );
    }
}
