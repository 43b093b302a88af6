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
- Rooms (issue 57): a folder of src/ may be split into subfolders, each a room with a row of its
  own (`runnerset/launch: jobs table ...`, under "# runnerset floor N:" headings). A file in a room
  includes another room of the same folder only when its row allows it, and only rooms on lower
  floors of that folder may be allowed, so the arrows between rooms point one way (no cycles). Once
  a folder has rooms, every subfolder holding sources needs a row and the folder itself holds no
  source file directly.
- No folder of src/, at any depth, holds more than MAX_FILES source files (.h, .cpp) directly.

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
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+/[^"/]+)"')
# "# Floor N:" heads the floors of src/'s folders; "# runnerset floor N:" those of its rooms.
FLOOR = re.compile(r"^#\s*(?:([a-z0-9_]+)\s+)?[Ff]loor\s+(\d+)\s*:")
PATH = re.compile(r"[a-z0-9_]+(/[a-z0-9_]+)*")
MAX_FILES = 40  # source files one folder of src/ may hold directly

ARGS = argparse.Namespace(src=os.path.join(ROOT, "src"), table=os.path.join(HERE, "layers.txt"),
                          links=None)


class Table:
    """layers.txt: rows `folder: allowed...` under `# Floor N:` headings, and rows of rooms
    `folder/room: rooms...` (rooms named without their folder) under `# folder floor N:`."""

    def __init__(self, text, name="layers.txt"):
        self.allowed = {}  # folder or room -> set of folders (or rooms, by path) it may include
        self.floor = {}    # folder or room -> floor number (a room's: among its folder's rooms)
        self.line = {}     # folder or room -> line of its row
        self.scope = {}    # room -> its top folder; folder -> None
        self.errors = []
        scope, floor = None, None
        for number, raw in enumerate(text.splitlines(), 1):
            heading = FLOOR.match(raw)
            if heading:
                scope, floor = heading.group(1), int(heading.group(2))
                continue
            line = raw.split("#", 1)[0].strip()
            if line:
                self._row(name, number, raw, line, scope, floor)

    def _row(self, name, number, raw, line, scope, floor):
        folder, colon, rest = line.partition(":")
        folder = folder.strip()
        where = f"{name}:{number}"
        if not colon or not PATH.fullmatch(folder):
            self.errors.append(f"{where}: not `folder: folders...`: {raw.strip()}")
        elif folder in self.allowed:
            self.errors.append(f"{where}: {folder} has a row already (line {self.line[folder]})")
        elif floor is None:
            self.errors.append(f"{where}: {folder} comes before any '# Floor N:'")
        elif scope is None and "/" in folder:
            self.errors.append(f"{where}: room {folder} under a '# Floor N:' heading: put it under "
                               f"'# {folder.split('/')[0]} floor N:'")
        elif scope is not None and not folder.startswith(scope + "/"):
            self.errors.append(f"{where}: {folder} under '# {scope} floor {floor}:' is not a room "
                               f"of {scope} (write {scope}/<room>)")
        else:
            names = rest.split()
            self.allowed[folder] = {f"{scope}/{n}" for n in names} if scope else set(names)
            self.floor[folder] = floor
            self.line[folder] = number
            self.scope[folder] = scope

    def rooms_of(self, top):
        return sorted(r for r, s in self.scope.items() if s == top)


def src_folders(src):
    return sorted(d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d)))


def src_dirs(src):
    """Every folder under src/ (path relative to src) -> the source files it holds directly."""
    dirs = {}
    for directory, subdirs, names in os.walk(src):
        subdirs.sort()
        rel = os.path.relpath(directory, src)
        if rel != ".":
            dirs[rel.replace(os.sep, "/")] = sorted(n for n in names
                                                    if n.endswith(SOURCE_SUFFIXES))
    return dirs


def includes(src):
    """(path relative to src's parent, line number, folder of the file relative to src, path
    included), for each `#include "a/b.h"` of src/."""
    parent = os.path.dirname(os.path.abspath(src))
    for rel, names in sorted(src_dirs(src).items()):
        for name in names:
            path = os.path.join(src, rel, name)
            with open(path, encoding="utf-8") as f:
                for number, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if m:
                        yield os.path.relpath(path, parent), number, rel, m.group(1)


def top(path):
    return path.split("/", 1)[0]


def table_errors(table, folders, dirs=None):
    """What is wrong with the table itself, against the folders of src/ (and, given `dirs` from
    src_dirs, against their subfolders)."""
    errors = list(table.errors)
    for folder in folders:
        if folder not in table.allowed:
            errors.append(f"src/{folder} has no row in layers.txt: add one under the floor it "
                          f"belongs to, naming the folders it may include")
    for folder, allowed in sorted(table.allowed.items()):
        where = f"layers.txt:{table.line[folder]}"
        scope = table.scope[folder]
        if scope is None and folder not in folders:
            errors.append(f"{where}: {folder} is not a folder of src/")
        elif scope is not None and dirs is not None and folder not in dirs:
            errors.append(f"{where}: {folder} is not a folder of src/")
        for other in sorted(allowed):
            if other not in table.allowed or table.scope[other] != scope:
                errors.append(f"{where}: {folder} may include {other}, which has no row"
                              + (f" among the rooms of {scope}" if scope else ""))
            elif other == folder:
                errors.append(f"{where}: {folder} lists itself (a folder always includes itself)")
            elif table.floor[other] >= table.floor[folder]:
                errors.append(f"{where}: {folder} (floor {table.floor[folder]}) may include "
                              f"{other} (floor {table.floor[other]}): only lower floors")
    return errors + (room_errors(table, dirs) if dirs is not None else [])


def room_errors(table, dirs):
    """A folder with rooms: every subfolder holding sources is a room, the folder holds none."""
    errors = []
    for rel, names in sorted(dirs.items()):
        rooms = table.rooms_of(top(rel))
        if not rooms or not names:
            continue
        if "/" not in rel:
            shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
            errors.append(f"src/{rel} holds {shown} directly, but its files live in rooms "
                          f"({', '.join(rooms)}): move each into the room of its idea")
        elif rel not in table.allowed:
            errors.append(f"src/{rel} has no row in layers.txt: add `{rel}:` under a "
                          f"'# {top(rel)} floor N:' heading, naming the rooms it may include")
    return errors


def crowded_errors(dirs, limit=MAX_FILES):
    """Each folder of src/ that holds more than `limit` source files directly."""
    return [f"src/{rel} holds {len(names)} source files directly (at most {limit}): split it "
            f"into subfolders by idea, each a room with a row in tests/source/layers.txt"
            for rel, names in sorted(dirs.items()) if len(names) > limit]


def include_errors(table, src):
    """Each include of a folder (or a room) the table does not allow, as `file:line: ...`."""
    folders = set(src_folders(src))
    errors = []
    for path, number, rel, target in includes(src):
        folder, included = top(rel), top(target)
        if included not in folders:
            continue  # a system/third-party path such as "nlohmann/..."
        if included != folder:
            if included not in table.allowed.get(folder, set()):
                allowed = " ".join(sorted(table.allowed.get(folder, set()))) or "(nothing)"
                errors.append(f"{path}:{number}: {folder} includes {included}/, which layers.txt "
                              f"does not allow ({folder} may include: {allowed})")
            continue
        room, other = rel, target.rsplit("/", 1)[0]
        if room == other or not table.rooms_of(folder):
            continue  # its own room's headers, or a folder without rooms
        allowed = table.allowed.get(room, set()) if table.scope.get(room) else set()
        if other not in allowed:
            names = " ".join(sorted(a.split("/", 1)[1] for a in allowed)) or "(nothing)"
            errors.append(f"{path}:{number}: {room} includes {other}/, which layers.txt does not "
                          f"allow ({room} may include the rooms: {names})")
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
        if table.scope[folder] is not None or folder not in linked:
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
        errors = table_errors(read_table(ARGS.table), src_folders(ARGS.src), src_dirs(ARGS.src))
        self.assertEqual(errors, [], "\n" + "\n".join(errors))

    def test_no_folder_of_src_holds_more_than_40_source_files(self):
        errors = crowded_errors(src_dirs(ARGS.src))
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
        seen = {(top(rel), top(target)) for _, _, rel, target in includes(ARGS.src)}
        self.assertIn(("runnerset", "fleet"), seen)
        self.assertIn(("action", "fleet"), seen)
        rooms = {(rel, target.rsplit("/", 1)[0]) for _, _, rel, target in includes(ARGS.src)}
        self.assertIn(("runnerset/launch", "runnerset/config"), rooms)
        self.assertIn(("runnerset/pools/hot", "runnerset/launch"), rooms)
        table = read_table(ARGS.table)
        self.assertIn("runnerset/launch", table.rooms_of("runnerset"))


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

    ROOMS = TABLE + ("# left floor 0: its rooms\nleft/base:\nleft/deep/x:\n"
                     "# left floor 1:\nleft/up: base deep/x\nleft/side: base\n")

    def test_an_include_between_rooms_follows_their_rows(self):
        src = self.tree({"low/a.h": "", "right/r.h": "",
                         "left/base/b.h": "", "left/deep/x/x.h": '#include "left/base/b.h"\n',
                         "left/up/u.cpp": '#include "left/deep/x/x.h"\n#include "left/up/u.h"\n',
                         "left/side/s.cpp": '#include "left/base/b.h"\n#include "low/a.h"\n'
                                            '#include "left/up/u.h"\n'})
        errors = include_errors(Table(self.ROOMS), src)
        self.assertEqual(errors, ["src/left/deep/x/x.h:1: left/deep/x includes left/base/, which "
                                  "layers.txt does not allow (left/deep/x may include the rooms: "
                                  "(nothing))",
                                  "src/left/side/s.cpp:3: left/side includes left/up/, which "
                                  "layers.txt does not allow (left/side may include the rooms: "
                                  "base)"])

    def test_rooms_on_one_floor_or_of_another_folder_fail(self):
        # Rooms that may include each other would make a cycle: the floors forbid it.
        table = Table(self.ROOMS.replace("left/side: base", "left/side: base up\nleft/low: x"))
        errors = table_errors(table, ["left", "low", "right"])
        self.assertEqual(errors, ["layers.txt:12: left/low may include left/x, which has no row "
                                  "among the rooms of left",
                                  "layers.txt:11: left/side (floor 1) may include left/up "
                                  "(floor 1): only lower floors"])
        misplaced = Table(self.TABLE + "left/room: x\n# left floor 0:\nright/room:\n")
        self.assertEqual(len(misplaced.errors), 2, misplaced.errors)
        self.assertIn("room left/room under a '# Floor N:' heading", misplaced.errors[0])
        self.assertIn("right/room under '# left floor 0:' is not a room of left",
                      misplaced.errors[1])

    def test_a_folder_with_rooms_keeps_no_file_and_every_room_has_a_row(self):
        src = self.tree({"low/a.h": "", "right/r.h": "", "right/more/m.h": "",
                         "left/base/b.h": "", "left/deep/x/x.h": "", "left/up/u.h": "",
                         "left/side/s.h": "", "left/stray.cpp": "", "left/new/n.cpp": ""})
        errors = table_errors(Table(self.ROOMS), src_folders(src), src_dirs(src))
        self.assertEqual(errors, [
            "src/left holds stray.cpp directly, but its files live in rooms (left/base, "
            "left/deep/x, left/side, left/up): move each into the room of its idea",
            "src/left/new has no row in layers.txt: add `left/new:` under a '# left floor N:' "
            "heading, naming the rooms it may include"])
        gone = table_errors(Table(self.ROOMS + "left/gone:\n"), ["left", "low", "right"], {})
        self.assertIn("layers.txt:12: left/gone is not a folder of src/", gone)

    def test_a_folder_of_more_than_40_source_files_fails(self):
        files = {f"big/f{i}.h": "" for i in range(40)}
        files.update({"big/notes.txt": "", "big/sub/g.cpp": ""})
        self.assertEqual(crowded_errors(src_dirs(self.tree(files))), [])
        files["big/f40.cpp"] = ""
        errors = crowded_errors(src_dirs(self.tree(files)))
        self.assertEqual(len(errors), 1, errors)
        self.assertTrue(errors[0].startswith("src/big holds 41 source files directly (at most "
                                             "40)"), errors)

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
