"""adapters/compliance_report.py on a small hand-made run: the blocks it
writes (hash line, rates, areas, departures, fingerprint, columns not run),
and that the hand-written text around them is kept."""

import importlib.util
import json
import os
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("compliance_report",
                                              os.path.join(os.path.dirname(HERE), "compliance_report.py"))
report = importlib.util.module_from_spec(spec)
spec.loader.exec_module(report)

HASH = "sha256:" + "ab" * 32


def impl(name, passed, failed, skipped=0, reference=False):
    return {"name": name, "reference": reference, "durationMs": 1500,
            "implementation": None if reference else {"name": name + "-impl", "version": "1.0"},
            "totals": {"pass": passed, "fail": failed, "error": 0, "skip": skipped}}


def case(cid, **results):
    return {"id": "apply_patch/" + cid, "results": results}


def res(outcome, departure=None, success=None):
    return {"outcome": outcome, "departure": departure, "success": success}


def matrix():
    return {
        "corpus": {"hash": HASH, "version": "0.1.0", "cases": 10},
        "implementations": [impl("reference", 3, 0, reference=True), impl("x", 1, 2)],
        "cases": [
            case("paths/dotdot-escape-add", reference=res("pass"), x=res("fail", "wrote-outside", True)),
            case("matching/smart-quotes", reference=res("pass"), x=res("fail", "applied-invalid", True)),
            case("add/simple", reference=res("pass"), x=res("pass", success=True)),
        ],
    }


class Report(unittest.TestCase):
    def test_summary_names_the_hash_rates_areas_and_the_columns_that_did_not_run(self):
        text = report.summary(matrix(), matrix(), [{"name": "y", "reason": "needs Python >= 3.13"}],
                              {"total": 300, "cores": 2})
        self.assertEqual(report.generated_hash(text), "ab" * 32)
        self.assertIn("| **x** | x-impl 1.0 | 33% (1/3) | 33% (1/3) | 0 | 2 s |", text)
        self.assertIn("| **y** | y | not run | not run | — | — |", text)
        self.assertIn("- **y**: needs Python >= 3.13", text)
        self.assertIn("| `paths` | 1 | 1/1 | **0/1** |", text)

    def test_departures_put_writes_outside_and_near_matches_first_with_ids(self):
        text = report.departures(matrix())
        self.assertIn("- wrote outside the workspace (1): `paths/dotdot-escape-add`", text)
        self.assertIn("- applied a near match (1): `matching/smart-quotes`", text)
        self.assertNotIn("reference", text)

    def test_fingerprint_cells_and_skips(self):
        self.assertEqual(report.probe_cell(res("fail", "wrote-outside", True), "outside"), "yes")
        self.assertEqual(report.probe_cell(res("pass", success=False), "applies"), "no")
        self.assertEqual(report.probe_cell(res("skip"), "applies"), "—")
        self.assertEqual(report.probe_cell(res("error", "error"), "applies"), "crash")
        table = report.fingerprint(matrix())
        self.assertIn("| folds Unicode punctuation (smart quotes) (`matching/smart-quotes`) | no | yes |", table)

    def test_each_hazard_is_read_from_tags_departure_success_and_drift(self):
        def hz(tags, result, expect=False):
            return report.hazards_of({"tags": tags, "expectSuccess": expect}, result)
        self.assertEqual(hz([], res("fail", "wrote-outside", True)), ["outside"])
        self.assertEqual(hz(["atomic"], res("fail", "changed-on-refusal", False)), ["partial"])
        # An `atomic: false` case expects its earlier sections kept on a refusal.
        kept = {"tags": ["atomic"], "expectSuccess": False, "expectUnchanged": False}
        self.assertEqual(report.hazards_of(kept, res("fail", "changed-on-refusal", False)), [])
        self.assertEqual(hz(["near-match"], res("fail", "applied-invalid", True)), ["near"])
        self.assertEqual(hz(["ambiguous"], res("fail", "applied-invalid", True)), ["first"])
        self.assertEqual(hz(["ambiguous", "near-match"], res("fail", "wrote-outside", True)),
                         ["outside", "near", "first"])
        drifted = dict(res("fail", "wrong-tree", True), drift=["line-endings"])
        self.assertEqual(hz(["crlf"], drifted, expect=True), ["bytes"])
        self.assertEqual(hz([], res("error", "error")), ["crash"])
        # Not hazards: a pass, a refusal of a near match, a tagged case the spec applies,
        # a wrong tree whose text differs (no drift), a skip.
        self.assertEqual(hz(["near-match"], res("pass", success=False)), [])
        self.assertEqual(hz(["near-match"], res("fail", "wrong-result", False)), [])
        self.assertEqual(hz(["ambiguous"], res("fail", "wrong-tree", True), expect=True), [])
        self.assertEqual(hz(["crlf"], dict(res("fail", "wrong-tree", True), drift=[]), expect=True), [])
        self.assertEqual(hz(["near-match"], res("skip")), [])
        self.assertEqual(hz(["near-match"], None), [])

    def test_hazard_counts_link_to_their_case_lists(self):
        m = matrix()
        m["cases"].append({"id": "apply_patch/line-endings/crlf", "tags": ["crlf"], "expectSuccess": True,
                           "results": {"reference": res("pass"),
                                       "x": dict(res("fail", "wrong-tree", True), drift=["line-endings"])}})
        m["cases"][1]["tags"] = ["near-match"]
        m["cases"][1]["expectSuccess"] = False
        table = report.hazards(m)
        self.assertIn("| **reference** | 3 | 0 | 0 | 0 | 0 | 0 | 0 |", table)
        self.assertIn("| **x** | 3 | [**1**](#hazard-x-outside) | 0 | [**1**](#hazard-x-near) | 0 | "
                      "[**1**](#hazard-x-bytes) | 0 |", table)
        cases = report.hazard_cases(m)
        self.assertIn('- <a id="hazard-x-near"></a>near match applied, 1: '
                      "[`matching/smart-quotes`](../corpus/apply_patch/matching/smart-quotes.json)", cases)
        self.assertIn('<a id="hazard-x-bytes"></a>bytes it was not asked to change, 1 (line-endings 1): ', cases)
        self.assertNotIn("reference", cases)

    def test_blocks_are_replaced_and_the_text_around_them_kept(self):
        doc = "intro\n<!-- BEGIN GENERATED summary (x) -->\nold\n<!-- END GENERATED summary -->\nfindings\n"
        self.assertEqual(report.replace_block(doc, "summary", "new"),
                         "intro\n<!-- BEGIN GENERATED summary (x) -->\nnew\n<!-- END GENERATED summary -->\nfindings\n")
        with self.assertRaises(SystemExit):
            report.replace_block(doc, "matrix", "x")

    def test_main_rewrites_a_document_from_a_run_directory(self):
        with tempfile.TemporaryDirectory() as out:
            for judge in ("outcome", "full"):
                os.mkdir(os.path.join(out, judge))
                with open(os.path.join(out, judge, "matrix.json"), "w") as f:
                    json.dump(matrix(), f)
            with open(os.path.join(out, "outcome", "matrix.md"), "w") as f:
                f.write("the matrix\n")
            with open(os.path.join(out, "columns.json"), "w") as f:
                json.dump([{"name": "x", "reason": None}], f)
            with open(os.path.join(out, "timing.json"), "w") as f:
                json.dump({"total": 1}, f)
            doc = os.path.join(out, "doc.md")
            with open(doc, "w") as f:
                f.write("".join("<!-- BEGIN GENERATED %s -->\n<!-- END GENERATED %s -->\n" % (b, b)
                                for b in ("summary", "departures", "hazards", "hazard-cases", "fingerprint",
                                          "matrix")))
            self.assertEqual(report.main([out, doc]), 0)
            with open(doc) as f:
                text = f.read()
        self.assertEqual(report.generated_hash(text), "ab" * 32)
        self.assertIn("the matrix\n<!-- END GENERATED matrix -->", text)


if __name__ == "__main__":
    unittest.main()
