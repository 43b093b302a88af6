#!/usr/bin/env python3
"""Rules of the source tree that a compiler does not check, each a test that names the file and line
that breaks it.

- JSON is written as text only through JsonText (src/base/json_text.cpp): nlohmann's dump() throws
  type_error.316 on a string that is not UTF-8, and such a string can come from any input, so one
  plain dump() is a crash waiting for its input (issue 29: a server name of bytes ff fe killed a
  start after its VM existed).
- One word per thing (issue 57, item 4): a file is read whole only through ReadFile
  (src/base/files.cpp); a JSON member nobody asked about is refused only through
  JsonFields::OnlyKeys (src/base/json_fields.cpp), so every refusal reads "<path>: unknown
  member"; launcher.deferSeconds becomes a Duration only in ServeConfig::defer_delay().
"""
import functools
import os
import re
import sys
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SRC = os.path.join(ROOT, "src")

# The one writer that may call dump(): it passes error_handler_t::replace.
DUMP_ALLOWED = {os.path.join("base", "json_text.cpp")}


def SourceFiles(top=SRC):
    for folder, _, names in os.walk(top):
        for name in sorted(names):
            if name.endswith((".cpp", ".h", ".cc", ".hpp")):
                path = os.path.join(folder, name)
                yield os.path.relpath(path, top), path


# (rule, pattern, where it may appear (paths under the root), folders to scan, what to do instead)
WHOLE_FILE_READ = re.compile(r"rdbuf\s*\(\s*\)|istreambuf_iterator")
UNKNOWN_MEMBER = re.compile(r"unknown (member|field)")
DEFER_MILLISECONDS = re.compile(r"defer_seconds\s*\*\s*1000")


def CodeWithoutComments(text):
    """`text` with // and /* */ comments blanked but string literals kept (lines kept)."""
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return "\n".join(re.sub(r'^((?:[^"/]|"(?:\\.|[^"\\])*"|/(?!/))*)//.*$', r"\1", line)
                     for line in text.splitlines())


@functools.lru_cache(maxsize=None)
def Code(path, keep_strings):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    return CodeWithoutComments(text) if keep_strings else StripComments(text)


def Matches(pattern, allowed, tops, keep_strings):
    found = []
    for top in tops:
        for rel, path in SourceFiles(top):
            shown = os.path.relpath(path, ROOT)
            if shown in allowed:
                continue
            code = Code(path, keep_strings)
            for number, line in enumerate(code.splitlines(), 1):
                if pattern.search(line):
                    found.append(f"{shown}:{number}: {line.strip()}")
    return found


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
            code = Code(path, False)
            for number, line in enumerate(code.splitlines(), 1):
                if re.search(r"\.\s*dump\s*\(", line):
                    found.append(f"src/{rel}:{number}: {line.strip()}")
        self.assertEqual(
            found, [],
            "JSON written with nlohmann's throwing dump(); use JsonText (base/json_text.h), "
            "which cannot throw on a string that is not UTF-8:\n" + "\n".join(found))

    def test_files_are_read_whole_only_through_read_file(self):
        found = Matches(WHOLE_FILE_READ, {"src/base/files.cpp"}, [SRC], keep_strings=False)
        self.assertEqual(found, [], "a file read whole by hand; use ReadFile (base/files.h), "
                         "which names the file and why it could not be read:\n" + "\n".join(found))

    def test_unknown_members_are_refused_only_through_only_keys(self):
        found = Matches(UNKNOWN_MEMBER, {"src/base/json_fields.cpp"}, [SRC], keep_strings=True)
        self.assertEqual(found, [], "a JSON member refused by hand; use JsonFields::OnlyKeys "
                         "(base/json_fields.h):\n" + "\n".join(found))

    def test_defer_seconds_become_a_duration_only_in_defer_delay(self):
        found = Matches(DEFER_MILLISECONDS, {"src/runnerset/config/config.h"},
                        [SRC, os.path.join(ROOT, "tests")], keep_strings=False)
        self.assertEqual(found, [], "launcher.deferSeconds converted by hand; use "
                         "ServeConfig::defer_delay():\n" + "\n".join(found))

    def test_the_one_word_checks_see_their_patterns(self):
        code = StripComments('std::stringstream s; s << in.rdbuf();\n// in.rdbuf()\n')
        self.assertEqual([bool(WHOLE_FILE_READ.search(l)) for l in code.splitlines()],
                         [True, False])
        kept = CodeWithoutComments('return Bad("x: unknown member");\n'
                                   '// an unknown field\nf("a//b"); // unknown member\n')
        self.assertEqual([bool(UNKNOWN_MEMBER.search(l)) for l in kept.splitlines()],
                         [True, False, False])
        self.assertIn('"a//b"', kept)
        self.assertRegex("Duration(c.launcher.defer_seconds * 1000LL)", DEFER_MILLISECONDS)

    def test_the_check_sees_a_dump(self):
        # The rule above must be able to fail: a dump() in code is found, one in a comment is not.
        self.assertRegex(StripComments('x = v.dump();\n'), r"\.\s*dump\s*\(")
        self.assertNotRegex(StripComments('// v.dump()\nx = "a.dump()";\n'), r"\.\s*dump\s*\(")


if __name__ == "__main__":
    unittest.main(verbosity=2)
