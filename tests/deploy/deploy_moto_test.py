#!/usr/bin/env python3
"""deploy/bootstrap.sh and deploy/teardown.sh on the AWS CLI against moto's server and the MicroVMs
emulator (`mvr emulate microvms`), both on 127.0.0.1: bootstrap creates every resource including
the Lambda functions and their triggers, the CloudWatch dashboard and alarms (on metrics the C++
code emits), a second bootstrap changes nothing, drift is put back, --alarm-topic becomes the
alarms' action (a malformed one is refused before anything is made), teardown without --yes
deletes nothing, teardown --yes on a half-deployed set terminates the set's MicroVMs (and only
those), deletes its images and leaves nothing else of the set.

Usage: deploy_moto_test.py MVR_BINARY. Exits 77 (ctest: skipped) without moto_server, Debian's aws
CLI or the mvr binary. The test's own reads use boto3 in-process (re-run under moto's Python when
this one lacks boto3): the scripts' CLI processes are the cost, the checks should not add to it."""
import glob
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.request

SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
AWS = os.environ.get("MVR_TEST_AWS", "/usr/bin/aws")
GHES_CA_PEM = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUdGVzdA==\n-----END CERTIFICATE-----\n"
SET = "ci1"
REGION = "us-east-1"
ACCOUNT = "123456789012"
MVR = None  # set from argv

# A MicroVM guest that answers every lifecycle hook with 200 (the emulator calls /ready, /run...).
GUEST = r'''
import http.server, os
class Hooks(http.server.BaseHTTPRequestHandler):
    def answer(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()
    do_GET = do_POST = do_PUT = answer
    def log_message(self, *args):
        pass
http.server.HTTPServer(("127.0.0.1", int(os.environ["MVR_HOOK_PORT"])), Hooks).serve_forever()
'''


def find_moto():
    for d in os.environ.get("PATH", "").split(":"):
        p = os.path.join(d, "moto_server")
        if d and "/.pyenv/shims" not in d and os.access(p, os.X_OK):
            return p
    found = sorted(glob.glob("/root/.pyenv/versions/*/bin/moto_server"))
    return found[0] if found else None


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(url):
    # moto_server takes tens of seconds to start on a loaded machine.
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(url, timeout=1)
            return
        except urllib.error.HTTPError:
            return  # it answers
        except Exception:
            time.sleep(0.2)


def filled(doc, set_id):
    """A deploy/iam document with its placeholders filled as bootstrap fills them."""
    text = json.dumps(doc)
    for k, v in (("partition", "aws"), ("region", REGION), ("account", ACCOUNT),
                 ("runner_set", set_id)):
        text = text.replace("{{%s}}" % k, v)
    return json.loads(text)


def deployer_policy():
    with open(os.path.join(SOURCE, "deploy", "iam", "deployer.json")) as f:
        return json.load(f)


def source_text(*path):
    with open(os.path.join(SOURCE, *path)) as f:
        return f.read()


def emitted_metrics():
    """Function dimension -> the EMF metric names the Lambda functions can emit, read from the
    C++ sources (src/lambda/emf.cpp, src/runnerset/metrics/metrics.cpp, janitor.cpp,
    rate_budget_metrics.cpp): what a dashboard widget or an alarm in namespace mvr/runnerset may
    name. The GitHub gauges are set by the launcher and the janitor."""
    emf = source_text("src", "lambda", "emf.cpp")
    assert '{"Namespace", "mvr/runnerset"}' in emf and '{{"RunnerSetId", "Function"}}' in emf
    metrics = source_text("src", "runnerset", "metrics", "metrics.cpp")
    counter_names = metrics.split("const char* CounterName(", 1)[1].split("\n}\n", 1)[0]
    counters = set(re.findall(r'return "(\w+)";', counter_names)) - {"unknown"}
    swept = source_text("src", "runnerset", "janitor", "janitor.cpp")
    swept = swept.split("kSweptNames = {", 1)[1]
    janitor = {"janitor_" + n for n in re.findall(r'"(\w+)"', swept.split("};", 1)[0])}
    janitor |= set(re.findall(r'v\["(janitor_\w+)"\] = metrics.GetJanitor', emf))
    # Janitor::Sweep does not add the listing sizes (gauges of one sweep) to the metrics.
    janitor -= {n for n in janitor if n.endswith("_listed")}
    gauges = set(re.findall(r'g\["(\w+)"\]', source_text("src", "runnerset",
                                                         "metrics", "rate_budget_metrics.cpp")))
    pool_names = emf.split('for (const char* name : {', 1)[1].split("})", 1)[0]
    pool = {"pool_" + n for n in re.findall(r'"(\w+)"', pool_names)}
    assert "failed" in counters and "janitor_errors" in janitor and "github_rate_limit" in gauges
    assert "github_auth_failing" in gauges and "pool_sweep_errors" in pool
    # Launcher::Record and Janitor::Keep set the GitHub gauges; the warm-pool handler counts pools.
    return {"webhook": counters, "launcher": counters | gauges, "janitor": janitor | gauges,
            "warm-pool": pool}


# The alarms bootstrap makes: name -> (metric or metric-math series, comparison, threshold,
# evaluation periods). The janitor's counts sweeps: its period is the janitor's schedule (the
# test's configuration: 120 s).
ALARMS = {
    "dead-letters": ("AWS/SQS ApproximateNumberOfMessagesVisible Maximum 300",
                     "GreaterThanOrEqualToThreshold", 1, 1),
    "janitor-errors": ("janitor janitor_errors Sum 120", "GreaterThanThreshold", 0, 3),
    "launches-recovered": ("janitor janitor_launches_recovered Sum 900",
                           "GreaterThanThreshold", 0, 1),
    "launches-failing": ("launcher failed Sum 300", "GreaterThanThreshold", 0, 3),
    "github-auth-failing": ("janitor github_auth_failing Maximum 120",
                            "GreaterThanOrEqualToThreshold", 1, 2),
    "rate-budget": ("launcher github_rate_remaining Minimum 300, "
                    "launcher github_rate_limit Maximum 300", "LessThanThreshold", 10, 1),
}


def alarm_metrics(alarm):
    """An alarm's metrics as "FUNCTION NAME STAT PERIOD" (the Function dimension; AWS/SQS metrics
    as "AWS/SQS NAME ..."), comma-separated."""
    def one(metric, stat, period):
        dims = {d["Name"]: d["Value"] for d in metric.get("Dimensions", [])}
        who = metric["Namespace"] if metric["Namespace"] != "mvr/runnerset" else dims["Function"]
        return "%s %s %s %d" % (who, metric["MetricName"], stat, period)
    if alarm.get("MetricName"):
        return one(alarm, alarm["Statistic"], alarm["Period"])
    return ", ".join(one(m["MetricStat"]["Metric"], m["MetricStat"]["Stat"],
                         m["MetricStat"]["Period"]) for m in alarm["Metrics"] if "MetricStat" in m)


ALLOW_ALL = {"Version": "2012-10-17",
             "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}
DENIED = "is not authorized to perform: "


class DeployFixture(unittest.TestCase):
    """moto (IAM enforced, with tests/support/moto_iam's shim, as the C++ suites start it) and the
    MicroVMs emulator (--iam-policies) on 127.0.0.1. Before enforcement, as moto's unauthenticated
    set-up: an `admin` user (everything: the test's own reads and the drift it injects) and one
    user per entry of users() with its policy inline and an access key. The scripts run with the
    `deployer` user's key: deploy/iam/deployer.json filled for the set, nothing else."""

    @classmethod
    def users(cls):
        """name -> (runner set id, policy document) of the users the scripts run as."""
        return {"deployer": (SET, filled(deployer_policy(), SET))}

    @classmethod
    def setUpClass(cls):
        try:
            cls.start()
        except BaseException:
            cls.tearDownClass()  # unittest does not when setUpClass fails: no server left behind
            raise

    @classmethod
    def start(cls):
        cls.moto = cls.emulator = cls.emulator_log = None
        cls.work = tempfile.mkdtemp(prefix="mvr-deploy-test-")
        port = free_port()
        moto_env = dict(os.environ, INITIAL_NO_AUTH_ACTION_COUNT="inf",
                        PYTHONPATH=os.path.join(SOURCE, "tests", "support", "moto_iam"))
        cls.moto = subprocess.Popen([find_moto(), "-H", "127.0.0.1", "-p", str(port)],
                                    env=moto_env, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
        cls.url = "http://127.0.0.1:%d" % port
        wait_ready(cls.url + "/moto-api/")
        for k, v in (("AWS_ACCESS_KEY_ID", "setup"), ("AWS_SECRET_ACCESS_KEY", "setup"),
                     ("AWS_CONFIG_FILE", "/dev/null"), ("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")):
            os.environ[k] = v
        os.environ.pop("AWS_PROFILE", None)
        import boto3
        setup_iam = boto3.session.Session(region_name=REGION).client("iam", endpoint_url=cls.url)
        cls.keys = {}
        emulator_policies = {}
        for name, (set_id, doc) in dict(cls.users(), admin=(None, ALLOW_ALL)).items():
            setup_iam.create_user(UserName=name)
            if doc["Statement"]:
                setup_iam.put_user_policy(UserName=name, PolicyName=name,
                                          PolicyDocument=json.dumps(doc))
            key = setup_iam.create_access_key(UserName=name)["AccessKey"]
            cls.keys[name] = (key["AccessKeyId"], key["SecretAccessKey"])
            emulator_policies[key["AccessKeyId"]] = {
                "principal": "arn:aws:iam::%s:user/%s" % (ACCOUNT, name), "policies": [doc]}
        policies_file = os.path.join(cls.work, "microvms-iam.json")
        with open(policies_file, "w") as f:
            json.dump(emulator_policies, f)
        guest = os.path.join(cls.work, "guest.py")
        with open(guest, "w") as f:
            f.write(GUEST)
        guest_cmd = "%s %s" % (sys.executable, guest)
        images = ["other_0-89abcdef"] + ["%s_0-0123abcd" % s for s, _ in cls.users().values()]
        vm_port = free_port()
        cls.emulator_log = open(os.path.join(cls.work, "emulator.log"), "w")
        cls.emulator = subprocess.Popen(
            [MVR, "emulate", "microvms", "--listen", "127.0.0.1:%d" % vm_port,
             "--state-dir", os.path.join(cls.work, "vms"), "--iam-policies", policies_file]
            + [a for image in sorted(set(images)) for a in ("--image", "%s=%s" % (image, guest_cmd))],
            stdout=subprocess.DEVNULL, stderr=cls.emulator_log)
        cls.microvms_url = "http://127.0.0.1:%d" % vm_port
        wait_ready(cls.microvms_url + "/2025-09-09/microvms")
        # From here moto checks every request's signature and the signer's policies.
        # (not form-encoded: moto reads the raw body)
        urllib.request.urlopen(urllib.request.Request(
            cls.url + "/moto-api/reset-auth", data=b"0", method="POST",
            headers={"Content-Type": "text/plain"}), timeout=10)
        cls.env = dict(os.environ, AWS=AWS, AWS_ENDPOINT_URL=cls.url, AWS_REGION=REGION,
                       AWS_ENDPOINT_URL_LAMBDA_MICROVMS=cls.microvms_url,
                       AWS_CONFIG_FILE="/dev/null", AWS_SHARED_CREDENTIALS_FILE="/dev/null")
        cls.env.pop("AWS_PROFILE", None)
        models = os.path.join(cls.work, "models", "lambda-microvms", "2025-09-09")
        os.makedirs(models)
        shutil.copy(os.path.join(SOURCE, "models", "lambda-microvms", "service-2.json"), models)
        os.environ["AWS_DATA_PATH"] = os.path.join(cls.work, "models")
        admin_key, admin_secret = cls.keys["admin"]
        cls.session = boto3.session.Session(region_name=REGION, aws_access_key_id=admin_key,
                                            aws_secret_access_key=admin_secret)
        # The functions' package, as a user makes it (built once; every bootstrap reuses it).
        cls.package = os.path.join(cls.work, "mvr-lambda.zip")
        subprocess.run([MVR, "package", "lambda", "--arch", "x86_64", "--output", cls.package],
                       check=True, stdout=subprocess.DEVNULL)
        cls.config = os.path.join(cls.work, "runner-set.json")
        # A GHES CA: bootstrap hands the functions its PEM text (no such file exists in Lambda).
        cls.ca = os.path.join(cls.work, "ghes-ca.pem")
        with open(cls.ca, "w") as f:
            f.write(GHES_CA_PEM)
        with open(cls.config, "w") as f:
            json.dump({"runnerSetId": "local", "listen": "127.0.0.1:8080",
                       "github": {"repository": "octo/hello", "patFile": "/etc/mvr/pat",
                                  "webhookSecretFile": "/etc/mvr/webhook-secret",
                                  "caBundle": cls.ca},
                       "classes": [{"label": "mvr", "image": "%s_0-0123abcd" % SET}],
                       "store": "sqlite:/tmp/mvr.db", "queue": "sqlite:/tmp/mvr-queue.db",
                       "janitor": {"intervalSeconds": 120}}, f)
        cls.token = os.path.join(cls.work, "token")
        with open(cls.token, "w") as f:
            f.write("ghp_not-a-real-token-0123456789\n")

    @classmethod
    def tearDownClass(cls):
        for p in (cls.emulator, cls.moto):
            if p:
                p.terminate()
                p.wait()
        if cls.emulator_log:
            cls.emulator_log.close()
        shutil.rmtree(cls.work, ignore_errors=True)

    def run_script(self, name, *args, user="deployer", set_id=SET):
        """deploy/NAME for runner set SET_ID with USER's key: the CompletedProcess."""
        key, secret = self.keys[user]
        env = dict(self.env, AWS_ACCESS_KEY_ID=key, AWS_SECRET_ACCESS_KEY=secret)
        return subprocess.run(["bash", os.path.join(SOURCE, "deploy", name), "--runner-set-id",
                               set_id] + list(args), env=env, capture_output=True, text=True)

    def script(self, name, *args):
        r = self.run_script(name, *args)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertNotIn(DENIED, r.stdout + r.stderr)
        return r.stdout

    def bootstrap_args(self):
        return ["--execution-role", "mvr-vm", "--config", self.config, "--package", self.package,
                "--github-token-file", self.token]

    def client(self, name):
        return self.session.client(
            name, endpoint_url=self.microvms_url if name == "lambda-microvms" else self.url)

    def bootstrap(self):
        return self.script("bootstrap.sh", *self.bootstrap_args())

    def inventory(self):
        """Every resource in the account of the kinds bootstrap makes."""
        c = lambda name: self.client(name)
        lam, events = c("lambda"), c("events")
        functions = lam.list_functions()["Functions"]
        return {
            "tables": sorted(c("dynamodb").list_tables()["TableNames"]),
            "queues": sorted(u.rsplit("/", 1)[1]
                             for u in c("sqs").list_queues().get("QueueUrls", [])),
            "roles": sorted(r["RoleName"] for r in c("iam").list_roles()["Roles"]),
            # Teardown keeps a set's permissions boundary on purpose (the deployer may not delete
            # it: docs/iam.md); DeployerBoundary and DeployOnMoto check it apart.
            "policies": sorted(p["PolicyName"] for p in
                               c("iam").list_policies(Scope="Local")["Policies"]
                               if not p["PolicyName"].endswith("_boundary")),
            "log_groups": sorted(g["logGroupName"] for g in
                                 c("logs").describe_log_groups()["logGroups"]),
            "parameters": sorted(p["Name"] for p in c("ssm").describe_parameters()["Parameters"]),
            "functions": sorted(f["FunctionName"] for f in functions),
            "function_settings": sorted((f["FunctionName"], f["Timeout"], f["CodeSha256"])
                                        for f in functions),
            "triggers": sorted(m["EventSourceArn"]
                               for m in lam.list_event_source_mappings()["EventSourceMappings"]),
            "rules": sorted((r["Name"], r.get("ScheduleExpression"))
                            for r in events.list_rules()["Rules"]),
            "images": sorted(i["name"] for i in c("lambda-microvms").list_microvm_images()["items"]),
            "alarms": sorted((a["AlarmName"], alarm_metrics(a), a["Threshold"],
                              tuple(a["AlarmActions"]))
                             for a in c("cloudwatch").describe_alarms()["MetricAlarms"]),
            "dashboards": sorted((d["DashboardName"], c("cloudwatch").get_dashboard(
                DashboardName=d["DashboardName"])["DashboardBody"])
                for d in c("cloudwatch").list_dashboards()["DashboardEntries"]),
        }

    def vm_states(self):
        return {v["microvmId"]: (v["imageArn"].rsplit(":", 1)[1], v["state"])
                for v in self.client("lambda-microvms").list_microvms()["items"]}



class DeployOnMoto(DeployFixture):
    """bootstrap and teardown as the deployer: deploy/iam/deployer.json is enough for all of it."""

    def test_bootstrap_is_idempotent_and_teardown_leaves_nothing(self):
        microvms = self.client("lambda-microvms")
        ours = [microvms.run_microvm(imageIdentifier="%s_0-0123abcd" % SET)["microvmId"]
                for _ in range(2)]
        theirs = microvms.run_microvm(imageIdentifier="other_0-89abcdef")["microvmId"]
        # Not the set's: must survive teardown.
        self.client("sqs").create_queue(QueueName="mvr-%s_jobs-other" % SET)
        cloudwatch = self.client("cloudwatch")
        cloudwatch.put_metric_alarm(
            AlarmName="mvr-%s-other.dead-letters" % SET, Namespace="AWS/SQS",
            MetricName="ApproximateNumberOfMessagesVisible", Statistic="Maximum", Period=300,
            EvaluationPeriods=1, Threshold=1, ComparisonOperator="GreaterThanThreshold")
        cloudwatch.put_dashboard(DashboardName="mvr-%s-other" % SET, DashboardBody='{"widgets":[]}')
        before = self.inventory()

        # A malformed --alarm-topic is refused before anything is read or made.
        r = self.run_script("bootstrap.sh", *self.bootstrap_args(), "--alarm-topic",
                            "arn:aws:sqs:us-east-1:%s:alarms" % ACCOUNT)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("--alarm-topic must be an SNS topic's ARN, arn:PARTITION:sns:REGION:ACCOUNT:NAME",
                      r.stderr)
        self.assertEqual(self.inventory(), before)

        first = self.bootstrap()
        created = [l.split()[1:] for l in first.splitlines() if l.startswith("create")]
        # 42, the permissions boundary and the two functions' reserved concurrency (issue 53), and
        # the sweep's managed policy (mvr-ID_action-sweep, issue 52 item 8).
        self.assertEqual(len(created), 46, first)
        state = self.inventory()
        new = lambda kind: sorted(set(state[kind]) - set(before[kind]))
        self.assertEqual(new("tables"), ["mvr-%s" % SET, "mvr-%s_pools" % SET])
        self.assertEqual(new("queues"), ["mvr-%s_jobs" % SET, "mvr-%s_jobs-dlq" % SET])
        self.assertEqual(len(new("roles")), 4)
        self.assertEqual(len(new("log_groups")), 4)
        self.assertEqual(state["parameters"], ["/mvr/%s/github-token" % SET,
                                               "/mvr/%s/webhook-secret" % SET])
        self.assertEqual(new("functions"), ["mvr-%s_%s" % (SET, f)
                                            for f in ("janitor", "launcher", "warm-pool",
                                                      "webhook")])
        self.check_functions(first)
        self.check_concurrency({"webhook": 10, "launcher": 10})
        self.check_iam_and_tables()
        self.check_dashboard_and_alarms(actions=[])
        secret = self.client("ssm").get_parameter(
            Name="/mvr/%s/webhook-secret" % SET, WithDecryption=True)["Parameter"]["Value"]
        self.assertRegex(secret, r"^[0-9a-f]{64}$")
        self.assertNotIn(secret, first)
        self.assertNotIn("not-a-real-token", first)
        # Debian's CLI 2.9 cannot limit lambda:InvokeFunction to the Function URL: said, not hidden.
        self.assertIn("warn    permission      mvr-%s_webhook: function-url-invoke" % SET, first)
        self.assertIn("--invoked-via-function-url", first)

        second = self.bootstrap()
        self.assertEqual([l for l in second.splitlines() if l.startswith(("create", "update"))],
                         [], second)
        self.assertEqual(self.inventory(), state)

        # Drift: someone widened a role's policy and shortened the launcher's timeout.
        self.client("iam").put_role_policy(
            RoleName="mvr-%s_webhook" % SET, PolicyName="mvr-%s_webhook" % SET,
            PolicyDocument='{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]}')
        self.client("lambda").update_function_configuration(
            FunctionName="mvr-%s_launcher" % SET, Timeout=3)
        # ... and lifted the webhook's reserved concurrency.
        self.client("lambda").put_function_concurrency(
            FunctionName="mvr-%s_webhook" % SET, ReservedConcurrentExecutions=500)
        # ... and someone raised an alarm's threshold and emptied the dashboard.
        cloudwatch.put_metric_alarm(
            AlarmName="mvr-%s.dead-letters" % SET, Namespace="AWS/SQS",
            MetricName="ApproximateNumberOfMessagesVisible",
            Dimensions=[{"Name": "QueueName", "Value": "mvr-%s_jobs-dlq" % SET}],
            Statistic="Maximum", Period=300, EvaluationPeriods=1, Threshold=100,
            ComparisonOperator="GreaterThanOrEqualToThreshold")
        cloudwatch.put_dashboard(DashboardName="mvr-%s" % SET, DashboardBody='{"widgets":[]}')
        third = self.bootstrap()
        self.assertIn("update  policy          mvr-%s_webhook (inline)" % SET, third)
        self.assertIn("update  function        mvr-%s_launcher (configuration)" % SET, third)
        self.assertIn("update  concurrency     mvr-%s_webhook (10)" % SET, third)
        self.assertIn("update  alarm           mvr-%s.dead-letters\n" % SET, third)
        self.assertIn("update  dashboard       mvr-%s\n" % SET, third)
        self.assertEqual(len([l for l in third.splitlines() if l.startswith("update")]), 5, third)
        self.assertEqual(self.inventory(), state)

        # A class gets a warm pool: the sweeper's schedule is enabled, every function's
        # configuration carries it, and nothing else changes.
        with open(self.config) as f:
            c = json.load(f)
        c["classes"][0]["warmPoolSize"] = 2
        c["lambda"] = {"webhookReservedConcurrency": 5}
        warm_config = os.path.join(self.work, "warm-pool.json")
        with open(warm_config, "w") as f:
            json.dump(c, f)
        # ... and the alarms get an SNS topic as their action.
        topic = self.client("sns").create_topic(Name="mvr-alarms")["TopicArn"]
        warm = self.script("bootstrap.sh", "--execution-role", "mvr-vm", "--config", warm_config,
                           "--package", self.package, "--github-token-file", self.token,
                           "--alarm-topic", topic)
        self.assertIn("update  schedule        mvr-%s_warm-pool (rate(1 minute) ENABLED)" % SET,
                      warm)
        for name in ALARMS:
            self.assertIn("update  alarm           mvr-%s.%s\n" % (SET, name), warm)
        self.assertIn("exists  dashboard       mvr-%s\n" % SET, warm)
        self.assertIn("update  concurrency     mvr-%s_webhook (5)" % SET, warm)
        self.assertIn("exists  concurrency     mvr-%s_launcher (10)" % SET, warm)
        self.check_concurrency({"webhook": 5, "launcher": 10})
        self.check_dashboard_and_alarms(actions=[topic])
        rule = self.client("events").describe_rule(Name="mvr-%s_warm-pool" % SET)
        self.assertEqual(rule["State"], "ENABLED")
        conf = self.client("lambda").get_function_configuration(
            FunctionName="mvr-%s_warm-pool" % SET)
        self.assertEqual(
            json.loads(conf["Environment"]["Variables"]["MVR_CONFIG"])["classes"][0]
            ["warmPoolSize"], 2)

        self.client("iam").create_user(UserName="ci-user")
        self.client("iam").attach_user_policy(
            UserName="ci-user", PolicyArn="arn:aws:iam::%s:policy/mvr-%s_action" % (ACCOUNT, SET))
        state = self.inventory()  # the alarms' actions changed
        preview = self.script("teardown.sh")
        self.assertIn("nothing is deleted without --yes", preview)
        self.assertIn("would delete    attachment      mvr-%s_action from user ci-user" % SET,
                      preview)
        for vm in ours:
            self.assertIn("would terminate microvm         %s" % vm, preview)
        self.assertIn("would delete    alarm           %s\n" % " ".join(
            "mvr-%s.%s" % (SET, name) for name in sorted(ALARMS)), preview)
        self.assertIn("would delete    dashboard       mvr-%s\n" % SET, preview)
        self.assertNotIn(theirs, preview)
        self.assertEqual(self.inventory(), state)
        self.assertNotIn("TERMINATED", [s for _, s in self.vm_states().values()])

        # Half deployed: the launcher and the janitor's schedule are already gone.
        self.client("lambda").delete_function(FunctionName="mvr-%s_launcher" % SET)
        events = self.client("events")
        events.remove_targets(Rule="mvr-%s_janitor" % SET, Ids=["janitor"])
        events.delete_rule(Name="mvr-%s_janitor" % SET)
        done = self.script("teardown.sh", "--yes")
        self.assertIn("deleted         table           mvr-%s" % SET, done)
        self.assertIn("terminated      microvms        2 (all TERMINATED)", done)
        self.assertIn("deleted         dashboard       mvr-%s\n" % SET, done)
        after = self.inventory()
        self.assertEqual(after["images"], ["other_0-89abcdef"])
        self.assertEqual({k: v for k, v in after.items() if k != "images"},
                         {k: v for k, v in before.items() if k != "images"})
        self.assertIn("mvr-%s_jobs-other" % SET, after["queues"])
        # Nothing of the set's monitoring is left; another set's (a longer id) is untouched.
        self.assertEqual([a[0] for a in after["alarms"]], ["mvr-%s-other.dead-letters" % SET])
        self.assertEqual([d[0] for d in after["dashboards"]], ["mvr-%s-other" % SET])
        states = self.vm_states()
        self.assertEqual([states[vm][1] for vm in ours], ["TERMINATED", "TERMINATED"])
        self.assertEqual(states[theirs], ("other_0-89abcdef", "RUNNING"))
        self.assertIn("nothing of runner set", self.script("teardown.sh"))
        # The permissions boundary stays: the deployer may not delete it (docs/iam.md).
        self.assertEqual(self.client("iam").get_policy(
            PolicyArn="arn:aws:iam::%s:policy/mvr-%s_boundary" % (ACCOUNT, SET))["Policy"]
            ["PolicyName"], "mvr-%s_boundary" % SET)

    def check_functions(self, output):
        lam = self.client("lambda")
        queue_url = self.client("sqs").get_queue_url(QueueName="mvr-%s_jobs" % SET)["QueueUrl"]
        for fn in ("webhook", "launcher", "janitor", "warm-pool"):
            conf = lam.get_function_configuration(FunctionName="mvr-%s_%s" % (SET, fn))
            self.assertEqual((conf["Handler"], conf["Runtime"]), (fn, "provided.al2023"))
            self.assertEqual(conf["Role"], "arn:aws:iam::%s:role/mvr-%s_%s" % (ACCOUNT, SET, fn))
            config = json.loads(conf["Environment"]["Variables"]["MVR_CONFIG"])
            self.assertEqual(config["runnerSetId"], SET)
            self.assertEqual(config["store"], "dynamodb:mvr-%s" % SET)
            self.assertEqual(config["queue"], {"uri": "sqs:" + queue_url, "maxReceiveCount": 5})
            self.assertEqual(config["github"]["webhookSecretFile"],
                             "ssm:/mvr/%s/webhook-secret" % SET)
            self.assertEqual(config["github"]["patFile"], "ssm:/mvr/%s/github-token" % SET)
            self.assertEqual(config["launcher"]["executionRoleArn"],
                             "arn:aws:iam::%s:role/mvr-vm" % ACCOUNT)
            self.assertNotIn("listen", config)
            self.assertEqual(config["github"]["caBundle"], GHES_CA_PEM)
        url = lam.get_function_url_config(FunctionName="mvr-%s_webhook" % SET)
        self.assertEqual(url["AuthType"], "NONE")
        self.assertIn("Payload URL   " + url["FunctionUrl"], output)
        policy = json.loads(lam.get_policy(FunctionName="mvr-%s_webhook" % SET)["Policy"])
        self.assertEqual([s["Action"] for s in policy["Statement"]], ["lambda:InvokeFunctionUrl"])
        (mapping,) = lam.list_event_source_mappings(
            FunctionName="mvr-%s_launcher" % SET)["EventSourceMappings"]
        self.assertEqual(mapping["EventSourceArn"],
                         "arn:aws:sqs:us-east-1:%s:mvr-%s_jobs" % (ACCOUNT, SET))
        self.assertEqual(mapping["BatchSize"], 10)
        events = self.client("events")
        rule = events.describe_rule(Name="mvr-%s_janitor" % SET)
        self.assertEqual((rule["ScheduleExpression"], rule["State"]), ("rate(2 minutes)", "ENABLED"))
        (target,) = events.list_targets_by_rule(Rule="mvr-%s_janitor" % SET)["Targets"]
        self.assertTrue(target["Arn"].endswith(":function:mvr-%s_janitor" % SET))
        # No class has a warm pool: the sweeper's rule is there, disabled, until one does.
        rule = events.describe_rule(Name="mvr-%s_warm-pool" % SET)
        self.assertEqual((rule["ScheduleExpression"], rule["State"]), ("rate(1 minute)", "DISABLED"))
        (target,) = events.list_targets_by_rule(Rule="mvr-%s_warm-pool" % SET)["Targets"]
        self.assertTrue(target["Arn"].endswith(":function:mvr-%s_warm-pool" % SET))

    def check_dashboard_and_alarms(self, actions):
        """The dashboard and every alarm, with the metrics, thresholds and ACTIONS expected; each
        mvr/runnerset metric they name is one the code emits, under the function that emits it."""
        emitted = emitted_metrics()
        cloudwatch = self.client("cloudwatch")
        alarms = {a["AlarmName"]: a for a in cloudwatch.describe_alarms(
            AlarmNamePrefix="mvr-%s." % SET)["MetricAlarms"]}
        self.assertEqual(sorted(alarms), ["mvr-%s.%s" % (SET, n) for n in sorted(ALARMS)])
        for name, (metrics, op, threshold, periods) in ALARMS.items():
            alarm = alarms["mvr-%s.%s" % (SET, name)]
            self.assertEqual((alarm_metrics(alarm), alarm["ComparisonOperator"], alarm["Threshold"],
                              alarm["EvaluationPeriods"], alarm["DatapointsToAlarm"]),
                             (metrics, op, threshold, periods, periods), name)
            self.assertEqual((alarm["AlarmActions"], alarm["OKActions"]), (actions, actions), name)
            self.assertEqual(alarm["TreatMissingData"], "notBreaching", name)
            for metric in [alarm] + [m["MetricStat"]["Metric"] for m in alarm.get("Metrics", [])
                                     if "MetricStat" in m]:
                dims = {d["Name"]: d["Value"] for d in metric.get("Dimensions", [])}
                if metric.get("Namespace") == "mvr/runnerset":
                    self.assertEqual(dims["RunnerSetId"], SET, name)
                    self.assertIn(metric["MetricName"], emitted[dims["Function"]], name)
        dlq = alarms["mvr-%s.dead-letters" % SET]["Dimensions"]
        self.assertEqual(dlq, [{"Name": "QueueName", "Value": "mvr-%s_jobs-dlq" % SET}])

        body = json.loads(cloudwatch.get_dashboard(DashboardName="mvr-%s" % SET)["DashboardBody"])
        (status,) = [w for w in body["widgets"] if w["type"] == "alarm"]
        self.assertEqual(sorted(status["properties"]["alarms"]),
                         sorted(a["AlarmArn"] for a in alarms.values()))
        shown = set()
        for widget in body["widgets"]:
            for m in widget["properties"].get("metrics", []):
                fields = [f for f in m if isinstance(f, str)]
                if fields[0] != "mvr/runnerset":
                    continue
                dims = dict(zip(fields[2::2], fields[3::2]))
                self.assertEqual(dims["RunnerSetId"], SET, m)
                self.assertIn(fields[1], emitted[dims["Function"]], m)
                shown.add("%s %s" % (dims["Function"], fields[1]))
        # Every function's metric an alarm watches is on the dashboard too.
        for metrics, _, _, _ in ALARMS.values():
            for metric in metrics.split(", "):
                if not metric.startswith("AWS/"):
                    self.assertIn(" ".join(metric.split()[:2]), shown)
        self.assertIn("webhook received", shown)

    def check_concurrency(self, want):
        """Issue 53 item 7: the functions' reserved concurrency, as bootstrap set it."""
        lam = self.client("lambda")
        got = {fn: lam.get_function_concurrency(FunctionName="mvr-%s_%s" % (SET, fn))
               .get("ReservedConcurrentExecutions") for fn in want}
        self.assertEqual(got, want)

    def check_iam_and_tables(self):
        ttl = self.client("dynamodb").describe_time_to_live(TableName="mvr-%s" % SET)
        self.assertEqual(ttl["TimeToLiveDescription"]["AttributeName"], "ttl")
        sqs = self.client("sqs")
        queue = sqs.get_queue_url(QueueName="mvr-%s_jobs" % SET)["QueueUrl"]
        attrs = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["RedrivePolicy"])
        self.assertTrue(json.loads(attrs["Attributes"]["RedrivePolicy"])["deadLetterTargetArn"]
                        .endswith(":mvr-%s_jobs-dlq" % SET))
        text = json.dumps(self.client("iam").get_role_policy(
            RoleName="mvr-%s_janitor" % SET, PolicyName="mvr-%s_janitor" % SET)["PolicyDocument"])
        self.assertNotIn("{{", text)
        self.assertIn("arn:aws:dynamodb:us-east-1:%s:table/mvr-%s" % (ACCOUNT, SET), text)


class DeployLoopOnMoto(DeployFixture):
    """Issue 52 item 11: bootstrap, teardown and a full inventory, several times in a row, as the
    deployer. Each bootstrap lists the set again and finds all it made; each teardown says nothing
    of the set is left, and the account's full inventory (every resource of the kinds bootstrap
    makes) is what it was before. The first round also has two of the set's MicroVMs running."""

    ROUNDS = 3

    def test_bootstrap_teardown_inventory_in_a_row(self):
        before = self.inventory()
        for n in range(self.ROUNDS):
            with self.subTest(round=n):
                made = self.bootstrap()
                self.assertRegex(made, r"checked set +37 resources listed again, all there")
                state = self.inventory()
                self.assertEqual(sorted(set(state["functions"]) - set(before["functions"])),
                                 ["mvr-%s_%s" % (SET, f)
                                  for f in ("janitor", "launcher", "warm-pool", "webhook")])
                vms = []
                if n == 0:  # teardown deletes the set's image: only the first round has it
                    microvms = self.client("lambda-microvms")
                    vms = [microvms.run_microvm(imageIdentifier="%s_0-0123abcd" % SET)["microvmId"]
                           for _ in range(2)]
                done = self.script("teardown.sh", "--yes")
                self.assertIn("listed again, nothing of the set is left", done)
                for fn in ("webhook", "launcher", "janitor", "warm-pool"):
                    self.assertIn("deleted         function        mvr-%s_%s\n" % (SET, fn), done)
                after = self.inventory()
                self.assertEqual({k: v for k, v in after.items() if k != "images"},
                                 {k: v for k, v in before.items() if k != "images"})
                states = self.vm_states()
                self.assertEqual([states[vm][1] for vm in vms], ["TERMINATED"] * len(vms))
                self.assertIn("nothing of runner set", self.script("teardown.sh"))


class TwoSetsOnMoto(DeployFixture):
    """Issue 53 item 4: runner-set ids that prefix one another (ci, ci1, ci-gpu) on one moto and
    one MicroVMs emulator, each deployed by its own deployer (deployer.json filled for its id).
    Every derived name has '_' after the id, which ids cannot hold: no set's listing, image
    pattern or IAM wildcard reaches another's. Teardown of ci leaves ci1's and ci-gpu's
    resources, images and VMs as they were; ci's deployer is denied their function and image."""

    SETS = ("ci", "ci1", "ci-gpu")

    @classmethod
    def users(cls):
        return {"deployer-" + s: (s, filled(deployer_policy(), s)) for s in cls.SETS}

    def inventory_of(self, state, set_id):
        """The names in an inventory that belong to SET_ID (mvr-ID, mvr-ID_*, mvr-ID.*, /mvr/ID/,
        ID_<index>-<hex>), as (kind, name) pairs."""
        def ours(name):
            name = str(name[0] if isinstance(name, tuple) else name)
            name = name.rsplit("/", 1)[-1] if name.startswith("/aws/lambda/") else name
            name = name.rsplit(":", 1)[-1] if name.startswith("arn:") else name
            return (name in ("mvr-" + set_id,) or name.startswith(("mvr-%s_" % set_id,
                    "mvr-%s." % set_id, "/mvr/%s/" % set_id, "%s_" % set_id)))
        return sorted((kind, str(n)) for kind, names in state.items() for n in names
                      if kind != "function_settings" and ours(n))

    def test_sets_whose_ids_prefix_each_other_never_touch_each_other(self):
        before = self.inventory()
        for s in self.SETS:
            r = self.run_script("bootstrap.sh", *self.bootstrap_args(), user="deployer-" + s,
                                set_id=s)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertRegex(r.stdout, r"checked set +37 resources listed again, all there")
        microvms = self.client("lambda-microvms")
        vms = {s: microvms.run_microvm(imageIdentifier="%s_0-0123abcd" % s)["microvmId"]
               for s in self.SETS}
        state = self.inventory()
        for s in self.SETS:
            mine = self.inventory_of(state, s)
            self.assertIn(("functions", "mvr-%s_launcher" % s), mine)
            self.assertIn(("images", "%s_0-0123abcd" % s), mine)
            for other in self.SETS:
                if other != s:
                    self.assertEqual(set(mine) & set(self.inventory_of(state, other)), set())

        # ci's deployer may not touch the others' function or image (IAM on moto and the
        # emulator). A VM's ARN names no image, so TerminateMicrovm is granted on microvm:*
        # (docs/iam.md): teardown itself picks the set's VMs by their image ARNs (checked below).
        key, secret = self.keys["deployer-ci"]
        env = dict(self.env, AWS_ACCESS_KEY_ID=key, AWS_SECRET_ACCESS_KEY=secret,
                   AWS_DATA_PATH=os.environ["AWS_DATA_PATH"])
        for argv in (["lambda", "delete-function", "--function-name", "mvr-ci-gpu_launcher"],
                     ["--endpoint-url", self.microvms_url, "lambda-microvms",
                      "delete-microvm-image", "--image-identifier", "ci1_0-0123abcd"]):
            r = subprocess.run([AWS] + (["--endpoint-url", self.url] if argv[0] == "lambda"
                                        else []) + argv, env=env, capture_output=True, text=True)
            self.assertNotEqual(r.returncode, 0, "%s: %s" % (argv, r.stdout))
            self.assertIn(DENIED, r.stderr, argv)

        r = self.run_script("teardown.sh", "--yes", user="deployer-ci", set_id="ci")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("listed again, nothing of the set is left", r.stdout)
        self.assertIn("terminated      microvms        1 (all TERMINATED)", r.stdout)
        after = self.inventory()
        self.assertEqual(self.inventory_of(after, "ci"), [])
        for s in ("ci1", "ci-gpu"):
            self.assertEqual(self.inventory_of(after, s), self.inventory_of(state, s), s)
        states = self.vm_states()
        self.assertEqual(states[vms["ci"]][1], "TERMINATED")
        self.assertEqual((states[vms["ci1"]][1], states[vms["ci-gpu"]][1]), ("RUNNING", "RUNNING"))

        for s in ("ci1", "ci-gpu"):
            r = self.run_script("teardown.sh", "--yes", user="deployer-" + s, set_id=s)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        after = self.inventory()
        self.assertEqual({k: v for k, v in after.items() if k != "images"},
                         {k: v for k, v in before.items() if k != "images"})
        self.assertEqual(after["images"], ["other_0-89abcdef"])


ADMIN_DOC = json.dumps(ALLOW_ALL)
ADMIN_POLICY = "arn:aws:iam::aws:policy/AdministratorAccess"


class DeployerBoundary(DeployFixture):
    """Issue 53, item 5: the deployer is not admin-equivalent. Every role it may create or write
    must carry the set's permissions boundary (deploy/iam/runner-set-boundary.json, made by
    bootstrap), which it may not remove, swap, re-version or delete; so an administrator's inline
    policy on a role is bounded by what the functions need. moto evaluates the deployer's
    conditions on iam:PermissionsBoundary through tests/support/moto_iam (it would not on its
    own); it never applies a boundary to the role's own calls (docs/testing.md)."""

    def deployer_iam(self):
        key, secret = self.keys["deployer"]
        import boto3
        return boto3.session.Session(region_name=REGION, aws_access_key_id=key,
                                     aws_secret_access_key=secret).client(
                                         "iam", endpoint_url=self.url)

    def denied(self, call, **kwargs):
        from botocore.exceptions import ClientError
        try:
            call(**kwargs)
        except ClientError as e:
            self.assertIn(e.response["Error"]["Code"], ("AccessDenied", "AccessDeniedException"),
                          "%s %s: %s" % (call.__name__, kwargs, e))
            return
        self.fail("%s %s was allowed" % (call.__name__, kwargs))

    def test_roles_carry_the_boundary_and_the_deployer_cannot_escape_it(self):
        iam = self.deployer_iam()
        boundary = "arn:aws:iam::%s:policy/mvr-%s_boundary" % (ACCOUNT, SET)
        role = "mvr-%s_webhook" % SET
        trust = json.dumps({"Version": "2012-10-17", "Statement": [{
            "Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"},
            "Action": "sts:AssumeRole"}]})
        # No role without the boundary, nor with another one.
        self.denied(iam.create_role, RoleName=role, AssumeRolePolicyDocument=trust)
        self.denied(iam.create_role, RoleName=role, AssumeRolePolicyDocument=trust,
                    PermissionsBoundary=ADMIN_POLICY)
        # Nor a role of another name than the set's four.
        self.denied(iam.create_role, RoleName="mvr-%s_admin" % SET,
                    AssumeRolePolicyDocument=trust, PermissionsBoundary=boundary)

        out = self.script("bootstrap.sh", "--execution-role", "mvr-vm", "--github-token-file",
                          self.token)
        self.assertIn("create  boundary        mvr-%s_boundary" % SET, out)
        admin = self.client("iam")
        for fn in ("webhook", "launcher", "janitor", "warm-pool"):
            got = admin.get_role(RoleName="mvr-%s_%s" % (SET, fn))["Role"]
            self.assertEqual(got["PermissionsBoundary"]["PermissionsBoundaryArn"], boundary, fn)
        version = admin.get_policy(PolicyArn=boundary)["Policy"]["DefaultVersionId"]
        document = admin.get_policy_version(PolicyArn=boundary, VersionId=version)
        actions = {a for st in document["PolicyVersion"]["Document"]["Statement"]
                   for a in st["Action"]}
        self.assertFalse([a for a in actions if a.startswith("iam:") and a != "iam:PassRole"])

        # The boundary stays on, and stays what bootstrap wrote.
        self.denied(iam.delete_role_permissions_boundary, RoleName=role)
        self.denied(iam.put_role_permissions_boundary, RoleName=role,
                    PermissionsBoundary=ADMIN_POLICY)
        self.denied(iam.create_policy_version, PolicyArn=boundary, PolicyDocument=ADMIN_DOC,
                    SetAsDefault=True)
        self.denied(iam.set_default_policy_version, PolicyArn=boundary, VersionId="v1")
        self.denied(iam.delete_policy, PolicyArn=boundary)
        self.denied(iam.attach_role_policy, RoleName=role, PolicyArn=ADMIN_POLICY)
        # An AdministratorAccess-like inline policy is refused on a role that escaped the
        # boundary (an administrator took it off)...
        admin.delete_role_permissions_boundary(RoleName=role)
        self.denied(iam.put_role_policy, RoleName=role, PolicyName=role, PolicyDocument=ADMIN_DOC)
        # ... and bootstrap puts the boundary back before it writes the role's policy.
        again = self.script("bootstrap.sh", "--execution-role", "mvr-vm", "--github-token-file",
                            self.token)
        self.assertIn("update  role            %s (permissions boundary" % role, again)
        self.assertEqual(admin.get_role(RoleName=role)["Role"]["PermissionsBoundary"]
                         ["PermissionsBoundaryArn"], boundary)
        # A boundary someone changed stops bootstrap, naming it; nothing is written through it.
        admin.create_policy_version(PolicyArn=boundary, PolicyDocument=ADMIN_DOC,
                                    SetAsDefault=True)
        r = self.run_script("bootstrap.sh", "--execution-role", "mvr-vm", "--github-token-file",
                            self.token)
        self.assertNotEqual(r.returncode, 0, r.stdout)
        self.assertIn("the permissions boundary mvr-%s_boundary is not" % SET, r.stderr)
        admin.set_default_policy_version(PolicyArn=boundary, VersionId=version)

        # Teardown removes the roles and keeps the boundary (the deployer may not delete it).
        done = self.script("teardown.sh", "--yes")
        self.assertIn("listed again, nothing of the set is left", done)
        self.assertEqual([r["RoleName"] for r in admin.list_roles()["Roles"]
                          if r["RoleName"].startswith("mvr-%s_" % SET)], [])
        self.assertEqual(admin.get_policy(PolicyArn=boundary)["Policy"]["PolicyName"],
                         "mvr-%s_boundary" % SET)


# Statements of deploy/iam/deployer.json that no scenario here can show needed, with the reason
# (docs/iam.md says the same). Empty: every statement is shown.
NOT_SHOWN = {}


def ablated(statement):
    """Whether the ablation removes STATEMENT: each Allow (a Deny removed only widens the policy;
    DeployerBoundary shows each), or only those MVR_ABLATION_STATEMENTS names (comma-separated
    Sids: the run split in parts on a loaded machine)."""
    only = [s for s in os.environ.get("MVR_ABLATION_STATEMENTS", "").split(",") if s]
    return statement["Effect"] == "Allow" and (not only or statement["Sid"] in only)


def ablation_set(index):
    """The runner set id of ablation variant INDEX: "ab" and a letter, so that no set's name
    filter or image pattern (<id>_<digits>-<8 hex>) matches another set's images."""
    return "ab" + chr(ord("a") + index)


def needs_functions(statement):
    """Whether STATEMENT is about what bootstrap makes only with --config: the functions (and the
    roles passed to them), the launcher's trigger, the schedules, the dashboard and alarms (made
    before the functions, so a denial there fails bootstrap early)."""
    resources = json.dumps(statement["Resource"]) + json.dumps(statement.get("Condition", {}))
    return any(k in resources for k in (":function:", ":rule/", "event-source-mapping", ":alarm:",
                                        ":dashboard/")) or \
        "iam:PassRole" in statement["Action"]


class DeployerIamAblation(DeployFixture):
    """Least privilege shown, not claimed (issue 29): for each statement of deployer.json, a user
    holding the policy without it runs bootstrap and, if bootstrap gets through, teardown --yes of
    a set of its own (a fresh id per variant, with a running MicroVM of the set's image and the
    Action's policy attached to a user, so that every teardown step has work). One of the two
    must fail with moto's or the emulator's denial of one of the statement's actions.

    The smallest path that reaches each statement: bootstrap with --config (the Lambda functions,
    their URL, trigger and schedules; the slow part) only for a statement about functions,
    triggers, schedules or passing their roles; the others run bootstrap without --config (its
    tables, queues, log groups, roles, policies and secrets) and teardown of that."""

    @classmethod
    def users(cls):
        users = {}
        for i, st in enumerate(deployer_policy()["Statement"]):
            if not ablated(st):
                continue
            doc = deployer_policy()
            doc["Statement"] = [s for s in doc["Statement"] if s["Sid"] != st["Sid"]]
            users["without-" + st["Sid"]] = (ablation_set(i), filled(doc, ablation_set(i)))
        return users

    def denial(self, output, actions):
        """The first of ACTIONS that OUTPUT says was denied, or None."""
        for action in actions:
            if DENIED + action in output:
                return action
        return None

    def test_without_any_one_statement_bootstrap_or_teardown_is_denied(self):
        shown = {}
        for i, st in enumerate(deployer_policy()["Statement"]):
            if not ablated(st):
                continue
            sid, set_id = st["Sid"], ablation_set(i)
            with self.subTest(statement=sid):
                started = time.monotonic()
                user = "without-" + sid
                args = self.bootstrap_args() if needs_functions(st) else [
                    "--execution-role", "mvr-vm", "--github-token-file", self.token]
                r = self.run_script("bootstrap.sh", *args, user=user, set_id=set_id)
                step = "bootstrap"
                if r.returncode == 0:
                    self.client("lambda-microvms").run_microvm(
                        imageIdentifier="%s_0-0123abcd" % set_id)
                    self.client("iam").create_user(UserName="ci-" + set_id)
                    self.client("iam").attach_user_policy(
                        UserName="ci-" + set_id,
                        PolicyArn="arn:aws:iam::%s:policy/mvr-%s_action" % (ACCOUNT, set_id))
                    r = self.run_script("teardown.sh", "--yes", user=user, set_id=set_id)
                    step = "teardown"
                output = r.stdout + r.stderr
                if sid in NOT_SHOWN:
                    continue
                self.assertNotEqual(r.returncode, 0, "%s not needed: %s" % (sid, output))
                action = self.denial(output, st["Action"])
                self.assertIsNotNone(action, "%s: %s failed, but not denied one of %s:\n%s"
                                     % (sid, step, st["Action"], output))
                shown[sid] = "%s: %s denied (%.0f s)" % (step, action, time.monotonic() - started)
        for sid, what in shown.items():
            print("%-26s %s" % (sid, what), file=sys.stderr)


if __name__ == "__main__":
    MVR = sys.argv.pop(1) if len(sys.argv) > 1 else os.environ.get("MVR_BINARY", "")
    moto = find_moto()
    if not moto or not os.access(AWS, os.X_OK) or not os.access(MVR, os.X_OK) \
            or not shutil.which("jq"):
        print("skipped: needs moto_server, %s (Debian's awscli), jq and the mvr binary" % AWS)
        sys.exit(77)
    try:
        import boto3  # noqa: F401
    except ImportError:  # moto's own Python has it
        python = os.path.join(os.path.dirname(moto), "python3")
        os.execv(python, [python, os.path.abspath(__file__), MVR] + sys.argv[1:])
    unittest.main()
