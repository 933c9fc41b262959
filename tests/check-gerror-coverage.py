#!/usr/bin/env python3
# Checks that every public function taking a GError has a bad-input test
# listed in tests/README.md (issue 9, "transactional errors").
#
#   check-gerror-coverage.py SOURCE_ROOT [--layers runtime,tensor,...]
#
# The public functions are those declared in hp-protocols/LAYER/*.h
# (not *-private.h) whose parameter list names GError.  The table rows
# under the heading "## Bad input: every function that takes a GError"
# of tests/README.md have the form
#
#   | `hp_foo_bar` | `tests/dir/test-x.c` | `/test/path/of/the/case` |
#
# where the second and third cells may hold several entries separated by
# "<br>" or ", ".  Each function has one row; each test file must exist
# and name the function, and each test path must be registered with
# g_test_add*() in one of the row's files.  Exit status 0 when every
# function of the checked layers has a valid row, 1 otherwise; each
# problem is printed on its own line.

import argparse
import os
import re
import sys

LAYERS = ("runtime", "tensor", "distributed", "protocols", "nn", "io")
HEADING = "## Bad input: every function that takes a GError"
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
PUBLIC_NAME = re.compile(r"hp_[a-z0-9_]+")


def strip_comments_and_directives(text):
    """C source without comments, string literals' contents and
    preprocessor lines (continuations included)."""
    out = []
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            # keep line structure for directives that follow
            out.append("\n" * text.count("\n", i, end) or " ")
            i = end
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif c == '"' or c == "'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    lines = "".join(out).split("\n")
    kept = []
    in_directive = False
    for line in lines:
        if in_directive or line.lstrip().startswith("#"):
            in_directive = line.rstrip().endswith("\\")
            kept.append("")
        else:
            kept.append(line)
    return "\n".join(kept)


def top_level_statements(code):
    """Splits code at ';' outside braces and parentheses; brace blocks at
    the top level (struct bodies, enums) are replaced by '{}' so that the
    members of a class struct (vfuncs) are not taken for functions."""
    statements = []
    current = []
    brace = paren = 0
    for c in code:
        if c == "{":
            brace += 1
            if brace == 1:
                current.append("{}")
            continue
        if c == "}":
            brace -= 1
            continue
        if brace > 0:
            continue
        if c == "(":
            paren += 1
        elif c == ")":
            paren -= 1
        if c == ";" and paren == 0:
            statements.append("".join(current))
            current = []
        else:
            current.append(c)
    if "".join(current).strip():
        statements.append("".join(current))
    return statements


def paren_groups(statement):
    """(start, end, preceding identifier) of each top-level (...) group."""
    groups = []
    depth = 0
    start = 0
    for i, c in enumerate(statement):
        if c == "(":
            if depth == 0:
                start = i
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                before = statement[:start].rstrip()
                m = re.search(r"([A-Za-z_][A-Za-z0-9_]*)$", before)
                groups.append((start, i + 1, m.group(1) if m else None))
    return groups


def gerror_functions_of_header(path):
    """Names of the functions declared in one header whose parameter
    list contains GError."""
    with open(path, encoding="utf-8") as f:
        code = strip_comments_and_directives(f.read())
    found = []
    for statement in top_level_statements(code):
        words = IDENT.findall(statement)
        if not words or words[0] == "typedef" or "{}" in statement:
            continue
        for start, end, name in paren_groups(statement):
            if name is None or not PUBLIC_NAME.fullmatch(name):
                continue
            params = statement[start + 1:end - 1]
            if re.search(r"\bGError\b", params):
                found.append(name)
            break
    return found


def public_gerror_functions(root, layers):
    """{function name: (layer, header path relative to root)}"""
    functions = {}
    for layer in layers:
        folder = os.path.join(root, "hp-protocols", layer)
        if not os.path.isdir(folder):
            continue
        for name in sorted(os.listdir(folder)):
            if not name.endswith(".h") or name.endswith("-private.h"):
                continue
            rel = os.path.join("hp-protocols", layer, name)
            for fn in gerror_functions_of_header(os.path.join(root, rel)):
                functions[fn] = (layer, rel)
    return functions


def split_cell(cell):
    items = []
    for part in re.split(r"<br\s*/?>|,\s+", cell):
        part = part.strip().strip("`").strip()
        if part:
            items.append(part)
    return items


def read_table(readme):
    """Rows of the tables under HEADING: (line number, layer heading,
    function, [files], [paths])."""
    rows = []
    with open(readme, encoding="utf-8") as f:
        lines = f.read().split("\n")
    inside = False
    layer = None
    for number, line in enumerate(lines, 1):
        if line.startswith("## "):
            inside = line.strip() == HEADING
            layer = None
            continue
        if not inside:
            continue
        if line.startswith("### "):
            layer = line[4:].strip()
            continue
        stripped = line.strip()
        if not stripped.startswith("|"):
            continue
        cells = [c.strip() for c in stripped.strip("|").split("|")]
        if all(re.fullmatch(r":?-+:?", c) for c in cells if c):
            continue
        first = cells[0].strip("`").strip()
        if not PUBLIC_NAME.fullmatch(first):
            continue  # the header row
        if len(cells) < 3:
            rows.append((number, layer, first, [], []))
            continue
        rows.append((number, layer, first, split_cell(cells[1]),
                     split_cell(cells[2])))
    return rows, any(l.strip() == HEADING for l in lines)


def registered_paths(source):
    """GTest paths given to g_test_add* in one test file."""
    return set(re.findall(r"g_test_add\w*\s*\(\s*\"([^\"]+)\"", source))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("root", help="the source root")
    parser.add_argument("--layers",
                        help="comma-separated layers to check (default: all)")
    args = parser.parse_args()

    layers = LAYERS
    if args.layers:
        layers = tuple(l.strip() for l in args.layers.split(",") if l.strip())
        unknown = [l for l in layers if l not in LAYERS]
        if unknown:
            parser.error("unknown layer(s): " + ", ".join(unknown))

    root = args.root
    readme = os.path.join(root, "tests", "README.md")
    every = public_gerror_functions(root, LAYERS)
    checked = {f: v for f, v in every.items() if v[0] in layers}
    problems = []

    if not os.path.exists(readme):
        print("tests/README.md: missing")
        return 1
    rows, has_heading = read_table(readme)
    if not has_heading:
        problems.append("tests/README.md: no heading '%s'" % HEADING)

    covered = set()
    sources = {}
    first_row = {}
    for number, heading, fn, files, paths in rows:
        where = "tests/README.md:%d: %s" % (number, fn)
        if fn in first_row:
            problems.append(where + ": listed again (first on line %d)" % first_row[fn])
            continue
        first_row[fn] = number
        if fn not in every:
            problems.append(where + ": not a public function that takes a GError")
            continue
        layer = every[fn][0]
        if layer not in layers:
            continue
        if heading != layer:
            problems.append(where + ": listed under '### %s', declared in %s"
                            % (heading, every[fn][1]))
        if not files:
            problems.append(where + ": no test file")
        if not paths:
            problems.append(where + ": no test path")
        ok = bool(files and paths)
        texts = []
        for rel in files:
            full = os.path.join(root, rel)
            if rel not in sources:
                sources[rel] = None
                if os.path.isfile(full):
                    with open(full, encoding="utf-8") as f:
                        sources[rel] = f.read()
            if sources[rel] is None:
                problems.append(where + ": test file %s does not exist" % rel)
                ok = False
                continue
            if not re.search(r"\b%s\b" % re.escape(fn), sources[rel]):
                problems.append(where + ": %s does not name %s" % (rel, fn))
                ok = False
            texts.append(sources[rel])
        for path in paths:
            if texts and not any(path in registered_paths(t) for t in texts):
                problems.append(where + ": test path %s is not registered "
                                "with g_test_add* in %s" % (path, ", ".join(files)))
                ok = False
        if ok:
            covered.add(fn)

    listed = {row[2] for row in rows}
    for fn in sorted(checked, key=lambda f: (LAYERS.index(checked[f][0]), f)):
        if fn not in listed:
            problems.append("%s (%s): no row in tests/README.md"
                            % (fn, checked[fn][1]))

    for p in problems:
        print(p)
    per_layer = ", ".join("%s %d" % (l, sum(1 for v in checked.values() if v[0] == l))
                          for l in layers)
    if problems:
        print("%d functions (%s): %d covered, %d problem(s)"
              % (len(checked), per_layer, len(covered & set(checked)), len(problems)))
        return 1
    print("%d functions (%s), all covered" % (len(checked), per_layer))
    return 0


if __name__ == "__main__":
    sys.exit(main())
