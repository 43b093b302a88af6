#!/usr/bin/env python3
"""mvr serve's status page in a real browser (Debian's chromium, headless, driven over the DevTools
protocol by status_page_browser.js): loaded during `mvr demo` from GET / and afterwards from the
file `mvr demo --report` saved. Checks the DOM as a person would read it (the classes, a row per
job with a waterfall in it, the latency table and its histograms), that the page runs no script
and logs no console error or CSP violation, and that its screenshot is not blank.

Usage: status_page_browser_test.py MVR_BINARY. Exits 77 (ctest: skipped) without chromium or node.
Runs itself in a network namespace of its own (loopback only) when it can, so the browser can
reach nothing but the demo."""
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
NODE = shutil.which("node")
JOBS = 8


def skip(why):
    print("SKIP: " + why)
    sys.exit(77)


def isolate():
    """Re-runs this test in a new network namespace with loopback up (root and unshare needed)."""
    if os.environ.get("MVR_STATUS_PAGE_ISOLATED") or os.geteuid() != 0 or not shutil.which("unshare"):
        return
    env = dict(os.environ, MVR_STATUS_PAGE_ISOLATED="1")
    probe = subprocess.run(["unshare", "--net", "true"], capture_output=True)
    if probe.returncode != 0:
        return
    script = 'ip link set lo up && exec "$0" "$@"'
    sys.exit(subprocess.call(["unshare", "--net", "sh", "-c", script, sys.executable] + sys.argv,
                             env=env))


def load(url, shot):
    out = subprocess.run([NODE, os.path.join(HERE, "status_page_browser.js"), CHROMIUM, url, shot],
                         capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        raise AssertionError("the browser could not load %s:\n%s" % (url, out.stderr))
    return json.loads(out.stdout)


def png_pixels(path):
    """The decompressed scanlines of a PNG (filter bytes included): enough to tell blank from not."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, b""
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        if kind == b"IDAT":
            idat += data[pos + 8:pos + 8 + length]
        pos += 12 + length
    return zlib.decompress(idat)


def check_not_blank(path):
    pixels = png_pixels(path)
    not_white = sum(1 for b in pixels[::7] if b < 200)
    assert len(set(pixels)) > 16 and not_white > len(pixels[::7]) // 200, (
        "the screenshot %s looks blank (%d distinct byte values)" % (path, len(set(pixels))))


def check_page(page, where):
    assert page["errors"] == [], "%s: console errors or CSP violations: %r" % (where, page["errors"])
    assert page["scripts"] == 0, "%s: the page has a script" % where
    assert page["classes"] == 2, "%s: expected the demo's two classes, saw %d" % (where, page["classes"])
    for row in page["inFlight"] + page["finished"]:
        assert row["waterfalls"] == 1, "%s: a job row without its waterfall: %r" % (where, row)


def main():
    if not os.path.exists(CHROMIUM) or not NODE:
        skip("needs Debian's chromium and node (scripts/setup.sh installs them)")
    isolate()
    mvr = sys.argv[1]
    work = tempfile.mkdtemp(prefix="mvr-status-page-")
    report = os.path.join(work, "report.html")
    demo = subprocess.Popen(
        [mvr, "demo", "--jobs", str(JOBS), "--job-seconds", "4", "--vm-boot-ms", "1500",
         "--report", report, "--work-dir", os.path.join(work, "demo")],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines, url, live = [], None, None
    try:
        for line in demo.stdout:
            lines.append(line)
            m = re.search(r"mvr serve\s+(http://127\.0\.0\.1:\d+/)", line)
            if m:
                url = m.group(1)
            if url and live is None and "queued" in line and "running" in line:
                # During the burst: GET / of the running daemon.
                live = load(url, os.path.join(work, "live.png"))
                check_page(live, "GET / during the demo")
                check_not_blank(os.path.join(work, "live.png"))
                assert live["refresh"], "GET / does not refresh itself"
        rc = demo.wait(timeout=600)
    finally:
        if demo.poll() is None:
            demo.kill()
    output = "".join(lines)
    assert rc == 0, "mvr demo failed (%d):\n%s" % (rc, output)
    assert live is not None, "the demo ended before the page could be loaded:\n" + output
    assert live["inFlight"] or live["finished"], "GET / during the burst showed no job: %r" % live

    page = load("file://" + report, os.path.join(work, "report.png"))
    check_page(page, "the --report file")
    check_not_blank(os.path.join(work, "report.png"))
    ids = {row["cells"][0] for row in page["finished"]}
    assert len(ids) == JOBS, "expected %d finished jobs, saw %d: %r" % (JOBS, len(ids), sorted(ids))
    for row in page["finished"]:
        assert row["cells"][4] == "success", "a job that did not succeed: %r" % row
        assert row["spans"] >= 2, "a finished job's waterfall has %d spans" % row["spans"]
    assert page["latencyRows"] >= 2 and page["histograms"] == page["latencyRows"], page
    # What the jobs cost: a row per class and path, every finished job priced at its image
    # version's memory (the emulator's images say 2048 MiB), beside a hosted runner's minute.
    priced = 0
    for cells in page["cost"]:
        assert cells[6] == "2048" and cells[7].startswith("$") and cells[8] == "$0.0060", cells
        priced += int(cells[2])
    assert priced == JOBS, "the cost table priced %d of %d jobs: %r" % (priced, JOBS, page["cost"])
    print("status page: live (%d in flight, %d finished), report (%d finished, %d latency rows)"
          % (len(live["inFlight"]), len(live["finished"]), len(page["finished"]),
             page["latencyRows"]))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
