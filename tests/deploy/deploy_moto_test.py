#!/usr/bin/env python3
"""deploy/bootstrap.sh and deploy/teardown.sh on the AWS CLI against moto's server (127.0.0.1):
bootstrap creates every resource, a second bootstrap changes nothing, a drifted policy is put
back, teardown without --yes deletes nothing, teardown --yes leaves nothing of the set and keeps
what is not the set's. Exits 77 (ctest: skipped) without moto_server or Debian's aws CLI."""
import glob
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import unittest
import urllib.request

SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
AWS = os.environ.get("MVR_TEST_AWS", "/usr/bin/aws")
SET = "ci1"


def find_moto():
    for d in os.environ.get("PATH", "").split(":"):
        p = os.path.join(d, "moto_server")
        if d and "/.pyenv/shims" not in d and os.access(p, os.X_OK):
            return p
    found = sorted(glob.glob("/root/.pyenv/versions/*/bin/moto_server"))
    return found[0] if found else None


class DeployOnMoto(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        cls.moto = subprocess.Popen([find_moto(), "-H", "127.0.0.1", "-p", str(port)],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        cls.url = "http://127.0.0.1:%d" % port
        for _ in range(100):
            try:
                urllib.request.urlopen(cls.url + "/moto-api/", timeout=1)
                break
            except Exception:
                time.sleep(0.2)
        cls.env = dict(os.environ, AWS=AWS, AWS_ENDPOINT_URL=cls.url, AWS_REGION="us-east-1",
                       AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing",
                       AWS_CONFIG_FILE="/dev/null", AWS_SHARED_CREDENTIALS_FILE="/dev/null")
        cls.env.pop("AWS_PROFILE", None)

    @classmethod
    def tearDownClass(cls):
        cls.moto.terminate()
        cls.moto.wait()

    def script(self, name, *args):
        r = subprocess.run(["bash", os.path.join(SOURCE, "deploy", name), "--runner-set-id", SET]
                           + list(args), env=self.env, capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        return r.stdout

    def aws(self, *args):
        r = subprocess.run([AWS, "--endpoint-url", self.url, "--output", "json"] + list(args),
                           env=self.env, capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout or "{}")

    def inventory(self):
        """Every resource in the account of the kinds bootstrap makes."""
        return {
            "tables": sorted(self.aws("dynamodb", "list-tables")["TableNames"]),
            "queues": sorted(u.rsplit("/", 1)[1]
                             for u in self.aws("sqs", "list-queues").get("QueueUrls", [])),
            "roles": sorted(r["RoleName"] for r in self.aws("iam", "list-roles")["Roles"]),
            "policies": sorted(p["PolicyName"] for p in
                               self.aws("iam", "list-policies", "--scope", "Local")["Policies"]),
            "log_groups": sorted(g["logGroupName"] for g in
                                 self.aws("logs", "describe-log-groups")["logGroups"]),
            "parameters": sorted(p["Name"] for p in
                                 self.aws("ssm", "describe-parameters")["Parameters"]),
        }

    def test_bootstrap_is_idempotent_and_teardown_leaves_nothing(self):
        # Not the set's: must survive teardown.
        self.aws("sqs", "create-queue", "--queue-name", "mvr-%s-jobs-other" % SET)
        before = self.inventory()

        first = self.script("bootstrap.sh", "--execution-role", "mvr-vm")
        created = [l.split()[1:] for l in first.splitlines() if l.startswith("create")]
        self.assertEqual(len(created), 21, first)
        state = self.inventory()
        self.assertEqual(sorted(set(state["tables"]) - set(before["tables"])),
                         ["mvr-%s" % SET, "mvr-%s-pools" % SET])
        self.assertEqual(sorted(set(state["queues"]) - set(before["queues"])),
                         ["mvr-%s-jobs" % SET, "mvr-%s-jobs-dlq" % SET])
        self.assertEqual(len(set(state["roles"]) - set(before["roles"])), 4)
        self.assertEqual(len(set(state["log_groups"]) - set(before["log_groups"])), 4)
        self.assertEqual(state["parameters"], ["/mvr/%s/webhook-secret" % SET])
        ttl = self.aws("dynamodb", "describe-time-to-live", "--table-name", "mvr-%s" % SET)
        self.assertEqual(ttl["TimeToLiveDescription"]["AttributeName"], "ttl")
        queue = self.aws("sqs", "get-queue-url", "--queue-name", "mvr-%s-jobs" % SET)["QueueUrl"]
        attrs = self.aws("sqs", "get-queue-attributes", "--queue-url", queue,
                         "--attribute-names", "RedrivePolicy")["Attributes"]
        self.assertTrue(json.loads(attrs["RedrivePolicy"])["deadLetterTargetArn"]
                        .endswith(":mvr-%s-jobs-dlq" % SET))
        role_policy = self.aws("iam", "get-role-policy", "--role-name", "mvr-%s-janitor" % SET,
                               "--policy-name", "mvr-%s-janitor" % SET)["PolicyDocument"]
        text = json.dumps(role_policy)
        self.assertNotIn("{{", text)
        self.assertIn("arn:aws:dynamodb:us-east-1:123456789012:table/mvr-%s" % SET, text)
        # The secret is never printed.
        secret = self.aws("ssm", "get-parameter", "--with-decryption", "--name",
                          "/mvr/%s/webhook-secret" % SET)["Parameter"]["Value"]
        self.assertRegex(secret, r"^[0-9a-f]{64}$")
        self.assertNotIn(secret, first)

        second = self.script("bootstrap.sh", "--execution-role", "mvr-vm")
        self.assertEqual([l for l in second.splitlines() if l.startswith(("create", "update"))],
                         [], second)
        self.assertEqual(self.inventory(), state)

        # Drift: someone widened a role's policy; bootstrap puts the file's back.
        self.aws("iam", "put-role-policy", "--role-name", "mvr-%s-webhook" % SET, "--policy-name",
                 "mvr-%s-webhook" % SET, "--policy-document",
                 '{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]}')
        third = self.script("bootstrap.sh", "--execution-role", "mvr-vm")
        self.assertIn("update  policy          mvr-%s-webhook (inline)" % SET, third)

        self.aws("iam", "create-user", "--user-name", "ci-user")
        self.aws("iam", "attach-user-policy", "--user-name", "ci-user", "--policy-arn",
                 "arn:aws:iam::123456789012:policy/mvr-%s-action" % SET)
        preview = self.script("teardown.sh")
        self.assertIn("nothing is deleted without --yes", preview)
        self.assertIn("would delete  attachment      mvr-%s-action from user ci-user" % SET, preview)
        self.assertEqual(self.inventory(), state)

        done = self.script("teardown.sh", "--yes")
        self.assertIn("deleted       table           mvr-%s" % SET, done)
        self.assertEqual(self.inventory(), before)
        self.assertIn("mvr-%s-jobs-other" % SET, self.inventory()["queues"])
        self.assertIn("nothing of runner set", self.script("teardown.sh"))


if __name__ == "__main__":
    if not find_moto() or not os.access(AWS, os.X_OK):
        print("skipped: needs moto_server and %s (Debian's awscli)" % AWS)
        sys.exit(77)
    unittest.main()
