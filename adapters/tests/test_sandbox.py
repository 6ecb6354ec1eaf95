"""adapters/lib/sandbox.py: both confinements for real where the machine
allows them (overlay: root + unshare + overlayfs; bwrap: bubblewrap on
PATH), the listing of an upper layer, and the fallbacks."""

import io
import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
import protocol  # noqa: E402
import sandbox  # noqa: E402

# A write outside the case directory in a place the test owns (so that an
# unconfined run, if the sandbox silently failed, is visible and cleaned up).
ESCAPE = "echo escaped > %s; echo inside > ../outside/mark; echo ok"


class CaseDir(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.case = os.path.join(self.tmp.name, "case")
        self.ws = os.path.join(self.case, "ws")
        os.makedirs(self.ws)
        os.mkdir(os.path.join(self.case, "outside"))
        self.elsewhere = os.path.join(self.tmp.name, "elsewhere.txt")

    def tearDown(self):
        self.tmp.cleanup()

    def escape(self, mode):
        return sandbox.run_confined(["/bin/sh", "-c", ESCAPE % self.elsewhere], b"", self.ws, self.case, mode, 30)


class Overlay(CaseDir):
    def setUp(self):
        if os.geteuid() != 0 or not shutil.which("unshare"):
            self.skipTest("the overlay needs root and unshare")
        super().setUp()

    def test_writes_outside_the_case_directory_are_contained_and_listed_exactly(self):
        try:
            proc, mode, writes = self.escape("overlay")
        except sandbox.SandboxUnavailable as e:
            self.skipTest("no overlayfs here: %s" % e)
        self.assertEqual((proc.returncode, mode), (0, "overlay"))
        self.assertEqual(writes, [self.elsewhere + " (created)"])
        self.assertFalse(os.path.exists(self.elsewhere), "the write escaped the overlay")
        with open(os.path.join(self.case, "outside", "mark")) as f:
            self.assertEqual(f.read(), "inside\n", "the case directory is bound in: writes there are real")


class Bwrap(CaseDir):
    def setUp(self):
        if not shutil.which("bwrap"):
            self.skipTest("bwrap is not on PATH (Debian: bubblewrap)")
        super().setUp()

    def test_a_write_outside_fails_read_only_and_is_recorded_from_the_message(self):
        proc, mode, writes = self.escape("bwrap")
        self.assertEqual(mode, "bwrap")
        self.assertFalse(os.path.exists(self.elsewhere))
        self.assertEqual(len(writes), 1)
        self.assertIn("Read-only file system", writes[0])

    def test_a_quiet_program_inside_the_case_directory_records_nothing(self):
        proc, mode, writes = sandbox.run_confined(["/bin/sh", "-c", "echo x > a.txt"], b"", self.ws, self.case,
                                                  "bwrap", 30)
        self.assertEqual((proc.returncode, writes), (0, []))
        self.assertTrue(os.path.exists(os.path.join(self.ws, "a.txt")))


class Unconfined(CaseDir):
    def test_none_runs_the_program_as_is(self):
        proc, mode, writes = sandbox.run_confined(["/bin/sh", "-c", "cat; pwd"], b"in\n", self.ws, self.case, "none", 30)
        self.assertEqual((mode, writes), ("none", []))
        self.assertEqual(proc.stdout.decode().split("\n")[0], "in")
        self.assertEqual(os.path.realpath(proc.stdout.decode().split("\n")[1]), os.path.realpath(self.ws))

    def test_a_program_that_cannot_start_or_hangs_is_a_crash(self):
        with self.assertRaises(protocol.Crash):
            sandbox.run_confined([os.path.join(self.ws, "missing")], b"", self.ws, self.case, "none", 30)
        with self.assertRaises(protocol.Crash):
            sandbox.run_confined(["/bin/sh", "-c", "sleep 5"], b"", self.ws, self.case, "none", 0.2)

    def test_recorded_writes_land_in_the_note_the_runner_reads(self):
        err = io.StringIO()
        sandbox.record_writes(self.case, "overlay", ["/etc/hosts (modified)"], err)
        with open(os.path.join(self.case, "outside", sandbox.WRITES_NOTE)) as f:
            self.assertIn("  /etc/hosts (modified)", f.read())
        self.assertIn("/etc/hosts (modified)", err.getvalue())


class OverlayListing(unittest.TestCase):
    def test_the_upper_layer_is_listed_except_the_case_directory_and_mounts(self):
        with tempfile.TemporaryDirectory() as up:
            for d in ("tmp/patchspec-x", "dev", "etc", "newdir"):
                os.makedirs(os.path.join(up, d))
            with open(os.path.join(up, "etc", "hosts"), "w") as f:
                f.write("x")
            with open(os.path.join(up, "made-up-file.txt"), "w") as f:
                f.write("x")
            os.symlink("/etc", os.path.join(up, "link-made"))
            writes = sandbox.overlay_writes(up, "/tmp/patchspec-x")
        self.assertIn("/etc/hosts (modified)", writes)
        self.assertIn("/made-up-file.txt (created)", writes)
        self.assertIn("/newdir/ (directory created)", writes)
        self.assertIn("/link-made (symlink)", writes)
        self.assertFalse([w for w in writes if w.startswith(("/tmp", "/dev"))], writes)


if __name__ == "__main__":
    unittest.main()
