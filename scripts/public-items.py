#!/usr/bin/env python3
"""Count the public surface of patchspec-engine (default features).

    python3 scripts/public-items.py [--json PATH] [--list]

Builds the crate's rustdoc JSON with the nightly toolchain
(`cargo +nightly rustdoc -p patchspec-engine --lib -- -Z unstable-options
--output-format json`; default features, so the `testing` feature's seams
are not counted) unless --json names one already built, then walks it from
the crate root: every module, and every `pub use` re-export, that a user of
the crate can name.

It prints two figures:

  named items    modules, structs, enums, unions, traits, functions,
                 constants, statics, type aliases and macros reachable
                 from the root (the root module itself not counted; an item
                 re-exported under several paths counted once);
  members        the methods and associated items of those types' inherent
                 impls, the items of the public traits, the public fields
                 of the structs and the variants of the enums.

Trait impls (derives, `From`, `Display` ...) are counted in neither.
With --list, the named items follow, one a line: kind and the shortest
path a user names it by.
"""

import argparse
import json
import os
import subprocess
import sys
from collections import deque

NAMED = {
    "module",
    "struct",
    "enum",
    "union",
    "trait",
    "trait_alias",
    "function",
    "constant",
    "static",
    "type_alias",
    "macro",
}


def build():
    target = os.environ.get("CARGO_TARGET_DIR", "target")
    subprocess.run(
        [
            "cargo", "+nightly", "rustdoc", "-q", "-p", "patchspec-engine", "--lib", "--",
            "-Z", "unstable-options", "--output-format", "json",
        ],
        check=True,
    )
    return os.path.join(target, "doc", "patchspec_engine.json")


def kind_of(item):
    inner = item["inner"]
    return inner if isinstance(inner, str) else next(iter(inner))


def count(doc):
    """The named items (id: the shortest public path that names it) and
    the number of members."""
    index = doc["index"]
    named, members = {}, set()
    seen = set()
    queue = deque([(doc["root"], ())])
    while queue:
        item_id, path = queue.popleft()
        if item_id in seen or str(item_id) not in index:
            continue
        seen.add(item_id)
        item = index[str(item_id)]
        kind = kind_of(item)
        inner = item["inner"][kind] if isinstance(item["inner"], dict) else {}
        if kind in NAMED and item_id != doc["root"]:
            named[item_id] = "::".join(path)
        if kind == "module":
            for child in inner["items"]:
                entry = index.get(str(child))
                if entry is None or kind_of(entry) == "use":
                    queue.append((child, path))
                else:
                    queue.append((child, path + (entry["name"],)))
        elif kind == "use":
            # A re-export is named in its module by the name it gives.
            if inner.get("id") is not None:
                queue.append((inner["id"], path + (inner["name"],)))
        elif kind == "struct":
            shape = inner["kind"]
            if isinstance(shape, dict):
                fields = shape.get("plain", {}).get("fields") or shape.get("tuple") or []
                members.update(f for f in fields if f is not None)
            queue.extend((i, path) for i in inner["impls"])
        elif kind == "union":
            members.update(inner["fields"])
            queue.extend((i, path) for i in inner["impls"])
        elif kind == "enum":
            members.update(inner["variants"])
            queue.extend((i, path) for i in inner["impls"])
        elif kind == "trait":
            members.update(inner["items"])
        elif kind == "impl":
            # Inherent impls only: a trait impl's items are the trait's.
            if inner.get("trait") is None and not inner.get("is_synthetic"):
                members.update(inner["items"])
    return named, len(members)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="an already built rustdoc JSON of the engine")
    parser.add_argument("--list", action="store_true", help="list the named items")
    args = parser.parse_args()
    path = args.json or build()
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    named, members = count(doc)
    print(f"named items: {len(named)}")
    print(f"members (methods, fields, variants): {members}")
    if args.list:
        rows = sorted((path, kind_of(doc["index"][str(i)])) for i, path in named.items())
        for path, kind in rows:
            print(f"  {kind:<10} {path}")


if __name__ == "__main__":
    sys.exit(main())
