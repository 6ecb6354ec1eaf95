#!/usr/bin/env python3
"""Browser test of matrix.html: headless Chromium, driven through
chromedriver's W3C WebDriver HTTP API (standard library only: urllib).

    scripts/matrix-browser-test.py [--matrix DIR] [--screenshot PNG] [--patchspec BIN]

Without --matrix it first generates a matrix into target/browser-matrix with
target/release/patchspec (build it with `cargo build --release -p
patchspec-conformance --features test-bins`): the reference engine and six columns of the
purpose-built patchspec-test-executor (`engine-like`, which behaves as the
engine; `refuser`, which declares only apply_patch and refuses everything;
`wrong-tree`, `tmp-leftover`, `apply-patch-only` and `no-hello`), full judge,
over a few corpus topics — so that the page has rows that pass, rows where
the implementations agree but fail, rows where they disagree, and as many
columns as the compliance matrix (reference + 5 or more).

The page is opened from file:// and checked against the matrix.json next to
it: the table has one row per case and one column per implementation; each
filter ("only failures", "only where implementations disagree", both, the id
search) shows exactly the rows matrix.json says it should and updates the
"showing N of M" count; clicking a failing cell opens the detail dialog with
the case, the expected and received result, and a coloured file diff; Escape
closes it. At that width the page must still read: no horizontal scroll of
the page itself (a wide table scrolls in its own box) and every column
header at least 60 px wide. Two screenshots are saved: the page as it opens (--screenshot)
and with a failing cell's dialog open (--diff-screenshot).

Chromium and chromedriver (Debian packages chromium, chromium-driver) are
installed with apt-get when absent. Ends with `N passed, N failed`; exit 1 on
any failure.
"""

import argparse
import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1500,1000",
]
ELEMENT = "element-6066-11e4-a52e-4f735466cecf"


def log(msg):
    print("browser-test: " + msg, flush=True)


def ensure_chromium():
    chromium = shutil.which("chromium")
    driver = shutil.which("chromedriver")
    if chromium and driver:
        return chromium, driver
    log("installing chromium and chromium-driver with apt-get")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    cmd = sudo + ["apt-get", "install", "-y", "--no-install-recommends", "chromium", "chromium-driver"]
    if subprocess.call(cmd, env=env) != 0:
        subprocess.check_call(sudo + ["apt-get", "update"], env=env)
        subprocess.check_call(cmd, env=env)
    chromium = shutil.which("chromium")
    driver = shutil.which("chromedriver")
    if not (chromium and driver):
        raise SystemExit("browser-test: chromium or chromedriver still missing after apt-get")
    return chromium, driver


def generate(patchspec, out):
    executor = os.path.join(os.path.dirname(patchspec), "patchspec-test-executor")
    for path in (patchspec, executor):
        if not os.access(path, os.X_OK):
            raise SystemExit("browser-test: %s missing: cargo build --release -p patchspec-conformance --features test-bins" % path)
    cmd = [
        patchspec, "matrix", "--corpus", os.path.join(ROOT, "corpus"), "--out", out, "--judge", "full",
        "--run", "apply_patch/add/**", "--run", "apply_patch/update/**", "--run", "workspace.read_file/basic/**",
        # Declared exactly: the test executor's own tool, test.write, is
        # unknown to the real corpus, and the runner refuses unknown tools.
        "--executor", "engine-like='%s' --hello --tool apply_patch --tool workspace.read_file" % executor,
        "--executor", "refuser='%s' --hello --tool apply_patch --always refuse" % executor,
        # More columns, so that the page is checked at the width of the
        # compliance matrix (reference + 5 or more).
        "--executor", "wrong-tree='%s' --hello --tool apply_patch --always wrong-tree" % executor,
        "--executor", "tmp-leftover='%s' --hello --tool apply_patch --always tmp-leftover" % executor,
        "--executor", "apply-patch-only='%s' --hello --tool apply_patch" % executor,
        "--executor", "no-hello='%s'" % executor,
    ]
    log("generating a matrix: " + " ".join(cmd[1:3]) + " …")
    subprocess.check_call(cmd, cwd=ROOT, stdout=subprocess.DEVNULL)


class WebDriver:
    def __init__(self, driver, chromium, profile):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.proc = subprocess.Popen([driver, "--port=%d" % self.port],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.base = "http://127.0.0.1:%d" % self.port
        deadline = time.monotonic() + 20
        while True:
            try:
                if self.request("GET", "/status")["ready"]:
                    break
            except (OSError, urllib.error.URLError, KeyError):
                pass
            if time.monotonic() > deadline:
                self.proc.kill()
                raise SystemExit("browser-test: chromedriver did not become ready")
            time.sleep(0.2)
        caps = {"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": chromium, "args": FLAGS + ["--user-data-dir=" + profile]},
        }}}
        self.session = self.request("POST", "/session", caps)["sessionId"]

    def request(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                return json.loads(r.read().decode())["value"]
        except urllib.error.HTTPError as e:
            raise RuntimeError("webdriver %s %s: %s" % (method, path, e.read().decode()[:500]))

    def cmd(self, method, path, body=None):
        return self.request(method, "/session/%s%s" % (self.session, path), body)

    def js(self, script, *args):
        return self.cmd("POST", "/execute/sync", {"script": script, "args": list(args)})

    def find(self, css):
        return self.cmd("POST", "/element", {"using": "css selector", "value": css})[ELEMENT]

    def click(self, css):
        element = self.find(css)
        self.js("arguments[0].scrollIntoView({block: 'center'});", {ELEMENT: element})
        self.cmd("POST", "/element/%s/click" % element, {})

    def type(self, css, text):
        self.cmd("POST", "/element/%s/value" % self.find(css), {"text": text})

    def quit(self):
        try:
            self.request("DELETE", "/session/" + self.session)
        except Exception:
            pass
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def save_png(wd, path):
    png = wd.cmd("GET", "/screenshot")
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "wb") as f:
        f.write(base64.b64decode(png))
    log("screenshot: " + path)


VISIBLE_IDS = "return Array.from(document.querySelectorAll('#matrix tr.case')).filter(r => r.offsetParent !== null).map(r => r.dataset.id);"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--matrix", help="a directory holding matrix.html and matrix.json (default: generate one)")
    ap.add_argument("--screenshot", default=os.path.join(ROOT, "target", "matrix-screenshot.png"))
    ap.add_argument("--diff-screenshot", default=os.path.join(ROOT, "target", "matrix-diff-screenshot.png"))
    ap.add_argument("--patchspec", default=os.path.join(ROOT, "target", "release", "patchspec"))
    args = ap.parse_args()

    out = args.matrix
    if not out:
        out = os.path.join(ROOT, "target", "browser-matrix")
        generate(args.patchspec, out)
    with open(os.path.join(out, "matrix.json"), encoding="utf-8") as f:
        m = json.load(f)
    cases = m["cases"]
    ids = [c["id"] for c in cases]
    failing = [c["id"] for c in cases if any(r["outcome"] in ("fail", "error") for r in c["results"].values())]
    disagree = [c["id"] for c in cases if c["disagree"]]
    both = [i for i in failing if i in disagree]

    chromium, driver = ensure_chromium()
    profile = tempfile.mkdtemp(prefix="patchspec-chromium-")
    passed, failed = 0, 0

    def check(name, ok, detail=""):
        nonlocal passed, failed
        if ok:
            passed += 1
            log("ok   " + name)
        else:
            failed += 1
            log("FAIL " + name + (": " + detail if detail else ""))

    wd = None
    try:
        wd = WebDriver(driver, chromium, profile)
        wd.cmd("POST", "/url", {"url": "file://" + os.path.abspath(os.path.join(out, "matrix.html"))})

        save_png(wd, args.screenshot)
        heads = wd.js("return Array.from(document.querySelectorAll('#matrix thead th')).map(t => t.textContent);")
        names = [i["name"] for i in m["implementations"]]
        check("table: one column per implementation", heads == ["case"] + names, repr(heads))
        layout = wd.js("""
            const heads = Array.from(document.querySelectorAll('#matrix thead th')).slice(1);
            return {page: document.documentElement.scrollWidth, window: window.innerWidth,
                    narrowest: Math.min(...heads.map(h => h.getBoundingClientRect().width))};
        """)
        check("%d columns: the page does not scroll sideways" % len(names), layout["page"] <= layout["window"],
              "page %spx wide in a %spx window" % (layout["page"], layout["window"]))
        check("%d columns: every column header is at least 60 px wide" % len(names), layout["narrowest"] >= 60,
              "narrowest %.0fpx" % layout["narrowest"])
        visible = wd.js(VISIBLE_IDS)
        check("table: one row per case, all shown", sorted(visible) == sorted(ids),
              "%d rows shown, %d cases" % (len(visible), len(ids)))
        shown = wd.js("return document.getElementById('shown').textContent;")
        check("count text", shown == "showing %d of %d cases" % (len(ids), len(ids)), shown)
        rates = wd.js("return document.querySelectorAll('#matrix tr.summary td.rate').length;")
        tools = len({c["tool"] for c in cases})
        check("a pass-rate summary row per tool", rates == tools * len(names), "%s cells" % rates)

        wd.click("#only-failures")
        visible = wd.js(VISIBLE_IDS)
        check("filter 'only failures'", sorted(visible) == sorted(failing),
              "%d shown, %d expected" % (len(visible), len(failing)))
        wd.click("#only-disagree")
        visible = wd.js(VISIBLE_IDS)
        check("filters 'only failures' and 'only where implementations disagree' together",
              sorted(visible) == sorted(both), "%d shown, %d expected" % (len(visible), len(both)))
        wd.click("#only-failures")
        visible = wd.js(VISIBLE_IDS)
        check("filter 'only where implementations disagree'", sorted(visible) == sorted(disagree),
              "%d shown, %d expected" % (len(visible), len(disagree)))
        shown = wd.js("return document.getElementById('shown').textContent;")
        check("count text follows the filter", shown == "showing %d of %d cases" % (len(disagree), len(ids)), shown)
        wd.click("#only-disagree")
        check("filters off: every row again", len(wd.js(VISIBLE_IDS)) == len(ids))
        if failing:
            needle = failing[0].rsplit("/", 1)[-1]
            wd.type("#search", needle)
            visible = wd.js(VISIBLE_IDS)
            want = [i for i in ids if needle.lower() in i.lower()]
            check("id search", sorted(visible) == sorted(want), "%r: %d shown" % (needle, len(visible)))
            wd.js("const s = document.getElementById('search'); s.value = ''; s.dispatchEvent(new Event('input'));")

        # A failing cell whose file diff has -/+ lines, if any; else the first failing cell.
        target = wd.js("""
            const cells = Array.from(document.querySelectorAll('#matrix td[data-d]'));
            const data = JSON.parse(document.getElementById('patchspec-details').textContent);
            const withDiff = cells.find(td => /\\n\\s*[-+][^-+]/.test(data.cells[Number(td.dataset.d)].files));
            const td = withDiff || cells[0];
            if (!td) { return null; }
            td.id = 'browser-test-target';
            return {id: td.closest('tr').dataset.id, diff: !!withDiff};
        """)
        check("a failing cell exists", target is not None or not failing)
        if target:
            wd.click("#browser-test-target")
            state = wd.js("""
                const d = document.getElementById('detail');
                return {open: d.open, text: d.textContent,
                        diffLines: d.querySelectorAll('#detail-body .add, #detail-body .del').length};
            """)
            check("a failing cell opens the detail dialog", state["open"])
            check("the dialog names the case", target["id"] in state["text"])
            check("the dialog shows expected and received results",
                  "Result: expected (pattern) and received" in state["text"] and "Files: expected" in state["text"])
            if target["diff"]:
                check("the dialog shows a coloured file diff", state["diffLines"] > 0, repr(state["diffLines"]))
            save_png(wd, args.diff_screenshot)
            wd.cmd("POST", "/actions", {"actions": [{"type": "key", "id": "k", "actions": [
                {"type": "keyDown", "value": "\ue00c"}, {"type": "keyUp", "value": "\ue00c"}]}]})
            check("Escape closes the dialog", wd.js("return document.getElementById('detail').open;") is False)
        external = wd.js("return Array.from(document.querySelectorAll('[src],[href],link')).length;")
        check("no external assets", external == 0, "%s elements with src/href" % external)
    except Exception as e:  # a broken driver or page is a failed test, reported as such
        check("the browser session ran", False, "%s: %s" % (type(e).__name__, e))
    finally:
        if wd is not None:
            wd.quit()
        shutil.rmtree(profile, ignore_errors=True)
    print("browser: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
