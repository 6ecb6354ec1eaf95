//! How similar two lines that differ in content are: an edit distance on a
//! budget, so a typo is told from a different line at bounded cost.

/// How many cells of edit-distance tables one diagnosis may fill.
pub(super) const SIMILARITY_BUDGET: usize = 2_000_000;
/// Differing middles longer than this are not measured (their distance is
/// taken as the longer one's length).
const MAX_MIDDLE: usize = 256;

/// The similarity of two loose forms, in permille (1000: equal), from
/// their edit distance (optimal string alignment: insert, delete,
/// substitute, swap two neighbours) over bytes, and whether they are
/// *close*: at least 4 bytes, and a distance of at most a quarter of the
/// longer. `budget` pays for the table; `None` once it is spent.
pub(super) fn similarity(a: &[u8], b: &[u8], budget: &mut usize) -> Option<(u32, bool)> {
    let n = a.len().max(b.len());
    if n == 0 {
        return Some((1000, false));
    }
    let p = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let s = a[p..]
        .iter()
        .rev()
        .zip(b[p..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (x, y) = (&a[p..a.len() - s], &b[p..b.len() - s]);
    let d = if x.is_empty() || y.is_empty() || x.len() > MAX_MIDDLE || y.len() > MAX_MIDDLE {
        x.len().max(y.len())
    } else {
        let cells = x.len() * y.len();
        if *budget < cells {
            return None;
        }
        *budget -= cells;
        osa_distance(x, y)
    };
    let sim = ((n - d.min(n)) * 1000 / n) as u32;
    Some((sim, n >= 4 && d * 4 <= n))
}

/// How much of two loosely equal lines is byte-identical, in permille:
/// their common prefix and suffix over the longer (a cheap tiebreak).
pub(super) fn raw_closeness(a: &[u8], b: &[u8]) -> u32 {
    let n = a.len().max(b.len()).max(1);
    let p = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let s = a[p..]
        .iter()
        .rev()
        .zip(b[p..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    ((p + s).min(n) * 1000 / n) as u32
}

/// Optimal-string-alignment distance, three rolling rows.
pub(super) fn osa_distance(x: &[u8], y: &[u8]) -> usize {
    let w = y.len() + 1;
    let mut before: Vec<usize> = vec![0; w];
    let mut prev: Vec<usize> = (0..w).collect();
    let mut cur: Vec<usize> = vec![0; w];
    for i in 1..=x.len() {
        cur[0] = i;
        for j in 1..w {
            let cost = usize::from(x[i - 1] != y[j - 1]);
            let mut v = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && x[i - 1] == y[j - 2] && x[i - 2] == y[j - 1] {
                v = v.min(before[j - 2] + 1);
            }
            cur[j] = v;
        }
        std::mem::swap(&mut before, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[w - 1]
}
