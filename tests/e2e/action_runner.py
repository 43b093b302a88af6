#!/usr/bin/env python3
"""Runs a composite action's own steps the way the GitHub Actions runner does, for end-to-end tests.

The runner does not pass INPUT_* variables to a composite action: it substitutes `${{ ... }}`
expressions in each step's `env`, `run` and the action's `outputs`, runs each `run:` step with
`bash --noprofile --norc -eo pipefail`, gives each step a fresh GITHUB_OUTPUT file and sets
GITHUB_ACTION (the calling step's id) and GITHUB_ACTION_PATH. This does the same for the subset
of expressions an action uses: inputs.*, github.*, steps.<id>.outputs.*, strategy.*, matrix.*,
toJSON(strategy|matrix|inputs|github); anything else fails loudly.

Usage: action_runner.py INVOCATION.json
  {"action_dir": ..., "step_id": ..., "inputs": {...}, "secret_inputs": {"name": "ENV_VAR"},
   "github": {...}, "strategy": {...}|null, "matrix": {...}|null, "outputs_file": ...,
   "work_dir": ...}
The process environment is the job's environment. On success the action's non-empty outputs are
appended to `outputs_file` in GITHUB_OUTPUT form; the exit status is the failing step's, or 0.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

import yaml

EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


class ExpressionError(Exception):
    pass


def to_json(value):
    # The runner's toJSON: two-space indented JSON; null for a missing context.
    return json.dumps(value, indent=2)


def as_string(value):
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return to_json(value)
    return str(value)


def evaluate(expr, contexts):
    m = re.fullmatch(r"toJSON\(\s*([a-z]+)\s*\)", expr)
    if m:
        if m.group(1) not in contexts:
            raise ExpressionError("unknown context in " + expr)
        return to_json(contexts[m.group(1)])
    parts = expr.split(".")
    if not all(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]*", p) for p in parts):
        raise ExpressionError("unsupported expression: " + expr)
    if parts[0] not in contexts:
        raise ExpressionError("unknown context: " + expr)
    value = contexts[parts[0]]
    for p in parts[1:]:
        # A missing property is null (""), as in the runner.
        value = value.get(p) if isinstance(value, dict) else None
    return as_string(value)


def substitute(text, contexts):
    if text is None:
        return ""
    return EXPR.sub(lambda m: evaluate(m.group(1), contexts), str(text))


def read_outputs(path):
    """name=value and name<<DELIMITER ... DELIMITER lines, as the runner reads GITHUB_OUTPUT."""
    out = {}
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line:
            continue
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delim = line.split("<<", 1)
            value = []
            while i < len(lines) and lines[i] != delim:
                value.append(lines[i])
                i += 1
            if i >= len(lines):
                raise ExpressionError("GITHUB_OUTPUT: no closing delimiter for " + name)
            i += 1
            out[name] = "\n".join(value)
        elif "=" in line:
            name, value = line.split("=", 1)
            out[name] = value
        else:
            raise ExpressionError("GITHUB_OUTPUT: malformed line " + line)
    return out


def run(invocation):
    action_dir = invocation["action_dir"]
    with open(os.path.join(action_dir, "action.yml"), encoding="utf-8") as f:
        action = yaml.safe_load(f)
    if action["runs"]["using"] != "composite":
        raise ExpressionError("not a composite action")
    declared = action.get("inputs") or {}
    given = dict(invocation.get("inputs") or {})
    for name, var in (invocation.get("secret_inputs") or {}).items():
        given[name] = os.environ.get(var, "")
    for name in given:
        if name not in declared:
            # The runner warns and the action never sees it.
            print("##[warning]Unexpected input(s) '%s'" % name, file=sys.stderr)
    inputs = {}
    for name, spec in declared.items():
        default = (spec or {}).get("default", "")
        inputs[name] = as_string(given[name]) if name in given else as_string(default)
    github = dict(invocation.get("github") or {})
    github["action_path"] = action_dir
    github["action"] = invocation["step_id"]
    contexts = {"inputs": inputs, "github": github, "steps": {},
                "strategy": invocation.get("strategy"), "matrix": invocation.get("matrix")}
    base_env = dict(os.environ)
    base_env.update({"GITHUB_ACTION": invocation["step_id"], "GITHUB_ACTION_PATH": action_dir})
    work_dir = invocation["work_dir"]
    for n, step in enumerate(action["runs"]["steps"]):
        if "run" not in step:
            raise ExpressionError("only run: steps are supported")
        if step.get("shell") != "bash":
            raise ExpressionError("only shell: bash is supported")
        env = dict(base_env)
        for k, v in (step.get("env") or {}).items():
            env[k] = substitute(v, contexts)
        fd, output_file = tempfile.mkstemp(prefix="step-%d-" % n, suffix=".out", dir=work_dir)
        os.close(fd)
        env["GITHUB_OUTPUT"] = output_file
        script = os.path.join(work_dir, "step-%d.sh" % n)
        with open(script, "w", encoding="utf-8") as f:
            f.write(substitute(step["run"], contexts))
        sys.stdout.flush()
        code = subprocess.call(["bash", "--noprofile", "--norc", "-eo", "pipefail", script],
                               env=env)
        if code != 0:
            return code
        if "id" in step:
            contexts["steps"][step["id"]] = {"outputs": read_outputs(output_file),
                                             "outcome": "success"}
    with open(invocation["outputs_file"], "a", encoding="utf-8") as f:
        for name, spec in (action.get("outputs") or {}).items():
            value = substitute(spec.get("value"), contexts)
            if "\n" in value:
                f.write("%s<<MVR_ACTION_RUNNER_EOF\n%s\nMVR_ACTION_RUNNER_EOF\n" % (name, value))
            elif value:
                f.write("%s=%s\n" % (name, value))
    return 0


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        invocation = json.load(f)
    try:
        return run(invocation)
    except ExpressionError as e:
        print("action_runner: %s" % e, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
