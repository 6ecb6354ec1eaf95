//! One version for every channel: the workspace's `version` (Cargo.toml) is
//! the binary's, the wheel's (pyproject.toml reads it through maturin) and
//! the npm packages' (written in their package.json files, checked here).

use std::path::Path;
use std::process::Command;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the crate is in the workspace")
}

fn package_json(name: &str) -> serde_json::Value {
    let path = repo().join("npm").join(name).join("package.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn the_binary_reports_the_workspace_version() {
    let out = Command::new(env!("CARGO_BIN_EXE_patchspec"))
        .arg("--version")
        .output()
        .expect("patchspec --version runs");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("patchspec {}", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn the_npm_packages_carry_the_workspace_version() {
    let version = env!("CARGO_PKG_VERSION");
    let launcher = package_json("patchspec");
    assert_eq!(launcher["version"], version, "npm/patchspec/package.json");
    let platforms = launcher["optionalDependencies"]
        .as_object()
        .expect("npm/patchspec/package.json has optionalDependencies");
    assert!(!platforms.is_empty());
    for (name, pinned) in platforms {
        assert_eq!(
            pinned, version,
            "npm/patchspec pins {name} at its own version"
        );
        assert_eq!(
            package_json(name)["version"],
            version,
            "npm/{name}/package.json"
        );
    }
}

#[test]
fn the_wheel_takes_its_version_from_cargo() {
    let path = repo().join("pyproject.toml");
    let text = std::fs::read_to_string(&path).expect("pyproject.toml");
    assert!(
        text.contains("dynamic = [\"version\"]"),
        "pyproject.toml must leave the version to maturin (the workspace's)"
    );
    assert!(
        !text
            .lines()
            .any(|l| l.trim_start().starts_with("version =")),
        "pyproject.toml must not write a version of its own"
    );
}
