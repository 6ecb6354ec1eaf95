#!/usr/bin/env python3
"""Write hints/items.json: the labelled set of refusals that carry an agent
hint but no diagnosis (docs/diagnostics.md, "Hints on other refusals").

Each item is an apply_patch call on a small project tree built from the
files of base/ (placed as a real project would hold them, with a few
same-name distractors), made the way models get paths and formats wrong,
and labelled with the truth:

- not_found: an Update or Delete of a path with a folder dropped or added,
  a letter case changed, or the right name in the wrong folder; labelled
  with the path the model meant (`meant`).
- parse: a unified diff (git, plain `diff -u`, bare `@@ -1,2 +1,2 @@`, file
  added or deleted), a fenced envelope or diff, a heredoc, a closing fence,
  diff file headers inside an envelope; labelled with `looksLike` (or null
  for texts that are none of these: prose before the envelope).
- already_exists: an Add onto a file of the tree; labelled with the
  directive the hint must suggest.
- absolute: a path written from the workspace root (`{root}` is replaced by
  the test's temporary workspace), labelled with the relative path (or
  null when it lies outside).

Deterministic: run it again and the file is byte-identical.
    python3 engine/tests/diagnostics/generate_hints.py
"""

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))

# Where each base file lives in the project tree.
PLACES = {
    "inventory.py": "app/services/inventory.py",
    "cache.rs": "crates/store/src/cache.rs",
    "api.ts": "web/src/api/api.ts",
    "queue.go": "internal/queue/queue.go",
    "OrderService.java": "src/main/java/com/shop/OrderService.java",
    "report.rb": "lib/billing/report.rb",
    "ringbuf.c": "src/ringbuf.c",
    "deploy.yaml": "deploy/k8s/deploy.yaml",
    "README.md": "README.md",
}
# Same-name and near-name distractors (small files).
DISTRACTORS = {
    "tests/test_inventory.py": "def test_nothing():\n    pass\n",
    "docs/README.md": "# docs\n",
    "web/src/index.ts": "export {};\n",
    "web/test/api.test.ts": "test('x', () => {});\n",
    "internal/queue/queue_test.go": "package queue\n",
    "deploy/staging/values.yaml": "replicas: 1\n",
    "lib/report.rb": "# old report\n",
}


def tree():
    files = {}
    for base, place in PLACES.items():
        with open(os.path.join(HERE, "base", base), encoding="utf-8") as f:
            files[place] = f.read()
    files.update(DISTRACTORS)
    return files


def first_lines(text, n=2):
    return text.split("\n")[:n]


def update_envelope(path, content):
    a, b = first_lines(content)
    return (
        "*** Begin Patch\n*** Update File: %s\n@@\n %s\n-%s\n+%s // edited\n*** End Patch\n"
        % (path, a, b, b)
    )


def delete_envelope(path):
    return "*** Begin Patch\n*** Delete File: %s\n*** End Patch\n" % path


# (asked for, meant, how): every way the path goes wrong.
NOT_FOUND = [
    ("services/inventory.py", "app/services/inventory.py", "folder dropped"),
    ("inventory.py", "app/services/inventory.py", "folders dropped"),
    ("src/app/services/inventory.py", "app/services/inventory.py", "folder added"),
    ("App/Services/inventory.py", "app/services/inventory.py", "case"),
    ("app/models/inventory.py", "app/services/inventory.py", "wrong folder"),
    ("store/src/cache.rs", "crates/store/src/cache.rs", "folder dropped"),
    ("src/cache.rs", "crates/store/src/cache.rs", "folders dropped"),
    ("crates/store/src/Cache.rs", "crates/store/src/cache.rs", "case"),
    ("crates/cache/src/cache.rs", "crates/store/src/cache.rs", "wrong folder"),
    ("src/api/api.ts", "web/src/api/api.ts", "folder dropped"),
    ("web/web/src/api/api.ts", "web/src/api/api.ts", "folder added"),
    ("web/src/API/api.ts", "web/src/api/api.ts", "case"),
    ("queue.go", "internal/queue/queue.go", "folders dropped"),
    ("pkg/queue/queue.go", "internal/queue/queue.go", "wrong folder"),
    ("com/shop/OrderService.java", "src/main/java/com/shop/OrderService.java", "folders dropped"),
    ("main/java/com/shop/OrderService.java", "src/main/java/com/shop/OrderService.java", "folder dropped"),
    ("src/main/java/com/shop/orderservice.java", "src/main/java/com/shop/OrderService.java", "case"),
    ("src/main/java/com/store/OrderService.java", "src/main/java/com/shop/OrderService.java", "wrong folder"),
    ("billing/report.rb", "lib/billing/report.rb", "folder dropped"),
    ("ringbuf.c", "src/ringbuf.c", "folder dropped"),
    ("lib/src/ringbuf.c", "src/ringbuf.c", "folder added"),
    ("SRC/RINGBUF.C", "src/ringbuf.c", "case"),
    ("k8s/deploy.yaml", "deploy/k8s/deploy.yaml", "folder dropped"),
    ("deploy/deploy.yaml", "deploy/k8s/deploy.yaml", "wrong folder"),
    ("readme.md", "README.md", "case"),
    ("project/README.md", "README.md", "folder added"),
    # Two plausible answers: the one meant is ranked second (an honest miss
    # of the first place, kept to measure it).
    ("doc/README.md", "docs/README.md", "wrong folder, another same name at the root"),
]

UNIFIED = [
    (
        "git diff",
        "diff --git a/app/services/inventory.py b/app/services/inventory.py\n"
        "index 3b18e51..a2c4f09 100644\n"
        "--- a/app/services/inventory.py\n+++ b/app/services/inventory.py\n"
        "@@ -1,3 +1,3 @@\n-import dataclasses\n+import dataclasses  # noqa\n",
        "unified_diff",
    ),
    (
        "diff -u with timestamps",
        "--- src/ringbuf.c\t2024-05-01 10:00:00\n+++ src/ringbuf.c\t2024-05-02 11:00:00\n"
        "@@ -10,7 +10,7 @@\n-x\n+y\n",
        "unified_diff",
    ),
    ("bare numbered hunk", "@@ -4,6 +4,6 @@ fn main() {\n-    a();\n+    b();\n", "unified_diff"),
    ("file added", "--- /dev/null\n+++ b/web/src/new.ts\n@@ -0,0 +1,2 @@\n+export const x = 1;\n+\n", "unified_diff"),
    ("file deleted", "--- a/lib/report.rb\n+++ /dev/null\n@@ -1 +0,0 @@\n-# old report\n", "unified_diff"),
    (
        "fenced git diff",
        "```diff\ndiff --git a/README.md b/README.md\n--- a/README.md\n+++ b/README.md\n"
        "@@ -1 +1 @@\n-# billing-api\n+# billing\n```\n",
        "unified_diff",
    ),
    ("Index: header (svn)", "Index: README.md\n===================================================================\n--- README.md\n+++ README.md\n@@ -1 +1 @@\n-a\n+b\n", "unified_diff"),
    (
        "fenced envelope",
        "```\n*** Begin Patch\n*** Delete File: lib/report.rb\n*** End Patch\n```\n",
        "fenced_block",
    ),
    (
        "fenced envelope with a language",
        "```diff\n*** Begin Patch\n*** Delete File: lib/report.rb\n*** End Patch\n```\n",
        "fenced_block",
    ),
    ("tilde fence", "~~~\n*** Begin Patch\n*** Delete File: lib/report.rb\n*** End Patch\n~~~\n", "fenced_block"),
    ("fenced prose", "```python\ndef f():\n    pass\n```\n", "fenced_block"),
    (
        "closing fence only",
        "*** Begin Patch\n*** Delete File: lib/report.rb\n*** End Patch\n```\n",
        "fenced_block",
    ),
    (
        "heredoc",
        "apply_patch <<'EOF'\n*** Begin Patch\n*** Delete File: lib/report.rb\n*** End Patch\nEOF\n",
        "heredoc",
    ),
    ("heredoc unquoted", "cat <<EOF | apply_patch\n*** Begin Patch\n*** Delete File: lib/report.rb\n*** End Patch\nEOF\n", "heredoc"),
    (
        "diff headers inside an envelope",
        "*** Begin Patch\n*** Update File: README.md\n--- a/README.md\n+++ b/README.md\n"
        "@@ -1 +1 @@\n-# billing-api\n+# billing\n*** End Patch\n",
        "unified_diff",
    ),
    (
        "git headers inside an envelope",
        "*** Begin Patch\n*** Update File: README.md\ndiff --git a/README.md b/README.md\n@@\n-# billing-api\n+# billing\n*** End Patch\n",
        "unified_diff",
    ),
    # None of these shapes: no looksLike.
    ("prose before the envelope", "Here is the patch:\n*** Begin Patch\n*** Delete File: lib/report.rb\n*** End Patch\n", None),
    ("YAML front matter", "---\ntitle: x\n---\n", None),
    ("a lowercase begin marker", "*** begin patch\n*** Delete File: lib/report.rb\n*** End Patch\n", None),
]

ABSOLUTE = [
    ("{root}/app/services/inventory.py", "app/services/inventory.py"),
    ("{root}/README.md", "README.md"),
    ("{root}/./src//ringbuf.c", "src/ringbuf.c"),
    ("/etc/passwd", None),
    ("{root}/../outside.txt", None),
    ("/home/user/project/app/services/inventory.py", None),
]


def main():
    files = tree()
    items = []
    for k, (asked, meant, how) in enumerate(NOT_FOUND):
        op = "delete" if k % 4 == 3 else "update"
        patch = delete_envelope(asked) if op == "delete" else update_envelope(asked, files[meant])
        items.append(
            {
                "id": "not_found/%02d" % k,
                "mistake": "%s of %s: %s" % (op, meant, how),
                "params": {"patch": patch},
                "want": {"kind": "not_found", "meant": meant},
            }
        )
    for k, (how, text, shape) in enumerate(UNIFIED):
        items.append(
            {
                "id": "parse/%02d" % k,
                "mistake": how,
                "params": {"patch": text},
                "want": {"kind": "patch_parse_error", "looksLike": shape},
            }
        )
    for k, place in enumerate(sorted(PLACES.values())):
        items.append(
            {
                "id": "already_exists/%02d" % k,
                "mistake": "add over %s" % place,
                "params": {"patch": "*** Begin Patch\n*** Add File: %s\n+new\n*** End Patch\n" % place},
                "want": {"kind": "already_exists", "suggests": "*** Update File: %s" % place},
            }
        )
    for k, (raw, rel) in enumerate(ABSOLUTE):
        items.append(
            {
                "id": "absolute/%02d" % k,
                "mistake": "an absolute path %s" % raw,
                "params": {"patch": "*** Begin Patch\n*** Delete File: %s\n*** End Patch\n" % raw},
                "want": {"kind": "command_failed", "relativePath": rel},
            }
        )
    out = {"files": files, "items": items}
    os.makedirs(os.path.join(HERE, "hints"), exist_ok=True)
    with open(os.path.join(HERE, "hints", "items.json"), "w", encoding="utf-8") as f:
        json.dump(out, f, indent=1, ensure_ascii=False, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
