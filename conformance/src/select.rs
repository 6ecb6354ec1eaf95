//! Case selection: filters on ids, tools and tags, then sharding.
//!
//! Main type: [`Selection`]. `--run GLOB` keeps cases whose id matches any of
//! the globs (all cases when none is given), `--skip GLOB` drops matches,
//! `--tool` keeps any of the named tools, `--tag` keeps cases with any of the
//! named tags. Globs use `/` as a separator: `*` stays within a segment, `**`
//! crosses them (`--run 'apply_patch/**'`). Sharding comes last: case `id`
//! belongs to shard `1 + (h mod N)` where `h` is the first 8 bytes (big
//! endian) of SHA-256 of the id — stable across runs, machines and Rust
//! versions, so a CI matrix of N jobs covers each selected case exactly once.

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use crate::case::Case;

/// Case filters.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct FilterArgs {
    /// Run only cases whose id matches GLOB (`*` within a segment, `**` across); repeatable.
    #[arg(long = "run", value_name = "GLOB")]
    pub run: Vec<String>,
    /// Skip cases whose id matches GLOB; repeatable.
    #[arg(long = "skip", value_name = "GLOB")]
    pub skip: Vec<String>,
    /// Only cases of this tool; repeatable (any of).
    #[arg(long = "tool", value_name = "NAME")]
    pub tool: Vec<String>,
    /// Only cases with this tag; repeatable (any of).
    #[arg(long = "tag", value_name = "TAG")]
    pub tag: Vec<String>,
    /// Only shard I of N (1-based), split by a stable hash of the id, after filtering.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<crate::select::Shard>,
}

impl FilterArgs {
    /// The selection these filters describe.
    pub fn selection(&self) -> Selection {
        Selection {
            run: self.run.clone(),
            skip: self.skip.clone(),
            tools: self.tool.clone(),
            tags: self.tag.clone(),
            shard: self.shard,
        }
    }
}

/// `--shard I/N`: this is shard `index` (1-based) of `total`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// 1..=total.
    pub index: u64,
    /// At least 1.
    pub total: u64,
}

impl std::str::FromStr for Shard {
    type Err = String;
    fn from_str(s: &str) -> Result<Shard, String> {
        let (i, n) = s
            .split_once('/')
            .ok_or_else(|| format!("shard {s:?} is not I/N"))?;
        let index: u64 = i
            .trim()
            .parse()
            .map_err(|_| format!("shard index {i:?} is not a number"))?;
        let total: u64 = n
            .trim()
            .parse()
            .map_err(|_| format!("shard count {n:?} is not a number"))?;
        if total == 0 || index == 0 || index > total {
            return Err(format!("shard {s:?}: need 1 <= I <= N"));
        }
        Ok(Shard { index, total })
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.total)
    }
}

/// The 1-based shard an id belongs to among `total`.
pub fn shard_of(id: &str, total: u64) -> u64 {
    let digest = patchspec_engine::hash::sha256_hex(id.as_bytes());
    // 64 hex digits, always: the first 16 are the digest's first 8 bytes, big-endian.
    let first = u64::from_str_radix(&digest[..16], 16).unwrap_or_default();
    1 + first % total.max(1)
}

/// The filters of a run.
#[derive(Clone, Debug, Default)]
pub struct Selection {
    /// `--run` globs.
    pub run: Vec<String>,
    /// `--skip` globs.
    pub skip: Vec<String>,
    /// `--tool` names.
    pub tools: Vec<String>,
    /// `--tag` names.
    pub tags: Vec<String>,
    /// `--shard`.
    pub shard: Option<Shard>,
}

fn globs(list: &[String]) -> Result<GlobSet, String> {
    let mut b = GlobSetBuilder::new();
    for g in list {
        b.add(
            GlobBuilder::new(g)
                .literal_separator(true)
                .build()
                .map_err(|e| format!("invalid glob {g:?}: {e}"))?,
        );
    }
    b.build().map_err(|e| format!("invalid globs: {e}"))
}

impl Selection {
    /// Is any filter or shard set (a partial run)?
    pub fn is_partial(&self) -> bool {
        !self.run.is_empty()
            || !self.skip.is_empty()
            || !self.tools.is_empty()
            || !self.tags.is_empty()
            || self.shard.is_some()
    }

    /// The selected cases, in corpus (id) order.
    pub fn apply<'a>(&self, cases: &'a [Case]) -> Result<Vec<&'a Case>, String> {
        let run = globs(&self.run)?;
        let skip = globs(&self.skip)?;
        Ok(cases
            .iter()
            .filter(|c| self.run.is_empty() || run.is_match(&c.id))
            .filter(|c| !skip.is_match(&c.id))
            .filter(|c| self.tools.is_empty() || self.tools.contains(&c.tool))
            .filter(|c| self.tags.is_empty() || c.tags.iter().any(|t| self.tags.contains(t)))
            .filter(|c| {
                self.shard
                    .is_none_or(|s| shard_of(&c.id, s.total) == s.index)
            })
            .collect())
    }

    /// A one-line description of the filters, for "no case selected" messages.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        for g in &self.run {
            parts.push(format!("--run {g}"));
        }
        for g in &self.skip {
            parts.push(format!("--skip {g}"));
        }
        for t in &self.tools {
            parts.push(format!("--tool {t}"));
        }
        for t in &self.tags {
            parts.push(format!("--tag {t}"));
        }
        if let Some(s) = self.shard {
            parts.push(format!("--shard {s}"));
        }
        if parts.is_empty() {
            "no filters".into()
        } else {
            parts.join(" ")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_parsing_and_stability() {
        assert_eq!("2/3".parse::<Shard>(), Ok(Shard { index: 2, total: 3 }));
        assert!("0/3".parse::<Shard>().is_err());
        assert!("4/3".parse::<Shard>().is_err());
        assert!("1/0".parse::<Shard>().is_err());
        // Pinned: a change here reshuffles every CI matrix.
        assert_eq!(
            shard_of("apply_patch/update/trailing-space-is-not-fuzzed", 1),
            1
        );
        let spread: std::collections::BTreeSet<u64> =
            (0..50).map(|i| shard_of(&format!("case-{i}"), 4)).collect();
        assert_eq!(spread.len(), 4);
    }
}
