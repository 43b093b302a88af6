#!/usr/bin/env python3
"""The Action's install step as users get it: action.yml's own steps (run by action_runner.py as
the Actions runner runs them) against a release server on loopback. The release for the pinned
version is downloaded for the runner's architecture, its SHA-256 checked against the action's
release/SHA256SUMS, cached in the tool cache and run by the mvr step; a tampered file is refused,
and a cached one is hashed again before each use (a tampered cached binary is never run);
a ref no release matches builds from source (stubbed here) with a notice."""
import hashlib
import http.server
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))
VERSION = "v9.8.7"

# The stand-in for mvr: records that it ran and gives the mvr step an output.
FAKE_MVR = """#!/bin/sh
echo "label=released-%s-$1" >> "$GITHUB_OUTPUT"
"""
# The stand-in for scripts/build.sh: leaves an mvr where the real build would.
FAKE_BUILD = """#!/bin/sh
mkdir -p "$1/src/cli"
printf '#!/bin/sh\\necho "label=built-from-source-$1" >> "$GITHUB_OUTPUT"\\n' > "$1/src/cli/mvr"
chmod 755 "$1/src/cli/mvr"
"""


def release_tarball(arch, body=None):
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w:gz") as tar:
        text = (body or FAKE_MVR % arch).encode()
        info = tarfile.TarInfo("mvr-linux-%s/mvr" % arch)
        info.size, info.mode = len(text), 0o755
        tar.addfile(info, io.BytesIO(text))
    return data.getvalue()


class ReleaseServer(http.server.ThreadingHTTPServer):
    """Serves files[path] on 127.0.0.1 and records every path asked for."""

    def __init__(self):
        self.files, self.requests = {}, []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                server.requests.append(self.path)
                body = server.files.get(self.path)
                self.send_response(200 if body is not None else 404)
                self.send_header("Content-Length", str(len(body or b"")))
                self.end_headers()
                self.wfile.write(body or b"")

            def log_message(self, *args):
                pass

        super().__init__(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d" % self.server_address[1]


class ActionInstallTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="mvr-action-install-")
        self.action = os.path.join(self.dir, "action")
        os.makedirs(os.path.join(self.action, "scripts"))
        os.makedirs(os.path.join(self.action, "release"))
        shutil.copy(os.path.join(SOURCE, "action.yml"), self.action)
        shutil.copy(os.path.join(SOURCE, "scripts", "action-install.sh"),
                    os.path.join(self.action, "scripts"))
        self.write("scripts/setup.sh", "#!/bin/sh\necho setup-ran > \"$(dirname \"$0\")/../setup-ran\"\n")
        self.write("scripts/build.sh", FAKE_BUILD)
        self.write("release/VERSION", VERSION + "\n")
        self.assets = {arch: release_tarball(arch) for arch in ("x86_64", "arm64")}
        self.write("release/SHA256SUMS", "".join(
            "%s  mvr-linux-%s.tar.gz\n" % (hashlib.sha256(data).hexdigest(), arch)
            for arch, data in sorted(self.assets.items())))
        self.server = ReleaseServer()
        for arch, data in self.assets.items():
            self.server.files["/%s/mvr-linux-%s.tar.gz" % (VERSION, arch)] = data
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.cache = os.path.join(self.dir, "toolcache")

    def tearDown(self):
        self.server.shutdown()
        self.server.server_close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def write(self, relative, text):
        path = os.path.join(self.action, relative)
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, 0o755)

    def run_action(self, ref=VERSION, arch="X64", inputs=None):
        """Runs action.yml (mode start) and returns (exit code, stdout+stderr, outputs)."""
        outputs = os.path.join(self.dir, "outputs")
        if os.path.exists(outputs):
            os.remove(outputs)
        inv = {"action_dir": self.action, "step_id": "runner",
               "inputs": dict({"mode": "start", "github-token": "unused",
                               "release-base-url": self.server.url}, **(inputs or {})),
               "github": {"action_ref": ref, "action_repository": "owner/mvr"},
               "strategy": None, "matrix": None, "outputs_file": outputs, "work_dir": self.dir}
        path = os.path.join(self.dir, "invocation.json")
        with open(path, "w") as f:
            json.dump(inv, f)
        env = dict(os.environ, RUNNER_OS="Linux", RUNNER_ARCH=arch, RUNNER_TOOL_CACHE=self.cache,
                   RUNNER_TEMP=self.dir)
        r = subprocess.run([sys.executable, os.path.join(HERE, "action_runner.py"), path],
                           env=env, capture_output=True, text=True)
        text = ""
        if os.path.exists(outputs):
            with open(outputs) as f:
                text = f.read()
        return r.returncode, r.stdout + r.stderr, text

    def test_downloads_verifies_and_runs_the_release_for_the_runners_architecture(self):
        for arch, asset in (("X64", "x86_64"), ("ARM64", "arm64")):
            code, log, outputs = self.run_action(arch=arch)
            self.assertEqual(code, 0, log)
            self.assertIn("label=released-%s-start\n" % asset, outputs)
            self.assertEqual(self.server.requests[-1], "/%s/mvr-linux-%s.tar.gz" % (VERSION, asset))
            cached = os.path.join(self.cache, "mvr", "9.8.7", arch.lower(), "mvr-linux-" + asset)
            self.assertTrue(os.access(os.path.join(cached, "mvr"), os.X_OK))
        self.assertEqual(len(self.server.requests), 2)
        self.assertFalse(os.path.exists(os.path.join(self.action, "setup-ran")))

    def test_a_second_run_uses_the_tool_cache_without_downloading(self):
        self.assertEqual(self.run_action()[0], 0)
        code, log, outputs = self.run_action()
        self.assertEqual(code, 0, log)
        self.assertIn("from the tool cache", log)
        self.assertIn("label=released-x86_64-start\n", outputs)
        self.assertEqual(len(self.server.requests), 1)

    def test_a_moving_major_tag_finds_the_pinned_release(self):
        code, log, outputs = self.run_action(ref="v9")
        self.assertEqual(code, 0, log)
        self.assertEqual(self.server.requests, ["/%s/mvr-linux-x86_64.tar.gz" % VERSION])

    def test_without_github_action_ref_the_ref_comes_from_the_checkout_path(self):
        # The runner checks actions out to _actions/OWNER/REPO/REF and may leave
        # github.action_ref empty in a composite action (actions/runner#2473).
        checkout = os.path.join(self.dir, "_actions", "owner", "mvr", "v9")
        os.makedirs(os.path.dirname(checkout))
        shutil.move(self.action, checkout)
        self.action = checkout
        code, log, outputs = self.run_action(ref="")
        self.assertEqual(code, 0, log)
        self.assertIn("label=released-x86_64-start\n", outputs)
        self.assertEqual(self.server.requests, ["/%s/mvr-linux-x86_64.tar.gz" % VERSION])

    def test_a_tampered_release_file_is_refused_and_never_run(self):
        tampered = release_tarball("x86_64", "#!/bin/sh\necho label=tampered >> \"$GITHUB_OUTPUT\"\n")
        self.server.files["/%s/mvr-linux-x86_64.tar.gz" % VERSION] = tampered
        code, log, outputs = self.run_action()
        self.assertNotEqual(code, 0)
        self.assertIn("::error title=mvr::refusing %s/%s/mvr-linux-x86_64.tar.gz" %
                      (self.server.url, VERSION), log)
        self.assertIn(hashlib.sha256(tampered).hexdigest(), log)
        self.assertIn(hashlib.sha256(self.assets["x86_64"]).hexdigest(), log)
        self.assertNotIn("tampered", outputs)
        self.assertFalse(os.path.exists(os.path.join(self.cache, "mvr", "9.8.7", "x64")))
        # Nor is a tampered file ever rescued by a build from source.
        self.assertFalse(os.path.exists(os.path.join(self.action, "setup-ran")))

    def test_a_tampered_tool_cache_entry_is_downloaded_again(self):
        self.assertEqual(self.run_action()[0], 0)
        with open(os.path.join(self.cache, "mvr", "9.8.7", "x64.complete"), "w") as f:
            f.write("0" * 64 + "\n")
        code, log, outputs = self.run_action()
        self.assertEqual(code, 0, log)
        self.assertEqual(len(self.server.requests), 2)

    def test_a_tampered_cached_binary_is_not_run(self):
        # Issue 53, item 15: the marker says an install once finished, not that the cached bytes
        # are still the pinned ones; the tool cache outlives the job on a self-hosted runner.
        self.assertEqual(self.run_action()[0], 0)
        binary = os.path.join(self.cache, "mvr", "9.8.7", "x64", "mvr-linux-x86_64", "mvr")
        with open(binary, "w") as f:
            f.write("#!/bin/sh\necho label=tampered >> \"$GITHUB_OUTPUT\"\n")
        code, log, outputs = self.run_action()
        self.assertEqual(code, 0, log)
        self.assertNotIn("tampered", outputs)
        self.assertIn("label=released-x86_64-start\n", outputs)
        self.assertEqual(len(self.server.requests), 1)  # the kept release file was still good

    def test_a_tampered_cached_release_file_is_downloaded_again_with_a_warning(self):
        self.assertEqual(self.run_action()[0], 0)
        kept = os.path.join(self.cache, "mvr", "9.8.7", "x64.tar.gz")
        tampered = release_tarball("x86_64", "#!/bin/sh\necho label=tampered >> \"$GITHUB_OUTPUT\"\n")
        with open(kept, "wb") as f:
            f.write(tampered)
        code, log, outputs = self.run_action()
        self.assertEqual(code, 0, log)
        self.assertIn("::warning title=mvr::the cached %s has SHA-256 %s" %
                      (kept, hashlib.sha256(tampered).hexdigest()), log)
        self.assertNotIn("tampered", outputs)
        self.assertIn("label=released-x86_64-start\n", outputs)
        self.assertEqual(len(self.server.requests), 2)
        with open(kept, "rb") as f:
            self.assertEqual(f.read(), self.assets["x86_64"])

    def test_a_ref_no_release_matches_builds_from_source_with_a_notice(self):
        code, log, outputs = self.run_action(ref="main")
        self.assertEqual(code, 0, log)
        self.assertIn("::notice title=mvr::no release matches the action's ref 'main'", log)
        self.assertIn("building mvr from source", log)
        self.assertIn("label=built-from-source-start\n", outputs)
        self.assertEqual(self.server.requests, [])

    def test_a_missing_release_file_builds_from_source_with_a_notice(self):
        self.server.files.clear()
        code, log, outputs = self.run_action()
        self.assertEqual(code, 0, log)
        self.assertIn("does not exist (404)", log)
        self.assertIn("label=built-from-source-start\n", outputs)

    def test_an_action_that_pins_no_release_builds_from_source(self):
        os.remove(os.path.join(self.action, "release", "VERSION"))
        code, log, outputs = self.run_action()
        self.assertEqual(code, 0, log)
        self.assertIn("this action's source pins no release", log)
        self.assertEqual(self.server.requests, [])

    def test_mvr_path_is_used_as_given(self):
        own = os.path.join(self.dir, "own-mvr")
        with open(own, "w") as f:
            f.write("#!/bin/sh\necho label=own >> \"$GITHUB_OUTPUT\"\n")
        os.chmod(own, 0o755)
        code, log, outputs = self.run_action(inputs={"mvr-path": own})
        self.assertEqual(code, 0, log)
        self.assertIn("label=own\n", outputs)
        self.assertEqual(self.server.requests, [])


if __name__ == "__main__":
    unittest.main()
