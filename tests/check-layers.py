#!/usr/bin/env python3
# Checks that no layer of the library uses a higher one (DESIGN.md §1).
#
#   check-layers.py SOURCE_ROOT BUILD_ROOT
#
# The layers, lowest first, are hp_layers of hp-protocols/meson.build
# (runtime, tensor, distributed, protocols, nn, io); each may use only
# itself and the layers before it. Three checks, printed as TAP:
#
# - includes: every `#include "..."` line of every .c and .h file of a
#   layer's folder names a header of that layer or a lower one: a header
#   in the folder of a layer, the enum header hp-LAYER-enum-types.h that
#   the layer's meson.build generates, the accessors NAME-fields.h and
#   NAME-fields.c that hp-mkfields.py makes of NAME.c, or config.h. A
#   header of a higher layer, one of the top folder (the umbrella
#   header, hp-mpi.h, hp-enum-types.h, hp-version.h: they belong to no
#   layer), a path with a folder in it and an unknown header are errors.
# - compile: with the compiler command that the build uses for a file of
#   the layer (BUILD_ROOT/compile_commands.json), a probe that includes a
#   header of the layer compiles, and a probe that includes a header of
#   each higher layer, or the umbrella header, fails because the header
#   is not found: the include path of the layer holds no higher folder.
# - symbols: the static library of a layer refers to no symbol that the
#   static library of a higher layer defines (`nm`), so a declaration
#   written out by hand does not get around the include path.
#
# Exit status 0 when every check passes, 1 otherwise.

import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]')


def read_layers(srcdir):
    with open(os.path.join(srcdir, "hp-protocols", "meson.build"), encoding="utf-8") as f:
        match = re.search(r"^hp_layers\s*=\s*\[([^\]]*)\]", f.read(), re.M)
    if match is None:
        raise SystemExit("hp-protocols/meson.build: no hp_layers = [...]")
    return re.findall(r"'([a-z]+)'", match.group(1))


def header_layers(srcdir, layers):
    """{header name: index of its layer, or None for the top folder}"""
    where = {}
    top = os.path.join(srcdir, "hp-protocols")
    for name in os.listdir(top):
        if name.endswith(".h"):
            where[name] = None
        elif name.endswith(".h.in"):
            where[name[:-3]] = None
    for index, layer in enumerate(layers):
        for name in os.listdir(os.path.join(top, layer)):
            if name.endswith(".h"):
                if name in where:
                    raise SystemExit("%s is in two folders" % name)
                where[name] = index
            if name.endswith(".c"):     # the accessors hp-mkfields.py may make of it
                where[name[:-2] + "-fields.h"] = where[name[:-2] + "-fields.c"] = index
        where["hp-%s-enum-types.h" % layer] = index
    return where


def check_includes(srcdir, layers, where):
    problems = []
    for index, layer in enumerate(layers):
        folder = os.path.join("hp-protocols", layer)
        for name in sorted(os.listdir(os.path.join(srcdir, folder))):
            if not name.endswith((".c", ".h")):
                continue
            path = os.path.join(folder, name)
            with open(os.path.join(srcdir, path), encoding="utf-8") as f:
                lines = f.readlines()
            for number, line in enumerate(lines, 1):
                match = INCLUDE.match(line)
                if match is None:
                    continue
                quote, header = match.groups()
                at = "%s:%d: %s (layer %s)" % (path, number, header, layer)
                if quote == "<":
                    if header.startswith("hp-protocols/"):
                        problems.append(at + ": the installed path of a header; include it by name")
                    continue
                if header == "config.h":
                    continue
                if "/" in header:
                    problems.append(at + ": a path; include a header by name")
                elif header not in where:
                    problems.append(at + ": no layer has this header")
                elif where[header] is None:
                    problems.append(at + ": belongs to no layer (top folder, for programs only)")
                elif where[header] > index:
                    problems.append(at + ": belongs to the higher layer %s" % layers[where[header]])
    return problems


def layer_command(builddir, layer):
    """The compiler and flags of a file of @layer's static library,
    without its source, output and dependency file"""
    with open(os.path.join(builddir, "compile_commands.json"), encoding="utf-8") as f:
        entries = json.load(f)
    marker = "libhp-layer-%s.a.p" % layer
    for entry in entries:
        if marker not in entry.get("output", ""):
            continue
        args = entry["arguments"] if "arguments" in entry else shlex.split(entry["command"])
        kept = []
        skip = False
        for arg in args:
            if skip:
                skip = False
            elif arg in ("-o", "-MF", "-MQ", "-MT", "-c"):
                skip = True
            elif arg in ("-MD", "-MMD"):
                pass
            else:
                kept.append(arg)
        return entry["directory"], kept
    raise SystemExit("%s: no file of %s" % (os.path.join(builddir, "compile_commands.json"), marker))


def compile_probe(directory, command, header, tmp):
    probe = os.path.join(tmp, "probe.c")
    with open(probe, "w", encoding="utf-8") as f:
        f.write('#include "config.h"\n#include "%s"\n' % header)
    result = subprocess.run(command + ["-fsyntax-only", probe], cwd=directory,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, check=False)
    return result.returncode, result.stdout


def not_found(output, header):
    """Whether the compiler failed for not finding @header (gcc, clang)"""
    return any(header in line and ("No such file" in line or "not found" in line)
               for line in output.splitlines())


def first_header(srcdir, layer):
    folder = os.path.join(srcdir, "hp-protocols", layer)
    return sorted(n for n in os.listdir(folder) if n.endswith(".h") and not n.endswith("-private.h"))[0]


def check_compile(srcdir, builddir, layers, index, tmp):
    layer = layers[index]
    directory, command = layer_command(builddir, layer)
    problems = []
    own = first_header(srcdir, layer)
    status, output = compile_probe(directory, command, own, tmp)
    if status != 0:
        problems.append("%s: a probe including its own %s does not compile:\n%s" % (layer, own, output))
    for higher in layers[index + 1:] + [None]:
        header = first_header(srcdir, higher) if higher else "hp-protocols.h"
        status, output = compile_probe(directory, command, header, tmp)
        if status == 0:
            problems.append("%s: a probe including %s (%s) compiles"
                            % (layer, header, higher or "the umbrella header"))
        elif not not_found(output, header):
            problems.append("%s: a probe including %s fails, but not for want of the header:\n%s"
                            % (layer, header, output))
    return problems


def symbols(library, nm):
    result = subprocess.run(nm + ["-g", library], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, check=False)
    if result.returncode != 0:
        raise SystemExit("%s: %s" % (" ".join(nm), result.stderr.strip()))
    defined, undefined = set(), set()
    for line in result.stdout.splitlines():
        parts = line.split()
        if len(parts) == 2:
            undefined.add(parts[1])
        elif len(parts) == 3 and parts[1] != "U":
            defined.add(parts[2])
    return defined, undefined


def main():
    if len(sys.argv) != 3:
        raise SystemExit("usage: check-layers.py SOURCE_ROOT BUILD_ROOT")
    srcdir, builddir = sys.argv[1:3]
    layers = read_layers(srcdir)
    where = header_layers(srcdir, layers)
    results = []

    problems = check_includes(srcdir, layers, where)
    results.append(("includes: every #include names a header of its layer or a lower one", problems))

    with tempfile.TemporaryDirectory() as tmp:
        for index, layer in enumerate(layers):
            results.append(("compile: %s sees its own headers, none of %s or the umbrella header"
                            % (layer, ", ".join(layers[index + 1:]) or "a higher layer"),
                            check_compile(srcdir, builddir, layers, index, tmp)))

    nm = shlex.split(os.environ.get("NM", "nm"))
    libs = [symbols(os.path.join(builddir, "hp-protocols", layer, "libhp-layer-%s.a" % layer), nm)
            for layer in layers]
    problems = []
    for index, layer in enumerate(layers):
        for higher in range(index + 1, len(layers)):
            for name in sorted(libs[index][1] & libs[higher][0]):
                problems.append("%s uses %s of the higher layer %s" % (layer, name, layers[higher]))
    results.append(("symbols: no layer's library uses a symbol of a higher layer's", problems))

    print("1..%d" % len(results))
    failed = 0
    for number, (title, problems) in enumerate(results, 1):
        print("%s %d - %s" % ("not ok" if problems else "ok", number, title))
        for problem in problems:
            for line in problem.splitlines():
                print("# " + line)
        failed += bool(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
