#!/usr/bin/env python3
"""The configuration reference (docs/runner-set-config.md, its `| key | default | meaning |`
table) names exactly the keys the runner set's parser reads (src/runnerset/config/config*.cpp). The parser refuses any
member it did not read (Strict::NoOthers), so the keys it reads are the keys it accepts: every
`s.String/Integer/Number/Find("key")` of a `Strict s(j, "section")`, and the flags read through
the (name, &field) list. A key added to the parser without a line in the table, or a line for a
key the parser does not know, fails this test."""
import os
import re
import sys

SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def parser_keys(text):
    keys, section = set(), None
    for line in text.splitlines():
        if line.startswith("}"):
            section = None  # a function ends: the next one names its own object
            continue
        if re.search(r'\(Strict& s\b', line):
            section = ""  # a helper of the top-level reader, handed its Strict
            continue
        m = re.search(r'Strict s\(j, (?:"([^"]*)"|(key))\);', line)
        if m:
            # ParseClass is called with "classes[N]" as the key.
            section = "classes[]" if m.group(2) else m.group(1)
            continue
        if section is None:
            continue
        for name in re.findall(r'(?:s\.(?:Strings|String|PathOrPem|Integer|Number|Find)\(|(?:ParsePoolSize|ParseConnectors)\(s, )"(\w+)"', line):
            keys.add(f"{section}.{name}" if section else name)
        for name in re.findall(r'\{(?:std::pair<const char\*, bool\*>\{)?"(\w+)", &', line):
            keys.add(f"{section}.{name}" if section else name)
    return keys


def documented_keys(text):
    # The rows of the one table headed `| key | default | meaning |`, up to the first line that
    # is not a row.
    section = text.split("\n| key | default | meaning |\n", 1)[1]
    keys = set()
    for row in section.splitlines():
        if not row.startswith("|"):
            break
        if not row.startswith("| `"):
            continue
        first = row.split("|")[1]
        keys.update(re.findall(r"`([\w.\[\]]+)`", first))
    return keys


def main():
    # config.cpp and the files it was split into (config_github.cpp, ...): each read on its own.
    folder = os.path.join(SOURCE, "src/runnerset/config")
    code = set()
    for name in sorted(os.listdir(folder)):
        if name.startswith("config") and name.endswith(".cpp"):
            with open(os.path.join(folder, name)) as f:
                code |= parser_keys(f.read())
    with open(os.path.join(SOURCE, "docs/runner-set-config.md")) as f:
        docs = documented_keys(f.read())
    # Objects whose members have their own lines: the table names them too, the parser reads them
    # with Find and then parses their members.
    containers = {"github", "classes", "classes[]", "queue", "launcher", "janitor", "warmPool",
                  "hotPool", "lambda"}
    code -= containers
    docs -= containers
    if len(code) < 30:
        print("parsed only %d keys from config.cpp: has its structure changed?" % len(code))
        return 1
    missing, unknown = sorted(code - docs), sorted(docs - code)
    for k in missing:
        print("docs/runner-set-config.md: the configuration table lacks `%s` (read by config.cpp)" % k)
    for k in unknown:
        print("docs/runner-set-config.md: the configuration table names `%s`, which config.cpp does not read" % k)
    if missing or unknown:
        return 1
    print("%d configuration keys, documented and parsed alike" % len(code))
    return 0


if __name__ == "__main__":
    sys.exit(main())
