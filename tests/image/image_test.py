#!/usr/bin/env python3
"""image/: what can be checked without building the image (no internet here). The hooks JSON's
timeouts equal the supervisor's budgets (read from src/supervisor) and /validate's worst case fits
its hook; every download in the Dockerfile is pinned to a SHA-256 and checked; the base image is
pinned by digest; image/supervisor.json uses only keys the supervisor's parser knows; and
image/validate.sh needs no registry (run here against a stand-in `docker`)."""
import json
import os
import re
import subprocess
import tempfile
import unittest

SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def read(*parts):
    with open(os.path.join(SOURCE, *parts), encoding="utf-8") as f:
        return f.read()


def millis(text):
    return int(text.replace("'", ""))


def code_budgets():
    """HookBudgets' defaults, in ms, from src/supervisor/hook_budgets.h."""
    header = read("src", "supervisor", "hook_budgets.h")
    struct = re.search(r"struct HookBudgets \{(.*?)\n\};", header, re.S).group(1)
    return {name: millis(v) for name, v in re.findall(r"Duration (\w+)\{([\d']+)\};", struct)}


def docker_defaults():
    """DockerConfig's duration defaults, in ms, from src/supervisor/config.h."""
    header = read("src", "supervisor", "config.h")
    struct = re.search(r"struct DockerConfig \{(.*?)\n\};", header, re.S).group(1)
    return {name: millis(v) for name, v in re.findall(r"Duration (\w+)\{([\d']+)\};", struct)}


def margin(budget_ms):
    # hook_budgets.cpp SafetyMargin: a tenth of the budget, at least 0.5 s.
    return max(500, budget_ms // 10)


class ImageTest(unittest.TestCase):
    def setUp(self):
        self.hooks = json.loads(read("image", "hooks.json"))
        self.model = json.loads(read("models", "lambda-microvms", "service-2.json"))["shapes"]
        self.config = json.loads(read("image", "supervisor.json"))

    def test_every_hook_timeout_equals_the_supervisors_budget(self):
        budgets = code_budgets()
        self.assertEqual(set(budgets), {"run", "resume", "suspend", "terminate"})
        hooks = self.hooks["microvmHooks"]
        for name, ms in budgets.items():
            self.assertEqual(hooks[name], "ENABLED", name)
            self.assertEqual(hooks[name + "TimeoutInSeconds"] * 1000, ms, name)

    def test_every_timeout_is_within_the_services_range(self):
        for group, shape in (("microvmHooks", "MicrovmHooks"),
                             ("microvmImageHooks", "MicrovmImageHooks")):
            members = self.model[shape]["members"]
            for key, value in self.hooks[group].items():
                self.assertIn(key, members, key)
                if key.endswith("TimeoutInSeconds"):
                    limits = self.model[members[key]["shape"]]
                    self.assertTrue(limits["min"] <= value <= limits["max"], key)
        self.assertEqual(self.hooks["microvmImageHooks"]["ready"], "ENABLED")
        self.assertEqual(self.hooks["microvmImageHooks"]["validate"], "ENABLED")

    def test_validate_answers_within_its_hook_in_the_worst_case(self):
        # DockerControl::Validate: containerd (one poll), each driver in turn (its timeout, then
        # stopping dockerd), then the validation container with its own timeout.
        defaults = docker_defaults()
        docker = self.config["docker"]
        seconds = lambda key, default: docker[key] * 1000 if key in docker else default
        drivers = len(docker.get("drivers", ["overlay2", "fuse-overlayfs", "vfs"]))
        worst = (defaults["poll_interval"] +
                 drivers * (seconds("driverTimeoutSeconds", defaults["driver_timeout"]) +
                            seconds("stopTimeoutSeconds", defaults["stop_timeout"])) +
                 seconds("validateTimeoutSeconds", defaults["validate_timeout"]))
        budget = self.hooks["microvmImageHooks"]["validateTimeoutInSeconds"] * 1000
        self.assertLessEqual(worst + margin(budget), budget)

    def test_supervisor_json_uses_only_keys_the_parser_knows(self):
        parser = read("src", "supervisor", "config.cpp")
        # Each section's reader (ReadTop, ReadDocker, ...) starts with OnlyKeys({...}).
        lists = re.findall(
            r'Status Read(\w+)\(const JsonFields& \w+,[^)]*\)\s*\{\s*MVR_RETURN_IF_ERROR\(\s*'
            r'\w+\.OnlyKeys\(\s*\{([^}]*)\}', parser, re.S)
        prefix = lambda name: "" if name == "Top" else name[0].lower() + name[1:] + "."
        known = {prefix(name): set(re.findall(r'"(\w+)"', keys)) for name, keys in lists}
        self.assertIn("", known)
        self.assertIn("docker.", known)
        for key, value in self.config.items():
            self.assertIn(key, known[""], key)
            if isinstance(value, dict) and key + "." in known:
                for sub in value:
                    self.assertIn(sub, known[key + "."], key + "." + sub)

    def test_every_download_is_pinned_and_checked(self):
        dockerfile = read("image", "Dockerfile")
        args = dict(re.findall(r"^ARG (\w+)=(\S+)$", dockerfile, re.M))
        self.assertRegex(args["BASE_IMAGE"], r"^[\w./-]+:[\w.-]+@sha256:[0-9a-f]{64}$")
        self.assertRegex(dockerfile, r"(?m)^FROM \$\{BASE_IMAGE\}$")
        versions = [k[:-len("_VERSION")] for k in args if k.endswith("_VERSION")]
        self.assertEqual(sorted(versions), ["BUILDX", "COMPOSE", "RUNNER"])
        for name in versions:
            self.assertRegex(args[name + "_VERSION"], r"^\d+\.\d+\.\d+$", name)
            self.assertRegex(args[name + "_SHA256"], r"^[0-9a-f]{64}$", name)
            self.assertIn('echo "${%s_SHA256}  ' % name, dockerfile)
        downloads = re.findall(r"curl [^\n]*-o", dockerfile)
        checks = re.findall(r'_SHA256\}  [^"]+" \| sha256sum -c -', dockerfile)
        self.assertEqual(len(downloads), 3)
        self.assertEqual(len(checks), len(downloads))
        self.assertNotRegex(dockerfile, r"latest|wget|\| *(ba)?sh\b")
        for part in ("actions-runner-linux-arm64", "docker-buildx", "docker-compose",
                     "fuse-overlayfs", "docker containerd", "supervisor-bundle"):
            self.assertIn(part, dockerfile)

    def test_validate_needs_no_registry(self):
        self.assertEqual(self.config["docker"]["validate"], ["/opt/mvr/validate.sh"])
        self.assertIn("COPY image/validate.sh /opt/mvr/validate.sh", read("image", "Dockerfile"))
        work = tempfile.mkdtemp(prefix="mvr-image-validate-")
        bundle = os.path.join(work, "bundle")
        os.makedirs(os.path.join(bundle, "lib"))
        with open(os.path.join(bundle, "lib", "mvr.bin"), "w") as f:
            f.write("stand-in")
        log = os.path.join(work, "docker.log")
        docker = os.path.join(work, "docker")
        # The stand-in: no image yet; `import` reads the layer from stdin.
        with open(docker, "w") as f:
            f.write('#!/bin/sh\necho "$*" >> %s\n'
                    'case "$1" in image) exit 1 ;; import) tar -t >> %s ;; esac\n' % (log, log))
        os.chmod(docker, 0o755)
        env = dict(os.environ, PATH=work + ":/usr/bin:/bin", MVR_BUNDLE=bundle)
        r = subprocess.run(["sh", os.path.join(SOURCE, "image", "validate.sh")], env=env,
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(log) as f:
            calls = f.read().splitlines()
        self.assertEqual(calls[0], "image inspect mvr-validate:local")
        self.assertEqual(calls[1], "import - mvr-validate:local")
        self.assertIn("lib/mvr.bin", calls)
        self.assertTrue(calls[-1].startswith("run --rm --network none "), calls[-1])
        self.assertTrue(calls[-1].endswith("/lib/mvr.bin version"), calls[-1])
        self.assertFalse([c for c in calls if c.startswith("pull")])


if __name__ == "__main__":
    unittest.main()
