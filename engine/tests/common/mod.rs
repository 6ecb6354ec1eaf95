//! Helpers shared by the engine's integration tests.

use std::collections::BTreeMap;
use std::path::Path;

/// Every entry under `root`, `.patchspec` included: kind, bytes, link target.
pub fn every_entry(root: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap())
            .collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let p = e.path();
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            let ft = e.file_type().unwrap();
            if ft.is_dir() {
                out.insert(format!("{rel}/"), Vec::new());
                walk(root, &p, out);
            } else if ft.is_symlink() {
                let target = std::fs::read_link(&p).unwrap();
                out.insert(
                    format!("{rel}@"),
                    target.to_string_lossy().into_owned().into_bytes(),
                );
            } else if ft.is_file() {
                out.insert(rel, std::fs::read(&p).unwrap());
            } else {
                out.insert(format!("{rel}|"), Vec::new());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}
