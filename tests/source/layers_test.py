#!/usr/bin/env python3
"""The floors of src/: every `#include "folder/..."` in src/ is one that layers.txt allows, and the
table itself is whole and true.

- Every folder of src/ has a row, and every row and every folder it names exists.
- A folder includes only folders on floors below its own ("# Floor N:" headings), so a product
  never includes its sibling (issue 33: the runner set included the Action for the MicroVM
  lifecycle that both need; that code is src/fleet now, a floor below both).
- With --links (ctest passes the file tests/source/CMakeLists.txt writes from the configured
  targets), every include the table allows is one CMake links: some library of the folder links,
  directly or through others, a library of the folder it includes.

Run by ctest as SourceLayers. To see it fail, point it at a copy of the tree with a forbidden
include: `layers_test.py --src /tmp/copy/src` (the table defaults to this folder's layers.txt); the
SelfCheck cases below do the same on small trees of their own.
"""
import argparse
import os
import re
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
SOURCE_SUFFIXES = (".cpp", ".h", ".cc", ".hpp")
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"/]+)/')
FLOOR = re.compile(r"^#\s*Floor\s+(\d+)\s*:")

ARGS = argparse.Namespace(src=os.path.join(ROOT, "src"), table=os.path.join(HERE, "layers.txt"),
                          links=None)


class Table:
    """layers.txt: rows `folder: allowed...` under `# Floor N:` headings."""

    def __init__(self, text, name="layers.txt"):
        self.allowed = {}  # folder -> set of folders it may include
        self.floor = {}    # folder -> floor number
        self.line = {}     # folder -> line of its row
        self.errors = []
        floor = None
        for number, raw in enumerate(text.splitlines(), 1):
            heading = FLOOR.match(raw)
            if heading:
                floor = int(heading.group(1))
                continue
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            folder, colon, rest = line.partition(":")
            folder = folder.strip()
            if not colon or not re.fullmatch(r"[a-z0-9_]+", folder):
                self.errors.append(f"{name}:{number}: not `folder: folders...`: {raw.strip()}")
            elif folder in self.allowed:
                self.errors.append(f"{name}:{number}: {folder} has a row already "
                                   f"(line {self.line[folder]})")
            elif floor is None:
                self.errors.append(f"{name}:{number}: {folder} comes before any '# Floor N:'")
            else:
                self.allowed[folder] = set(rest.split())
                self.floor[folder] = floor
                self.line[folder] = number


def src_folders(src):
    return sorted(d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d)))


def includes(src):
    """(path relative to src's parent, line number, folder including, folder included)."""
    parent = os.path.dirname(os.path.abspath(src))
    for folder in src_folders(src):
        for directory, _, names in os.walk(os.path.join(src, folder)):
            for name in sorted(names):
                if not name.endswith(SOURCE_SUFFIXES):
                    continue
                path = os.path.join(directory, name)
                with open(path, encoding="utf-8") as f:
                    for number, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if m:
                            yield os.path.relpath(path, parent), number, folder, m.group(1)


def table_errors(table, folders):
    """What is wrong with the table itself, against the folders of src/."""
    errors = list(table.errors)
    for folder in folders:
        if folder not in table.allowed:
            errors.append(f"src/{folder} has no row in layers.txt: add one under the floor it "
                          f"belongs to, naming the folders it may include")
    for folder, allowed in sorted(table.allowed.items()):
        where = f"layers.txt:{table.line[folder]}"
        if folder not in folders:
            errors.append(f"{where}: {folder} is not a folder of src/")
        for other in sorted(allowed):
            if other not in table.allowed:
                errors.append(f"{where}: {folder} may include {other}, which has no row")
            elif other == folder:
                errors.append(f"{where}: {folder} lists itself (a folder always includes itself)")
            elif table.floor[other] >= table.floor[folder]:
                errors.append(f"{where}: {folder} (floor {table.floor[folder]}) may include "
                              f"{other} (floor {table.floor[other]}): only lower floors")
    return errors


def include_errors(table, src):
    """Each include of a folder the table does not allow, as `file:line: ...`."""
    folders = set(src_folders(src))
    errors = []
    for path, number, folder, included in includes(src):
        if included == folder or included not in folders:
            continue  # its own headers, or a system/third-party path such as "nlohmann/..."
        if included not in table.allowed.get(folder, set()):
            allowed = " ".join(sorted(table.allowed.get(folder, set()))) or "(nothing)"
            errors.append(f"{path}:{number}: {folder} includes {included}/, which layers.txt does "
                          f"not allow ({folder} may include: {allowed})")
    return errors


def read_links(path):
    """The file tests/source/CMakeLists.txt writes: `folder<TAB>target<TAB>linked;...` a line."""
    folder_of, links = {}, {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) < 2:
                continue
            folder, target = parts[0], parts[1]
            folder_of[target] = folder
            links[target] = [x for x in (parts[2] if len(parts) > 2 else "").split(";") if x]
    return folder_of, links


def link_errors(table, folder_of, links):
    """Each allowed include that no library of the including folder links (transitively)."""
    def reach(target):
        seen, todo = set(), [target]
        while todo:
            for dep in links.get(todo.pop(), []):
                if dep in folder_of and dep not in seen:
                    seen.add(dep)
                    todo.append(dep)
        return {folder_of[t] for t in seen}

    linked = {}
    for target, folder in folder_of.items():
        linked.setdefault(folder, set()).update(reach(target))
    errors = []
    for folder, allowed in sorted(table.allowed.items()):
        if folder not in linked:
            continue  # not configured in this build (MVR_SUPERVISOR_ONLY leaves most folders out)
        for other in sorted(allowed):
            if other in folder_of.values() and other not in linked[folder]:
                errors.append(f"layers.txt:{table.line[folder]}: {folder} may include {other}, but "
                              f"no library of src/{folder} links one of src/{other}")
    return errors


def read_table(path):
    with open(path, encoding="utf-8") as f:
        return Table(f.read())


class LayersTest(unittest.TestCase):
    def test_every_folder_of_src_has_a_row_and_the_floors_go_down(self):
        errors = table_errors(read_table(ARGS.table), src_folders(ARGS.src))
        self.assertEqual(errors, [], "\n" + "\n".join(errors))

    def test_every_include_is_one_the_table_allows(self):
        errors = include_errors(read_table(ARGS.table), ARGS.src)
        self.assertEqual(errors, [], "\n" + "\n".join(errors))

    def test_the_table_allows_only_what_cmake_links(self):
        if not ARGS.links:
            self.skipTest("no --links file (ctest passes the one CMake writes)")
        errors = link_errors(read_table(ARGS.table), *read_links(ARGS.links))
        self.assertEqual(errors, [], "\n" + "\n".join(errors))

    def test_the_source_tree_has_includes_to_check(self):
        # Guards the scan itself: a regex that matched nothing would pass every rule above.
        seen = {(folder, included) for _, _, folder, included in includes(ARGS.src)}
        self.assertIn(("runnerset", "fleet"), seen)
        self.assertIn(("action", "fleet"), seen)


class SelfCheck(unittest.TestCase):
    """The checks above on small trees of their own: each must be able to fail."""

    TABLE = "# Floor 0: the bottom\nlow:\n# Floor 1: above it\nleft: low\nright: low\n"

    def tree(self, files):
        root = tempfile.TemporaryDirectory()
        self.addCleanup(root.cleanup)
        src = os.path.join(root.name, "src")
        for rel, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(src, rel)), exist_ok=True)
            with open(os.path.join(src, rel), "w", encoding="utf-8") as f:
                f.write(text)
        return src

    def test_a_sibling_include_is_named_by_file_and_line(self):
        src = self.tree({"low/a.h": "#pragma once\n",
                         "left/b.cpp": '#include "left/b.h"\n#include "low/a.h"\n',
                         "right/c.cpp": '// c\n#include <vector>\n#include "left/b.h"\n'})
        errors = include_errors(Table(self.TABLE), src)
        self.assertEqual(len(errors), 1, errors)
        self.assertTrue(errors[0].startswith("src/right/c.cpp:3: right includes left/"), errors)

    def test_an_include_upwards_fails(self):
        src = self.tree({"low/a.cpp": '#include "right/c.h"\n', "left/b.h": "", "right/c.h": ""})
        errors = include_errors(Table(self.TABLE), src)
        self.assertEqual(len(errors), 1, errors)
        self.assertIn("src/low/a.cpp:1: low includes right/", errors[0])

    def test_a_folder_without_a_row_fails(self):
        errors = table_errors(Table(self.TABLE), ["left", "low", "new", "right"])
        self.assertEqual(len(errors), 1, errors)
        self.assertIn("src/new has no row", errors[0])

    def test_a_row_for_a_missing_folder_fails(self):
        errors = table_errors(Table(self.TABLE), ["left", "low"])
        self.assertEqual(errors, ["layers.txt:5: right is not a folder of src/"])

    def test_a_sibling_or_higher_floor_in_the_table_fails(self):
        table = Table(self.TABLE.replace("right: low", "right: low left"))
        errors = table_errors(table, ["left", "low", "right"])
        self.assertEqual(len(errors), 1, errors)
        self.assertIn("right (floor 1) may include left (floor 1): only lower floors", errors[0])

    def test_an_allowed_include_cmake_does_not_link_fails(self):
        folder_of = {"lib_low": "low", "lib_left": "left", "lib_right": "right", "exe": "right"}
        links = {"lib_low": ["fmt::fmt"], "lib_left": ["lib_low"], "lib_right": [],
                 "exe": ["lib_left"]}  # right reaches low only through left
        self.assertEqual(link_errors(Table(self.TABLE), folder_of, links), [])
        links["exe"] = ["lib_right"]
        errors = link_errors(Table(self.TABLE), folder_of, links)
        self.assertEqual(errors,
                         ["layers.txt:5: right may include low, but no library of src/right "
                          "links one of src/low"])

    def test_a_malformed_row_fails(self):
        table = Table("# Floor 0: x\nlow\nlow:\nlow: base\n")
        self.assertEqual(len(table.errors), 2, table.errors)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", default=ARGS.src, help="the src/ folder to check")
    parser.add_argument("--table", default=ARGS.table, help="the table (layers.txt)")
    parser.add_argument("--links", help="folder/target/links file written by CMake")
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
