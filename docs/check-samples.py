#!/usr/bin/env python3
# check-samples.py: compiles and runs the complete programs of the guides
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Usage: check-samples.py SRCDIR BUILDDIR CC RUN-MPI GUIDE.md...
# (CC is the compiler command, which may have several words)
#
# A sample is a fenced code block right after a line
# `<!-- sample: LANGUAGE [mpi=N] -->` (an HTML comment, which the
# rendered page does not show). C samples are built against the build
# tree through its uninstalled .pc with -Wall -Wextra -Werror (unused
# parameters allowed, as GLib callbacks have them); Python
# samples run through examples/python/run-uninstalled.py with the
# interpreter that runs this script, JavaScript samples with `gjs -m`,
# Vala samples are built with valac against the build tree's VAPI (the
# C valac writes is compiled without warnings). With mpi=N the program runs on N
# ranks through RUN-MPI (tests/run-mpi.sh). Output is TAP; the
# environment (GI_TYPELIB_PATH, LD_LIBRARY_PATH) comes from the test.

import os
import re
import shlex
import subprocess
import sys
import tempfile

MARK = re.compile(r"^<!-- sample: (\w+)(?: mpi=(\d+))? -->$")


def samples(path):
    """(line, language, ranks, code) of each sample of the guide at path"""
    with open(path, encoding="utf-8") as guide:
        lines = guide.read().split("\n")
    found = []
    for number, line in enumerate(lines):
        mark = MARK.match(line)
        if mark is None:
            continue
        if number + 1 >= len(lines) or not lines[number + 1].startswith("```"):
            raise SystemExit("%s:%d: a sample mark must be followed by a fenced block"
                             % (path, number + 1))
        end = lines.index("```", number + 2)
        found.append((number + 1, mark.group(1), int(mark.group(2) or 0),
                      "\n".join(lines[number + 2:end]) + "\n"))
    return found


def run(command, **kwargs):
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, check=False, timeout=120, **kwargs)
    return result.returncode, result.stdout


def main():
    srcdir, builddir, cc, run_mpi = sys.argv[1:5]
    guides = sys.argv[5:]
    env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(builddir, "meson-uninstalled"))
    status, flags = run(["pkg-config", "--cflags", "--libs", "hp-protocols-1.0"], env=env)
    if status != 0:
        raise SystemExit("pkg-config: " + flags)
    launcher = os.path.join(srcdir, "examples", "python", "run-uninstalled.py")
    count = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for guide in guides:
            for line, language, ranks, code in samples(guide):
                name = "%s:%d (%s%s)" % (os.path.basename(guide), line, language,
                                         ", %d ranks" % ranks if ranks else "")
                if language == "c":
                    source = os.path.join(tmp, "sample.c")
                    program = [os.path.join(tmp, "sample")]
                    with open(source, "w", encoding="utf-8") as out:
                        out.write(code)
                    warnings = ["-Wall", "-Wextra", "-Wno-unused-parameter", "-Werror"]
                    status, output = run(shlex.split(cc) + warnings + ["-o", program[0], source]
                                         + shlex.split(flags))
                elif language == "python":
                    source = os.path.join(tmp, "sample.py")
                    program = [sys.executable, launcher, source]
                    with open(source, "w", encoding="utf-8") as out:
                        out.write(code)
                    status, output = 0, ""
                elif language == "javascript":
                    source = os.path.join(tmp, "sample.js")
                    program = ["gjs", "-m", source]
                    with open(source, "w", encoding="utf-8") as out:
                        out.write(code)
                    status, output = 0, ""
                elif language == "vala":
                    # valac finds the package through the uninstalled
                    # pkg-config file and its VAPI in the build tree
                    source = os.path.join(tmp, "sample.vala")
                    program = [os.path.join(tmp, "sample-vala")]
                    with open(source, "w", encoding="utf-8") as out:
                        out.write(code)
                    status, output = run(["valac", "--vapidir",
                                          os.path.join(builddir, "introspection"),
                                          "--pkg", "hp-protocols-1.0", "--pkg", "gio-2.0",
                                          "--pkg", "json-glib-1.0", "-X", "-w",
                                          "-o", program[0], source], env=env, cwd=tmp)
                else:
                    raise SystemExit("%s:%d: unknown sample language %s" % (guide, line, language))
                if status == 0:
                    if ranks:
                        program = [run_mpi, str(ranks)] + program
                    status, output = run(program, env=env, cwd=tmp)
                count += 1
                failed += status != 0
                print("%s %d - %s" % ("ok" if status == 0 else "not ok", count, name))
                for text in output.splitlines():
                    print("# " + text)
    print("1..%d" % count)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
