#!/usr/bin/env python3
"""junit_check.py XML [--xpass CASE]: checks that etwh's JUnit XML has the shape the common CI
readers (Jenkins, GitLab, pytest's xunit2) show well. Exit 0: it does; 1: it does not (one line
per problem); 2: usage or a file that does not parse.

- one <testsuites> holding one <testsuite> whose counts match its testcases;
- the run's facts as <properties> first in the suite, none inside a <testcase>;
- each case's classname is its scenario file (dotted, without .json) and `file` names it,
  relative (to the scenarios folder), never an absolute path;
- a <failure>/<error> carries its message in the body too;
- every rule with no case is a skipped testcase of classname "rules" with a reason;
- with --xpass CASE: that case is a <failure> of type XPASS.
"""
import sys
import xml.etree.ElementTree as ET


def check(root, xpass):
    problems = []
    if root.tag != "testsuites":
        return ["root is <%s>, not <testsuites>" % root.tag]
    suites = root.findall("testsuite")
    if len(suites) != 1:
        return ["%d <testsuite>, expected 1" % len(suites)]
    suite = suites[0]
    if len(suite) == 0 or suite[0].tag != "properties":
        problems.append("<properties> is not the suite's first child")
    elif suite[0].find("property[@name='platform']") is None:
        problems.append("no platform property at suite level")
    cases = suite.findall("testcase")
    counts = {"tests": len(cases),
              "failures": sum(1 for c in cases if c.find("failure") is not None),
              "errors": sum(1 for c in cases if c.find("error") is not None),
              "skipped": sum(1 for c in cases if c.find("skipped") is not None)}
    for name, n in counts.items():
        for node in (suite, root):
            if node.get(name) != str(n):
                problems.append("<%s %s=%s>, counted %d" % (node.tag, name, node.get(name), n))
    rules = 0
    for c in cases:
        where = "testcase %s" % c.get("name")
        if c.find("properties") is not None:
            problems.append(where + ": <properties> inside a testcase")
        if c.get("classname") == "rules":
            rules += 1
            skipped = c.find("skipped")
            if skipped is None or not skipped.get("message"):
                problems.append(where + ": a rule with no case is not skipped with a reason")
            continue
        file = c.get("file", "")
        expected_class = file[:-len(".json")].replace("/", ".").lstrip(".")
        if file.startswith("/") or file[1:3] == ":/" or file[1:3] == ":\\":
            problems.append(where + ": file %r is an absolute path" % file)
        if not file.endswith(".json") or c.get("classname") != expected_class:
            problems.append(where + ": classname %r, file %r" % (c.get("classname"), file))
        for verdict in c.findall("failure") + c.findall("error"):
            body = verdict.text or ""
            if not verdict.get("message") or not body.startswith(verdict.get("message")):
                problems.append(where + ": <%s> body lacks its message" % verdict.tag)
    if rules == 0:
        problems.append("no testcase for the rules with no case")
    if xpass:
        c = suite.find("testcase[@name='%s']" % xpass)
        f = None if c is None else c.find("failure")
        if f is None or f.get("type") != "XPASS":
            problems.append("testcase %s: not a <failure type=XPASS>" % xpass)
    return problems


def main(argv):
    if len(argv) not in (2, 4) or (len(argv) == 4 and argv[2] != "--xpass"):
        print(__doc__.splitlines()[0], file=sys.stderr)
        return 2
    try:
        root = ET.parse(argv[1]).getroot()
    except (OSError, ET.ParseError) as e:
        print("%s: %s" % (argv[1], e), file=sys.stderr)
        return 2
    problems = check(root, argv[3] if len(argv) == 4 else None)
    for p in problems:
        print("%s: %s" % (argv[1], p), file=sys.stderr)
    if not problems:
        print("%s: JUnit shape as expected" % argv[1])
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
