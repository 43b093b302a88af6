#!/usr/bin/env python3
"""Every input of action.yml and every flag of `mvr start`/`mvr stop`/`mvr sweep`, each given
bytes that are not UTF-8, control bytes, a 100 KB value and an empty value, one at a time over
otherwise good inputs: no run may end by a signal or with an exit of 128 or more, a bad value
must be refused with an error naming it, and a refused run must make no request to either API.

Both APIs (GitHub's and the Lambda MicroVMs') are one loopback listener that counts every request
and answers 403, so a run that wrongly gets as far as a call fails fast and is counted. action.yml
runs through tests/e2e/action_runner.py, as the Actions runner runs a composite action.

Usage: action_input_sweep_test.py MVR_BINARY
"""
import http.server
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import unittest

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
MVR = None  # set from argv

# Bad values, as the bytes a variable or argument would hold. Invalid UTF-8 travels through JSON
# and os.environ as surrogate escapes (Python's os.fsencode turns them back into the bytes).
BAD = {
    "not UTF-8": b"\xff\xfe",
    "control bytes": b"a\x01b\x1bc",
    "100 KB": b"a" * 100_000,
}
TOKEN = "ghp_sweep_fixture_token_3f9a"


def as_str(raw):
    return raw.decode("utf-8", "surrogateescape")


class CountingApi(http.server.BaseHTTPRequestHandler):
    """Both APIs: counts each request and answers 403 with a body either client reads."""
    count = 0
    lock = threading.Lock()

    def answer(self):
        with CountingApi.lock:
            CountingApi.count += 1
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        body = json.dumps({"message": "Forbidden by the sweep", "__type": "AccessDeniedException"})
        self.send_response(403)
        self.send_header("Content-Type", "application/json")
        self.send_header("x-amzn-ErrorType", "AccessDeniedException")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body.encode())

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = answer

    def log_message(self, *args):
        pass


class SweepTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), CountingApi)
        cls.url = "http://127.0.0.1:%d" % cls.server.server_address[1]
        threading.Thread(target=cls.server.serve_forever, daemon=True).start()
        cls.dir = tempfile.mkdtemp(prefix="mvr-input-sweep-")
        with open(os.path.join(ROOT, "action.yml")) as f:
            cls.action = yaml.safe_load(f)
        cls.token_file = os.path.join(cls.dir, "token")
        with open(cls.token_file, "w") as f:
            f.write(TOKEN)

    @classmethod
    def tearDownClass(cls):
        cls.server.shutdown()

    def env(self):
        env = {k: v for k, v in os.environ.items() if not k.startswith(("INPUT_", "GITHUB_", "AWS_"))}
        env.update({
            "GITHUB_REPOSITORY": "octo/app", "GITHUB_REPOSITORY_ID": "123", "GITHUB_RUN_ID": "456",
            "GITHUB_RUN_ATTEMPT": "1", "GITHUB_JOB": "build", "GITHUB_API_URL": self.url,
            "AWS_ENDPOINT_URL": self.url, "AWS_ACCESS_KEY_ID": "AKIDSWEEP",
            "AWS_SECRET_ACCESS_KEY": "sweep-secret", "AWS_REGION": "us-east-1",
            "AWS_EC2_METADATA_DISABLED": "true", "MVR_SWEEP_TOKEN": TOKEN,
            "HOME": self.dir,
        })
        return env

    def good_inputs(self, mode):
        inputs = {"mode": mode, "mvr-path": MVR, "region": "us-east-1"}
        if mode == "start":
            inputs["image-id"] = "runner"
        else:
            inputs["microvm-id"] = "mvm-sweep"
        return inputs

    def run_action(self, mode, name, value):
        """action.yml's steps with input `name` set to `value` (str, may hold surrogates)."""
        inputs = self.good_inputs(mode)
        env = self.env()
        secret = {"github-token": "MVR_SWEEP_TOKEN"}
        if name == "github-token":
            env["MVR_SWEEP_TOKEN"] = value
        else:
            inputs[name] = value
        inv = {"action_dir": ROOT, "step_id": "__mvr", "inputs": inputs, "secret_inputs": secret,
               "github": {"job": "build", "run_id": "456", "repository": "octo/app",
                          "event_name": "push"},
               "strategy": {"fail-fast": True, "job-index": 0, "job-total": 1, "max-parallel": 1},
               "matrix": None, "outputs_file": os.path.join(self.dir, "outputs"),
               "work_dir": self.dir}
        path = os.path.join(self.dir, "inv.json")
        with open(path, "w") as f:
            json.dump(inv, f)
        return self.run_process([sys.executable, os.path.join(HERE, "action_runner.py"), path], env)

    def run_process(self, argv, env):
        before = CountingApi.count
        r = subprocess.run(argv, env=env, capture_output=True, timeout=120)
        return r.returncode, (r.stdout + r.stderr).decode("utf-8", "replace"), CountingApi.count - before

    def check(self, what, code, output, requests, name, refused):
        self.assertGreaterEqual(code, 0, f"{what}: ended by signal {-code}\n{output[-2000:]}")
        self.assertLess(code, 128, f"{what}: exit {code}\n{output[-2000:]}")
        # ::add-mask:: lines are the runner's, not the log's: it masks and never shows them.
        shown = "\n".join(l for l in output.splitlines() if not l.startswith("::add-mask::"))
        self.assertNotIn(TOKEN, shown, f"{what}: the token was printed")
        if refused:
            self.assertIn(code, (1, 2), f"{what}: exit {code}, not refused\n{output[-2000:]}")
            self.assertEqual(requests, 0, f"{what}: {requests} API requests before the refusal")
            self.assertRegex(output, re.escape(name), f"{what}: the error does not name it\n{output[-2000:]}")

    def test_every_action_input(self):
        names = list(self.action["inputs"])
        self.assertGreater(len(names), 20)
        checked = 0
        for mode in ("start", "stop"):
            for name in names:
                for what, raw in BAD.items():
                    code, output, requests = self.run_action(mode, name, as_str(raw))
                    self.check(f"{mode} with input {name} {what}", code, output, requests, name,
                               refused=True)
                    checked += 1
                if name in ("mvr-path", "mode"):
                    continue  # empty: the documented install path; mode is required
                code, output, requests = self.run_action(mode, name, "")
                self.check(f"{mode} with input {name} empty", code, output, requests, name,
                           refused=False)
                checked += 1
        print(f"action.yml: {checked} runs over {len(names)} inputs, both modes")

    def flags_of(self, mode):
        r = subprocess.run([MVR, mode, "--help"], capture_output=True, text=True, timeout=30)
        flags = sorted(set(re.findall(r"^\s+(--[a-z][a-z0-9-]+)", r.stdout, re.M)) - {"--help"})
        self.assertGreater(len(flags), 5, r.stdout)
        return flags

    def test_every_cli_flag(self):
        checked = 0
        # mvr sweep too (issue 52 item 8); through action.yml it reads the same rules as start and
        # stop, so only its flags are run here (each action.yml run costs a Python runner).
        good = {"start": {"--image-id": "runner"}, "stop": {"--microvm-id": "mvm-sweep"},
                "sweep": {"--state-table": "sqlite:" + os.path.join(self.dir, "sweep.db")}}
        for mode in ("start", "stop", "sweep"):
            for flag in self.flags_of(mode):
                base = dict(good[mode])
                base["--github-token-file"] = self.token_file
                base.pop(flag, None)
                for what, raw in dict(BAD, empty=b"").items():
                    if flag == "--github-token-file":
                        path = os.path.join(self.dir, "bad-token")
                        with open(path, "wb") as f:
                            f.write(raw)
                        value = path
                    else:
                        value = as_str(raw)
                    argv = [MVR, mode] + [x for kv in base.items() for x in kv] + [flag, value]
                    code, output, requests = self.run_process(argv, self.env())
                    self.check(f"mvr {mode} {flag} {what}", code, output, requests,
                               flag.lstrip("-").replace("github-token-file", "github-token"),
                               refused=what != "empty")
                    checked += 1
        print(f"mvr start/stop/sweep: {checked} runs")


if __name__ == "__main__":
    MVR = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
