//! A directed graph of named nodes whose arrows remember where they come
//! from, and its cycles: the strongly connected components of more than one
//! node (Tarjan's algorithm, iterative), each with one shortest cycle
//! through it for the report.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// Where an arrow was seen: a file, a line, and what there makes it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Site {
    /// The file, relative to the repository root.
    pub file: String,
    /// Its 1-based line.
    pub line: usize,
    /// The path or the declaration that makes the arrow.
    pub what: String,
}

/// Nodes by name; for each arrow, every site that makes it.
#[derive(Debug, Default)]
pub struct Graph {
    nodes: BTreeSet<String>,
    arrows: BTreeMap<(String, String), Vec<Site>>,
}

/// One cycle: the nodes of a strongly connected component, the arrows
/// among them, and one shortest cycle through its first node.
#[derive(Debug)]
pub struct Cycle {
    /// The component's nodes, sorted.
    pub nodes: Vec<String>,
    /// Every arrow between two of them, with its sites.
    pub arrows: Vec<((String, String), Vec<Site>)>,
    /// A shortest closed path from the first node back to it.
    pub example: Vec<String>,
}

impl Graph {
    /// Add a node (arrows add theirs too).
    pub fn node(&mut self, name: &str) {
        self.nodes.insert(name.to_owned());
    }

    /// Add the arrow `from → to`, seen at `site`.
    pub fn arrow(&mut self, from: &str, to: &str, site: Site) {
        self.node(from);
        self.node(to);
        self.arrows
            .entry((from.to_owned(), to.to_owned()))
            .or_default()
            .push(site);
    }

    /// Every arrow with its sites, in order.
    pub fn arrows(&self) -> impl Iterator<Item = (&(String, String), &Vec<Site>)> {
        self.arrows.iter()
    }

    fn successors(&self) -> BTreeMap<&str, Vec<&str>> {
        let mut next: BTreeMap<&str, Vec<&str>> = self
            .nodes
            .iter()
            .map(|n| (n.as_str(), Vec::new()))
            .collect();
        for (from, to) in self.arrows.keys() {
            if from != to {
                next.entry(from).or_default().push(to);
            }
        }
        next
    }

    /// The strongly connected components of more than one node, in order of
    /// their first node.
    pub fn cycles(&self) -> Vec<Cycle> {
        let next = self.successors();
        let mut components: Vec<Vec<String>> = strongly_connected(&next)
            .into_iter()
            .filter(|c| c.len() > 1)
            .map(|c| {
                let mut c: Vec<String> = c.into_iter().map(str::to_owned).collect();
                c.sort();
                c
            })
            .collect();
        components.sort();
        components
            .into_iter()
            .map(|nodes| {
                let inside: BTreeSet<&str> = nodes.iter().map(String::as_str).collect();
                let arrows = self
                    .arrows
                    .iter()
                    .filter(|((a, b), _)| {
                        a != b && inside.contains(a.as_str()) && inside.contains(b.as_str())
                    })
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                let example = shortest_cycle(&next, &inside, &nodes[0]);
                Cycle {
                    nodes,
                    arrows,
                    example,
                }
            })
            .collect()
    }
}

/// Tarjan's algorithm without recursion (a module graph is small, but a
/// recursive walk's depth would be the graph's).
fn strongly_connected<'a>(next: &BTreeMap<&'a str, Vec<&'a str>>) -> Vec<Vec<&'a str>> {
    let mut index: BTreeMap<&str, usize> = BTreeMap::new();
    let mut low: BTreeMap<&str, usize> = BTreeMap::new();
    let mut on_stack: BTreeSet<&str> = BTreeSet::new();
    let mut stack: Vec<&str> = Vec::new();
    let mut out = Vec::new();
    for &root in next.keys() {
        if index.contains_key(root) {
            continue;
        }
        // (node, how many of its successors were looked at)
        let mut work: Vec<(&str, usize)> = vec![(root, 0)];
        while let Some(&(v, k)) = work.last() {
            if k == 0 {
                let i = index.len();
                index.insert(v, i);
                low.insert(v, i);
                stack.push(v);
                on_stack.insert(v);
            }
            if let Some(&w) = next[v].get(k) {
                if let Some(top) = work.last_mut() {
                    top.1 += 1;
                }
                if !index.contains_key(w) {
                    work.push((w, 0));
                } else if on_stack.contains(w) {
                    let lw = index[w].min(low[v]);
                    low.insert(v, lw);
                }
                continue;
            }
            work.pop();
            if let Some(&(parent, _)) = work.last() {
                let lp = low[parent].min(low[v]);
                low.insert(parent, lp);
            }
            if low[v] == index[v] {
                let mut component = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack.remove(w);
                    component.push(w);
                    if w == v {
                        break;
                    }
                }
                out.push(component);
            }
        }
    }
    out
}

/// A shortest path from `start` back to it through `inside` (breadth first).
fn shortest_cycle(
    next: &BTreeMap<&str, Vec<&str>>,
    inside: &BTreeSet<&str>,
    start: &str,
) -> Vec<String> {
    let mut came_from: BTreeMap<&str, &str> = BTreeMap::new();
    let mut queue: VecDeque<&str> = VecDeque::from([start]);
    while let Some(v) = queue.pop_front() {
        for &w in &next[v] {
            if !inside.contains(w) {
                continue;
            }
            if w == start {
                let mut path = vec![start.to_owned()];
                let mut at = v;
                while at != start {
                    path.push(at.to_owned());
                    at = came_from[at];
                }
                path.push(start.to_owned());
                path.reverse();
                return path;
            }
            if !came_from.contains_key(w) {
                came_from.insert(w, v);
                queue.push_back(w);
            }
        }
    }
    Vec::new()
}

impl std::fmt::Display for Cycle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "cycle of {} ({} arrows): {}",
            self.nodes.len(),
            self.arrows.len(),
            self.example.join(" → ")
        )?;
        for ((a, b), sites) in &self.arrows {
            let first = &sites[0];
            let more = match sites.len() {
                1 => String::new(),
                n => format!(" (and {} more)", n - 1),
            };
            writeln!(
                f,
                "  {a} → {b}: {}:{} `{}`{more}",
                first.file, first.line, first.what
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(arrows: &[(&str, &str)]) -> Graph {
        let mut g = Graph::default();
        for (i, (a, b)) in arrows.iter().enumerate() {
            let site = Site {
                file: "f.rs".into(),
                line: i + 1,
                what: format!("{a}->{b}"),
            };
            g.arrow(a, b, site);
        }
        g
    }

    #[test]
    fn a_dag_has_no_cycle() {
        let g = graph(&[("a", "b"), ("a", "c"), ("b", "d"), ("c", "d"), ("d", "e")]);
        assert!(g.cycles().is_empty());
    }

    #[test]
    fn a_self_arrow_is_no_cycle() {
        assert!(graph(&[("a", "a"), ("a", "b")]).cycles().is_empty());
    }

    #[test]
    fn every_cycle_is_found_with_its_arrows_and_a_shortest_path() {
        // a → b → c → a is one component; d ↔ e another; f hangs off both.
        let g = graph(&[
            ("a", "b"),
            ("b", "c"),
            ("c", "a"),
            ("c", "b"),
            ("d", "e"),
            ("e", "d"),
            ("c", "f"),
            ("e", "f"),
        ]);
        let cycles = g.cycles();
        assert_eq!(cycles.len(), 2);
        assert_eq!(cycles[0].nodes, ["a", "b", "c"]);
        assert_eq!(cycles[0].arrows.len(), 4);
        assert_eq!(cycles[0].example, ["a", "b", "c", "a"]);
        assert_eq!(cycles[1].nodes, ["d", "e"]);
        assert_eq!(cycles[1].example, ["d", "e", "d"]);
        let text = cycles[0].to_string();
        assert!(
            text.starts_with("cycle of 3 (4 arrows): a → b → c → a"),
            "{text}"
        );
        assert!(text.contains("  c → a: f.rs:3 `c->a`"), "{text}");
    }

    #[test]
    fn a_long_chain_does_not_recurse() {
        let names: Vec<String> = (0..20_000).map(|i| format!("m{i:05}")).collect();
        let mut arrows: Vec<(&str, &str)> = names
            .windows(2)
            .map(|w| (w[0].as_str(), w[1].as_str()))
            .collect();
        arrows.push((names[names.len() - 1].as_str(), names[0].as_str()));
        let cycles = graph(&arrows).cycles();
        assert_eq!(cycles.len(), 1);
        assert_eq!(cycles[0].nodes.len(), 20_000);
    }
}
