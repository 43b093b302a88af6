#!/usr/bin/python3 -S
"""A stand-in for the AWS CLI that answers the calls of deploy/teardown.sh from a JSON state file
(FAKE_AWS_STATE), for tests that need a teardown in seconds rather than minutes on moto. The
state: "resources" maps a kind (table, queue, log-group, role, policy, parameter, function,
trigger, schedule, target, alarm, dashboard) to names; "sticky" resources ("KIND NAME") are never
deleted (a delete "succeeds" and the resource stays, as a service that dropped the request);
"hidden_once" ones are left out of their first listing (a listing that missed them). -S: no site
packages, a quicker start (teardown calls it some 80 times). Every call is appended
to "calls". Answers are what the real CLI prints after its --query (the scripts' queries are not
evaluated here: the answers already have that shape)."""
import fcntl
import json
import os
import sys

ACCOUNT = "123456789012"


def main(argv):
    args = [a for a in argv]
    while args and args[0].startswith("--"):  # --endpoint-url URL --region R --output json
        args = args[2:]
    service, command, rest = args[0], args[1], args[2:]
    opts = {}
    key = None
    for a in rest:
        if a.startswith("--"):
            key = a[2:]
            opts.setdefault(key, [])
        elif key:
            opts[key].append(a)
    path = os.environ["FAKE_AWS_STATE"]
    with open(path + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        with open(path) as f:
            state = json.load(f)
        state.setdefault("calls", []).append("%s %s" % (service, command))
        code = answer(state, service, command, opts)
        with open(path, "w") as f:
            json.dump(state, f)
    return code


def listed(state, kind):
    """The names of KIND a listing shows (hidden_once names are shown from the second listing)."""
    names = sorted(state["resources"].get(kind, []))
    seen = state.setdefault("listed", {})
    out = []
    for n in names:
        if "%s %s" % (kind, n) in state.get("hidden_once", []) and not seen.get(kind + n):
            seen[kind + n] = True
            continue
        out.append(n)
    return out


def delete(state, kind, name):
    have = state["resources"].get(kind, [])
    if name not in have:
        print("An error occurred (ResourceNotFoundException): %s not found" % name, file=sys.stderr)
        return 254
    if "%s %s" % (kind, name) not in state.get("sticky", []):
        have.remove(name)
    return 0


def answer(state, service, command, opts):
    one = lambda k: opts.get(k, [""])[0]
    out = None
    call = (service, command)
    if call == ("sts", "get-caller-identity"):
        out = {"Arn": "arn:aws:iam::%s:user/deployer" % ACCOUNT}
    elif call == ("ssm", "get-parameters"):
        out = [n for n in listed(state, "parameter") if n in opts.get("names", [])]
    elif call == ("iam", "get-account-authorization-details"):
        out = {"roles": [{"RoleName": r, "RolePolicyList": [{"PolicyName": r}],
                          "AttachedManagedPolicies": []} for r in listed(state, "role")],
               "policies": [{"Arn": "arn:aws:iam::%s:policy/%s" % (ACCOUNT, p), "AttachmentCount": 0,
                             "PolicyVersionList": [{"VersionId": "v1", "IsDefaultVersion": True}]}
                            for p in listed(state, "policy")]}
    elif call == ("logs", "describe-log-groups"):
        out = {"logGroups": [{"logGroupName": g} for g in listed(state, "log-group")]}
    elif call == ("sqs", "list-queues"):
        out = {"QueueUrls": ["https://sqs.local/%s/%s" % (ACCOUNT, q) for q in listed(state, "queue")]}
    elif call == ("dynamodb", "list-tables"):
        out = {"TableNames": listed(state, "table")}
    elif call == ("lambda", "list-functions"):
        out = listed(state, "function")
    elif call == ("lambda", "list-event-source-mappings"):
        # A trigger is "QUEUE>FUNCTION", also its UUID.
        out = {"EventSourceMappings": [
            {"UUID": t, "EventSourceArn": "arn:aws:sqs:us-east-1:%s:%s" % (ACCOUNT, t.split(">")[0]),
             "FunctionArn": "arn:aws:lambda:us-east-1:%s:function:%s" % (ACCOUNT, t.split(">")[1])}
            for t in listed(state, "trigger")]}
    elif call == ("events", "list-targets-by-rule"):
        rule = one("rule")
        out = {"Targets": [{"Id": t.split(" ")[-1], "Arn": "arn:x"} for t in listed(state, "target")
                           if t.split(" ")[0] == rule]}
    elif call == ("events", "list-rules"):
        out = {"Rules": [{"Name": r} for r in listed(state, "schedule")]}
    elif call == ("cloudwatch", "describe-alarms"):
        out = {"MetricAlarms": [{"AlarmName": a} for a in listed(state, "alarm")]}
    elif call == ("cloudwatch", "get-dashboard"):
        if one("dashboard-name") not in listed(state, "dashboard"):
            print("An error occurred (ResourceNotFound): Dashboard does not exist", file=sys.stderr)
            return 254
        out = {"DashboardBody": "{}"}
    elif call in (("lambda-microvms", "list-microvm-images"), ("lambda-microvms", "list-microvms")):
        out = {"items": []}
    elif call == ("iam", "list-entities-for-policy"):
        out = {}
    elif command.startswith("delete-") or command == "remove-targets":
        return deleted(state, service, command, opts)
    else:
        print("fake_aws: no answer for %s %s" % call, file=sys.stderr)
        return 255
    print(json.dumps(out))
    return 0


def deleted(state, service, command, opts):
    one = lambda k: opts.get(k, [""])[0]
    if command == "remove-targets":
        return delete(state, "target", "%s -> %s" % (one("rule"), one("ids")))
    if command == "delete-event-source-mapping":
        return delete(state, "trigger", one("uuid"))
    if command in ("delete-alarms", "delete-parameters"):
        kind = "alarm" if command == "delete-alarms" else "parameter"
        key = "alarm-names" if kind == "alarm" else "names"
        return max([delete(state, kind, n) for n in opts.get(key, [])] + [0])
    if command == "delete-dashboards":
        return delete(state, "dashboard", one("dashboard-names"))
    if command == "delete-role-policy":
        return 0
    if command == "delete-policy":
        return delete(state, "policy", one("policy-arn").rsplit("/", 1)[1])
    if command == "delete-queue":
        return delete(state, "queue", one("queue-url").rsplit("/", 1)[1])
    kind, key = {"delete-rule": ("schedule", "name"), "delete-function": ("function", "function-name"),
                 "delete-role": ("role", "role-name"), "delete-log-group": ("log-group", "log-group-name"),
                 "delete-table": ("table", "table-name")}[command]
    return delete(state, kind, one(key))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
