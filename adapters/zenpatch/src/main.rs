//! `zenpatch::apply` (crates.io zenpatch, pinned in Cargo.toml) over a
//! virtual file system that crosses the process boundary as JSON.
//!
//! stdin: `{"patch": STRING, "files": {PATH: TEXT, ...}}`; stdout, one line:
//! `{"ok": true, "files": {PATH: TEXT, ...}}` (the whole VFS after the patch)
//! or `{"ok": false, "error": MESSAGE}` (zenpatch's error, Display form).
//! A panic inside zenpatch is not caught: the process dies with status 101,
//! which the adapter reports as a crash. Nothing here touches the disk.

use std::io::Read;

fn main() {
    let mut input = String::new();
    if let Err(e) = std::io::stdin().read_to_string(&mut input) {
        eprintln!("zenpatch-vfs: cannot read stdin: {e}");
        std::process::exit(2);
    }
    let request: serde_json::Value = match serde_json::from_str(&input) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("zenpatch-vfs: stdin is not JSON: {e}");
            std::process::exit(2);
        }
    };
    let Some(patch) = request.get("patch").and_then(|p| p.as_str()) else {
        eprintln!("zenpatch-vfs: no string \"patch\" in the request");
        std::process::exit(2);
    };
    let mut vfs = zenpatch::Vfs::new();
    if let Some(files) = request.get("files").and_then(|f| f.as_object()) {
        for (path, text) in files {
            if let Some(text) = text.as_str() {
                vfs.insert(path.clone(), text.to_string());
            }
        }
    }
    let answer = match zenpatch::apply(patch, &vfs) {
        Ok(files) => serde_json::json!({"ok": true, "files": files}),
        Err(e) => serde_json::json!({"ok": false, "error": e.to_string()}),
    };
    println!("{answer}");
}
