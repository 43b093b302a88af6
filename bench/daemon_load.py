#!/usr/bin/env python3
"""mvr serve under load (issue 34, item 6; the figures are in docs/runner-set-webhook.md, "Under load").

1. A burst of --jobs jobs (default 1,000) queued at once on `mvr demo` (SQLite store and queue,
   the GitHub and MicroVMs emulators, RunMicrovm at the platform's 5 a second): mvr serve's
   resident memory (peak, and at the end) and threads, sampled from /proc while the jobs are in
   flight, and its CPU time per job.
2. The webhook endpoint over HTTP with --connections keep-alive connections (default 64): mvr
   serve's POST /webhook against a Node server doing the same work with @octokit/webhooks (verify
   the signature, parse the event, match a workflow_job's labels against the set's classes),
   measured side by side in one run, alternating, by the same load generator (autocannon). The
   delivery is a ~10 KB `workflow_job` queued event for labels no class has, so neither side
   enqueues anything: the comparison is of the front door alone.

Run: python3 bench/daemon_load.py build/src/cli/mvr [--jobs N] [--seconds S] [--rounds R]
Needs node and npm (scripts/setup.sh installs them); the Node packages are installed from
bench/node/package-lock.json into the build directory's bench-node/ on first use.
"""
import argparse
import hashlib
import hmac
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TICK = os.sysconf("SC_CLK_TCK")
PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024
CLASS_LABEL = "mvr-bench"


def fail(message):
    print("daemon_load: " + message, file=sys.stderr)
    sys.exit(1)


def proc_sample(pid):
    """(resident KB, peak resident KB, threads, CPU seconds) of a live process, or None."""
    try:
        with open("/proc/%d/status" % pid) as f:
            status = dict(line.split(":", 1) for line in f if ":" in line)
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return None
    kb = lambda key: int(status.get(key, "0 kB").split()[0])
    cpu = (int(fields[11]) + int(fields[12])) / TICK  # utime, stime
    return kb("VmRSS"), kb("VmHWM"), int(status["Threads"]), cpu


def find_serve(work):
    """The pid of the `mvr serve` whose configuration lies under `work` (the demo started it)."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % entry, "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if len(argv) > 3 and argv[1] == b"serve" and argv[3].startswith(work.encode()):
            return int(entry)
    return None


def burst(mvr, jobs, until_completed, work):
    """Phase 1: `mvr demo --jobs N`, with mvr serve sampled from /proc every 0.25 s, until
    `until_completed` jobs have completed (GitHub's 500 JIT configs an hour, which the set keeps
    to, would hold a burst of 1,000 for over an hour) or the demo ends."""
    demo = subprocess.Popen(
        [mvr, "demo", "--jobs", str(jobs), "--job-seconds", "1", "--timeout-seconds", "7200",
         "--work-dir", os.path.join(work, "demo")],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    lines, in_flight = [], []
    reader = threading.Thread(target=lambda: lines.extend(demo.stdout), daemon=True)
    reader.start()
    pid, samples, started, completed = None, [], None, 0
    while demo.poll() is None and completed < until_completed:
        if pid is None:
            pid = find_serve(os.path.join(work, "demo"))
        if pid is not None:
            s = proc_sample(pid)
            if s:
                samples.append(s)
        for line in lines[len(in_flight):]:
            m = re.search(r"completed (\d+)/(\d+)", line)
            in_flight.append(int(m.group(2)) - int(m.group(1)) if m else None)
            if m:
                completed = int(m.group(1))
                started = started or time.monotonic()
        time.sleep(0.25)
    elapsed = time.monotonic() - started if started else 0
    if demo.poll() is None:  # stopped at `until_completed`: the demo and its stack go
        os.killpg(demo.pid, signal.SIGTERM)
        try:
            demo.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(demo.pid, signal.SIGKILL)
            demo.wait()
    else:
        reader.join(timeout=10)
        output = "".join(lines)
        if demo.returncode != 0 or "demo: OK" not in output:
            fail("mvr demo --jobs %d failed (%d):\n%s" % (jobs, demo.returncode, output[-4000:]))
        completed = jobs
    if not samples:
        fail("never saw mvr serve's process")
    peak_in_flight = max([n for n in in_flight if n is not None] or [0])
    return {
        "jobs": jobs,
        "completed": completed,
        "peakInFlight": peak_in_flight,
        "burstSeconds": round(elapsed, 1),
        "peakResidentMiB": round(max(s[1] for s in samples) / 1024, 1),
        "endResidentMiB": round(samples[-1][0] / 1024, 1),
        "peakThreads": max(s[2] for s in samples),
        "cpuSeconds": round(samples[-1][3], 2),
        "cpuMsPerJob": round(samples[-1][3] * 1000 / max(1, completed), 2),
    }


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_line(path, pattern, proc, what, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            fail("%s exited (%d); its log %s:\n%s" % (what, proc.returncode, path,
                                                       open(path).read()[-3000:]))
        with open(path) as f:
            m = re.search(pattern, f.read())
        if m:
            return m.group(1)
        time.sleep(0.1)
    fail("%s did not start within %d s (log %s)" % (what, timeout, path))


def delivery(secret):
    """A ~10 KB workflow_job queued delivery, as github.com sends it, for labels no class has."""
    user = {"login": "octocat", "id": 1, "node_id": "MDQ6VXNlcjE=", "type": "User",
            "site_admin": False, "html_url": "https://github.com/octocat",
            "url": "https://api.github.com/users/octocat"}
    event = {
        "action": "queued",
        "workflow_job": {
            "id": 29679449, "run_id": 10543345, "run_attempt": 1, "node_id": "CR_kwDOBench",
            "head_sha": "f" * 40, "head_branch": "main", "workflow_name": "CI",
            "url": "https://api.github.com/repos/octo/app/actions/jobs/29679449",
            "html_url": "https://github.com/octo/app/actions/runs/10543345/job/29679449",
            "status": "queued", "conclusion": None, "name": "build",
            "created_at": "2026-12-04T20:00:00Z", "started_at": "2026-12-04T20:00:00Z",
            "completed_at": None, "steps": [],
            "labels": ["self-hosted", "linux", "arm64", "not-this-set"],
            "runner_id": None, "runner_name": None, "runner_group_id": None,
            "runner_group_name": None},
        "repository": {"id": 1296269, "node_id": "MDEwOlJlcG9zaXRvcnkxMjk2MjY5",
                       "name": "app", "full_name": "octo/app", "private": True, "owner": user},
        "organization": {"login": "octo", "id": 9919, "node_id": "MDEyOk9yZ2FuaXphdGlvbjk5MTk="},
        "sender": dict(user),
        "installation": {"id": 1, "node_id": "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uMQ=="},
    }
    i = 0
    while len(json.dumps(event)) < 10 * 1024:
        event["sender"]["extra_%d" % i] = "x" * 40
        i += 1
    body = json.dumps(event).encode()
    signature = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    headers = {"content-type": "application/json", "x-github-event": "workflow_job",
               "x-github-delivery": "72d3162e-cc78-11e3-81ab-4c9367dc0958",
               "x-hub-signature-256": signature, "user-agent": "GitHub-Hookshot/bench"}
    return body, headers


def node_packages(build_dir):
    """bench/node's packages, installed once into BUILD/bench-node from the committed lock."""
    target = os.path.join(build_dir, "bench-node")
    stamp = os.path.join(target, ".lock-sha256")
    lock = open(os.path.join(HERE, "node", "package-lock.json"), "rb").read()
    digest = hashlib.sha256(lock).hexdigest()
    for script in ("load.mjs", "octokit-server.mjs"):  # ESM resolves packages beside the file
        os.makedirs(target, exist_ok=True)
        shutil.copy(os.path.join(HERE, "node", script), target)
    if os.path.exists(stamp) and open(stamp).read() == digest:
        return target
    os.makedirs(target, exist_ok=True)
    for name in ("package.json", "package-lock.json"):
        shutil.copy(os.path.join(HERE, "node", name), target)
    if subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--silent"], cwd=target).returncode:
        fail("npm ci in %s failed: the Node side needs the npm registry once" % target)
    with open(stamp, "w") as f:
        f.write(digest)
    return target


def load(node_dir, url, body_file, headers_file, connections, seconds, pid):
    """One autocannon run against `url`, with the server `pid`'s CPU and memory over it."""
    before = proc_sample(pid)
    out = subprocess.run(
        ["node", os.path.join(node_dir, "load.mjs"), url, body_file, headers_file,
         str(connections), str(seconds)],
        cwd=node_dir, capture_output=True, text=True)
    after = proc_sample(pid)
    if out.returncode != 0 or not before or not after:
        fail("the load run against %s failed:\n%s%s" % (url, out.stdout, out.stderr))
    r = json.loads(out.stdout.strip().splitlines()[-1])
    r["serverCpuSecondsPerSecond"] = round((after[3] - before[3]) / seconds, 2)
    # The comparable figure when the one load generator, not the server, sets the pace.
    r["serverCpuUsPerRequest"] = round((after[3] - before[3]) * 1e6 / max(1, r["requests"]), 1)
    r["serverResidentMiB"] = round(after[0] / 1024, 1)
    r["serverThreads"] = after[2]
    return r


def endpoint(mvr, work, node_dir, connections, seconds, rounds):
    """Phase 2: mvr serve's POST /webhook against @octokit/webhooks, alternating."""
    secret = "bench-webhook-secret-0123456789abcdef"
    secret_file = os.path.join(work, "webhook-secret")
    with open(secret_file, "w") as f:
        f.write(secret + "\n")
    pat_file = os.path.join(work, "pat")
    with open(pat_file, "w") as f:
        f.write("ghp_benchbenchbenchbenchbenchbenchbench\n")
    body, headers = delivery(secret)
    body_file, headers_file = os.path.join(work, "body.json"), os.path.join(work, "headers.json")
    with open(body_file, "wb") as f:
        f.write(body)
    with open(headers_file, "w") as f:
        json.dump(headers, f)
    env = dict(os.environ, AWS_REGION="us-east-1", AWS_ACCESS_KEY_ID="AKIDMVRBENCH",
               AWS_SECRET_ACCESS_KEY="mvr-bench-not-a-secret", AWS_EC2_METADATA_DISABLED="true")
    procs = []

    def start(argv, log, pattern, what, extra_env=None):
        p = subprocess.Popen(argv, stdout=open(log, "w"), stderr=subprocess.STDOUT,
                             env=dict(env, **(extra_env or {})), cwd=work)
        procs.append(p)
        return p, wait_for_line(log, pattern, p, what)

    try:
        _, github = start([mvr, "emulate", "github", "--listen", "127.0.0.1:0", "--repo",
                           "octo/app", "--pat-file", pat_file], os.path.join(work, "github.log"),
                          r"listening on (\S+)", "the GitHub emulator")
        _, microvms = start([mvr, "emulate", "microvms", "--listen", "127.0.0.1:0", "--region",
                             "us-east-1", "--state-dir", os.path.join(work, "microvms"),
                             "--image", "bench=sleep 3600"], os.path.join(work, "microvms.log"),
                            r"listening on (\S+)", "the MicroVMs emulator")
        port = free_port()
        config = {"runnerSetId": "bench", "listen": "127.0.0.1:%d" % port, "region": "us-east-1",
                  "github": {"apiUrl": github, "repository": "octo/app", "patFile": pat_file,
                             "webhookSecretFile": secret_file},
                  "classes": [{"label": CLASS_LABEL, "image": "bench"}],
                  "store": "sqlite:" + os.path.join(work, "state.db"),
                  "queue": "sqlite:" + os.path.join(work, "queue.db")}
        with open(os.path.join(work, "serve.json"), "w") as f:
            json.dump(config, f)
        serve, serve_url = start([mvr, "serve", "--config", os.path.join(work, "serve.json")],
                                 os.path.join(work, "serve.log"), r"listening on (\S+)",
                                 "mvr serve", {"AWS_ENDPOINT_URL_LAMBDA_MICROVMS": microvms})
        node, node_url = start(["node", os.path.join(node_dir, "octokit-server.mjs"), "0",
                                secret_file, CLASS_LABEL], os.path.join(work, "octokit.log"),
                               r"listening on (\S+)", "the @octokit/webhooks server")
        targets = [("mvr serve", serve_url.rstrip("/") + "/webhook", serve.pid),
                   ("@octokit/webhooks", node_url, node.pid)]
        for _, url, pid in targets:  # warm both up, and check that each accepts the delivery
            r = load(node_dir, url, body_file, headers_file, connections, 2, pid)
            if r["non2xx"] or r["errors"] or not r["requests"]:
                fail("%s refused the bench delivery: %r (logs in %s)" % (url, r, work))
        results = {name: [] for name, _, _ in targets}
        for _ in range(rounds):
            for name, url, pid in targets:
                results[name].append(
                    load(node_dir, url, body_file, headers_file, connections, seconds, pid))
        return {"connections": connections, "seconds": seconds, "rounds": rounds,
                "deliveryBytes": len(body), "runs": results}
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("mvr", help="the mvr binary (build/src/cli/mvr)")
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--until-completed", type=int, default=400,
                        help="end the burst when this many jobs completed (default 400)")
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--skip-burst", action="store_true")
    args = parser.parse_args()
    mvr = os.path.abspath(args.mvr)
    if not shutil.which("node") or not shutil.which("npm"):
        fail("needs node and npm (scripts/setup.sh installs them)")
    node_dir = node_packages(os.path.dirname(os.path.dirname(os.path.dirname(mvr))))
    work = tempfile.mkdtemp(prefix="mvr-daemon-load-")
    report = {}
    if not args.skip_burst:
        report["burst"] = burst(mvr, args.jobs, min(args.jobs, args.until_completed), work)
        b = report["burst"]
        print("burst of %d jobs (peak %d in flight), %d completed in %.0f s: mvr serve resident "
              "peak %.1f MiB, %.1f MiB at the end, %d threads at most, %.2f CPU s (%.2f ms a "
              "completed job)"
              % (b["jobs"], b["peakInFlight"], b["completed"], b["burstSeconds"],
                 b["peakResidentMiB"],
                 b["endResidentMiB"], b["peakThreads"], b["cpuSeconds"], b["cpuMsPerJob"]),
              flush=True)
    report["webhook"] = endpoint(mvr, work, node_dir, args.connections, args.seconds, args.rounds)
    w = report["webhook"]
    print("POST /webhook, %d connections, %d B delivery, %d s a run:"
          % (w["connections"], w["deliveryBytes"], w["seconds"]))
    for name, runs in w["runs"].items():
        for r in runs:
            print("  %-18s %7.0f req/s  p50 %4.1f ms  p99 %5.1f ms  server: %.2f cores, "
                  "%5.1f us CPU a request, %.1f MiB, %d threads"
                  % (name, r["requestsPerSecond"], r["latencyP50Ms"], r["latencyP99Ms"],
                     r["serverCpuSecondsPerSecond"], r["serverCpuUsPerRequest"],
                     r["serverResidentMiB"], r["serverThreads"]))
    print(json.dumps(report))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
