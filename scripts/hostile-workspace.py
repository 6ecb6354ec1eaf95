#!/usr/bin/env python3
"""Hostile-workspace trials: does the engine ever act on state it did not write?

A workspace may come from a clone, and a clone can carry any file, the
engine's private folder `.patchspec/` included (docs/security.md).
This script plants one hostile shape per fresh workspace: hand-written
journals (`.patchspec/txn/<id>/intent` + `renaming` + `pre-<i>`) whose steps
name files in `.git/`, other workspace files, the private folder, a store,
`../x` and absolute paths; malformed intents; FIFOs, folders and symlinks in
place of each private file and folder; future-dated and huge trash folders;
5,000 planted journals; a journal the engine really wrote (an apply killed
by strace at a rename) in another folder, copied in. Two controls plant
nothing hostile (every engine must pass them: they check the checks).
`--list` names every shape. Each workspace is a `git init`'d folder (one
commit) with a.txt, notes.md, .env, old.txt, src/x.txt, src/Main.java,
patchspec.db (an SQLite file standing for a store) and an empty folder;
things "outside the workspace" live beside it, in the shape's own folder.

For each shape, the whole shape folder (workspace, `.git` and `.patchspec`
included, and the outside victims) is snapshotted: every entry's type,
mode, bytes (SHA-256) and symlink target. Then:
  1. every read-only entry runs, and after each the snapshot must be
     identical (nothing renamed, removed, created or written, not even in
     `.patchspec/`): `call workspace.read_file`, `call read_file`, `call
     grep_file`, `call call_chain`, `apply --dry-run`, `trash`, and `mcp
     --read-only` driven over stdio (initialize, notifications/initialized,
     tools/call grep_file, then EOF);
  2. one write (`apply` editing a.txt) may change a.txt (exit 0: the edit is
     in it; a refusal: a.txt unchanged) and leave the engine's own private
     folders (`.patchspec/`, `.patchspec/txn/`, `.patchspec/trash/`,
     `.patchspec/lock`) where there were none, or remove them when they
     are empty; every planted entry stays as planted, nothing under `.git/`
     changes;
     trash shapes add a write that deletes old.txt (so the trash is pruned):
     the user's recent trash folders must survive it;
  3. `recover` (no --discard) may change only what is under `.patchspec`
     (and orphaned `*.apply-patch.tmp` files): it must not execute a
     foreign journal;
  4. no bricking: a second write (a.txt again) and a read must succeed; if
     they do not, `recover --discard` runs (exit 0, changing only what is
     under `.patchspec`), and then they must.
Every command runs under a timeout (--timeout, default 20 s): a timeout is a
hang, a failure. A shape passes when none of the above was violated.

Prints one line per shape (PASS/FAIL and what changed) and closes with
`hostile-workspace: N passed, N failed`; exit 1 on any failure.

Usage: scripts/hostile-workspace.py BIN [--only NAME[,NAME...]] [--json OUT]
       [--timeout 20] [--work /dev/shm/patchspec-hostile] [--list] [--keep]
"""

import argparse
import hashlib
import json
import os
import shutil
import signal
import sqlite3
import stat
import subprocess
import sys
import time

TEMP_HEX = "0123456789abcdef"
NOW_MS = int(time.time() * 1000)
DAY_MS = 24 * 3600 * 1000
PAYLOAD = b"#!/bin/sh\necho pwned by a planted journal > /tmp/patchspec-hostile-pwned\n"
EVIL_GIT_CONFIG = (b"[core]\n\trepositoryformatversion = 0\n\tbare = false\n"
                   b"\tfsmonitor = \"sh -c 'echo pwned > /tmp/patchspec-hostile-pwned'\"\n")
A_TXT = b"alpha\nbeta\ngamma\ndelta\nepsilon\n"
WRITE1 = "BETA by write 1"
WRITE2 = "DELTA by write 2"


def tmp(path):
    """The engine's temp-file name for `path` (a sibling)."""
    return "%s.%s.apply-patch.tmp" % (path, TEMP_HEX)


def txn_id(k):
    """A transaction id of the committer's form: <millis>-<8 hex>-<bytes>."""
    return "%d-%08x-0" % (NOW_MS - 3600 * 1000 + k, 0x0badc000 + k)


def trash_name(age_ms, hex8, size):
    return "%d-%s-%d" % (NOW_MS - age_ms, hex8, size)


# ---------------------------------------------------------------- planting

class Ctx:
    """One shape's folder: `ws` (the workspace) and `outside` (beside it)."""

    def __init__(self, shape_dir):
        self.dir = shape_dir
        self.ws = os.path.join(shape_dir, "ws")
        self.out = os.path.join(shape_dir, "outside")
        self.trash_write = False   # add the write that deletes old.txt
        self.may_prune = []        # trash folders (ws-relative) that write may remove
        self.user_trash = []       # trash folders (ws-relative) that must survive it
        self.binary = None         # the engine, for shapes planted with its help

    def p(self, rel):
        return os.path.join(self.ws, rel) if isinstance(rel, str) else os.path.join(os.fsencode(self.ws), rel)

    def write(self, rel, data, mode=0o644, base=None):
        path = os.path.join(base, rel) if base else self.p(rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data if isinstance(data, bytes) else data.encode())
        os.chmod(path, mode)
        return path

    def mkdir(self, rel):
        os.makedirs(self.p(rel), exist_ok=True)

    def journal(self, txn, steps=None, raw=None, renaming=True, version=1, extra=None, txn_dir=None):
        """Plant `<txn_dir or ws/.patchspec/txn>/<txn>/intent` (JSON of `steps`, or `raw` bytes)."""
        d = os.path.join(os.fsencode(txn_dir or self.p(".patchspec/txn")),
                         txn if isinstance(txn, bytes) else txn.encode())
        os.makedirs(d, exist_ok=True)
        if raw is None:
            rec = {"version": version, "transaction": os.fsdecode(txn), "steps": steps}
            rec.update(extra or {})
            raw = json.dumps(rec).encode()
        with open(os.path.join(d, b"intent"), "wb") as f:
            f.write(raw)
        if renaming:
            open(os.path.join(d, b"renaming"), "wb").close()
        return os.fsdecode(d)

    def user_trash_folders(self):
        """A few genuine-looking, recent, small trash folders of the user's."""
        names = []
        for age, hex8, rel in [(3 * 3600 * 1000, "1a2b3c4d", "old1.txt"),
                               (DAY_MS, "11111111", "kept.txt"),
                               (3 * DAY_MS, "5e6f7a8b", "src/old2.txt")]:
            data = ("trashed %s\n" % rel).encode()
            name = trash_name(age, hex8, len(data))
            self.write(".patchspec/trash/%s/%s" % (name, rel), data)
            names.append(".patchspec/trash/" + name)
        self.user_trash += names
        return names


SHAPES = []


class Skip(Exception):
    """A shape that cannot be planted here (say, strace is missing)."""


def shape(name, what):
    def register(fn):
        SHAPES.append((name, what, fn))
        return fn
    return register


# Controls: nothing hostile; every engine must pass them (they check the checks).

@shape("control-clean", "control: nothing planted")
def _(c):
    pass


@shape("control-user-trash", "control: only the user's own recent trash folders (+ a trashing write)")
def _(c):
    c.user_trash_folders()
    c.trash_write = True


# Step kinds x targets: into .git/, onto other workspace files, onto the
# private folder, onto a store.

@shape("update-git-hook", "update step: pre=payload.sh (root) renamed to .git/hooks/post-checkout")
def _(c):
    c.write("payload.sh", PAYLOAD, 0o755)
    c.journal("evil", [{"op": "update", "path": ".git/hooks/post-checkout", "temp": "nope", "pre": "payload.sh"}])


@shape("update-git-hook-wellformed", "update step with committer-form names: pre-0 of its folder -> .git/hooks/post-checkout")
def _(c):
    t = txn_id(1)
    d = c.journal(t, [{"op": "update", "path": ".git/hooks/post-checkout",
                       "temp": tmp(".git/hooks/post-checkout"), "pre": ".patchspec/txn/%s/pre-0" % t}])
    c.write("pre-0", PAYLOAD, 0o755, base=d)


@shape("update-env-overwrite", "update step: pre-0 (attacker's .env) renamed over .env")
def _(c):
    t = txn_id(2)
    d = c.journal(t, [{"op": "update", "path": ".env", "temp": tmp(".env"), "pre": ".patchspec/txn/%s/pre-0" % t}])
    c.write("pre-0", "API_KEY=attacker-controlled\n", base=d)


@shape("update-a-txt-rollback", "an interrupted-looking commit of a.txt: its 'pre-image' is the attacker's")
def _(c):
    t = txn_id(3)
    d = c.journal(t, [{"op": "update", "path": "a.txt", "temp": tmp("a.txt"), "pre": ".patchspec/txn/%s/pre-0" % t}])
    c.write("pre-0", A_TXT.replace(b"epsilon", b"epsilon PWNED"), base=d)


@shape("update-no-renaming", "update step, no renaming marker: temp=notes.md, pre=.env (both unlinked)")
def _(c):
    c.journal(txn_id(4), [{"op": "update", "path": "src/x.txt", "temp": "notes.md", "pre": ".env"}], renaming=False)


@shape("update-private-trash", "update step onto a file in the user's trash")
def _(c):
    user = c.user_trash_folders()
    t = txn_id(5)
    d = c.journal(t, [{"op": "update", "path": user[1] + "/kept.txt", "temp": "nope",
                       "pre": ".patchspec/txn/%s/pre-0" % t}])
    c.write("pre-0", "replaced\n", base=d)


@shape("update-store", "update step: pre-0 (another database) renamed over the store patchspec.db")
def _(c):
    t = txn_id(6)
    d = c.journal(t, [{"op": "update", "path": "patchspec.db", "temp": tmp("patchspec.db"),
                       "pre": ".patchspec/txn/%s/pre-0" % t}])
    c.write("pre-0", b"SQLite format 3\x00" + b"\x00" * 4080, base=d)


@shape("create-temp-notes", "create step with temp=notes.md (unlinks it)")
def _(c):
    c.journal(txn_id(7), [{"op": "create", "path": "zz.txt", "temp": "notes.md"}], renaming=False)


@shape("create-path-notes", "create step path=notes.md, renaming: 'un-creates' notes.md")
def _(c):
    c.journal(txn_id(8), [{"op": "create", "path": "notes.md", "temp": tmp("notes.md")}])


@shape("create-temp-git-head", "create step with temp=.git/HEAD")
def _(c):
    c.journal(txn_id(9), [{"op": "create", "path": "y.txt", "temp": ".git/HEAD"}])


@shape("create-path-git-config", "create step path=.git/config, renaming")
def _(c):
    c.journal(txn_id(10), [{"op": "create", "path": ".git/config", "temp": tmp(".git/config")}])


@shape("create-temp-store", "create step with temp=patchspec.db (the store)")
def _(c):
    c.journal(txn_id(11), [{"op": "create", "path": "x.db", "temp": "patchspec.db"}])


@shape("create-private-trash", "create step with temp=a file in the user's trash")
def _(c):
    user = c.user_trash_folders()
    c.journal(txn_id(12), [{"op": "create", "path": "q.txt", "temp": user[1] + "/kept.txt"}])


@shape("delete-git-config", "delete step: trash=evilcfg (root) renamed to .git/config (core.fsmonitor)")
def _(c):
    c.write("evilcfg", EVIL_GIT_CONFIG)
    c.journal("evil", [{"op": "delete", "path": ".git/config", "trash": "evilcfg"}])


@shape("delete-git-config-wellformed", "delete step with the committer's trash path -> .git/config")
def _(c):
    t = txn_id(13)
    c.journal(t, [{"op": "delete", "path": ".git/config", "trash": ".patchspec/trash/%s/.git/config" % t}])
    c.write(".patchspec/trash/%s/.git/config" % t, EVIL_GIT_CONFIG)


@shape("delete-git-hook", "delete step: a trashed 'pre-commit' put back into .git/hooks/")
def _(c):
    t = txn_id(14)
    c.journal(t, [{"op": "delete", "path": ".git/hooks/pre-commit",
                   "trash": ".patchspec/trash/%s/.git/hooks/pre-commit" % t}])
    c.write(".patchspec/trash/%s/.git/hooks/pre-commit" % t, PAYLOAD, 0o755)


@shape("delete-env", "delete step: a trashed .env renamed over .env")
def _(c):
    t = txn_id(15)
    c.journal(t, [{"op": "delete", "path": ".env", "trash": ".patchspec/trash/%s/.env" % t}])
    c.write(".patchspec/trash/%s/.env" % t, "API_KEY=attacker-controlled\n")


@shape("delete-store", "delete step: a trashed database renamed over the store patchspec.db")
def _(c):
    t = txn_id(16)
    c.journal(t, [{"op": "delete", "path": "patchspec.db", "trash": ".patchspec/trash/%s/patchspec.db" % t}])
    c.write(".patchspec/trash/%s/patchspec.db" % t, b"SQLite format 3\x00" + b"\x01" * 4080)


@shape("delete-private-trash", "delete step onto a file in the user's trash")
def _(c):
    user = c.user_trash_folders()
    t = txn_id(17)
    c.journal(t, [{"op": "delete", "path": user[1] + "/kept.txt", "trash": "payload.txt"}])
    c.write("payload.txt", "replaced\n")


@shape("create_dir-git", "create_dir step naming .git/refs/tags (an empty folder of git's)")
def _(c):
    c.journal(txn_id(18), [{"op": "create_dir", "path": ".git/refs/tags"}])


@shape("create_dir-user", "create_dir step naming the user's empty folder emptydir/")
def _(c):
    c.journal(txn_id(19), [{"op": "create_dir", "path": "emptydir"}])


@shape("create_dir-private", "create_dir step naming an empty folder in .patchspec/")
def _(c):
    c.mkdir(".patchspec/notes")
    c.journal(txn_id(20), [{"op": "create_dir", "path": ".patchspec/notes"}])


# Escapes.

@shape("step-dotdot", "steps naming ../x (outside) and notes.md: the unfinishable one kept the other re-running")
def _(c):
    c.write("x", "outside file\n", base=c.dir)
    c.write("payload.sh", PAYLOAD, 0o755)
    c.journal(txn_id(21), [{"op": "create", "path": "zz.txt", "temp": "notes.md"},
                           {"op": "update", "path": "../x", "temp": "../x.tmp", "pre": "payload.sh"}])


@shape("step-absolute", "steps naming an absolute path outside and src/x.txt")
def _(c):
    victim = c.write("victim.txt", "outside victim\n", base=c.out)
    c.write("payload.sh", PAYLOAD, 0o755)
    c.journal(txn_id(22), [{"op": "create", "path": "zz.txt", "temp": "src/x.txt"},
                           {"op": "delete", "path": victim, "trash": "payload.sh"}])


# Malformed intents.

@shape("intent-bad-json", "intent cut short (not JSON)")
def _(c):
    c.journal(txn_id(23), raw=b'{"version":1,"transaction":"x","steps":[{"op":"create","path":"zz","temp":"notes.md"}')


@shape("intent-wrong-version", "intent of version 99 with a harmful step")
def _(c):
    c.journal(txn_id(24), [{"op": "create", "path": "zz.txt", "temp": "notes.md"}], version=99)


@shape("intent-v2-forged-seal", "version-2 intent with a made-up seal, committer-form names onto .env")
def _(c):
    t = txn_id(25)
    d = c.journal(t, [{"op": "update", "path": ".env", "temp": tmp(".env"), "pre": ".patchspec/txn/%s/pre-0" % t}],
                  version=2, extra={"seal": "ab" * 32})
    c.write("pre-0", "API_KEY=attacker-controlled\n", base=d)


@shape("intent-v2-unsealed", "version-2 intent without a seal (an engine without a key), onto notes.md")
def _(c):
    c.journal(txn_id(26), [{"op": "create", "path": "zz.txt", "temp": "notes.md"}], version=2)


@shape("intent-huge", "a valid, harmful intent padded to 32 MB")
def _(c):
    c.journal(txn_id(27), [{"op": "create", "path": "zz.txt", "temp": "notes.md"}],
              extra={"padding": "x" * (32 << 20)})


@shape("intent-many-steps", "200,000 create_dir steps, then one onto notes.md")
def _(c):
    steps = [{"op": "create_dir", "path": "nope/%d" % i} for i in range(200000)]
    steps.append({"op": "create", "path": "zz.txt", "temp": "notes.md"})
    c.journal(txn_id(28), steps)


@shape("intent-deep-nesting", "steps nested 200,000 arrays deep")
def _(c):
    c.journal(txn_id(29), raw=b'{"version":1,"transaction":"x","steps":' + b"[" * 200000 + b"]" * 200000 + b"}")


@shape("intent-nonutf8-name", "a step path with a byte that is not UTF-8")
def _(c):
    c.journal(txn_id(30), raw=b'{"version":1,"transaction":"x","steps":[{"op":"create","path":"\xff.txt","temp":"notes.md"}]}')


@shape("intent-lone-surrogate", "a step path with a lone UTF-16 surrogate escape")
def _(c):
    c.journal(txn_id(31), raw=b'{"version":1,"transaction":"x","steps":[{"op":"create","path":"\\udcff.txt","temp":"notes.md"}]}')


@shape("txn-subfolder", "a harmful journal whose folder also holds a subfolder")
def _(c):
    d = c.journal(txn_id(32), [{"op": "create", "path": "zz.txt", "temp": "notes.md"}])
    c.write("sub/file.txt", "in a subfolder\n", base=d)


@shape("txn-symlink-inside", "pre-0 is a symlink leading outside, renamed over src/x.txt")
def _(c):
    t = txn_id(33)
    os.makedirs(os.path.join(c.out, "victimdir"))
    c.write("victimdir/secret.txt", "user's file outside\n", base=c.out)
    d = c.journal(t, [{"op": "update", "path": "src/x.txt", "temp": tmp("src/x.txt"),
                       "pre": ".patchspec/txn/%s/pre-0" % t}])
    os.symlink(os.path.join(c.out, "victimdir"), os.path.join(d, "pre-0"))


@shape("txn-nonutf8-file", "a harmful journal whose folder holds a file named b'\\xff'")
def _(c):
    d = c.journal(txn_id(34), [{"op": "create", "path": "zz.txt", "temp": "notes.md"}])
    with open(os.path.join(os.fsencode(d), b"\xff"), "wb") as f:
        f.write(b"x")


@shape("txn-nonutf8-dirname", "a harmful journal in a folder named b'\\xff\\xfe'")
def _(c):
    c.journal(b"\xff\xfe", [{"op": "create", "path": "zz.txt", "temp": "notes.md"}])


@shape("committed-leftover", "a 'committed' record and pre-0 (a finished commit's leftovers), no intent")
def _(c):
    t = txn_id(35)
    d = c.journal(t, [{"op": "create", "path": "zz.txt", "temp": "notes.md"}])
    os.rename(os.path.join(d, "intent"), os.path.join(d, "committed"))
    c.write("pre-0", "left over\n", base=d)


@shape("leftover-no-intent", "renaming marker and pre-0, intent absent")
def _(c):
    t = txn_id(36)
    d = c.journal(t, [])
    os.unlink(os.path.join(d, "intent"))
    c.write("pre-0", "left over\n", base=d)


# The intent file replaced by other kinds of entry.

@shape("renaming-fifo", "a harmful journal whose renaming marker is a FIFO")
def _(c):
    d = c.journal(txn_id(43), [{"op": "create", "path": "notes.md", "temp": tmp("notes.md")}], renaming=False)
    os.mkfifo(os.path.join(d, "renaming"))


@shape("txn-entry-symlink-outside", "a transaction 'folder' that is a symlink to a harmful journal outside")
def _(c):
    t = txn_id(44)
    d = c.journal(t, [{"op": "create", "path": "zz.txt", "temp": "notes.md"}], txn_dir=os.path.join(c.out, "txn"))
    c.mkdir(".patchspec/txn")
    os.symlink(d, c.p(".patchspec/txn/" + t))


@shape("replayed-genuine-journal", "a journal the engine really wrote (apply killed at a rename) in another "
                                   "folder, copied in: it names notes.md and .env")
def _(c):
    if not shutil.which("strace"):
        raise Skip("strace not installed")
    scratch = os.path.join(c.dir, "scratch")
    c.write("notes.md", "the scratch folder's notes\n", base=scratch)
    c.write(".env", "API_KEY=scratch\n", base=scratch)
    p = c.write("replay.patch", patch(["*** Update File: notes.md", "@@", "-the scratch folder's notes", "+edited",
                                       "*** Update File: .env", "@@", "-API_KEY=scratch", "+API_KEY=edited"]),
                base=c.out)
    calls = "rename,renameat,renameat2"
    txn = os.path.join(scratch, ".patchspec", "txn")
    for n in range(1, 6):
        subprocess.run(["strace", "-f", "-o", "/dev/null", "-e", "trace=" + calls,
                        "-e", "inject=%s:signal=SIGKILL:when=%d" % (calls, n), c.binary, "apply", p, "--root", scratch],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
        left = [d for d in (os.listdir(txn) if os.path.isdir(txn) else [])
                if os.path.lexists(os.path.join(txn, d, "intent"))]
        if left:
            break
        shutil.rmtree(scratch)
        c.write("notes.md", "the scratch folder's notes\n", base=scratch)
        c.write(".env", "API_KEY=scratch\n", base=scratch)
    else:
        raise Skip("no kill left a journal with an intent")
    os.makedirs(c.p(".patchspec/txn"))
    shutil.copytree(os.path.join(txn, left[0]), c.p(".patchspec/txn/" + left[0]), symlinks=True)
    shutil.rmtree(scratch)


@shape("intent-fifo", "intent is a FIFO")
def _(c):
    d = c.journal(txn_id(37), [])
    os.unlink(os.path.join(d, "intent"))
    os.mkfifo(os.path.join(d, "intent"))


@shape("intent-dir", "intent is a folder (with a file in it)")
def _(c):
    d = c.journal(txn_id(38), [])
    os.unlink(os.path.join(d, "intent"))
    c.write("intent/x", "x\n", base=d)


@shape("intent-devzero", "intent is a symlink to /dev/zero")
def _(c):
    d = c.journal(txn_id(39), [])
    os.unlink(os.path.join(d, "intent"))
    os.symlink("/dev/zero", os.path.join(d, "intent"))


@shape("intent-symlink-outside", "intent is a symlink to a harmful intent outside the workspace")
def _(c):
    t = txn_id(40)
    d = c.journal(t, [])
    os.unlink(os.path.join(d, "intent"))
    target = c.write("evil-intent.json", json.dumps(
        {"version": 1, "transaction": t, "steps": [{"op": "create", "path": "zz.txt", "temp": "notes.md"}]}), base=c.out)
    os.symlink(target, os.path.join(d, "intent"))


# The private folder, txn/, lock and trash replaced.

@shape("private-file", ".patchspec is a regular file")
def _(c):
    c.write(".patchspec", "not a folder\n")


@shape("private-symlink-outside", ".patchspec is a symlink to a folder outside holding a harmful journal")
def _(c):
    priv = os.path.join(c.out, "priv")
    c.journal(txn_id(41), [{"op": "create", "path": "zz.txt", "temp": "notes.md"}],
              txn_dir=os.path.join(priv, "txn"))
    c.write("keep.txt", "the user's file outside\n", base=priv)
    os.symlink(priv, c.p(".patchspec"))


@shape("private-symlink-user", ".patchspec is a symlink to the user's folder inner/ (with an empty inner/txn/)")
def _(c):
    c.mkdir("inner/txn")
    c.write("inner/readme.txt", "the user's folder\n")
    os.symlink("inner", c.p(".patchspec"))


@shape("txn-file", ".patchspec/txn is a regular file")
def _(c):
    c.write(".patchspec/txn", "not a folder\n")


@shape("txn-symlink-outside", ".patchspec/txn is a symlink to a folder outside holding a harmful journal")
def _(c):
    c.journal(txn_id(42), [{"op": "create", "path": "zz.txt", "temp": "notes.md"}],
              txn_dir=os.path.join(c.out, "txn"))
    c.mkdir(".patchspec")
    os.symlink(os.path.join(c.out, "txn"), c.p(".patchspec/txn"))


@shape("txn-symlink-user", ".patchspec/txn is a symlink to the user's src/")
def _(c):
    c.mkdir(".patchspec")
    os.symlink("../src", c.p(".patchspec/txn"))


@shape("txn-stray-file", "a regular file directly in .patchspec/txn/")
def _(c):
    c.write(".patchspec/txn/README", "a file of the user's\n")


@shape("lock-fifo", ".patchspec/lock is a FIFO")
def _(c):
    c.mkdir(".patchspec")
    os.mkfifo(c.p(".patchspec/lock"))


@shape("lock-symlink-outside", ".patchspec/lock is a symlink to a file outside")
def _(c):
    c.mkdir(".patchspec")
    os.symlink(c.write("victim.txt", "outside victim\n", base=c.out), c.p(".patchspec/lock"))


@shape("lock-dir", ".patchspec/lock is a folder")
def _(c):
    c.write(".patchspec/lock/x", "x\n")


@shape("trash-file", ".patchspec/trash is a regular file (+ a write that trashes old.txt)")
def _(c):
    c.write(".patchspec/trash", "not a folder\n")
    c.trash_write = True


@shape("trash-future-huge", "trash folder 9999999999999-aaaaaaaa-99999999999999 beside the user's (+ a trashing write)")
def _(c):
    c.user_trash_folders()
    name = "9999999999999-aaaaaaaa-99999999999999"
    c.write(".patchspec/trash/%s/planted.txt" % name, "planted\n")
    c.may_prune.append(".patchspec/trash/" + name)
    c.trash_write = True


@shape("trash-huge-past", "a trash folder an hour old claiming 99999999999999 bytes (+ a trashing write)")
def _(c):
    c.user_trash_folders()
    name = trash_name(3600 * 1000, "bbbbbbbb", 99999999999999)
    c.write(".patchspec/trash/%s/planted.txt" % name, "planted\n")
    c.may_prune.append(".patchspec/trash/" + name)
    c.trash_write = True


@shape("trash-symlink-folder", "an 8-day-old trash 'folder' that is a symlink outside (+ a trashing write)")
def _(c):
    c.user_trash_folders()
    c.write("victimdir/secret.txt", "user's file outside\n", base=c.out)
    name = trash_name(8 * DAY_MS, "cccccccc", 5)
    os.symlink(os.path.join(c.out, "victimdir"), c.p(".patchspec/trash/" + name))
    c.may_prune.append(".patchspec/trash/" + name)
    c.trash_write = True


@shape("trash-old-symlink-inside", "an 8-day-old trash folder holding a symlink outside (+ a trashing write)")
def _(c):
    c.user_trash_folders()
    c.write("victimdir/secret.txt", "user's file outside\n", base=c.out)
    name = trash_name(8 * DAY_MS, "dddddddd", 5)
    c.write(".patchspec/trash/%s/f.txt" % name, "old\n")
    os.symlink(os.path.join(c.out, "victimdir"), c.p(".patchspec/trash/%s/link" % name))
    c.may_prune.append(".patchspec/trash/" + name)
    c.trash_write = True


@shape("many-txn", "5,000 planted journals, each un-creating one of 5,000 user files")
def _(c):
    for i in range(5000):
        c.write("many/f%04d.txt" % i, "user file %d\n" % i)
        c.journal(txn_id(1000 + i), [{"op": "create", "path": "many/f%04d.txt" % i,
                                      "temp": tmp("many/f%04d.txt" % i)}])


@shape("orphan-temp-lookalike", "a user file named like an orphaned temp (notes.md.<16 hex>.apply-patch.tmp)")
def _(c):
    c.write(tmp("notes.md"), "the user's file\n")


# ---------------------------------------------------------------- snapshots

def file_sha(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while True:
            b = f.read(1 << 20)
            if not b:
                break
            h.update(b)
    return h.hexdigest()[:16]


def snapshot(root):
    """bytes path (relative to root) -> (type, mode, sha or target) of every entry, symlinks not followed."""
    out = {}

    def walk(d, rel):
        try:
            names = os.listdir(d)
        except OSError as e:
            out[rel + b"/<unlistable>"] = ("error", 0, str(e.errno))
            return
        for n in names:
            p = os.path.join(d, n)
            r = rel + b"/" + n if rel else n
            st = os.lstat(p)
            m = st.st_mode
            if stat.S_ISREG(m):
                out[r] = ("file", stat.S_IMODE(m), file_sha(p))
            elif stat.S_ISDIR(m):
                out[r] = ("dir", stat.S_IMODE(m), "")
                walk(p, r)
            elif stat.S_ISLNK(m):
                out[r] = ("symlink", 0, os.readlink(p))
            elif stat.S_ISFIFO(m):
                out[r] = ("fifo", stat.S_IMODE(m), "")
            else:
                out[r] = ("other", m, "")
    walk(os.fsencode(root), b"")
    return out


def diff(a, b):
    """[(path, before, after)] of every entry that differs."""
    return [(p, a.get(p), b.get(p)) for p in sorted(set(a) | set(b)) if a.get(p) != b.get(p)]


def show_path(p):
    return repr(os.fsdecode(p))[1:-1]


def describe(changes, limit=6):
    parts = []
    for p, before, after in changes[:limit]:
        if before is None:
            parts.append("+%s (%s)" % (show_path(p), after[0]))
        elif after is None:
            parts.append("-%s (%s)" % (show_path(p), before[0]))
        elif before[0] != after[0]:
            parts.append("~%s (%s -> %s)" % (show_path(p), before[0], after[0]))
        elif before[1] != after[1]:
            parts.append("~%s (mode %o -> %o)" % (show_path(p), before[1], after[1]))
        else:
            parts.append("~%s (%s)" % (show_path(p), "target" if before[0] == "symlink" else "bytes"))
    if len(changes) > limit:
        parts.append("(+%d more)" % (len(changes) - limit))
    return ", ".join(parts)


def under(p, prefix):
    return p == prefix or p.startswith(prefix + b"/")


PRIVATE = b"ws/.patchspec"
# The engine's own private entries: a write may leave them where there were
# none, and may remove them when they are empty folders (a commit removes
# the `.patchspec/txn` and `.patchspec` it finds empty after it).
OWN = {b"ws/.patchspec": "dir", b"ws/.patchspec/txn": "dir", b"ws/.patchspec/trash": "dir",
       b"ws/.patchspec/lock": "file"}


def write_violations(changes, snap, extra_ok=()):
    """What a write changed beyond a.txt and the engine's own private folders."""
    bad = []
    removed = {p for p, _, after in changes if after is None}
    for p, before, after in changes:
        if p == b"ws/a.txt" and before and after and before[0] == after[0] == "file":
            continue
        if before is None and OWN.get(p) == after[0]:
            continue
        if (after is None and before[0] == "dir" and OWN.get(p) == "dir"
                and all(q in removed and OWN.get(q) == "dir" for q in snap if under(q, p) and q != p)):
            continue
        if any(ok(p, before, after) for ok in extra_ok):
            continue
        bad.append((p, before, after))
    return bad


def recover_violations(changes):
    """What recover changed outside .patchspec (orphaned temp files may go)."""
    bad = []
    for p, before, after in changes:
        if under(p, PRIVATE):
            continue
        if (after is None and before[0] == "file" and p.endswith(b".apply-patch.tmp")
                and under(p, b"ws") and not under(p, b"ws/.git")):
            continue
        bad.append((p, before, after))
    return bad


# ---------------------------------------------------------------- running

def run(cmd, timeout, stdin=None, cwd=None):
    """(rc or None on timeout, seconds, stdout, stderr)."""
    t = time.monotonic()
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, cwd=cwd)
    try:
        out, err = p.communicate(stdin, timeout=timeout)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, err = p.communicate()
        rc = None
    return rc, time.monotonic() - t, out, err


MCP_INPUT = "".join(json.dumps(m) + "\n" for m in [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize",
     "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "hostile-workspace", "version": "1"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
     "params": {"name": "grep_file", "arguments": {"pattern": "alpha"}}},
]).encode()


def patch(lines):
    return "\n".join(["*** Begin Patch"] + lines + ["*** End Patch", ""])


def build_template(work):
    t = os.path.join(work, "template")
    if os.path.exists(t):
        shutil.rmtree(t)
    os.makedirs(os.path.join(t, "src"))
    os.makedirs(os.path.join(t, "emptydir"))
    files = {"a.txt": A_TXT, "notes.md": b"# notes\nthe user's notes\n", ".env": b"API_KEY=sk-live-user-secret\n",
             "src/x.txt": b"x\n", "old.txt": b"deleted by the trashing write of the trash shapes\n",
             "src/Main.java": b"class Main {\n  void run() { helper(); }\n  void helper() {}\n}\n"}
    for rel, data in files.items():
        with open(os.path.join(t, rel), "wb") as f:
            f.write(data)
    db = sqlite3.connect(os.path.join(t, "patchspec.db"))
    db.execute("pragma application_id = %d" % 0x50535452)
    db.execute("create table calls (id integer primary key, tool text)")
    db.execute("insert into calls (tool) values ('apply_patch')")
    db.commit()
    db.close()
    git = ["git", "-c", "user.name=hostile", "-c", "user.email=h@example.invalid", "-c", "init.defaultBranch=main"]
    subprocess.run(git + ["init", "-q", t], check=True)
    subprocess.run(git + ["-C", t, "add", "-A"], check=True)
    subprocess.run(git + ["-C", t, "commit", "-q", "-m", "clone"], check=True)
    os.makedirs(os.path.join(t, ".git", "refs", "tags"), exist_ok=True)
    return t


def run_shape(name, fn, binary, template, work, patches, timeout):
    shape_dir = os.path.join(work, "shapes", name)
    if os.path.lexists(shape_dir):
        shutil.rmtree(shape_dir)
    os.makedirs(shape_dir)
    ws = os.path.join(shape_dir, "ws")
    shutil.copytree(template, ws, symlinks=True)
    os.makedirs(os.path.join(shape_dir, "outside"), exist_ok=True)
    c = Ctx(shape_dir)
    c.binary = binary
    try:
        fn(c)
    except Skip as e:
        return {"shape": name, "passed": None, "skipped": str(e), "problems": [], "steps": []}
    problems, steps = [], []
    snap = snapshot(shape_dir)

    def step(label, cmd, stdin=None):
        rc, secs, out, err = run(cmd, timeout, stdin)
        steps.append({"step": label, "rc": rc, "seconds": round(secs, 3),
                      "stderr": err.decode(errors="replace")[:400]})
        if rc is None:
            problems.append("%s: no exit within %g s (hang)" % (label, timeout))
        return rc, out

    def a_txt():
        try:
            with open(c.p("a.txt"), "rb") as f:
                return f.read()
        except OSError:
            return None

    # 1. Read-only entries: nothing may change.
    reads = [
        ("workspace.read_file", [binary, "call", "workspace.read_file", '{"path":"a.txt"}', "--root", ws]),
        ("read_file", [binary, "call", "read_file", '{"relativePath":"a.txt"}', "--root", ws]),
        ("grep_file", [binary, "call", "grep_file", '{"pattern":"alpha"}', "--root", ws]),
        ("call_chain", [binary, "call", "call_chain", '{"method":"Main.run"}', "--root", ws]),
        ("apply --dry-run", [binary, "apply", patches["write1"], "--dry-run", "--root", ws]),
        ("trash", [binary, "trash", "--root", ws]),
    ]
    read_rcs = []
    for label, cmd in reads + [("mcp --read-only", [binary, "mcp", "--root", ws, "--read-only"])]:
        rc, _ = step(label, cmd, MCP_INPUT if label.startswith("mcp") else None)
        read_rcs.append(rc)
        new = snapshot(shape_dir)
        changes = diff(snap, new)
        if changes:
            problems.append("%s wrote: %s" % (label, describe(changes)))
        snap = new

    # 2. One write: only a.txt and the engine's own new private folders.
    before_a = a_txt()
    rc, _ = step("apply (a.txt)", [binary, "apply", patches["write1"], "--root", ws])
    new = snapshot(shape_dir)
    bad = write_violations(diff(snap, new), snap)
    if bad:
        problems.append("the write changed: %s" % describe(bad))
    after_a = a_txt()
    if rc == 0 and (after_a is None or WRITE1.encode() not in after_a):
        problems.append("the write exited 0 but its edit is not in a.txt")
    if rc not in (0, None) and after_a != before_a:
        problems.append("the write failed (exit %s) but a.txt changed" % rc)
    write1_rc = rc
    snap = new

    if c.trash_write:
        trash_before = dict(snap)

        def new_trash_folder(p, before, after):
            parts = p.split(b"/")
            return (before is None and len(parts) >= 4 and parts[:3] == [b"ws", b".patchspec", b"trash"]
                    and b"/".join(parts[:4]) not in trash_before)

        def pruned_planted(p, before, after):
            return after is None and any(under(p, ("ws/" + m).encode()) for m in c.may_prune)

        prune_ok = [lambda p, b, a: p == b"ws/old.txt" and a is None, new_trash_folder, pruned_planted]
        rc, _ = step("apply (delete old.txt)", [binary, "apply", patches["trash"], "--root", ws])
        new = snapshot(shape_dir)
        bad = write_violations(diff(snap, new), snap, prune_ok)
        if bad:
            problems.append("the trashing write changed: %s" % describe(bad))
        gone = [u for u in c.user_trash if ("ws/" + u).encode() not in new]
        if gone:
            problems.append("the user's trash folders pruned: %d of %d" % (len(gone), len(c.user_trash)))
        if rc == 0 and os.path.lexists(c.p("old.txt")):
            problems.append("the trashing write exited 0 but old.txt is still there")
        snap = new

    # 3. recover without --discard: never executes a foreign journal.
    rc, _ = step("recover", [binary, "recover", "--root", ws])
    new = snapshot(shape_dir)
    bad = recover_violations(diff(snap, new))
    if bad:
        problems.append("recover changed: %s" % describe(bad))
    recover_rc = rc
    snap = new

    # 4. No bricking: a write and a read work, at worst after recover --discard.
    def usable(tag):
        nonlocal snap
        rc, _ = step("apply (a.txt again)%s" % tag, [binary, "apply", patches["write2"], "--root", ws])
        new = snapshot(shape_dir)
        bad = write_violations(diff(snap, new), snap)
        if bad:
            problems.append("the second write%s changed: %s" % (tag, describe(bad)))
        snap = new
        content = a_txt()
        if rc != 0 or content is None or WRITE2.encode() not in content:
            return False, "write exit %s" % rc
        rc, out = step("workspace.read_file%s" % tag,
                       [binary, "call", "workspace.read_file", '{"path":"a.txt"}', "--root", ws])
        new = snapshot(shape_dir)
        changes = diff(snap, new)
        if changes:
            problems.append("the read%s wrote: %s" % (tag, describe(changes)))
        snap = new
        if rc != 0 or WRITE2.encode() not in out:
            return False, "read exit %s" % rc
        return True, ""

    ok, why = usable("")
    discarded = None
    if not ok:
        rc, _ = step("recover --discard", [binary, "recover", "--root", ws, "--discard"])
        discarded = rc
        new = snapshot(shape_dir)
        bad = recover_violations(diff(snap, new))
        if bad:
            problems.append("recover --discard changed: %s" % describe(bad))
        if rc != 0:
            problems.append("recover --discard exited %s" % rc)
        snap = new
        ok, why2 = usable(" after --discard")
        if not ok:
            problems.append("bricked: %s; after recover --discard: %s" % (why, why2))
    return {"shape": name, "passed": not problems, "problems": problems, "steps": steps,
            "read_rcs": read_rcs, "write_rc": write1_rc, "recover_rc": recover_rc,
            "discard_rc": discarded}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bin", metavar="BIN", nargs="?", help="the patchspec binary")
    ap.add_argument("--only", action="append", default=[], help="run only these shapes (NAME or NAME,NAME; repeatable)")
    ap.add_argument("--json", help="write every shape's steps, exit codes and problems here")
    ap.add_argument("--timeout", type=float, default=20.0, help="seconds any one command may take (default 20)")
    ap.add_argument("--work", default="/dev/shm/patchspec-hostile", help="scratch folder (emptied first)")
    ap.add_argument("--list", action="store_true", help="list the shapes and exit")
    ap.add_argument("--keep", action="store_true", help="keep each shape's folder for inspection")
    args = ap.parse_args()
    if args.list:
        for name, what, _ in SHAPES:
            print("%-28s %s" % (name, what))
        return
    if not args.bin:
        ap.error("BIN is required")
    only = {n for o in args.only for n in o.split(",") if n}
    unknown = only - {n for n, _, _ in SHAPES}
    if unknown:
        sys.exit("unknown shape(s): %s (see --list)" % ", ".join(sorted(unknown)))
    binary = os.path.abspath(args.bin)
    work = os.path.abspath(args.work)
    if os.path.exists(work):
        shutil.rmtree(work)
    os.makedirs(os.path.join(work, "shapes"))
    template = build_template(work)
    patches = {}
    for key, text in [("write1", patch(["*** Update File: a.txt", "@@", " alpha", "-beta", "+" + WRITE1])),
                      ("write2", patch(["*** Update File: a.txt", "@@", " gamma", "-delta", "+" + WRITE2])),
                      ("trash", patch(["*** Delete File: old.txt"]))]:
        patches[key] = os.path.join(work, key + ".patch")
        with open(patches[key], "w") as f:
            f.write(text)
    results = []
    started = time.monotonic()
    for name, what, fn in SHAPES:
        if only and name not in only:
            continue
        t = time.monotonic()
        r = run_shape(name, fn, binary, template, work, patches, args.timeout)
        r["what"] = what
        r["seconds"] = round(time.monotonic() - t, 2)
        results.append(r)
        if r["passed"] is None:
            print("SKIP %-28s %s" % (name, r["skipped"]), flush=True)
            continue
        note = "" if all(rc == 0 for rc in r["read_rcs"]) else " [reads exit %s]" % ",".join(
            "T" if rc is None else str(rc) for rc in r["read_rcs"])
        print("%s %-28s %s%s" % ("PASS" if r["passed"] else "FAIL", name,
                                 "; ".join(r["problems"]) if r["problems"] else "nothing but the write changed",
                                 note), flush=True)
        if not args.keep:
            shutil.rmtree(os.path.join(work, "shapes", name), ignore_errors=True)
    passed = sum(r["passed"] is True for r in results)
    failed = sum(r["passed"] is False for r in results)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"binary": binary, "seconds": round(time.monotonic() - started, 1),
                       "passed": passed, "failed": failed, "shapes": results}, f, indent=2)
    skipped = [r["shape"] for r in results if r["passed"] is None]
    if skipped:
        print("skipped (not counted): %s" % ", ".join(skipped))
    print("hostile-workspace: %d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
