#!/usr/bin/env python3
"""The sizes of src/ (issue 57, item 3): no function over 80 lines and no file over 500, but for
the entries of size_exceptions.txt, each with its reason; an entry that no longer exceeds its limit
is an error too, so the list only shrinks.

Lengths are scripts/function_lengths.py's (Universal Ctags: a function from the line of its name to
its closing brace, its lambdas included). Run by ctest as SourceSizes. To see it fail, point it at a
tree with a long function: `sizes_test.py --src /tmp/copy/src`; the SelfCheck cases below do that on
small trees of their own.
"""
import argparse
import importlib.util
import os
import shutil
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
MAX_FUNCTION_LINES = 80
MAX_FILE_LINES = 500

ARGS = argparse.Namespace(src=os.path.join(ROOT, "src"),
                          exceptions=os.path.join(HERE, "size_exceptions.txt"))


def LoadLengths():
    spec = importlib.util.spec_from_file_location(
        "function_lengths", os.path.join(ROOT, "scripts", "function_lengths.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


LENGTHS = LoadLengths()


def ParseExceptions(text, name="size_exceptions.txt"):
    """{(path, NAME or "(file)"): reason}, and the errors of malformed lines."""
    entries, errors = {}, []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        head, sep, reason = line.partition(": ")
        parts = head.split(None, 1)
        if not sep or len(parts) != 2 or not reason.strip():
            errors.append(f"{name}:{number}: expected `PATH NAME: reason`, got {raw!r}")
            continue
        entries[(parts[0], parts[1].strip())] = reason.strip()
    return entries, errors


def Oversized(src):
    """[(path relative to src/'s parent, NAME or "(file)", lines, limit)] over the limits."""
    base = os.path.dirname(os.path.abspath(src))
    files = list(LENGTHS.SourceFiles([src], set()))
    found = []
    for lines, path, _, name in LENGTHS.Functions(files):
        if lines > MAX_FUNCTION_LINES:
            found.append((os.path.relpath(path, base), name, lines, MAX_FUNCTION_LINES))
    for path in files:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = sum(1 for _ in f)
        if lines > MAX_FILE_LINES:
            found.append((os.path.relpath(path, base), "(file)", lines, MAX_FILE_LINES))
    return sorted(found)


def SizeErrors(src, exceptions_text):
    entries, errors = ParseExceptions(exceptions_text)
    over = Oversized(src)
    for path, name, lines, limit in over:
        if (path, name) not in entries:
            what = "the file" if name == "(file)" else name
            errors.append(f"{path}: {what} has {lines} lines, over {limit}: split it by meaning "
                          "(a helper per section, a table), not into more files of one class")
    exceeding = {(path, name) for path, name, _, _ in over}
    for key in sorted(set(entries) - exceeding):
        errors.append(f"size_exceptions.txt: {key[0]} {key[1]} is within its limit now: remove "
                      "its entry")
    return errors


class SizesTest(unittest.TestCase):
    def test_src_keeps_its_sizes(self):
        with open(ARGS.exceptions, encoding="utf-8") as f:
            errors = SizeErrors(ARGS.src, f.read())
        self.assertEqual(errors, [], "\n".join(errors))


class SelfCheck(unittest.TestCase):
    """The checks on small trees, so a check that stopped working is seen."""

    def tree(self, files):
        root = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, root)
        for path, text in files.items():
            full = os.path.join(root, "src", path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w", encoding="utf-8") as f:
                f.write(text)
        return os.path.join(root, "src")

    @staticmethod
    def function(name, body_lines):
        return f"int {name}() {{\n" + "  int x = 0;\n" * (body_lines - 2) + "}\n"

    def test_a_function_of_81_lines_fails_and_80_passes(self):
        src = self.tree({"a/ok.cpp": self.function("Fits", 80),
                         "a/long.cpp": "namespace n {\n" + self.function("TooLong", 81) + "}\n"})
        self.assertEqual(SizeErrors(src, ""), [
            "src/a/long.cpp: n::TooLong has 81 lines, over 80: split it by meaning (a helper per "
            "section, a table), not into more files of one class"])

    def test_a_file_of_501_lines_fails(self):
        src = self.tree({"a/big.h": "// x\n" * 501, "a/fits.h": "// x\n" * 500})
        errors = SizeErrors(src, "")
        self.assertEqual(len(errors), 1, errors)
        self.assertTrue(errors[0].startswith("src/a/big.h: the file has 501 lines"), errors)

    def test_an_exception_with_a_reason_passes_and_a_stale_one_fails(self):
        src = self.tree({"a/long.cpp": self.function("TooLong", 90), "a/big.h": "// x\n" * 501})
        allowed = "# why\nsrc/a/long.cpp TooLong: another branch splits it\nsrc/a/big.h (file): same\n"
        self.assertEqual(SizeErrors(src, allowed), [])
        stale = allowed + "src/a/gone.cpp Gone: was long once\n"
        self.assertEqual(SizeErrors(src, stale), [
            "size_exceptions.txt: src/a/gone.cpp Gone is within its limit now: remove its entry"])

    def test_an_exception_without_a_reason_fails(self):
        src = self.tree({"a/long.cpp": self.function("TooLong", 90)})
        errors = SizeErrors(src, "src/a/long.cpp TooLong\nsrc/a/long.cpp TooLong:  \n")
        self.assertEqual(len(errors), 3, errors)
        self.assertIn("size_exceptions.txt:1: expected `PATH NAME: reason`", errors[0])
        self.assertIn("size_exceptions.txt:2: expected `PATH NAME: reason`", errors[1])
        self.assertIn("TooLong has 90 lines", errors[2])


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", default=ARGS.src, help="the src/ folder to check")
    parser.add_argument("--exceptions", default=ARGS.exceptions, help="size_exceptions.txt")
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
