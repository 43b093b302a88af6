#!/usr/bin/env python3
"""The docs hold together (issue 57, item 5):
- every relative link of README.md and docs/*.md names a file that exists, and its #anchor a
  heading of that file (GitHub's anchor of the heading's text);
- docs/README.md, the index by reader, links every page of docs/;
- every citation of a doc by name, in the docs and in the code and scripts that point readers at
  them (`docs/runner-set-pools.md, "Hot pools"`, `[iam.md](iam.md), "Reserved concurrency"`),
  names a file that exists, and its quoted section a heading of that file.
A page split or renamed without its links and citations following it fails here."""
import os
import re
import sys

SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Where code, scripts and configuration cite docs/ for a reader.
CITING = ["src", "tests", "deploy", "bench", "scripts", "examples", "cmake", "action.yml",
          "CMakeLists.txt"]
CITING_EXT = (".cpp", ".h", ".py", ".sh", ".txt", ".cmake", ".json", ".yml", ".yaml", ".mjs")

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
# A page's name, then (after the link's closing parenthesis, a comma, a line break of prose or of
# a comment) a quoted section.
CITE = re.compile(r"([\w./-]*?[\w-]+\.md)(?:\]\([^)]*\))?\)?,?\s+(?:(?://|#) *)?\\?\"([^\"\\\s][^\"\\]*)\\?\"")


def slug(heading):
    """GitHub's anchor of a heading: lowercased, punctuation but '-' and '_' dropped, spaces '-'."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def prose(text):
    """The text outside fenced code blocks."""
    out, fenced = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            out.append(line)
    return "\n".join(out)


def headings(path, cache={}):
    if path not in cache:
        with open(path) as f:
            cache[path] = [m.group(1) for m in re.finditer(r"^#{1,6} +(.+?) *$", prose(f.read()),
                                                           re.M)]
    return cache[path]


def plain(heading):
    """A heading or a cited section as compared: no markup, one space between words (a citation
    may run over lines of a comment)."""
    text = re.sub(r"\s*\n\s*(?://|#)?\s*", " ", heading)
    return text.replace("`", "").replace("*", "").lower().strip()


def has_section(path, section):
    want = plain(section)
    with open(path) as f:
        # A paragraph's bold lead ("**Moving the runner pin** (do it ...") is cited as a section too.
        leads = re.findall(r"^\*\*(.+?)\.?\*\*", prose(f.read()), re.M)
    for h in map(plain, headings(path) + leads):
        # "Hook budgets" cites "Hook budgets (`src/supervisor/hook_budgets.h`)".
        if h == want or (h.startswith(want) and h[len(want):][:2] in (" (", ": ", ", ")):
            return True
    return False


def doc_pages():
    pages = [os.path.join(SOURCE, "README.md")]
    for name in sorted(os.listdir(os.path.join(SOURCE, "docs"))):
        if name.endswith(".md"):
            pages.append(os.path.join(SOURCE, "docs", name))
    return pages


def check_links(page, text, errors):
    base = os.path.dirname(page)
    for target in LINK.findall(re.sub(r"`[^`\n]*`", "", prose(text))):
        if re.match(r"^[a-z]+:", target):
            continue  # a URL
        path, _, anchor = target.partition("#")
        full = os.path.normpath(os.path.join(base, path)) if path else page
        where = os.path.relpath(page, SOURCE)
        if not os.path.exists(full):
            errors.append("%s: link to %s: no such file" % (where, target))
        elif anchor and full.endswith(".md") and anchor not in {slug(h) for h in headings(full)}:
            errors.append("%s: link to %s: %s has no heading with that anchor" %
                          (where, target, os.path.relpath(full, SOURCE)))


def resolve(citing, name):
    """The doc a citation names: docs/X.md from anywhere, X.md beside a doc, or README.md."""
    for base in ([os.path.dirname(citing)] if citing.endswith(".md") else []) + [SOURCE]:
        full = os.path.normpath(os.path.join(base, name))
        if os.path.exists(full):
            return full
    return None


def check_citations(path, text, errors):
    where = os.path.relpath(path, SOURCE)
    in_docs = path.endswith(".md")
    for name in re.findall(r"(?<![\w/.-])(docs/[\w-]+\.md)", text):
        if resolve(path, name) is None:
            errors.append("%s: cites %s: no such file" % (where, name))
    for name, section in CITE.findall(text):
        if not in_docs and not name.startswith("docs/"):
            continue
        full = resolve(path, name)
        if full is None:
            if in_docs or name.startswith("docs/"):
                errors.append("%s: cites %s: no such file" % (where, name))
            continue
        if not has_section(full, section):
            errors.append('%s: cites %s, "%s": no such heading in it' % (where, name, section))


def citing_files():
    for top in CITING:
        full = os.path.join(SOURCE, top)
        if os.path.isfile(full):
            yield full
        for root, dirs, files in os.walk(full):
            dirs[:] = [d for d in dirs if not d.startswith((".", "build", "node_modules"))]
            for name in files:
                if name.endswith(CITING_EXT) and name != os.path.basename(__file__):
                    yield os.path.join(root, name)


def main():
    errors = []
    pages = doc_pages()
    for page in pages:
        with open(page) as f:
            text = f.read()
        check_links(page, text, errors)
        check_citations(page, prose(text), errors)
    with open(os.path.join(SOURCE, "docs", "README.md")) as f:
        index = set(LINK.findall(f.read()))
    for page in pages:
        name = os.path.basename(page)
        if os.path.dirname(page).endswith("docs") and name != "README.md" and name not in index:
            errors.append("docs/README.md: the index does not link docs/%s" % name)
    cited = 0
    for path in citing_files():
        with open(path, errors="replace") as f:
            text = f.read()
        if "docs/" in text:
            cited += 1
            check_citations(path, text, errors)
    for e in errors:
        print(e)
    if len(pages) < 20 or cited < 20:
        print("found only %d pages and %d files citing docs/: has the layout changed?" %
              (len(pages), cited))
        return 1
    if errors:
        return 1
    print("%d pages, %d files citing them: every link, anchor and citation resolves" %
          (len(pages), cited))
    return 0


if __name__ == "__main__":
    sys.exit(main())
