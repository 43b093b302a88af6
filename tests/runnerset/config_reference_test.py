#!/usr/bin/env python3
"""The configuration reference (docs/runner-set.md, the table under "## Configuration") names
exactly the keys the runner set's parser reads (src/runnerset/config/config.cpp). The parser refuses any
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
    if "\n## Configuration\n" not in text:
        return set()
    section = text.split("\n## Configuration\n", 1)[1].split("\n## ", 1)[0]
    keys = set()
    for row in section.splitlines():
        if not row.startswith("| `"):
            continue
        first = row.split("|")[1]
        keys.update(re.findall(r"`([\w.\[\]]+)`", first))
    return keys


def main():
    with open(os.path.join(SOURCE, "src/runnerset/config/config.cpp")) as f:
        code = parser_keys(f.read())
    # docs/runner-set.md's table, and those of the topic files split from it
    # (docs/runner-set-<topic>.md, each with a "## Configuration" table of its own keys).
    docs = set()
    for name in sorted(os.listdir(os.path.join(SOURCE, "docs"))):
        if name == "runner-set.md" or (name.startswith("runner-set-") and name.endswith(".md")):
            with open(os.path.join(SOURCE, "docs", name)) as f:
                docs |= documented_keys(f.read())
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
        print("docs/runner-set.md: the configuration table lacks `%s` (read by config.cpp)" % k)
    for k in unknown:
        print("docs/runner-set.md: the configuration table names `%s`, which config.cpp does not read" % k)
    if missing or unknown:
        return 1
    print("%d configuration keys, documented and parsed alike" % len(code))
    return 0


if __name__ == "__main__":
    sys.exit(main())
