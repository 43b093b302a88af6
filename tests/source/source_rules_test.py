#!/usr/bin/env python3
"""Rules of the source tree that a compiler does not check, each a test that names the file and line
that breaks it.

- JSON is written as text only through JsonText (src/base/json_text.cpp): nlohmann's dump() throws
  type_error.316 on a string that is not UTF-8, and such a string can come from any input, so one
  plain dump() is a crash waiting for its input (issue 29: a server name of bytes ff fe killed a
  start after its VM existed).
"""
import os
import re
import sys
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SRC = os.path.join(ROOT, "src")

# The one writer that may call dump(): it passes error_handler_t::replace.
DUMP_ALLOWED = {os.path.join("base", "json_text.cpp")}


def SourceFiles():
    for folder, _, names in os.walk(SRC):
        for name in sorted(names):
            if name.endswith((".cpp", ".h", ".cc", ".hpp")):
                path = os.path.join(folder, name)
                yield os.path.relpath(path, SRC), path


def StripComments(text):
    """The text with // and /* */ comments and string literals blanked (lines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('""')
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


class SourceRulesTest(unittest.TestCase):
    def test_json_is_written_only_through_json_text(self):
        found = []
        for rel, path in SourceFiles():
            if rel in DUMP_ALLOWED:
                continue
            with open(path, encoding="utf-8") as f:
                code = StripComments(f.read())
            for number, line in enumerate(code.splitlines(), 1):
                if re.search(r"\.\s*dump\s*\(", line):
                    found.append(f"src/{rel}:{number}: {line.strip()}")
        self.assertEqual(
            found, [],
            "JSON written with nlohmann's throwing dump(); use JsonText (base/json_text.h), "
            "which cannot throw on a string that is not UTF-8:\n" + "\n".join(found))

    def test_the_check_sees_a_dump(self):
        # The rule above must be able to fail: a dump() in code is found, one in a comment is not.
        self.assertRegex(StripComments('x = v.dump();\n'), r"\.\s*dump\s*\(")
        self.assertNotRegex(StripComments('// v.dump()\nx = "a.dump()";\n'), r"\.\s*dump\s*\(")


if __name__ == "__main__":
    unittest.main(verbosity=2)
