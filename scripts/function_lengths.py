#!/usr/bin/env python3
"""Lists the functions in src/ longer than a number of lines, longest first, and the files longer
than another, so that the sizes STYLE.md asks for (functions under 100 lines, files under 400) can
be checked instead of remembered.

Usage: scripts/function_lengths.py [--min N] [--files M] [--exclude DIR]... [PATH...]
  --min N      list functions of at least N lines (default 100)
  --files M    also list files of at least M lines (default 400; 0 lists none)
  --exclude    a folder under src/ to leave out (repeatable), e.g. --exclude sim
  PATH         files or folders to scan instead of src/

A function's length is counted from the line of its name to its closing brace, as Universal Ctags
reports them (`ctags --fields=+ne`); lambdas count towards the function that holds them.
"""
import argparse
import json
import os
import re
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
SOURCE_SUFFIXES = (".cpp", ".cc", ".h", ".hpp")


def SourceFiles(paths, excluded):
    for start in paths:
        if os.path.isfile(start):
            yield start
            continue
        for folder, dirs, names in os.walk(start):
            rel = os.path.relpath(folder, os.path.join(ROOT, "src"))
            dirs[:] = sorted(d for d in dirs if os.path.join(rel, d).lstrip("./") not in excluded)
            for name in sorted(names):
                if name.endswith(SOURCE_SUFFIXES):
                    yield os.path.join(folder, name)


def Functions(files):
    """(lines, path, line, name) for each function definition ctags finds."""
    command = ["ctags", "--output-format=json", "--languages=C++", "--language-force=C++",
               "--kinds-C++=f", "--fields=+neS", "-f", "-"] + list(files)
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    for row in out.splitlines():
        tag = json.loads(row)
        if tag.get("_type") != "tag" or "end" not in tag:
            continue
        scope = tag.get("scope")
        name = f"{scope}::{tag['name']}" if scope else tag["name"]
        name = re.sub(r"__anon\w+", "(anonymous)", name)
        yield tag["end"] - tag["line"] + 1, tag["path"], tag["line"], name


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--min", type=int, default=100)
    parser.add_argument("--files", type=int, default=400)
    parser.add_argument("--exclude", action="append", default=[])
    parser.add_argument("paths", nargs="*")
    args = parser.parse_args()
    paths = args.paths or [os.path.join(ROOT, "src")]
    files = list(SourceFiles(paths, set(args.exclude)))
    if not files:
        return 0
    for lines, path, line, name in sorted(Functions(files), key=lambda f: (-f[0], f[1], f[2])):
        if lines >= args.min:
            print(f"{lines:5d}  {os.path.relpath(path, ROOT)}:{line}  {name}")
    if args.files > 0:
        sizes = []
        for path in files:
            with open(path, encoding="utf-8", errors="replace") as f:
                sizes.append((sum(1 for _ in f), path))
        for lines, path in sorted(sizes, key=lambda s: (-s[0], s[1])):
            if lines >= args.files:
                print(f"{lines:5d}  {os.path.relpath(path, ROOT)}  (file)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
