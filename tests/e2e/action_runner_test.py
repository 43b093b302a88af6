#!/usr/bin/env python3
"""Tests of action_runner.py: expressions as the Actions runner substitutes them, inputs with
defaults and undeclared ones dropped, step outputs in both GITHUB_OUTPUT forms, failure."""
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import action_runner  # noqa: E402

ACTION = textwrap.dedent("""\
    name: probe
    inputs:
      greeting:
        default: "hello"
      name:
        required: true
    outputs:
      said:
        value: ${{ steps.say.outputs.said }}
      multi:
        value: ${{ steps.say.outputs.lines }}
    runs:
      using: composite
      steps:
        - id: say
          shell: bash
          env:
            GREETING: ${{ inputs.greeting }}
            WHO: ${{ inputs.name }}
            LEG: ${{ toJSON(matrix) }}
            INDEX: ${{ strategy.job-index }}
            UNDECLARED: ${{ inputs.colour }}
          run: |
            echo "said=$GREETING $WHO ($INDEX, $GITHUB_ACTION) ${{ github.job }}" >> "$GITHUB_OUTPUT"
            printf 'lines<<EOF\\n%s\\nEOF\\n' "$LEG" >> "$GITHUB_OUTPUT"
            test -z "${INPUT_NAME:-}"   # composite actions get no INPUT_* variables
            test -z "$UNDECLARED"
""")


class ActionRunnerTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        with open(os.path.join(self.dir, "action.yml"), "w") as f:
            f.write(ACTION)
        self.outputs = os.path.join(self.dir, "outputs")

    def invoke(self, **extra):
        inv = {"action_dir": self.dir, "step_id": "__probe_2", "inputs": {"name": "leg"},
               "github": {"job": "build"}, "strategy": {"fail-fast": True, "job-index": 1},
               "matrix": {"os": "linux"}, "outputs_file": self.outputs, "work_dir": self.dir}
        inv.update(extra)
        path = os.path.join(self.dir, "inv.json")
        with open(path, "w") as f:
            json.dump(inv, f)
        env = dict(os.environ, INPUT_NAME="")
        return subprocess.run([sys.executable, os.path.join(HERE, "action_runner.py"), path],
                              env=env, capture_output=True, text=True)

    def test_substitutes_inputs_contexts_and_step_id(self):
        r = self.invoke(inputs={"name": "leg", "colour": "red"})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("Unexpected input(s) 'colour'", r.stderr)
        with open(self.outputs) as f:
            text = f.read()
        self.assertIn("said=hello leg (1, __probe_2) build\n", text)

    def test_multi_line_outputs_keep_their_lines(self):
        r = self.invoke(matrix={"os": "linux"})
        self.assertEqual(r.returncode, 0, r.stderr)
        outputs = action_runner.read_outputs(self.outputs)
        self.assertEqual(outputs["multi"], '{\n  "os": "linux"\n}')

    def test_to_json_is_two_space_indented(self):
        self.assertEqual(action_runner.to_json({"os": "linux"}), '{\n  "os": "linux"\n}')
        self.assertEqual(action_runner.to_json(None), "null")

    def test_unknown_expressions_fail_loudly(self):
        with self.assertRaises(action_runner.ExpressionError):
            action_runner.substitute("${{ secrets.x }}", {"inputs": {}})
        with self.assertRaises(action_runner.ExpressionError):
            action_runner.substitute("${{ format('{0}', inputs.x) }}", {"inputs": {}})

    def test_reads_both_github_output_forms(self):
        path = os.path.join(self.dir, "out")
        with open(path, "w") as f:
            f.write("a=1\nb<<X\nline 1\nline 2\nX\nc=x=y\n")
        self.assertEqual(action_runner.read_outputs(path),
                         {"a": "1", "b": "line 1\nline 2", "c": "x=y"})

    def test_failing_step_fails_the_action_without_outputs(self):
        with open(os.path.join(self.dir, "action.yml"), "w") as f:
            f.write("name: f\nruns:\n  using: composite\n  steps:\n"
                    "    - shell: bash\n      run: exit 7\n")
        r = self.invoke()
        self.assertEqual(r.returncode, 7)
        self.assertFalse(os.path.exists(self.outputs))


if __name__ == "__main__":
    unittest.main()
