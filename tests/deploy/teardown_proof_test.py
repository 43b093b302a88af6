#!/usr/bin/env python3
"""deploy/teardown.sh proves what it deleted (issue 52, item 11), in seconds: against a stand-in
for the AWS CLI (fake_aws.py) rather than moto, so it runs in the default tier. A resource the
first listing missed is deleted in the next round; one that stays after deleting fails the run,
named; and lib.sh's `named` finds a name at the head of a list longer than a pipe's buffer (the
old printf | grep -q under pipefail answered "not there" whenever grep exited before printf's
last write, which is how teardown once skipped the launcher function). The same run on moto,
bootstrap, teardown and a full inventory in a row, is DeployLoopOnMoto (deep tier)."""
import json
import os
import subprocess
import tempfile
import unittest

SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FAKE = os.path.join(SOURCE, "tests", "deploy", "fake_aws.py")
SET = "px"


def set_resources(set_id):
    """Every resource bootstrap makes for SET_ID with --config, by kind (fake_aws.py's state)."""
    fns = ["webhook", "launcher", "janitor", "warm-pool"]
    p = "mvr-%s_" % set_id
    return {
        "table": ["mvr-%s" % set_id, p + "pools"], "queue": [p + "jobs", p + "jobs-dlq"],
        "log-group": ["/aws/lambda/" + p + f for f in fns], "role": [p + f for f in fns],
        "policy": [p + "action", p + "action-pool", p + "action-sweep"],
        "parameter": ["/mvr/%s/webhook-secret" % set_id, "/mvr/%s/github-token" % set_id],
        "function": [p + f for f in fns], "trigger": [p + "jobs>" + p + "launcher"],
        "schedule": [p + "janitor", p + "warm-pool"],
        "target": [p + "janitor -> janitor", p + "warm-pool -> warm-pool"],
        "alarm": ["mvr-%s.dead-letters" % set_id], "dashboard": ["mvr-%s" % set_id],
    }


class TeardownProof(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory(prefix="mvr-teardown-proof-")
        self.state = os.path.join(self.dir.name, "state.json")

    def tearDown(self):
        self.dir.cleanup()

    def teardown(self, sticky=(), hidden_once=()):
        with open(self.state, "w") as f:
            json.dump({"resources": set_resources(SET), "sticky": list(sticky),
                       "hidden_once": list(hidden_once)}, f)
        env = dict(os.environ, AWS=FAKE, AWS_REGION="us-east-1", FAKE_AWS_STATE=self.state)
        r = subprocess.run(["bash", os.path.join(SOURCE, "deploy", "teardown.sh"),
                            "--runner-set-id", SET, "--yes"], env=env, capture_output=True,
                           text=True, timeout=120)
        with open(self.state) as f:
            return r, json.load(f)

    def test_a_function_the_first_listing_missed_is_deleted_in_the_next_round(self):
        r, state = self.teardown(hidden_once=["function mvr-px_launcher"])
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        first, again = r.stdout.split("teardown: listed again: 1 still there; deleting them\n")
        self.assertNotIn("function        mvr-px_launcher", first)
        self.assertIn("deleted         function        mvr-px_launcher\n", again)
        self.assertIn("teardown: deleted 31; listed again, nothing of the set is left", again)
        self.assertEqual({k: v for k, v in state["resources"].items() if v}, {})
        # Listed before deleting, after the first round and after the second.
        self.assertEqual(state["calls"].count("lambda list-functions"), 3)
        self.assertEqual(state["calls"].count("lambda delete-function"), 4)

    def test_what_is_still_there_after_deleting_fails_the_run_named(self):
        r, state = self.teardown(sticky=["function mvr-px_launcher", "queue mvr-px_jobs-dlq"])
        self.assertNotEqual(r.returncode, 0, r.stdout)
        self.assertIn("still there after deleting (run teardown again, or delete them by hand): "
                      "queue mvr-px_jobs-dlq, function mvr-px_launcher", r.stderr)
        self.assertNotIn("nothing of the set is left", r.stdout)
        self.assertEqual({k: v for k, v in state["resources"].items() if v},
                         {"queue": ["mvr-px_jobs-dlq"], "function": ["mvr-px_launcher"]})

    def test_named_finds_a_name_at_the_head_of_a_list_longer_than_a_pipe_buffer(self):
        script = ('set -euo pipefail; source "%s/deploy/lib.sh"; list="$(seq -f mvr-x-%%g 1 20000)"\n'
                  'for i in 1 2 3; do named mvr-x-1 "$list" || { echo missed; exit 1; }; done\n'
                  '! named mvr-x-0 "$list" && ! named mvr-x- "$list" && named mvr-x-20000 "$list"'
                  % SOURCE)
        r = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)


if __name__ == "__main__":
    unittest.main()
