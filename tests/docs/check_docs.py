#!/usr/bin/env python3
"""The documentation's guards: each CHECK below is a CTest (label `docs`).

  no-diaries   no *.md of the repository holds a dated line (YYYY-MM-DD), a session story (a
               heading or entry "Session N", "today", "yesterday") or a tracker reference
               ("issue N", "#N issue"): reference docs say what is, git history keeps what was.
  sizes        README.md and bench/README.md under 250 lines, runtime/README.md (an index) under
               60: front doors, not notebooks.
  links        every relative link of every *.md reaches an existing file, and its #anchor a
               heading of that page (GitHub's slugs).
  environment  every variable runtime/ and mutants/ read with getenv is named in the ENVIRONMENT
               section of docs/etwrt/use.md.
  paths        every repository path a page names in code (`harness/model/result.h`,
               `runtime/src/etl/`, globs too) exists: a moved file leaves no page behind.
  section-refs every reference of the source and docs to a page's section (`docs/etwrt/use.md,
               "Wide strings"`, comments wrapped over lines too) names an existing page and one
               of its headings: moving text leaves no comment pointing at nothing.
  self-test    each check above fails on a planted fault (a dated heading, an "issue N", a long
               README, a broken link and anchor, a variable read but not documented): a guard
               that cannot fail guards nothing.

Usage: check_docs.py CHECK SOURCE_DIR
"""
import glob
import os
import re
import shutil
import sys
import tempfile

SKIP_DIRS = {".git", "node_modules", "__pycache__"}


def markdown_files(root):
    """Every *.md under root, outside build trees (build, build-*) and VCS folders."""
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs
                         if d not in SKIP_DIRS and not d.startswith("build")
                         and not d.startswith("."))
        for name in sorted(files):
            if name.endswith(".md"):
                yield os.path.join(folder, name)


def prose_lines(path):
    """(line number, text) of a page outside fenced code blocks."""
    fence = False
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if line.lstrip().startswith("```"):
                fence = not fence
                continue
            if not fence:
                yield number, line.rstrip("\n")


DIARY = [
    (re.compile(r"\b20\d\d-[01]\d-[0-3]\d\b"), "a dated line"),
    (re.compile(r"^#{1,6}\s.*\bsession\s+#?\d", re.I), "a session heading"),
    (re.compile(r"^\s*(\*\*|- )?session\s+#?\d+\b", re.I), "a session entry"),
    (re.compile(r"\b(today|yesterday)\b", re.I), "a story (today, yesterday)"),
    (re.compile(r"\bissues?\s+#?\d+\b", re.I), "a tracker reference (issue N)"),
    (re.compile(r"#\d+\s+issue\b", re.I), "a tracker reference (#N issue)"),
]


def check_no_diaries(root):
    problems = []
    for path in markdown_files(root):
        for number, line in prose_lines(path):
            for pattern, what in DIARY:
                if pattern.search(line):
                    problems.append(f"{rel(root, path)}:{number}: {what}: {line.strip()[:90]}")
    return problems


SIZE_LIMITS = {"README.md": 250, "bench/README.md": 250, "runtime/README.md": 60}


def check_sizes(root):
    problems = []
    for name, limit in SIZE_LIMITS.items():
        path = os.path.join(root, name)
        with open(path, encoding="utf-8") as f:
            lines = sum(1 for _ in f)
        if lines >= limit:
            problems.append(f"{name}: {lines} lines, the limit is under {limit}")
    return problems


LINK = re.compile(r"(?<!!)\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
IMAGE = re.compile(r"!\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?\s*\)")
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")


def slug(heading):
    """GitHub's anchor of a heading: links reduced to their text, lower case, everything but
    letters, digits, spaces, hyphens and underscores dropped, spaces made hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip())
    text = text.lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors_of(path, cache={}):
    if path not in cache:
        seen, anchors = {}, set()
        for _, line in prose_lines(path):
            m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
            if not m:
                continue
            base = slug(m.group(1))
            n = seen.get(base, 0)
            anchors.add(base if n == 0 else f"{base}-{n}")
            seen[base] = n + 1
        cache[path] = anchors
    return cache[path]


def check_links(root):
    problems = []
    for path in markdown_files(root):
        for number, line in prose_lines(path):
            text = CODE_SPAN.sub("", line)
            for target in LINK.findall(text) + IMAGE.findall(text):
                if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):
                    continue  # http:, https:, mailto:
                file_part, _, anchor = target.partition("#")
                dest = path if not file_part else os.path.normpath(
                    os.path.join(os.path.dirname(path), file_part))
                where = f"{rel(root, path)}:{number}: ({target})"
                if not os.path.exists(dest):
                    problems.append(f"{where}: no such file {rel(root, dest)}")
                elif anchor and dest.endswith(".md") and anchor not in anchors_of(dest):
                    problems.append(f"{where}: {rel(root, dest)} has no heading #{anchor}")
    return problems


GETENV = re.compile(r"\bgetenv\(\s*\"([A-Za-z_][A-Za-z0-9_]*)\"")


def check_environment(root):
    read = set()
    for top in ("runtime", "mutants"):
        for folder, dirs, files in os.walk(os.path.join(root, top)):
            for name in files:
                if name.endswith((".cc", ".h", ".c")):
                    with open(os.path.join(folder, name), encoding="utf-8") as f:
                        read.update(GETENV.findall(f.read()))
    if not read:
        return ["no getenv found in runtime/ or mutants/: the search is broken"]
    page = os.path.join(root, "docs", "etwrt", "use.md")
    section, inside = [], False
    for _, line in prose_lines(page):
        if line.startswith("## "):
            inside = line.strip() == "## ENVIRONMENT"
            continue
        if inside:
            section.append(line)
    named = {m.group(1) for line in section for m in [re.match(r"^`([A-Z_0-9]+)`\s*$", line)] if m}
    if not section:
        return ["docs/etwrt/use.md has no '## ENVIRONMENT' section"]
    return [f"docs/etwrt/use.md, ENVIRONMENT: {v} is read (getenv) but not described"
            for v in sorted(read - named)]


TOP_FOLDERS = ("harness", "runtime", "providers", "common", "testing", "tests", "ci", "bench",
               "scenarios", "catalog", "expectations", "schemas", "mutants", "fuzz", "doc",
               "docs", "cmake")
REPO_PATH = re.compile(r"`((?:%s)/[A-Za-z0-9_./*-]*)`" % "|".join(TOP_FOLDERS))


def check_paths(root):
    problems = []
    for path in markdown_files(root):
        for number, line in prose_lines(path):
            for m in REPO_PATH.finditer(line):
                named = m.group(1).rstrip(".,")
                if not glob.glob(os.path.join(root, named)):
                    problems.append(f"{rel(root, path)}:{number}: no such path {named}")
    return problems


SOURCE_SUFFIXES = (".cc", ".h", ".c", ".cpp", ".py", ".sh", ".cmake", ".txt", ".md", ".yml")
SECTION_REF = re.compile(r"([A-Za-z0-9_][A-Za-z0-9_./-]*\.md)\s*[,:]?\s*\(?\s*\"([^\"]{2,80})\"")
COMMENT_LEAD = re.compile(r"^\s*(//+|#+|/?\*+|--)?\s?")


def source_files(root):
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs
                         if d not in SKIP_DIRS and not d.startswith("build")
                         and not d.startswith(".") and d != "testdata")
        for name in sorted(files):
            if name.endswith(SOURCE_SUFFIXES) or name in ("CMakeLists.txt",):
                yield os.path.join(folder, name)


def headings_of(path):
    return [m.group(1).strip().lower() for _, line in prose_lines(path)
            for m in [re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)] if m]


def page_candidates(root, path, page):
    """A bare README.md is the nearest one up from the file; a path is from the root, else from
    the file's folder."""
    if "/" not in page:
        folder = os.path.dirname(path)
        while True:
            yield os.path.join(folder, page)
            if os.path.samefile(folder, root) or folder == os.path.dirname(folder):
                return
            folder = os.path.dirname(folder)
    yield os.path.join(root, page)
    yield os.path.join(os.path.dirname(path), page)


def names_place(page, section):
    """A heading of the page, or a term it sets apart (**bold** or `code`)."""
    wanted = section.strip().lstrip("#").strip().lower()
    if any(h == wanted or h.startswith(wanted) for h in headings_of(page)):
        return True
    with open(page, encoding="utf-8") as f:
        body = f.read().lower()
    return f"**{wanted}**" in body or f"`{wanted}`" in body


def check_section_refs(root):
    problems = []
    me = os.path.realpath(__file__)
    for path in source_files(root):
        if os.path.realpath(path) == me:
            continue
        try:
            with open(path, encoding="utf-8") as f:
                lines = f.read().split("\n")
        except UnicodeDecodeError:
            continue
        # Comments wrap a reference over lines: join the lines, their comment leaders removed.
        text, starts = "", []
        for number, line in enumerate(lines, 1):
            starts.append((len(text), number))
            piece = COMMENT_LEAD.sub("", line, count=1)
            text += piece if text.endswith("/") else " " + piece
        for m in SECTION_REF.finditer(text):
            page, section = m.group(1), m.group(2)
            number = max(n for offset, n in starts if offset <= m.start())
            if "$" in section or "git history of" in text[max(0, m.start() - 20):m.start()]:
                continue  # shell code; a page's past
            found = [c for c in page_candidates(root, path, page) if os.path.isfile(c)]
            if not found:
                continue  # a page of another project (a reference page's file name, SOURCES.md)
            if not names_place(found[0], section):
                problems.append(f"{rel(root, path)}:{number}: {page} has no section "
                                f"\"{section}\"")
    return problems


def rel(root, path):
    return os.path.relpath(path, root)


CHECKS = {"no-diaries": check_no_diaries, "sizes": check_sizes, "links": check_links,
          "environment": check_environment, "section-refs": check_section_refs,
          "paths": check_paths}


def self_test(_root):
    """Each check on a small tree, clean and then with a fault planted: it must pass, then fail."""
    problems = []
    work = tempfile.mkdtemp(prefix="etwh-docs-guards-")
    try:
        def write(name, text):
            path = os.path.join(work, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)

        def clean():
            shutil.rmtree(work)
            os.makedirs(work)
            anchors_of.__defaults__[0].clear()
            write("README.md", "# Title\n\nSee [the page](docs/page.md#a-section).\n")
            write("bench/README.md", "# Bench\n")
            write("runtime/README.md", "# Runtime\n")
            write("docs/page.md", "# Page\n\n## A section\n\n```\n2020-01-01 in code is fine\n```\n"
                  "The source: `runtime/src/x.cc`, `runtime/src/*.cc`.\n")
            write("runtime/src/x.cc", 'auto h = std::getenv("ETWRT_HOME");  // docs/page.md,\n'
                  '// "A section"\n')
            write("mutants/m.h", "// none\n")
            write("docs/etwrt/use.md", "# Use\n\n## ENVIRONMENT\n`ETWRT_HOME`\n- the home\n")

        faults = [
            ("no-diaries", "docs/page.md", "\n## Figures of 2020-01-02\n"),
            ("no-diaries", "docs/page.md", "\n### Session 3: the consumer\n"),
            ("no-diaries", "docs/page.md", "\nToday the ring got faster.\n"),
            ("no-diaries", "docs/page.md", "\nAs issue " + "30 says.\n"),  # split: no tracker
            # reference in the source itself
            ("sizes", "README.md", "line\n" * 250),
            ("links", "README.md", "\n[gone](docs/missing.md)\n"),
            ("links", "README.md", "\n[no anchor](docs/page.md#no-such-section)\n"),
            ("environment", "runtime/src/y.cc", 'auto v = getenv("ETWRT_NEW_KNOB");\n'),
            ("paths", "docs/page.md", "\nThe model is `harness/model/gone.h`.\n"),
            ("section-refs", "runtime/src/x.cc", '// See docs/page.md,\n// "A moved section".\n'),
        ]
        for name, _, _ in faults:
            clean()
            if CHECKS[name](work):
                problems.append(f"self-test: {name} fails on the clean tree")
        for name, file, text in faults:
            clean()
            with open(os.path.join(work, file), "a", encoding="utf-8") as f:
                f.write(text)
            if not CHECKS[name](work):
                problems.append(f"self-test: {name} passes with {text.strip()[:40]!r} in {file}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return problems


def main():
    checks = dict(CHECKS, **{"self-test": self_test})
    if len(sys.argv) != 3 or sys.argv[1] not in checks:
        print(__doc__, file=sys.stderr)
        return 2
    problems = checks[sys.argv[1]](os.path.realpath(sys.argv[2]))
    for p in problems:
        print(p, file=sys.stderr)
    print(f"docs {sys.argv[1]}: {'FAILED, ' + str(len(problems)) + ' problem(s)' if problems else 'ok'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
