#!/usr/bin/env python3
"""Regenerate the labelled set of failing edits in items/ from the files in base/.

Each item is a realistic file and an edit that a model got wrong in one known
way, made by taking a correct edit of a region of the file and mutating it
the way models do (dropping trailing whitespace, re-indenting, copying
line-number prefixes from a read output, replaying an edit...). The label
(`cause`, and `line`: the 1-based line of the file on disk where the edit's
first expected line is, or null when nothing resembles it) is known by
construction. Deterministic: `python3 generate.py` rewrites items/*.json
byte for byte. The harness is ../diagnostics.rs; it only reads items/.
"""

import difflib
import hashlib
import json
import os
import random
import re
import unicodedata

HERE = os.path.dirname(os.path.abspath(__file__))
BASE = os.path.join(HERE, "base")
OUT = os.path.join(HERE, "items")

PATHS = {
    "inventory.py": "src/inventory.py",
    "cache.rs": "src/cache.rs",
    "api.ts": "src/routes/api.ts",
    "queue.go": "internal/queue/queue.go",
    "OrderService.java": "src/main/java/com/example/shop/OrderService.java",
    "ringbuf.c": "lib/ringbuf.c",
    "deploy.yaml": "k8s/deploy.yaml",
    "report.rb": "app/report.rb",
    "README.md": "README.md",
}
# Real files of hundreds to thousands of lines (base/large/, see its
# NOTICE.md). Items on them store the file as `base` plus `fileEdits`
# instead of inline `content`, and `eol` when the file is CRLF.
LARGE = {
    "large/smallvec.rs": "src/smallvec.rs",
    "large/grammar.js": "grammar/grammar.js",
    "large/node.c": "lib/src/node.c",
    "large/unicode.py": "scripts/unicode.py",
    "large/DESIGN.md": "docs/DESIGN.md",
}
PATHS.update(LARGE)
COMMENT = {
    ".js": " // checked",
    ".py": "  # checked",
    ".rs": " // checked",
    ".ts": " // checked",
    ".go": " // checked",
    ".java": " // checked",
    ".c": " /* checked */",
    ".yaml": "  # checked",
    ".rb": "  # checked",
    ".md": " (checked)",
}


def load(names=None):
    files = {}
    for name in sorted(names if names is not None else set(PATHS) - set(LARGE)):
        with open(os.path.join(BASE, name), encoding="utf-8", newline="") as f:
            files[name] = f.read()
    return files


def split(content):
    """Line contents as the engine sees them (endings and one CR removed)."""
    body = content[:-1] if content.endswith("\n") else content
    if body == "" and content == "":
        return []
    out = []
    for line in body.split("\n"):
        out.append(line[:-1] if line.endswith("\r") else line)
    return out


def join(lines, nl="\n"):
    return nl.join(lines) + nl


def occurrences(lines, seq):
    m = len(seq)
    return [i for i in range(len(lines) - m + 1) if lines[i : i + m] == seq]


def sha(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def informative(line):
    return len(line.strip()) >= 6


def changed(line, ext):
    """A plausible edit of a line: bump its first number, else annotate it."""
    m = re.search(r"\d+", line)
    if m:
        return line[: m.start()] + str(int(m.group()) + 1) + line[m.end() :]
    return line + COMMENT[ext]


class Region:
    """A correct hunk: lines r..r+k of the file, line c changed."""

    def __init__(self, name, lines, r, k, c):
        self.name = name
        self.ext = os.path.splitext(name)[1]
        self.lines = lines
        self.r, self.k, self.c = r, k, c
        self.old = lines[r : r + k]
        self.new_line = changed(lines[c], self.ext)

    def body(self, old=None):
        """Hunk body lines (with their ' '/'-'/'+' prefix) from old-side texts."""
        old = old if old is not None else self.old
        out = []
        for i, text in enumerate(old):
            if self.r + i == self.c:
                out.append("-" + text)
                out.append("+" + self.new_line)
            else:
                out.append(" " + text)
        return out

    def new_side(self):
        return [self.new_line if self.r + i == self.c else t for i, t in enumerate(self.old)]


def envelope(path, hunks, end_of_file=False):
    text = "*** Begin Patch\n*** Update File: " + path + "\n"
    for body in hunks:
        text += "@@\n" + "\n".join(body) + "\n"
        if end_of_file:
            text += "*** End of File\n"
    return text + "*** End Patch\n"


def pick(rng, files, want, k_range=(4, 6), tries=400):
    """A region of some file satisfying want(lines, r, k) -> c or None."""
    names = sorted(files)
    for _ in range(tries):
        name = rng.choice(names)
        lines = split(files[name])
        k = rng.randint(*k_range)
        if len(lines) < k + 2:
            continue
        r = rng.randrange(0, len(lines) - k)
        old = lines[r : r + k]
        if len(occurrences(lines, old)) != 1:
            continue
        if sum(informative(l) for l in old) < 2:
            continue
        c = want(name, lines, r, k)
        if c is None:
            continue
        if not informative(lines[c]):
            continue
        return Region(name, lines, r, k, c)
    raise SystemExit("no region found for a mutation; loosen its constraints")


def first_informative_after_first(name, lines, r, k):
    cands = [i for i in range(r + 1, r + k) if informative(lines[i])]
    return cands[0] if cands else None


def ap_item(kind, region, content, patch, line, mistake, sha_map=None, path=None):
    params = {"patch": patch}
    if sha_map:
        params["expectedSha256ByPath"] = sha_map
    return {
        "id": "",
        "tool": "apply_patch",
        "cause": kind,
        "line": line,
        "mistake": mistake,
        "path": path or PATHS[region.name],
        "content": content,
        "params": params,
    }


def still_fails(content, old_side):
    return not occurrences(split(content), old_side)


# --------------------------------------------------------------------------
# apply_patch mutations: each returns an item or None (not applicable)


def m_trailing(rng, files, variant):
    reg = pick(rng, files, first_informative_after_first)
    lines = list(reg.lines)
    target = rng.choice([i for i in range(reg.r, reg.r + reg.k) if lines[i].strip()])
    if variant % 2 == 0:
        # The file has trailing whitespace the model's copy dropped.
        lines[target] = lines[target] + rng.choice(["  ", " ", "\t", "   "])
        content = join(lines)
        patch = envelope(PATHS[reg.name], [reg.body()])
        mistake = "the file has trailing whitespace on line %d; the hunk dropped it" % (target + 1)
    else:
        old = list(reg.old)
        old[target - reg.r] += " "
        content = files[reg.name]
        patch = envelope(PATHS[reg.name], [reg.body(old)])
        mistake = "the hunk adds a trailing space to line %d" % (target + 1)
    return ap_item("trailing_whitespace", reg, content, patch, reg.r + 1, mistake)


def indented(name, lines, r, k):
    if sum(1 for l in lines[r : r + k] if l[:1] in (" ", "\t")) < 2:
        return None
    return first_informative_after_first(name, lines, r, k)


def m_indent(rng, files, variant):
    reg = pick(rng, files, indented)
    old = list(reg.old)
    if any(l.startswith("\t") for l in old):
        old = [re.sub(r"^\t+", lambda m: "    " * len(m.group()), l) for l in old]
        mistake = "tabs in the file, spaces in the hunk"
    elif variant % 2 == 0:
        old = [re.sub(r"^( +)", lambda m: " " * (len(m.group()) // 2), l) for l in old]
        mistake = "the hunk halves the indentation width"
    else:
        i = next(i for i, l in enumerate(old) if l.startswith(" "))
        old[i] = "    " + old[i]
        mistake = "one line of the hunk is indented one level too deep"
    if old == reg.old:
        return None
    patch = envelope(PATHS[reg.name], [reg.body(old)])
    return ap_item("indentation", reg, None, patch, reg.r + 1, mistake)


def m_endings(rng, files, variant):
    reg = pick(rng, files, first_informative_after_first)
    body = [b + "\r" for b in reg.body()]
    patch = envelope(PATHS[reg.name], [body])
    return ap_item(
        "line_endings",
        reg,
        None,
        patch,
        reg.r + 1,
        "the hunk's lines end with CR (CRLF content pasted into an LF envelope)",
    )


QUOTES = {"'": ("\u2018", "\u2019"), '"': ("\u201c", "\u201d")}


def curly(text):
    out = []
    opened = {"'": False, '"': False}
    for ch in text:
        if ch in QUOTES:
            out.append(QUOTES[ch][1] if opened[ch] else QUOTES[ch][0])
            opened[ch] = not opened[ch]
        else:
            out.append(ch)
    return "".join(out)


def m_lookalike(rng, files, variant):
    kind = variant % 5
    if kind == 0:
        # Straight quotes in the file, curly quotes in the hunk.
        def want(name, lines, r, k):
            q = [i for i in range(r, r + k) if ('"' in lines[i] or "'" in lines[i])]
            return first_informative_after_first(name, lines, r, k) if q else None

        reg = pick(rng, files, want)
        old = list(reg.old)
        i = next(i for i, l in enumerate(old) if '"' in l or "'" in l)
        old[i] = curly(old[i])
        patch = envelope(PATHS[reg.name], [reg.body(old)])
        return ap_item("unicode_lookalike", reg, None, patch, reg.r + 1, "curly quotes in the hunk")
    if kind == 1:
        # Typographic characters in the file (README), straightened in the hunk.
        files1 = {"README.md": files["README.md"]}

        def want(name, lines, r, k):
            q = [i for i in range(r, r + k) if re.search("[\u2019\u201c\u201d\u2014]", lines[i])]
            return q[0] + 1 if q and q[0] + 1 < r + k and informative(lines[q[0] + 1]) else first_informative_after_first(name, lines, r, k) if q else None

        reg = pick(rng, files1, want, k_range=(3, 4))
        old = [
            l.replace("\u2019", "'").replace("\u201c", '"').replace("\u201d", '"').replace("\u2014", "-")
            for l in reg.old
        ]
        if old == reg.old:
            return None
        patch = envelope(PATHS[reg.name], [reg.body(old)])
        return ap_item(
            "unicode_lookalike", reg, None, patch, reg.r + 1, "the file's typographic quotes/dashes straightened in the hunk"
        )
    if kind == 2:
        # A non-breaking space in the file where the hunk has a space.
        reg = pick(rng, files, first_informative_after_first)
        lines = list(reg.lines)
        i = next(
            (i for i in range(reg.r, reg.r + reg.k) if i != reg.c and re.search(r"\S \S", lines[i])),
            None,
        )
        if i is None:
            return None
        m = re.search(r"\S( )\S", lines[i])
        lines[i] = lines[i][: m.start(1)] + "\u00a0" + lines[i][m.end(1) :]
        patch = envelope(PATHS[reg.name], [reg.body()])
        return ap_item(
            "unicode_lookalike", reg, join(lines), patch, reg.r + 1, "a non-breaking space in the file"
        )
    if kind == 3:
        # The file is in NFD (saved on macOS), the hunk in NFC.
        reg = pick(rng, files, first_informative_after_first)
        lines = list(reg.lines)
        i = next(i for i in range(reg.r, reg.r + reg.k) if i != reg.c and lines[i].strip())
        accented = lines[i] + COMMENT[reg.ext].replace("checked", "caf\u00e9 r\u00e9sum\u00e9")
        lines[i] = unicodedata.normalize("NFD", accented)
        old = list(reg.old)
        old[i - reg.r] = unicodedata.normalize("NFC", accented)
        patch = envelope(PATHS[reg.name], [reg.body(old)])
        return ap_item("unicode_lookalike", reg, join(lines), patch, reg.r + 1, "NFD in the file, NFC in the hunk")
    # An en dash or minus sign where the file has a hyphen.
    def want(name, lines, r, k):
        q = [i for i in range(r, r + k) if "-" in lines[i]]
        return first_informative_after_first(name, lines, r, k) if q else None

    reg = pick(rng, files, want)
    old = list(reg.old)
    i = next(i for i, l in enumerate(old) if "-" in l)
    old[i] = old[i].replace("-", rng.choice(["\u2013", "\u2212", "\u2010"]), 1)
    patch = envelope(PATHS[reg.name], [reg.body(old)])
    return ap_item("unicode_lookalike", reg, None, patch, reg.r + 1, "a dash look-alike in the hunk")


def prefix_fn(variant):
    return [
        lambda n: "%6d\t" % n,
        lambda n: "%d: " % n,
        lambda n: "%5d\u2192" % n,
        lambda n: "%d | " % n,
    ][variant % 4]


def m_prefix(rng, files, variant):
    reg = pick(rng, files, first_informative_after_first)
    fmt = prefix_fn(variant)
    old = [fmt(reg.r + 1 + i) + t for i, t in enumerate(reg.old)]
    patch = envelope(PATHS[reg.name], [reg.body(old)])
    return ap_item(
        "line_number_prefix", reg, None, patch, reg.r + 1, "line numbers copied from a read output (%r)" % fmt(7)
    )


def m_blank_missing(rng, files, variant):
    def want(name, lines, r, k):
        blanks = [i for i in range(r + 1, r + k - 1) if lines[i].strip() == ""]
        if not blanks:
            return None
        c = [i for i in range(r + 1, r + k) if informative(lines[i]) and i not in blanks]
        return c[0] if c else None

    reg = pick(rng, files, want, k_range=(4, 7))
    blank = next(i for i in range(reg.r + 1, reg.r + reg.k - 1) if reg.lines[i].strip() == "")
    old = [t for i, t in enumerate(reg.old) if reg.r + i != blank]
    reg2 = reg
    body = []
    for i, t in enumerate(reg.old):
        if reg.r + i == blank:
            continue
        if reg.r + i == reg.c:
            body += ["-" + t, "+" + reg.new_line]
        else:
            body.append(" " + t)
    if not still_fails(files[reg.name], old):
        return None
    patch = envelope(PATHS[reg.name], [body])
    return ap_item("blank_line_missing", reg2, None, patch, reg.r + 1, "the hunk leaves out the blank line %d" % (blank + 1))


def m_blank_extra(rng, files, variant):
    def want(name, lines, r, k):
        if any(l.strip() == "" for l in lines[r : r + k]):
            return None
        return first_informative_after_first(name, lines, r, k)

    reg = pick(rng, files, want)
    at = rng.randrange(1, reg.k)  # after old line `at - 1`
    body = reg.body()
    # Position in body: count body entries before old line `at`.
    pos = 0
    seen = 0
    while seen < at:
        if not body[pos].startswith("+"):
            seen += 1
        pos += 1
    while pos < len(body) and body[pos].startswith("+"):
        pos += 1
    body.insert(pos, " ")
    patch = envelope(PATHS[reg.name], [body])
    return ap_item("blank_line_extra", reg, None, patch, reg.r + 1, "the hunk has a blank line the file does not")


def m_literal_nl(rng, files, variant):
    reg = pick(rng, files, first_informative_after_first, k_range=(4, 6))
    ctx = [i for i in range(reg.k - 1) if reg.r + i != reg.c and reg.r + i + 1 != reg.c]
    if not ctx:
        return None
    j = rng.choice(ctx)
    body = []
    i = 0
    while i < reg.k:
        t = reg.old[i]
        if i == j:
            body.append(" " + t + "\\n" + reg.old[i + 1])
            i += 2
            continue
        if reg.r + i == reg.c:
            body += ["-" + t, "+" + reg.new_line]
        else:
            body.append(" " + t)
        i += 1
    patch = envelope(PATHS[reg.name], [body])
    return ap_item(
        "literal_newline_escape", reg, None, patch, reg.r + 1, "two lines joined by a literal \\n in one hunk line"
    )


def m_already(rng, files, variant):
    reg = pick(rng, files, first_informative_after_first)
    lines = list(reg.lines)
    lines[reg.c] = reg.new_line
    content = join(lines)
    patch = envelope(PATHS[reg.name], [reg.body()])
    return ap_item("already_applied", reg, content, patch, reg.r + 1, "the edit was applied in an earlier turn and replayed")


def m_earlier(rng, files, variant):
    def want(name, lines, r, k):
        # Hunk 0 changes line r (old side r-1..r+1); hunk 1 covers r..r+k-1 and changes its last line.
        if r < 1 or not informative(lines[r]) or not informative(lines[r + k - 1]):
            return None
        return r + k - 1

    reg = pick(rng, files, want, k_range=(4, 5))
    lines = reg.lines
    a_r = reg.r - 1
    a_old = lines[a_r : a_r + 3]
    if len(occurrences(lines, a_old)) != 1:
        return None
    a_new = changed(lines[reg.r], reg.ext)
    hunk0 = [" " + a_old[0], "-" + a_old[1], "+" + a_new, " " + a_old[2]]
    hunk1 = reg.body()
    patch = envelope(PATHS[reg.name], [hunk0, hunk1])
    item = ap_item(
        "changed_by_earlier_hunk",
        reg,
        None,
        patch,
        reg.r + 1,
        "hunk 1 quotes line %d as it was before hunk 0 changed it" % (reg.r + 1),
    )
    item["hunkIndex"] = 1
    return item


def m_file_changed(rng, files, variant):
    reg = pick(rng, files, first_informative_after_first)
    lines = list(reg.lines)
    # Someone else changed a context line of the region after the model read the file.
    ctx = [i for i in range(reg.r, reg.r + reg.k) if i != reg.c and informative(lines[i])]
    i = rng.choice(ctx)
    lines[i] = lines[i] + COMMENT[reg.ext].replace("checked", "reviewed")
    shift = 0
    if variant % 2 == 1:
        # ... and added lines above it.
        at = rng.randrange(0, reg.r + 1)
        lines[at:at] = ["", COMMENT[reg.ext].strip().replace("checked", "added by a teammate")]
        shift = 2
    content = join(lines)
    patch = envelope(PATHS[reg.name], [reg.body()])
    return ap_item(
        "file_changed",
        reg,
        content,
        patch,
        reg.r + 1 + shift,
        "the file changed after the model read it (hash given)",
        sha_map={PATHS[reg.name]: sha(files[reg.name])},
    )


def m_content(rng, files, variant):
    reg = pick(rng, files, first_informative_after_first)
    ctx = [i for i in range(reg.r, reg.r + reg.k) if i != reg.c and informative(reg.lines[i])]
    i = rng.choice(ctx)
    old = list(reg.old)
    t = old[i - reg.r]
    words = list(re.finditer(r"[A-Za-z_]{3,}", t))
    if not words:
        return None
    w = rng.choice(words)
    old[i - reg.r] = t[: w.start()] + w.group() + "s" + t[w.end() :]
    patch = envelope(PATHS[reg.name], [reg.body(old)])
    sha_map = None
    if variant % 2 == 1:
        sha_map = {PATHS[reg.name]: sha(files[reg.name])}
    return ap_item(
        "content_differs",
        reg,
        None,
        patch,
        reg.r + 1,
        "the hunk misquotes an identifier on line %d" % (i + 1),
        sha_map=sha_map,
    )


def m_nothing(rng, files, variant):
    reg = pick(rng, files, first_informative_after_first)
    others = sorted(n for n in files if n != reg.name and os.path.splitext(n)[1] != reg.ext)
    target = others[variant % len(others)]
    patch = envelope(PATHS[target], [reg.body()])
    item = ap_item("no_similar_region", reg, files[target], patch, None, "a hunk meant for " + reg.name, path=PATHS[target])
    return item


def m_eof(rng, files, variant):
    reg = pick(rng, files, first_informative_after_first)
    if reg.r + reg.k >= len(reg.lines):
        return None
    patch = envelope(PATHS[reg.name], [reg.body()], end_of_file=True)
    return ap_item("not_at_end_of_file", reg, None, patch, reg.r + 1, "*** End of File on a hunk in the middle")


# --------------------------------------------------------------------------
# workspace_write_patch mutations


def wp_item(kind, reg, content, start, expected, new_lines, line, mistake, op="replace"):
    change = {"operation": op, "startLine": start, "endLine": start + len(expected) - 1, "expectedOriginalLines": expected}
    if op == "replace":
        change["newLines"] = new_lines
    return {
        "id": "",
        "tool": "workspace_write_patch",
        "cause": kind,
        "line": line,
        "mistake": mistake,
        "path": PATHS[reg.name],
        "content": content,
        "params": {"files": [{"docPath": PATHS[reg.name].lower(), "originalSha256": sha(content), "changes": [change]}]},
    }


def wp(rng, files, variant, kind):
    reg = pick(rng, files, indented if kind == "indentation" else first_informative_after_first, k_range=(2, 4))
    content = files[reg.name]
    exp = list(reg.old)
    new = reg.new_side()
    start = reg.r + 1
    line = start
    mistake = ""
    op = "replace" if variant % 3 else "delete"
    if kind == "trailing_whitespace":
        lines = list(reg.lines)
        i = next(i for i in range(reg.r, reg.r + reg.k) if lines[i].strip())
        lines[i] += "  "
        content = join(lines)
        mistake = "the file line has trailing spaces the expected line dropped"
    elif kind == "indentation":
        if any(l.startswith("\t") for l in exp):
            exp = [re.sub(r"^\t+", lambda m: "    " * len(m.group()), l) for l in exp]
        else:
            exp = [re.sub(r"^( +)", lambda m: " " * (len(m.group()) // 2), l) for l in exp]
        if exp == reg.old:
            return None
        mistake = "the expected lines are re-indented"
    elif kind == "line_endings":
        content = join(reg.lines, "\r\n")
        exp = [l + "\r" for l in exp]
        mistake = "a CRLF file split on LF: the expected lines keep their CR"
    elif kind == "unicode_lookalike":
        i = next((i for i, l in enumerate(exp) if '"' in l or "'" in l), None)
        if i is None:
            i = next((i for i, l in enumerate(exp) if "-" in l), None)
            if i is None:
                return None
            exp[i] = exp[i].replace("-", "\u2013", 1)
        else:
            exp[i] = curly(exp[i])
        mistake = "look-alike characters in the expected lines"
    elif kind == "line_number_prefix":
        fmt = prefix_fn(variant)
        exp = [fmt(start + i) + t for i, t in enumerate(exp)]
        mistake = "line-number prefixes copied into expectedOriginalLines"
    elif kind == "lines_shifted":
        delta = rng.choice([-3, -2, -1, 1, 2, 4, 7])
        if not (1 <= start + delta and start + delta + len(exp) - 1 <= len(reg.lines)):
            return None
        if reg.lines[reg.r + delta : reg.r + delta + len(exp)] == exp:
            return None
        start += delta
        mistake = "stale line numbers: the lines moved by %d" % -delta
    elif kind == "already_applied":
        if op == "delete":
            return None
        lines = list(reg.lines)
        lines[reg.r : reg.r + reg.k] = new
        content = join(lines)
        mistake = "the change was applied already and is sent again"
    elif kind == "content_differs":
        i = next(i for i, l in enumerate(exp) if informative(l))
        words = list(re.finditer(r"[A-Za-z_]{3,}", exp[i]))
        if not words:
            return None
        w = words[0]
        exp[i] = exp[i][: w.start()] + w.group() + "s" + exp[i][w.end() :]
        mistake = "an identifier misquoted in the expected lines"
    elif kind == "no_similar_region":
        others = sorted(n for n in files if n != reg.name and os.path.splitext(n)[1] != reg.ext)
        other = split(files[others[variant % len(others)]])
        for r in range(0, len(other) - len(exp)):
            cand = other[r : r + len(exp)]
            if sum(informative(l) for l in cand) == len(cand):
                exp = cand
                break
        line = None
        mistake = "expected lines copied from another file"
    return wp_item(kind, reg, content, start, exp, new, line, mistake, op)


# --------------------------------------------------------------------------
# Mutations on the large real files: short hunks (one or two lines), content
# typos with nothing else to anchor on, CRLF files, several matches, and two
# mistakes at once (the primary cause then follows the documented rule,
# C-diag-causes: content_differs first when present, else the cause of the
# most rows, ties in the table's order).


def loose(text):
    return re.sub(r"\s+", "", text)


def osa(a, b, limit):
    """Optimal-string-alignment distance, or limit + 1 when it exceeds limit."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    prev2 = None
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            v = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                v = min(v, prev2[j - 2] + 1)
            cur[j] = v
        if min(cur) > limit:
            return limit + 1
        prev2, prev = prev, cur
    return prev[-1]


def typo(rng, line):
    """The line with one identifier of 4+ letters misspelt, or None."""
    words = [w for w in re.finditer(r"[A-Za-z_][A-Za-z0-9_]{3,}", line)]
    if not words:
        return None
    w = rng.choice(words)
    t = w.group()
    op = rng.randrange(4)
    i = rng.randrange(1, len(t) - 1)
    if op == 0:
        t2 = t[:i] + t[i + 1 :]  # a letter dropped
    elif op == 1 and t[i] != t[i + 1]:
        t2 = t[:i] + t[i + 1] + t[i] + t[i + 2 :]  # two letters swapped
    elif op == 2:
        t2 = t[:i] + t[i] + t[i:]  # a letter doubled
    else:
        vowels = "aeiou"
        j = next((k for k in range(1, len(t)) if t[k] in vowels), None)
        if j is None:
            return None
        t2 = t[:j] + rng.choice([v for v in vowels if v != t[j]]) + t[j + 1 :]
    return line[: w.start()] + t2 + line[w.end() :]


def unambiguous_typo(lines, at, text):
    """No other line of the file is as close to the misspelt line as its own."""
    own = osa(loose(text), loose(lines[at]), 12)
    for i, l in enumerate(lines):
        if i != at and osa(loose(text), loose(l), own) <= own:
            return False
    return True


def short(line):
    return 0 < len(line.strip()) <= 3


def substantive_line(line):
    return len(line.strip()) >= 12 and re.search(r"[A-Za-z_]{4,}", line) is not None


def new_side_absent(content, body):
    """The hunk's new side is not in the file (else it is, rightly, already_applied)."""
    new = [b[1:] for b in body if b[:1] in (" ", "+")]
    return not occurrences(split(content), new)


def big_region(rng, big, k, want, tries=4000):
    names = sorted(big)
    for _ in range(tries):
        name = rng.choice(names)
        lines = split(big[name])
        r = rng.randrange(0, len(lines) - k - 1)
        if len(occurrences(lines, lines[r : r + k])) != 1:
            continue
        c = want(lines, r)
        if c is None:
            continue
        return Region(name, lines, r, k, c)
    raise SystemExit("no large region found; loosen the constraints")


def m_big_typo(rng, big, variant):
    """One- or two-line hunks whose only informative lines are misspelt."""
    shape = variant % 4
    if shape == 0:
        k, want = 1, lambda L, r: r if substantive_line(L[r]) else None
    elif shape == 1:
        k, want = 2, lambda L, r: r if substantive_line(L[r]) and substantive_line(L[r + 1]) else None
    elif shape == 2:
        # A misspelt line after a short one (`}`, `));`).
        k, want = 2, lambda L, r: r + 1 if short(L[r]) and substantive_line(L[r + 1]) else None
    else:
        # A misspelt line between short ones.
        k, want = 3, lambda L, r: r + 1 if short(L[r]) and substantive_line(L[r + 1]) and short(L[r + 2]) else None
    reg = big_region(rng, big, k, want)
    old = list(reg.old)
    targets = [reg.c - reg.r] + ([1] if shape == 1 else [])
    for t in targets:
        m = typo(rng, old[t])
        if m is None or m == old[t] or not unambiguous_typo(reg.lines, reg.r + t, m):
            return None
        old[t] = m
    if not still_fails(big[reg.name], old) or not new_side_absent(big[reg.name], reg.body(old)):
        return None
    patch = envelope(PATHS[reg.name], [reg.body(old)])
    what = ["a one-line hunk", "a two-line hunk, both lines", "a line after a short one", "a line between short ones"][shape]
    return ap_item("content_differs", reg, None, patch, reg.r + 1, "%s misspelt (nothing else to anchor on)" % what)


def m_big_short_ws(rng, big, variant):
    """One- or two-line hunks with an invisible mistake."""
    k = 1 + variant % 2
    reg = big_region(rng, big, k, lambda L, r: r if all(substantive_line(l) for l in L[r : r + k]) and L[r].startswith("  ") else None)
    old = list(reg.old)
    kind = ["trailing_whitespace", "indentation", "inner_whitespace"][variant % 3]
    if kind == "trailing_whitespace":
        old[0] += " "
    elif kind == "indentation":
        old[0] = old[0][2:]
    else:
        m = re.search(r"([,=]) (\S)", old[0])
        if not m:
            return None
        old[0] = old[0][: m.start() + 1] + old[0][m.start() + 2 :]
    if not still_fails(big[reg.name], old):
        return None
    patch = envelope(PATHS[reg.name], [reg.body(old)])
    return ap_item(kind, reg, None, patch, reg.r + 1, "a %d-line hunk with a %s mistake" % (k, kind))


def m_big_blank_after_short(rng, big, variant):
    """`}` / (blank dropped) / `/// doc` / `fn ...`: the blank after a short first line."""
    def want(L, r):
        if short(L[r]) and L[r + 1].strip() == "" and substantive_line(L[r + 2]) and substantive_line(L[r + 3]):
            return r + 3
        return None

    reg = big_region(rng, big, 4, want)
    old = [reg.old[0], reg.old[2], reg.old[3]]
    body = [" " + reg.old[0], " " + reg.old[2], "-" + reg.old[3], "+" + reg.new_line]
    if not still_fails(big[reg.name], old):
        return None
    patch = envelope(PATHS[reg.name], [body])
    return ap_item("blank_line_missing", reg, None, patch, reg.r + 1, "the blank line after a short first line left out")


def m_big_multi(rng, big, variant):
    """A short hunk whose old lines occur more than once."""
    names = sorted(big)
    for _ in range(4000):
        name = rng.choice(names)
        lines = split(big[name])
        k = 1 + rng.randrange(3)
        r = rng.randrange(0, len(lines) - k)
        old = lines[r : r + k]
        if not any(substantive_line(l) for l in old):
            continue
        occ = occurrences(lines, old)
        if len(occ) < 2:
            continue
        c = next(i for i in range(r, r + k) if substantive_line(lines[i]))
        reg = Region(name, lines, r, k, c)
        patch = envelope(PATHS[name], [reg.body()])
        return ap_item(
            "ambiguous_context", reg, None, patch, occ[0] + 1, "%d-line old side that occurs %d times" % (k, len(occ))
        )
    return None


def m_big_crlf(rng, big, variant):
    """A CRLF file and a hunk with one mistake."""
    kind = ["content_differs", "trailing_whitespace", "indentation", "line_endings"][variant % 4]
    k = 1 + variant % 3
    reg = big_region(rng, big, k, lambda L, r: r if all(substantive_line(l) for l in L[r : r + k]) and L[r].startswith("  ") else None)
    lines = list(reg.lines)
    old = list(reg.old)
    body = None
    if kind == "content_differs":
        m = typo(rng, old[0])
        if m is None or m == old[0] or not unambiguous_typo(lines, reg.r, m):
            return None
        old[0] = m
    elif kind == "trailing_whitespace":
        lines[reg.r] += "  "
    elif kind == "indentation":
        old = [l[2:] for l in old]
    else:
        body = [b + "\r" for b in reg.body()]
    content = join(lines, "\r\n")
    if body is None:
        body = reg.body(old)
    patch = envelope(PATHS[reg.name], [body])
    return ap_item(kind, reg, content, patch, reg.r + 1, "a CRLF file; the hunk has a %s mistake" % kind)


def m_big_two(rng, big, variant):
    """Two mistakes in one hunk; the label is the documented primary cause."""
    kind = variant % 4
    k = 4
    reg = big_region(
        rng, big, k, lambda L, r: r + 1 if all(substantive_line(l) for l in L[r : r + k]) and all(l.startswith("  ") for l in L[r : r + k]) else None
    )
    lines = list(reg.lines)
    old = list(reg.old)
    body = None
    if kind == 0:
        # A misspelt line and a dropped trailing space: content first.
        m = typo(rng, old[2])
        if m is None or m == old[2]:
            return None
        old[2] = m
        lines[reg.r + 3] += " "
        label, mistake = "content_differs", "a misspelt line and a dropped trailing space"
    elif kind == 1:
        # Line-number prefixes on every line, curly quotes on one: prefix (4 rows) first.
        q = next((i for i, l in enumerate(old) if '"' in l or "'" in l), None)
        if q is None:
            return None
        old = [curly(l) if i == q else l for i, l in enumerate(old)]
        old = ["%d: " % (reg.r + 1 + i) + l for i, l in enumerate(old)]
        label, mistake = "line_number_prefix", "line-number prefixes on every line and curly quotes on one"
    elif kind == 2:
        # Re-indented lines (4 rows) and one trailing space (1 row).
        old = [l[2:] for l in old]
        old[3] += " "
        label, mistake = "indentation", "every line re-indented and one trailing space added"
    else:
        # CR on every line (4 rows) and two lines re-indented (2 rows).
        old = [l[2:] if i < 2 else l for i, l in enumerate(old)]
        body = [b + "\r" for b in reg.body(old)]
        label, mistake = "line_endings", "CR on every line and two lines re-indented"
    if body is None:
        body = reg.body(old)
    content = join(lines)
    patch = envelope(PATHS[reg.name], [body])
    return ap_item(label, reg, content, patch, reg.r + 1, "two mistakes: " + mistake)


def wp_big(rng, big, variant, kind):
    k = 1 + variant % 3
    reg = big_region(rng, big, k, lambda L, r: r if all(substantive_line(l) for l in L[r : r + k]) else None)
    lines = list(reg.lines)
    exp = list(reg.old)
    start = reg.r + 1
    crlf = False
    if kind == "content_differs":
        m = typo(rng, exp[0])
        if m is None or m == exp[0] or not unambiguous_typo(lines, reg.r, m):
            return None
        exp[0] = m
        if variant % 2:
            # ... and stale line numbers too.
            start = max(1, start + rng.choice([-3, -2, 2, 5]))
        mistake = "a misspelt expected line" + (" at a stale startLine" if start != reg.r + 1 else "")
    elif kind == "lines_shifted":
        delta = rng.choice([-4, -1, 1, 3, 6])
        if not (1 <= start + delta and start + delta + k - 1 <= len(lines)):
            return None
        if lines[reg.r + delta : reg.r + delta + k] == exp:
            return None
        start += delta
        mistake = "stale line numbers in a large file"
    elif kind == "trailing_whitespace":
        lines[reg.r] += "  "
        mistake = "the file line has trailing spaces the expected line dropped"
    else:
        crlf = True
        exp = [l + "\r" for l in exp]
        mistake = "a CRLF file split on LF: the expected lines keep their CR"
    content = join(lines, "\r\n" if crlf else "\n")
    return wp_item(kind, reg, content, start, exp, reg.new_side(), reg.r + 1, mistake, "replace")


BIG_AP = [
    ("content_differs", m_big_typo, 40),
    ("short_whitespace", m_big_short_ws, 9),
    ("blank_line_missing", m_big_blank_after_short, 6),
    ("ambiguous_context", m_big_multi, 8),
    ("crlf", m_big_crlf, 12),
    ("two_mistakes", m_big_two, 8),
]
BIG_WP = [
    ("content_differs", 8),
    ("lines_shifted", 4),
    ("trailing_whitespace", 3),
    ("line_endings", 3),
]


def compress(item, big):
    """Store an item on a large file as its base plus line edits."""
    name = next((n for n in big if PATHS[n] == item["path"]), None)
    if name is None:
        return item
    content = item.pop("content")
    eol = "\r\n" if "\r\n" in content else "\n"
    base = split(big[name])
    now = content.split(eol)
    assert now[-1] == "", "large items end with a newline"
    now = now[:-1]
    edits = []
    sm = difflib.SequenceMatcher(None, base, now, autojunk=False)
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag != "equal":
            edits.append([i1, i2, now[j1:j2]])
    out = {}
    for key, value in item.items():
        out[key] = value
        if key == "path":
            out["base"] = name
            out["fileEdits"] = edits
            if eol != "\n":
                out["eol"] = eol
    assert rebuild(big[name], edits, eol) == content
    return out


def rebuild(base_text, edits, eol):
    """What the harness does: the base's lines, the edits applied, joined by eol."""
    lines = split(base_text)
    for i1, i2, new in reversed(edits):
        lines[i1:i2] = new
    return eol.join(lines) + eol


AP = [
    ("trailing_whitespace", m_trailing, 8),
    ("indentation", m_indent, 8),
    ("line_endings", m_endings, 6),
    ("unicode_lookalike", m_lookalike, 10),
    ("line_number_prefix", m_prefix, 8),
    ("blank_line_missing", m_blank_missing, 6),
    ("blank_line_extra", m_blank_extra, 6),
    ("literal_newline_escape", m_literal_nl, 6),
    ("already_applied", m_already, 6),
    ("changed_by_earlier_hunk", m_earlier, 6),
    ("file_changed", m_file_changed, 6),
    ("content_differs", m_content, 6),
    ("no_similar_region", m_nothing, 5),
    ("not_at_end_of_file", m_eof, 3),
]
WP = [
    ("trailing_whitespace", 4),
    ("indentation", 3),
    ("line_endings", 3),
    ("unicode_lookalike", 3),
    ("line_number_prefix", 4),
    ("lines_shifted", 5),
    ("already_applied", 3),
    ("content_differs", 3),
    ("no_similar_region", 3),
]


def main():
    files = load()
    big = load(LARGE)
    os.makedirs(OUT, exist_ok=True)
    by_file = {}
    for kind, fn, n in AP:
        rng = random.Random("ap-" + kind)
        items = []
        variant = 0
        while len(items) < n:
            item = fn(rng, files, variant)
            variant += 1
            if item is None:
                continue
            if item["content"] is None:
                item["content"] = files[next(k for k, v in PATHS.items() if v == item["path"])]
            item["id"] = "apply_patch/%s/%d" % (kind, len(items) + 1)
            items.append(item)
        by_file["apply_patch-" + kind] = items
    for kind, n in WP:
        rng = random.Random("wp-" + kind)
        items = []
        variant = 0
        while len(items) < n:
            item = wp(rng, files, variant, kind)
            variant += 1
            if item is None:
                continue
            item["id"] = "workspace_write_patch/%s/%d" % (kind, len(items) + 1)
            items.append(item)
        by_file["workspace_write_patch-" + kind] = items
    for kind, fn, n in BIG_AP:
        rng = random.Random("big-ap-" + kind)
        items = []
        variant = 0
        while len(items) < n:
            item = fn(rng, big, variant)
            variant += 1
            if item is None:
                continue
            if item["content"] is None:
                item["content"] = big[next(k for k in LARGE if PATHS[k] == item["path"])]
            item["id"] = "apply_patch/large/%s/%d" % (kind, len(items) + 1)
            items.append(compress(item, big))
        by_file["large-apply_patch-" + kind] = items
    for kind, n in BIG_WP:
        rng = random.Random("big-wp-" + kind)
        items = []
        variant = 0
        while len(items) < n:
            item = wp_big(rng, big, variant, kind)
            variant += 1
            if item is None:
                continue
            item["id"] = "workspace_write_patch/large/%s/%d" % (kind, len(items) + 1)
            items.append(compress(item, big))
        by_file["large-workspace_write_patch-" + kind] = items
    for old in os.listdir(OUT):
        os.remove(os.path.join(OUT, old))
    total = 0
    for name, items in sorted(by_file.items()):
        with open(os.path.join(OUT, name + ".json"), "w", encoding="utf-8") as f:
            json.dump(items, f, ensure_ascii=False, indent=1)
            f.write("\n")
        total += len(items)
    print("%d items in %d files" % (total, len(by_file)))


if __name__ == "__main__":
    main()
