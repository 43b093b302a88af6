#!/usr/bin/env python3
"""deploy/iam/*.json: well-formed IAM policies, no `*` resource where a narrower one exists, and
every Lambda MicroVMs operation the code calls is allowed. The operations are read from the code
(MicrovmService's methods in src/aws/microvms/microvms.h, their calls in src/action, src/runnerset,
src/lambda and src/fleet, the MicroVM lifecycle both products share), so a new call without a
policy fails here."""
import glob
import json
import os
import re
import unittest

SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
IAM = os.path.join(SOURCE, "deploy", "iam")
MODEL = os.path.join(SOURCE, "models", "lambda-microvms", "service-2.json")
PLACEHOLDERS = {"partition", "region", "account", "image", "table", "queue", "execution_role",
                "runner_set", "bucket", "build_role"}
# Actions AWS authorizes only on "*": a list with no resource to name (and an event source
# mapping not yet created, narrowed by its lambda:FunctionArn condition).
STAR_ONLY = {"lambda:ListMicrovms", "lambda:ListMicrovmImages", "dynamodb:ListTables",
             "sqs:ListQueues", "logs:DescribeLogGroups", "iam:GetAccountAuthorizationDetails",
             "lambda:ListFunctions", "lambda:ListEventSourceMappings", "events:ListRules",
             "lambda:CreateEventSourceMapping"}
# The CLI calls of deploy/*.sh whose IAM action is not the command's name in CamelCase.
CLI_ACTIONS = {"sts get-caller-identity": None,  # needs no permission
               "dynamodb wait": "dynamodb:DescribeTable",  # wait table-exists
               "lambda wait": "lambda:GetFunctionConfiguration"}  # wait function-updated
RUNNER_SET_FUNCTIONS = ["webhook", "launcher", "janitor", "warm-pool"]


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def policy(name):
    return json.loads(read(os.path.join(IAM, name)))


def allowed(doc, service="lambda"):
    return {a for st in doc["Statement"] for a in st["Action"] if a.startswith(service + ":")}


def service_methods():
    """MicrovmService's operations: its pure virtual methods."""
    header = read(os.path.join(SOURCE, "src", "aws", "microvms", "microvms.h"))
    return set(re.findall(r"virtual [^;]*?\b([A-Z]\w*Microvm\w*)\(", header))


def called(files):
    """The MicrovmService operations called in `files`: member calls (`x.Op(`, `x->Op(`) and the
    ListAll… pagination helpers of src/aws/microvms/microvms.h (ListAllMicrovms calls ListMicrovms)."""
    methods = service_methods()
    ops = set()
    for path in files:
        text = read(path)
        for name in re.findall(r"(?:\.|->)\s*([A-Z]\w*)\s*\(", text):
            if name in methods:
                ops.add(name)
        for name in re.findall(r"\bListAll(\w+)\s*\(", text):
            if "List" + name in methods:
                ops.add("List" + name)
    return ops


def sources(*dirs):
    out = []
    for d in dirs:
        out += glob.glob(os.path.join(SOURCE, d, "**", "*.cpp"), recursive=True)
    return out


class IamPoliciesTest(unittest.TestCase):
    def test_every_file_is_a_well_formed_policy(self):
        files = sorted(glob.glob(os.path.join(IAM, "*.json")))
        self.assertGreaterEqual(len(files), 2 + len(RUNNER_SET_FUNCTIONS))
        operations = set(json.loads(read(MODEL))["operations"])
        for path in files:
            name = os.path.basename(path)
            doc = json.loads(read(path))
            self.assertEqual(set(doc), {"Version", "Statement"}, name)
            self.assertEqual(doc["Version"], "2012-10-17", name)
            sids = [st["Sid"] for st in doc["Statement"]]
            self.assertEqual(len(sids), len(set(sids)), name + ": duplicate Sid")
            for st in doc["Statement"]:
                where = "%s %s" % (name, st.get("Sid"))
                self.assertTrue(set(st) <= {"Sid", "Effect", "Action", "Resource", "Condition"},
                                where)
                self.assertRegex(st["Sid"], r"^[A-Za-z0-9]+$", where)
                # Deny only in deployer.json: what keeps the set's roles inside their boundary.
                self.assertIn(st["Effect"], ("Allow", "Deny") if name == "deployer.json"
                              else ("Allow",), where)
                self.assertTrue(st["Action"] and st["Resource"], where)
                for action in st["Action"]:
                    self.assertRegex(action, r"^[a-z0-9]+:[A-Z][A-Za-z]+$", where)
                    if action.startswith("lambda:") and "Microvm" in action:
                        self.assertIn(action[len("lambda:"):], operations, where)
                for resource in st["Resource"]:
                    if resource == "*":
                        self.assertTrue(set(st["Action"]) <= STAR_ONLY,
                                        where + ": '*' for actions that have a resource")
                        continue
                    self.assertRegex(resource, r"^arn:\{\{partition\}\}:", where)
                    for placeholder in re.findall(r"\{\{(\w+)\}\}", resource):
                        self.assertIn(placeholder, PLACEHOLDERS, where)
                    self.assertNotRegex(resource.replace("{{", "").replace("}}", ""), r"[{}]",
                                        where)

    def test_the_action_policy_allows_exactly_the_microvm_calls_the_action_makes(self):
        calls = called(sources("src/action", "src/fleet", "src/cli"))
        self.assertIn("RunMicrovm", calls)  # the scan finds calls at all
        # lambda:PassNetworkConnector is no operation: RunMicrovm needs it per connector (below).
        self.assertEqual(allowed(policy("action.json")) - {"lambda:PassNetworkConnector"},
                         {"lambda:" + op for op in calls})

    def test_every_policy_that_runs_microvms_may_pass_the_default_connectors(self):
        # Every RunMicrovm names AWS's managed connectors (src/fleet/network_connectors.h), and
        # attaching one is lambda:PassNetworkConnector on its ARN.
        managed = "arn:{{partition}}:lambda:{{region}}:aws:network-connector:aws-network-connector:"
        for path in sorted(glob.glob(os.path.join(IAM, "*.json"))):
            doc = json.loads(read(path))
            if "lambda:RunMicrovm" not in allowed(doc):
                continue
            passed = {r for st in doc["Statement"] if "lambda:PassNetworkConnector" in st["Action"]
                      for r in st["Resource"]}
            self.assertEqual(passed, {managed + "ALL_INGRESS", managed + "INTERNET_EGRESS"},
                             os.path.basename(path))

    def test_the_sweep_policy_may_only_read_and_end_vms_and_read_and_remove_records(self):
        """Issue 52 item 8: `mvr sweep` reads its records (Query), reads each VM (GetMicrovm),
        ends the finished ones (TerminateMicrovm) and removes records (DeleteItem): nothing that
        launches, resumes or lists VMs, and no write but a delete to the table."""
        doc = policy("action-sweep.json")
        self.assertEqual(allowed(doc) | allowed(doc, "dynamodb"),
                         {"lambda:GetMicrovm", "lambda:TerminateMicrovm", "dynamodb:Query",
                          "dynamodb:DeleteItem"})

    def test_the_action_pool_policy_is_data_plane_on_one_table(self):
        doc = policy("action-pool.json")
        for st in doc["Statement"]:
            self.assertTrue(all(a.startswith("dynamodb:") for a in st["Action"]))
            self.assertEqual(st["Resource"],
                             ["arn:{{partition}}:dynamodb:{{region}}:{{account}}:table/{{table}}"])
            for forbidden in ("CreateTable", "UpdateTable", "DeleteTable", "Scan"):
                self.assertNotIn("dynamodb:" + forbidden, st["Action"])

    def test_the_runner_set_functions_allow_every_microvm_call_of_the_runner_set(self):
        calls = called(sources("src/runnerset", "src/lambda", "src/fleet"))
        self.assertIn("RunMicrovm", calls)
        union = set()
        for fn in RUNNER_SET_FUNCTIONS:
            union |= allowed(policy("runner-set-%s.json" % fn))
        for op in sorted(calls):
            self.assertIn("lambda:" + op, union, op + " is called but no runner-set policy allows it")

    def test_the_launcher_may_send_a_fresh_copy_of_a_deferred_intent(self):
        # LauncherHandler re-sends an intent deferred one receive short of the dead-letter limit
        # (src/lambda/handlers.cpp); the policy once lacked the action, so on AWS that copy was
        # refused and the job dead-lettered after all.
        self.assertIn("queue_.Send(", read(os.path.join(SOURCE, "src", "lambda", "handlers.cpp")))
        actions = {a for st in policy("runner-set-launcher.json")["Statement"] for a in st["Action"]}
        self.assertIn("sqs:SendMessage", actions)

    def test_the_image_build_policy_allows_exactly_the_microvm_calls_image_build_makes(self):
        calls = called(sources("src/imagebuild"))
        self.assertIn("CreateMicrovmImage", calls)
        self.assertEqual(allowed(policy("image-build.json")), {"lambda:" + op for op in calls})
        # The service's build role reads the artifact and nothing else.
        self.assertEqual([a for st in policy("image-build-role.json")["Statement"]
                          for a in st["Action"]], ["s3:GetObject"])

    def test_every_lambda_function_writes_only_its_own_log_group(self):
        for fn in RUNNER_SET_FUNCTIONS:
            doc = policy("runner-set-%s.json" % fn)
            logs = [r for st in doc["Statement"] if any(a.startswith("logs:") for a in st["Action"])
                    for r in st["Resource"]]
            self.assertEqual(logs, ["arn:{{partition}}:logs:{{region}}:{{account}}:log-group:"
                                    "/aws/lambda/mvr-{{runner_set}}_%s:*" % fn])

    def test_no_resource_of_a_set_reaches_a_set_whose_id_extends_its_own(self):
        """Issue 53 item 4: ids prefix one another (ci, ci1, ci-gpu). Every resource naming the
        set puts a character ids cannot hold ('_', '/' or '.') right after the id, so the
        resource filled for ci matches nothing the same resource names for ci1 or ci-gpu."""
        def wildcard(text):
            return "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in text)
        checked = 0
        for path in sorted(glob.glob(os.path.join(IAM, "*.json"))):
            doc = json.loads(read(path))
            for st in doc["Statement"]:
                values = list(st["Resource"]) + [v for c in st.get("Condition", {}).values()
                                                  for vs in c.values()
                                                  for v in (vs if isinstance(vs, list) else [vs])]
                for resource in values:
                    if "{{runner_set}}" not in resource:
                        continue
                    checked += 1
                    after = resource.split("{{runner_set}}", 1)[1][:1]
                    self.assertIn(after, ("_", "/", ".", "", '"'), "%s: %s" % (path, resource))
                    ours = wildcard(resource.replace("{{runner_set}}", "ci"))
                    for other in ("ci1", "ci-gpu", "ci10"):
                        theirs = resource.replace("{{runner_set}}", other).replace("*", "x")
                        self.assertIsNone(re.fullmatch(ours, theirs),
                                          "%s: %s reaches %s" % (path, resource, theirs))
        self.assertGreater(checked, 30)

    def test_each_function_may_read_only_the_secrets_it_uses(self):
        """Issue 53 item 9: the internet-facing webhook reads the webhook secret and not the
        GitHub credentials; the launcher, janitor and warm pool read the credentials (the token,
        the App keys) and not the webhook secret; none reads another set's."""
        def may_read(doc, parameter):
            arn = "arn:aws:ssm:us-east-1:123456789012:parameter" + parameter
            for st in doc["Statement"]:
                if "ssm:GetParameter" not in st["Action"]:
                    continue
                for resource in st["Resource"]:
                    filled = resource.replace("{{partition}}", "aws").replace(
                        "{{region}}", "us-east-1").replace("{{account}}", "123456789012").replace(
                        "{{runner_set}}", "ci")
                    pattern = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c)
                                      for c in filled)
                    if re.fullmatch(pattern, arn):
                        return True
            return False
        secrets = ["webhook-secret", "github-token", "github-app-private-key",
                   "github-app-private-key-2"]
        for fn in RUNNER_SET_FUNCTIONS:
            doc = policy("runner-set-%s.json" % fn)
            readable = [s for s in secrets if may_read(doc, "/mvr/ci/" + s)]
            want = ["webhook-secret"] if fn == "webhook" else secrets[1:]
            self.assertEqual(readable, want, fn)
            for other in ("/mvr/ci1/" + want[0], "/mvr/ci-gpu/" + want[0]):
                self.assertFalse(may_read(doc, other), fn + " reads " + other)

    def test_the_deployer_policy_allows_every_call_of_bootstrap_and_teardown(self):
        """Every `aws_ SERVICE COMMAND` and `microvms COMMAND` of deploy/*.sh is an action of
        deployer.json (`iam detach-$kind-policy`: the three kinds); a new call without it fails."""
        actions = {a for st in policy("deployer.json")["Statement"] if st["Effect"] == "Allow"
                   for a in st["Action"]}
        calls = set()
        for path in glob.glob(os.path.join(SOURCE, "deploy", "*.sh")):
            text = read(path)
            for service, command in re.findall(r"\baws_ ([a-z0-9-]+) \"?([a-z$]+(?:-[a-z$]+)+|wait)\b", text):
                calls.add("%s %s" % (service, command))
            for command in re.findall(r"\bmicrovms ([a-z]+(?:-[a-z]+)+)", text):
                calls.add("lambda-microvms " + command)
        self.assertIn("lambda create-function", calls)  # the scan finds calls at all
        self.assertIn("lambda-microvms terminate-microvm", calls)
        needed = set()
        for call in calls:
            service, command = call.split(" ")
            if call in CLI_ACTIONS:
                if CLI_ACTIONS[call]:
                    needed.add(CLI_ACTIONS[call])
            elif "$kind" in command:
                needed |= {"iam:Detach%sPolicy" % k for k in ("User", "Group", "Role")}
            else:
                prefix = "lambda" if service == "lambda-microvms" else service
                needed.add(prefix + ":" + "".join(w.capitalize() for w in command.split("-")))
        self.assertEqual(sorted(needed - actions), [], "called by deploy/*.sh, not in deployer.json")

    def test_every_role_the_deployer_writes_must_carry_the_boundary(self):
        """Issue 53 item 5: the deployer may create or write a role only with the set's boundary
        (a condition on iam:PermissionsBoundary), is denied doing so without it, and may neither
        remove it nor change, re-version or delete the boundary policy; it passes only the set's
        four function roles, only to Lambda; the boundary allows what the four functions' policies
        allow and nothing of IAM but passing the VMs' execution role."""
        boundary = "arn:{{partition}}:iam::{{account}}:policy/mvr-{{runner_set}}_boundary"
        roles = ["arn:{{partition}}:iam::{{account}}:role/mvr-{{runner_set}}_%s" % f
                 for f in RUNNER_SET_FUNCTIONS]
        role_writes = {"iam:CreateRole", "iam:PutRolePolicy", "iam:AttachRolePolicy",
                       "iam:PutRolePermissionsBoundary"}
        doc = policy("deployer.json")
        allows = [st for st in doc["Statement"] if st["Effect"] == "Allow"]
        denies = [st for st in doc["Statement"] if st["Effect"] == "Deny"]
        for st in allows:
            if set(st["Action"]) & role_writes:
                self.assertEqual(st.get("Condition"),
                                 {"StringEquals": {"iam:PermissionsBoundary": boundary}}, st["Sid"])
                self.assertEqual(st["Resource"], roles, st["Sid"])
            if "iam:PassRole" in st["Action"]:
                self.assertEqual(st["Resource"], roles, st["Sid"])
                self.assertEqual(st["Condition"], {"StringEquals": {
                    "iam:PassedToService": "lambda.amazonaws.com"}}, st["Sid"])
            if any(a.startswith("iam:") and "PolicyVersion" in a for a in st["Action"]):
                self.assertNotIn(boundary, st["Resource"], st["Sid"])
                self.assertFalse([r for r in st["Resource"] if r.endswith("_*")], st["Sid"])
        denied = {a: st for st in denies for a in st["Action"]}
        for action in role_writes:
            self.assertEqual(denied[action].get("Condition"),
                             {"StringNotEquals": {"iam:PermissionsBoundary": boundary}}, action)
        self.assertNotIn("Condition", denied["iam:DeleteRolePermissionsBoundary"])
        for action in ("iam:CreatePolicyVersion", "iam:SetDefaultPolicyVersion",
                       "iam:DeletePolicyVersion", "iam:DeletePolicy"):
            self.assertEqual(denied[action]["Resource"], [boundary], action)
            self.assertNotIn("Condition", denied[action], action)

        bounds = policy("runner-set-boundary.json")
        bounded = {a for st in bounds["Statement"] for a in st["Action"]}
        for fn in RUNNER_SET_FUNCTIONS:
            needed = {a for st in policy("runner-set-%s.json" % fn)["Statement"]
                      for a in st["Action"]}
            self.assertEqual(sorted(needed - bounded), [], fn + " needs more than the boundary")
        self.assertEqual(sorted(a for a in bounded if a.startswith("iam:")), ["iam:PassRole"])
        self.assertNotIn("*", [a for st in bounds["Statement"] for a in st["Action"]])

    def test_docs_justify_every_action(self):
        docs = read(os.path.join(SOURCE, "docs", "iam.md"))
        for path in glob.glob(os.path.join(IAM, "*.json")):
            doc = json.loads(read(path))
            self.assertIn(os.path.basename(path), docs)
            for st in doc["Statement"]:
                for action in st["Action"]:
                    self.assertIn("`%s`" % action, docs, action + " is not justified in docs/iam.md")


if __name__ == "__main__":
    unittest.main()
