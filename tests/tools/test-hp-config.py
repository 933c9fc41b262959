#!/usr/bin/env python3
# test-hp-config.py: runs every hp-config command with good and bad input,
# through both routes: the hp-config program and python3 -m hp_config
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Run by meson (suite "tools") with HP_CONFIG naming the program,
# GI_TYPELIB_PATH / LD_LIBRARY_PATH pointing at the build's Hp typelib
# and at the HpToolTest test library; for the Python route,
# HP_CONFIG_PYTHON naming a Python with PyGObject and PYTHONPATH holding
# the build's hp_config.py and override and the Python test types
# (toolmodels.py); for the gjs route, HP_CONFIG_GJS naming gjs and
# HP_CONFIG_JS the script (tools/hp-config.js). Output is TAP.
#
# Every command runs through each route, in a directory of its own that
# holds the same files: hp-config, python3 -m hp_config and gjs -m
# hp-config.js must give the same standard output, standard error and
# exit status and leave the same files (checked once per section).
# Files are named relative to those directories. Then the Python class
# toolmodels+Tool+Config and the JavaScript class Gjs_ToolConfig, twins
# of the C class HpToolTestConfig, go through the same commands as it,
# with the same results.

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HP_CONFIG = os.environ["HP_CONFIG"]
PYTHON = os.environ.get("HP_CONFIG_PYTHON")
GJS = os.environ.get("HP_CONFIG_GJS")
HERE = os.path.dirname(os.path.abspath(__file__))
TOOL_TEST = "HpToolTest-1.0"
ROUTES = {"c": [HP_CONFIG]}
if PYTHON:
    ROUTES["python"] = [PYTHON, "-m", "hp_config"]
if GJS:
    ROUTES["gjs"] = [GJS, "-m", os.environ["HP_CONFIG_JS"]]
OTHER_ROUTES = [route for route in ROUTES if route != "c"]
# the directory of each route, set by main()
DIRS = {}


class Tap:
    def __init__(self):
        self.count = 0
        self.failures = 0

    def check(self, condition, name, detail=None):
        self.count += 1
        print("%s %d - %s" % ("ok" if condition else "not ok", self.count, name))
        if not condition:
            self.failures += 1
            for line in str(detail if detail is not None else "").splitlines():
                print("#   " + line)
        sys.stdout.flush()
        return condition

    def skip(self, name, reason):
        self.count += 1
        print("ok %d - %s # SKIP %s" % (self.count, name, reason))

    def done(self):
        print("1..%d" % self.count)
        return 1 if self.failures else 0


tap = Tap()


class Parity:
    """What the other routes did differently from hp-config, per section"""

    def __init__(self):
        self.count = 0
        self.differences = {route: [] for route in OTHER_ROUTES}

    def check(self, section):
        for route in ["python", "gjs"]:
            name = "the %s route agrees with hp-config on %s" % (route, section)
            if route not in ROUTES:
                tap.skip(name, "no %s" % route)
                continue
            tap.check(not self.differences[route],
                      "the %s route gives the output, exit status and files of hp-config "
                      "for the %d commands of %s" % (route, self.count, section),
                      "\n".join(self.differences[route]))
        self.count = 0
        self.differences = {route: [] for route in OTHER_ROUTES}


parity = Parity()


def route_run(route, args, cwd, env=None):
    result = subprocess.run(ROUTES[route] + list(args), capture_output=True, text=True,
                            errors="replace", env=env, cwd=cwd)
    result.route = route
    result.argv = list(args)
    return result


def snapshot(directory):
    """The files under directory, by relative name, with their bytes"""
    files = {}
    for root, _, names in os.walk(directory):
        for name in names:
            path = os.path.join(root, name)
            with open(path, "rb") as f:
                files[os.path.relpath(path, directory)] = f.read()
    return files


def logged(text):
    """text without what differs from run to run: the process id and
    time of GLib's log lines, the random part of temporary file names"""
    text = re.sub(r"^\*\* \(([^:]*):\d+\): (\w+) \*\*: [\d:.]+: ", r"** (\1): \2 **: ", text,
                  flags=re.MULTILINE)
    return re.sub(r"\.[A-Za-z0-9]{6}\u201d", ".XXXXXX\u201d", text)


def run(*args, env=None, compare=True):
    """Runs hp-config with args in the directory of the C route, and the
    Python route with the same args in its own directory (unless not
    compare, for what the routes tell apart: the help, which names their
    load options); gives the result of hp-config"""
    result = route_run("c", args, DIRS["c"], env)
    if not compare:
        return result
    parity.count += 1
    for route in OTHER_ROUTES:
        other = route_run(route, args, DIRS[route], env)
        same_files = snapshot(DIRS["c"]) == snapshot(DIRS[route])
        if (other.returncode, other.stdout, logged(other.stderr)) != \
                (result.returncode, result.stdout, logged(result.stderr)) or not same_files:
            parity.differences[route].append("%s\n%s%s" % (
                describe(result), describe(other), "" if same_files else "the files differ\n"))
            # go on from the same files
            shutil.rmtree(DIRS[route])
            shutil.copytree(DIRS["c"], DIRS[route])
    return result


def describe(result):
    return "%s: %s\nstatus: %d\nstdout:\n%s\nstderr:\n%s" % (
        result.route, " ".join(result.argv), result.returncode, result.stdout, result.stderr)


def expect_ok(name, result):
    """Exit status 0 and nothing on the standard error"""
    return tap.check(result.returncode == 0 and result.stderr == "", name, describe(result))


def expect_error(name, result, *words, status=1):
    """The given exit status, nothing on the standard output and one line
    on the standard error, from hp-config, holding every word"""
    lines = result.stderr.splitlines()
    good = (result.returncode == status and result.stdout == "" and len(lines) == 1
            and lines[0].startswith("hp-config") and all(w in lines[0] for w in words))
    return tap.check(good, name, describe(result))


def slurp(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def read(name):
    """The text of a file of the C route"""
    with open(os.path.join(DIRS["c"], name), encoding="utf-8") as f:
        return f.read()


def exists(name):
    return os.path.exists(os.path.join(DIRS["c"], name))


def write(name, text):
    """Writes a file for every route"""
    for directory in DIRS.values():
        with open(os.path.join(directory, name), "w", encoding="utf-8") as f:
            f.write(text)


def test_types():
    result = run("types")
    names = result.stdout.split()
    expect_ok("types runs", result)
    for name in ["HpDecoderConfig", "HpLinearConfig", "HpParallelDims",
                 "HpTransformerBlockConfig", "HpAdamWConfig", "HpModuleConfig"]:
        tap.check(name in names, "types lists " + name, result.stdout)
    for name in ["HpConfig", "HpOptimizerConfig", "HpToolTestConfig"]:
        tap.check(name not in names, "types leaves out " + name, result.stdout)
    tap.check(names == sorted(names), "types are sorted", result.stdout)

    required = run("--require", TOOL_TEST, "types")
    expect_ok("--require before the command", required)
    tap.check("HpToolTestConfig" in required.stdout.split(),
              "--require adds the types of another library", required.stdout)
    after = run("types", "-r", TOOL_TEST)
    tap.check(after.returncode == 0 and after.stdout == required.stdout,
              "--require after the command", describe(after))
    again = run("--require", "Hp-1.0", "types")
    tap.check(again.returncode == 0 and again.stdout == result.stdout,
              "--require Hp-1.0 changes nothing", describe(again))

    expect_error("--require of a missing namespace", run("--require", "NoSuchLib-1.0", "types"),
                 "--require NoSuchLib-1.0", "NoSuchLib")
    # the typelib loads, its shared library does not (GIRepository warns too)
    paths = os.environ.get("LD_LIBRARY_PATH", "").split(os.pathsep)
    env = dict(os.environ, LD_LIBRARY_PATH=os.pathsep.join(p for p in paths
                                                  if not p.rstrip("/").endswith("tests/tools")))
    result = run("--require", TOOL_TEST, "types", env=env)
    tap.check(result.returncode == 1 and result.stdout == "" and result.stderr.splitlines()[-1] ==
              "hp-config types: HpToolTest.Config: the type cannot be registered "
              "(does libhp-tool-test.so load?)", "--require of a library that does not load",
              describe(result))
    expect_error("--require without a version", run("--require", "NoSuchLib", "types"),
                 "NAMESPACE-VERSION", "'NoSuchLib'", status=2)
    expect_error("types takes no argument", run("types", "HpLinearConfig"),
                 "unexpected argument 'HpLinearConfig'", status=2)
    parity.check("types")
    return names


def test_show():
    result = run("show", "HpDecoderConfig")
    expect_ok("show HpDecoderConfig", result)
    lines = result.stdout.splitlines()
    tap.check(lines[0] == "HpDecoderConfig (builds HpDecoder)", "show names the type and its owner",
              result.stdout)
    tap.check("  dim (int) = 64, range [2, 65536]" in lines,
              "show gives dim's type, default and range", result.stdout)
    dim = lines.index("  dim (int) = 64, range [2, 65536]") if "  dim (int) = 64, range [2, 65536]" in lines else -1
    tap.check(dim >= 0 and lines[dim + 1] == "      Model width", "show gives dim's description",
              result.stdout)
    tap.check("  dtype (HpDType) = float32, one of float32, float64, int64" in lines,
              "show gives the nicks of an enum", result.stdout)
    tap.check("  norm-eps (double) = 1.0e-05, range [0, 1]" in lines, "show gives a real range",
              result.stdout)
    tap.check("  rope-theta (double) = 10000.0, >= 1" in lines, "show gives an open range",
              result.stdout)
    tap.check("  loss-parallel (boolean) = true" in lines, "show gives a boolean", result.stdout)
    tap.check("  layers (HpConfigList) = null" in lines, "show gives the layers list", result.stdout)
    nested = lines.index("  lm-head (HpLinearConfig) = null") if "  lm-head (HpLinearConfig) = null" in lines else -1
    tap.check(nested >= 0 and lines[nested + 2] == "    param-init (HpParamInit) = null"
              and "    in-features (int) = 1, >= 1" in lines[nested:],
              "show indents the fields of a nested configuration", result.stdout)

    # the top-level fields in the order of the JSON that new writes
    new = json.loads(run("new", "HpDecoderConfig").stdout)
    top = [line.split(" ")[2] for line in lines[1:]
           if line.startswith("  ") and not line.startswith("   ")]
    tap.check(top == [key for key in new if key != "@type"], "show lists the fields in field order",
              "%s\n%s" % (top, list(new)))

    decoder = "show-decoder.json"
    made = run("new", "HpDecoderConfig", "-o", decoder, "--set",
               'layers=[{"@type": "HpTransformerBlockConfig"}, {"@type": "HpTransformerBlockConfig"}]',
               "--set", "dim=128")
    expect_ok("new with a list of nested configurations", made)
    shown = run("show", decoder)
    expect_ok("show FILE", shown)
    file_lines = shown.stdout.splitlines()
    tap.check(file_lines[0] == decoder + ": HpDecoderConfig (builds HpDecoder)"
              and "  dim (int) = 128, range [2, 65536]" in file_lines
              and "  layers (HpConfigList) = 2 items" in file_lines
              and "    layers.1 (HpTransformerBlockConfig)" in file_lines
              and "      attention (HpGQAttentionConfig) = null" in file_lines
              and "        n-heads (int) = 8, >= 1" in file_lines,
              "show FILE gives the file's values and the list items", shown.stdout)

    other = run("-r", TOOL_TEST, "show", "HpToolTestConfig")
    expect_ok("show a type of a required library", other)
    tap.check(other.stdout.splitlines()[:7] == [
        "HpToolTestConfig",
        "  size (int) = 3, range [1, 100]",
        "      Number of widgets",
        "  scale (double) = 0.5, range [0, 1]",
        "      Widget scale",
        "  label (string) = \"toy\"",
        "      Widget label"] and "    bias (boolean) = false" in other.stdout.splitlines(),
        "show gives the fields of the required type", other.stdout)

    expect_error("show an unknown type", run("show", "HpNoSuchConfig"),
                 "no configuration type named 'HpNoSuchConfig'")
    expect_error("show a type that is not a configuration", run("show", "GObject"),
                 "GObject is not a configuration type")
    expect_error("show an abstract type", run("show", "HpOptimizerConfig"),
                 "HpOptimizerConfig is abstract", "HpAdamWConfig", "HpSGDConfig")
    expect_error("show a type of a library not required", run("show", "HpToolTestConfig"),
                 "'HpToolTestConfig'")
    expect_error("show a missing file", run("show", "missing.json"),
                 "missing.json")
    expect_error("show without a type", run("show"), "expected TYPE|FILE", status=2)
    expect_error("show with two types", run("show", "HpLinearConfig", "HpDecoderConfig"),
                 "unexpected argument 'HpDecoderConfig'", status=2)
    parity.check("show")


# The types whose defaults do not build, and the check of validate that
# says why
INVALID_DEFAULTS = {
    "HpTransformerBlockConfig": "HpTransformerBlockConfig.attention-norm is not set",
}


def test_every_type(names):
    """new, validate and show work for every configuration type"""
    failures = []
    for name in names:
        path = "every-%s.json" % name
        made = run("new", name, "-o", path)
        valid = run("validate", path)
        shown = run("show", name)
        if name in INVALID_DEFAULTS:
            verdict = valid.returncode == 1 and valid.stderr == "hp-config validate: %s: %s\n" % (
                path, INVALID_DEFAULTS[name])
        else:
            verdict = valid.stdout == "%s: valid %s\n" % (path, name)
        if (made.returncode != 0 or not verdict
                or shown.returncode != 0 or shown.stderr != ""):
            failures.append("%s\n%s\n%s" % (describe(made), describe(valid), describe(shown)))
    tap.check(not failures, "new, validate and show for each of the %d types" % len(names),
              "\n".join(failures))
    parity.check("new, validate and show of every type")


def test_new():
    result = run("new", "HpLinearConfig")
    expect_ok("new to the standard output", result)
    config = json.loads(result.stdout)
    tap.check(list(config)[0] == "@type" and config["@type"] == "HpLinearConfig"
              and config["in-features"] == 1 and config["bias"] is False
              and config["dtype"] == "float32",
              "new writes the defaults with @type first", result.stdout)

    path = "new.json"
    result = run("new", "HpLinearConfig", "--set", "in-features=4", "-s", "out_features=3",
                 "--set", "bias=true", "--set", "dtype=float64", "-o", path)
    tap.check(result.returncode == 0 and result.stdout == "" and result.stderr == "",
              "new -o writes nothing on the standard output", describe(result))
    config = json.loads(read(path))
    tap.check(config["in-features"] == 4 and config["out-features"] == 3 and config["bias"] is True
              and config["dtype"] == "float64", "new applies every --set", read(path))
    later = json.loads(run("new", "HpLinearConfig", "--set", "in-features=4",
                           "--set", "in-features=5").stdout)
    tap.check(later["in-features"] == 5, "the last --set of a path wins", later)

    unwritten = "unwritten.json"
    expect_error("new with a value of the wrong type",
                 run("new", "HpLinearConfig", "--set", "in-features=four", "-o", unwritten),
                 "in-features", "'four'")
    tap.check(not exists(unwritten), "new writes no file on error")
    expect_error("new with a value out of range",
                 run("new", "HpDecoderConfig", "--set", "dim=1"), "dim", "out of range")
    expect_error("new with an unknown field", run("new", "HpLinearConfig", "--set", "width=3"),
                 "width", "HpLinearConfig")
    expect_error("new with an unknown enum nick",
                 run("new", "HpLinearConfig", "--set", "dtype=float16"), "dtype", "float16")
    expect_error("new with a path through a null configuration",
                 run("new", "HpDecoderConfig", "--set", "lm-head.bias=true"), "lm-head")
    expect_error("new --set without =", run("new", "HpLinearConfig", "--set", "bias"),
                 "expected PATH=VALUE, got 'bias'", status=2)
    expect_error("new of an unknown type", run("new", "HpNoSuchConfig"), "'HpNoSuchConfig'")
    expect_error("new of an abstract type", run("new", "HpConfig"), "HpConfig is abstract")
    expect_error("new with an unknown option", run("new", "HpLinearConfig", "--frob"),
                 "--frob", status=2)
    expect_error("new to a directory that does not exist",
                 run("new", "HpLinearConfig", "-o", "no/such/dir.json"),
                 "dir.json")
    parity.check("new")


def test_get_set():
    path = "model.json"
    expect_ok("new for get and set", run(
        "new", "HpDecoderConfig", "-o", path,
        "--set", 'layers=[{"@type": "HpTransformerBlockConfig", '
                 '"attention": {"@type": "HpGQAttentionConfig", "n-heads": 4}}]'))

    result = run("get", path, "dim", "loss-parallel", "dtype", "norm-eps", "lm-head",
                 "layers.0.attention.n-heads", "layers.0.attention.rope-theta")
    expect_ok("get several paths", result)
    tap.check(result.stdout.splitlines() == ["64", "true", "float32", "1.0e-05", "null", "4",
                                             "10000.0"],
              "get prints each value in its text form", result.stdout)
    item = run("get", path, "layers.0")
    tap.check(item.returncode == 0 and json.loads(item.stdout)["@type"] == "HpTransformerBlockConfig",
              "get of a list item prints its JSON", describe(item))

    expect_error("get of an unknown field", run("get", path, "width"), path, "width")
    expect_error("get of a list item out of range", run("get", path, "layers.3"),
                 "layers.3", "out of range")
    expect_error("get through a null configuration", run("get", path, "lm-head.bias"), "lm-head")
    expect_error("get of a missing file", run("get", "missing.json", "dim"),
                 "missing.json")
    expect_error("get without a path", run("get", path), "expected FILE PATH", status=2)

    result = run("set", path, "dim=128", "n-heads=8", "norm_eps=1e-6", "dtype=float64",
                 "layers.0.attention.n-heads=2", 'lm-head={"@type": "HpLinearConfig", "bias": true}',
                 "tie-word-embeddings=true")
    tap.check(result.returncode == 0 and result.stdout == "" and result.stderr == "",
              "set several fields", describe(result))
    result = run("get", path, "dim", "n-heads", "norm-eps", "dtype", "layers.0.attention.n-heads",
                 "lm-head.bias", "tie-word-embeddings")
    tap.check(result.stdout.splitlines() == ["128", "8", "1.0e-06", "float64", "2", "true", "true"],
              "get reads back what set wrote", describe(result))
    tap.check(read(path).endswith("}\n") and json.loads(read(path))["dim"] == 128,
              "set writes the file back as JSON", read(path))
    tap.check(run("get", path, "dim").stdout == "128\n", "the file set writes reads back")
    # with one block given, n-layers must be 1
    expect_error("validate checks the fields set wrote against each other", run("validate", path),
                 "hp-config validate: %s: layers: 1 blocks configured but n-layers is 2" % path)
    result = run("set", path, "layers.0.feed-forward.dim=7")
    expect_error("set through a null nested configuration", result, "layers.0.feed-forward")

    before = read(path)
    cases = [
        ("set with a value of the wrong type", ["dim=wide"], ["dim", "'wide'"]),
        ("set with a value out of range", ["dim=1"], ["dim", "out of range"]),
        ("set with a negative value out of range", ["n-layers=-1"], ["n-layers", "out of range"]),
        ("set with an unknown field", ["width=3"], ["width", "HpDecoderConfig"]),
        ("set with a bad enum nick", ["dtype=float16"], ["dtype", "float16"]),
        ("set of a list item out of range", ["layers.4.attention.n-heads=2"], ["layers.4"]),
        ("set with a bad nested JSON value", ['lm-head={"@type": "HpLinearConfig", "x": 1}'],
         ["lm-head", "x"]),
        ("set with a nested value in single quotes", ["lm-head={'@type': 'HpLinearConfig'}"],
         ["lm-head: not valid JSON: unexpected character ''' at byte 1"]),
        ("set with a nested member given twice", ['lm-head={"bias": true, "bias": false}'],
         ["lm-head: not valid JSON: member 'bias' appears twice in one object"]),
        ("set with an error after a good assignment", ["dim=256", "bias=maybe"], ["bias"]),
    ]
    for name, assignments, words in cases:
        expect_error(name, run("set", path, *assignments), path, *words)
        tap.check(read(path) == before, name + " leaves the file as it was")
    expect_error("set without =", run("set", path, "dim"), "expected PATH=VALUE, got 'dim'",
                 status=2)
    tap.check(read(path) == before, "set without = leaves the file as it was")
    expect_error("set without an assignment", run("set", path), "expected FILE PATH=VALUE",
                 status=2)
    missing = "missing.json"
    expect_error("set on a missing file", run("set", missing, "dim=8"), "missing.json")
    tap.check(not exists(missing), "set on a missing file makes no file")
    parity.check("get and set")


def test_validate():
    good = "good.json"
    expect_ok("new for validate", run("new", "HpParallelDims", "-o", good))
    result = run("validate", good)
    tap.check(result.returncode == 0 and result.stdout == good + ": valid HpParallelDims\n",
              "validate a good file", describe(result))

    bad_files = [
        ("validate invalid JSON", '{"@type": "HpLinearConfig", ',
         ["not valid JSON: unexpected end at byte 28"]),
        # configuration files are strict JSON
        ("validate a file with a comment", '/* linear */ {"@type": "HpLinearConfig"}',
         ["not valid JSON: unexpected character '/' at byte 0"]),
        ("validate a file with a comment and no @type", '{"dim": 8} // no type',
         ["not valid JSON: data after the JSON value at byte 11"]),
        ("validate a file with single quotes", "{'@type': 'HpLinearConfig'}",
         ["not valid JSON: unexpected character ''' at byte 1"]),
        ("validate a member given twice", '{"@type": "HpLinearConfig", "bias": true, "bias": false}',
         ["not valid JSON: member 'bias' appears twice in one object"]),
        ("validate two documents", '{"@type": "HpLinearConfig"} {"@type": "HpLinearConfig"}',
         ["not valid JSON: data after the JSON value at byte 28"]),
        ("validate an unknown member", '{"@type": "HpLinearConfig", "width": 3}',
         ["width", "HpLinearConfig"]),
        ("validate a value of the wrong type", '{"@type": "HpLinearConfig", "in-features": "x"}',
         ["in-features"]),
        ("validate a value out of range", '{"@type": "HpDecoderConfig", "dim": 1}',
         ["dim", "out of range"]),
        ("validate a nested error", '{"@type": "HpDecoderConfig", "layers": '
         '[{"@type": "HpTransformerBlockConfig", "attention": '
         '{"@type": "HpGQAttentionConfig", "n-heads": 0}}]}',
         ["layers.0.attention.n-heads"]),
        ("validate without @type", '{"dim": 8}', ['no "@type" member']),
        ("validate an unknown @type", '{"@type": "HpNoSuchConfig"}', ["HpNoSuchConfig"]),
        ("validate an @type that is not a configuration", '{"@type": "GObject"}', ["GObject"]),
        ("validate a file that is not an object", '[1, 2]', ["object"]),
        ("validate an empty file", '', ["not valid JSON: no value at byte 0"]),
    ]
    for index, (name, text, words) in enumerate(bad_files):
        path = "bad-%d.json" % index
        write(path, text)
        expect_error(name, run("validate", path), path + ": ", *words)
    expect_error("validate a missing file", run("validate", "missing.json"),
                 "missing.json")

    bad = "bad-1.json"
    result = run("validate", good, bad)
    tap.check(result.returncode == 1 and result.stdout == good + ": valid HpParallelDims\n"
              and len(result.stderr.splitlines()) == 1 and bad in result.stderr,
              "validate checks every file", describe(result))

    other = "other.json"
    expect_ok("new of a required type", run("new", "-r", TOOL_TEST, "HpToolTestConfig",
                                            "--set", "size=7", "-o", other))
    result = run("-r", TOOL_TEST, "validate", other)
    tap.check(result.returncode == 0 and result.stdout == other + ": valid HpToolTestConfig\n",
              "validate a file of a required type", describe(result))
    expect_error("validate a file of a type not required", run("validate", other),
                 "HpToolTestConfig")
    result = run("-r", TOOL_TEST, "set", other, "scale=2")
    expect_error("set of a required type checks the range", result, "scale", "out of range")
    expect_error("validate without a file", run("validate"), "expected FILE", status=2)
    parity.check("validate")


def test_diff():
    a = "a.json"
    b = "b.json"
    layers = ('layers=[{"@type": "HpTransformerBlockConfig", "attention": '
              '{"@type": "HpGQAttentionConfig"}}, {"@type": "HpTransformerBlockConfig"}]')
    expect_ok("new for diff", run("new", "HpDecoderConfig", "--set", layers, "-o", a))
    expect_ok("new for diff again", run("new", "HpDecoderConfig", "--set", layers, "-o", b))

    result = run("diff", a, b)
    tap.check(result.returncode == 0 and result.stdout == "%s and %s are equal\n" % (a, b)
              and result.stderr == "", "diff of equal files", describe(result))

    expect_ok("set for diff", run("set", b, "dim=128", "layers.0.attention.n-heads=2",
                                  'norm={"@type": "HpRMSNormConfig"}'))
    result = run("diff", a, b)
    tap.check(result.returncode == 1 and result.stderr == "" and result.stdout.splitlines() == [
        "dim: 64 -> 128",
        "layers.0.attention.n-heads: 8 -> 2",
        "norm: null -> HpRMSNormConfig"], "diff lists the differing paths", describe(result))
    result = run("diff", b, a)
    tap.check(result.returncode == 1 and "dim: 128 -> 64" in result.stdout.splitlines(),
              "diff the other way round", describe(result))

    expect_ok("set a shorter list", run("set", b, 'layers=[{"@type": "HpTransformerBlockConfig"}]'))
    result = run("diff", a, b)
    tap.check(result.returncode == 1 and
              "layers.0.attention: HpGQAttentionConfig -> null" in result.stdout.splitlines() and
              "layers.1: HpTransformerBlockConfig -> absent" in result.stdout.splitlines(),
              "diff of lists of different lengths", describe(result))

    linear = "linear.json"
    expect_ok("new for diff of types", run("new", "HpLinearConfig", "-o", linear))
    result = run("diff", a, linear)
    tap.check(result.returncode == 1 and
              result.stdout == "@type: HpDecoderConfig -> HpLinearConfig\n",
              "diff of different types", describe(result))

    expect_error("diff with a missing file", run("diff", a, "missing.json"),
                 "missing.json", status=2)
    invalid = "invalid.json"
    write(invalid, "{")
    expect_error("diff with an invalid file", run("diff", invalid, a), invalid,
                 "not valid JSON: unexpected end at byte 1",
                 status=2)
    expect_error("diff with one file", run("diff", a), "expected A B", status=2)
    parity.check("diff")


def test_checks():
    """validate runs the checks across fields that build runs"""
    linear = "int-linear.json"
    expect_ok("new with a dtype the field takes", run("new", "HpLinearConfig", "--set", "dtype=int64",
                                                       "-o", linear))
    expect_error("validate runs the check of the configuration class", run("validate", linear),
                 linear + ": HpLinearConfig.dtype: int64 is not a floating-point type "
                 "(float32 or float64)")
    decoder = "int-head.json"
    expect_ok("new with a nested configuration that does not check",
              run("new", "HpDecoderConfig", "--set",
                  'lm-head={"@type": "HpLinearConfig", "dtype": "int64"}', "-o", decoder))
    result = run("validate", decoder)
    expect_error("validate checks the nested configurations", result,
                 decoder + ": lm-head: HpLinearConfig.dtype: int64 is not a floating-point type")
    expect_ok("set the nested configuration right", run("set", decoder, "lm-head.dtype=float64"))
    result = run("validate", decoder)
    tap.check(result.returncode == 0 and result.stdout == decoder + ": valid HpDecoderConfig\n",
              "validate a decoder whose nested configurations check", describe(result))

    cases = [
        ("validate checks that the heads divide the model width", ["n-heads=7"],
         "n-heads: 7 heads do not split dim 64 into even head sizes"),
        ("validate checks that the key/value heads divide the heads", ["n-kv-heads=16"],
         "n-kv-heads: 16 key/value heads do not divide 4 heads"),
        ("validate checks the blocks against n-layers",
         ["n-layers=3", 'layers=[{"@type": "HpTransformerBlockConfig"}]'],
         "layers: 1 blocks configured but n-layers is 3"),
        ("validate checks the nested blocks", ["n-layers=1", 'layers=[{"@type": "HpTransformerBlockConfig"}]'],
         "layers.0.attention: a block of a decoder needs one"),
        ("validate checks that a tied head can share the embedding's table",
         ["tie-word-embeddings=true", 'tok-embeddings={"@type": "HpEmbeddingConfig"}',
          'lm-head={"@type": "HpLinearConfig", "bias": true}'],
         "tie-word-embeddings: lm-head has a bias, which a head tied to the token embedding "
         "cannot have"),
    ]
    for index, (name, assignments, message) in enumerate(cases):
        path = "decoder-%d.json" % index
        expect_ok("set for " + name, run("new", "HpDecoderConfig", "-o", path, *[
            arg for assignment in assignments for arg in ("--set", assignment)]))
        expect_error(name, run("validate", path), "hp-config validate: %s: %s" % (path, message))
    path = "decoder-ok.json"
    expect_ok("new of a decoder with its blocks", run(
        "new", "HpDecoderConfig", "-o", path, "--set", "n-layers=1", "--set",
        'layers=[{"@type": "HpTransformerBlockConfig", "attention": {"@type": "HpGQAttentionConfig"}, '
        '"attention-norm": {"@type": "HpRMSNormConfig"}, "feed-forward": {"@type": "HpFeedForwardConfig"}, '
        '"ffn-norm": {"@type": "HpRMSNormConfig"}}]'))
    result = run("validate", path)
    tap.check(result.returncode == 0 and result.stdout == path + ": valid HpDecoderConfig\n",
              "validate a decoder whose fields agree", describe(result))

    tool = "big-tool.json"
    expect_ok("new of a required type whose check fails",
              run("-r", TOOL_TEST, "new", "HpToolTestConfig", "--set", "size=100", "--set", "scale=1",
                  "-o", tool))
    expect_error("validate runs the check of a required type", run("-r", TOOL_TEST, "validate", tool),
                 "hp-config validate: %s: size * scale is 100, more than 50" % tool)
    result = run("-r", TOOL_TEST, "validate", decoder, tool, linear)
    tap.check(result.returncode == 1
              and result.stdout == decoder + ": valid HpDecoderConfig\n"
              and result.stderr.splitlines() == [
                  "hp-config validate: %s: size * scale is 100, more than 50" % tool,
                  "hp-config validate: %s: HpLinearConfig.dtype: int64 is not a floating-point "
                  "type (float32 or float64)" % linear],
              "validate reports the check of each file", describe(result))
    parity.check("the checks across fields")


def test_sharding_paths():
    """Dotted paths into sharding configs"""
    path = "sharded.json"
    expect_ok("new with sharding entries", run(
        "new", "HpLinearConfig", "-o", path,
        "--set", "sharding-config.state-shardings.weight=tp:S(1)",
        "--set", "sharding_config.in_src_shardings.x=tp:R",
        "--set", "sharding-config.out-dst-shardings.1=tp:S(-1), dp:R"))
    config = json.loads(read(path))
    tap.check(config["sharding-config"]["state-shardings"] == {"weight": {"tp": "S(1)"}}
              and config["sharding-config"]["in-src-shardings"] == {"x": {"tp": "R"}}
              and config["sharding-config"]["out-dst-shardings"] == [None, {"tp": "S(-1)", "dp": "R"}],
              "new writes the sharding entries", read(path))
    result = run("get", path, "sharding-config.state-shardings.weight",
                 "sharding-config.in-src-shardings.x", "sharding-config.in-dst-shardings.x",
                 "sharding-config.out-dst-shardings.0", "sharding-config.out-dst-shardings.1",
                 "sharding-config.local-map")
    tap.check(result.returncode == 0 and result.stdout.splitlines() == [
        "tp:S(1)", "tp:R", "null", "null", "tp:S(-1), dp:R", "null"],
        "get reads sharding entries", describe(result))

    other = "sharded-other.json"
    for directory in DIRS.values():
        shutil.copy(os.path.join(directory, path), os.path.join(directory, other))
    expect_ok("set sharding entries", run(
        "set", other, "sharding-config.state-shardings.weight=tp:S(0)",
        "sharding-config.state-shardings.attention.wq.weight=tp:S(0), dp:R",
        "sharding-config.out-dst-shardings.1=null",
        'sharding-config.local-map={"callable-path": "forward"}'))
    result = run("get", other, "sharding-config.state-shardings.weight",
                 "sharding-config.state-shardings.attention.wq.weight",
                 "sharding-config.out-dst-shardings.1")
    tap.check(result.stdout.splitlines() == ["tp:S(0)", "tp:S(0), dp:R", "null"],
              "get reads back what set wrote, dotted state names too", describe(result))
    result = run("diff", path, other)
    tap.check(result.returncode == 1 and result.stdout.splitlines() == [
        "sharding-config.state-shardings.weight: tp:S(1) -> tp:S(0)",
        "sharding-config.state-shardings.attention.wq.weight: null -> tp:S(0), dp:R",
        "sharding-config.out-dst-shardings.1: tp:S(-1), dp:R -> null",
        'sharding-config.local-map: null -> {"callable-path": "forward", "in-placements": [], '
        '"out-placements": [], "in-grad-placements": null}'],
        "diff lists the sharding entries that differ", describe(result))
    tap.check(run("validate", other).returncode == 0, "the sharded file set writes is valid")
    expect_ok("new without a sharding config", run("new", "HpLinearConfig", "-o", "plain.json"))
    expect_ok("new with an empty one", run("new", "HpLinearConfig", "--set", "sharding-config={}",
                                          "-o", "empty-sharding.json"))
    result = run("diff", "plain.json", "empty-sharding.json")
    tap.check(result.returncode == 1 and result.stdout ==
              'sharding-config: null -> {"state-shardings": {}, "in-src-shardings": {}, '
              '"in-dst-shardings": {}, "out-src-shardings": [], "out-dst-shardings": [], '
              '"local-map": null}\n', "diff of a null and an empty sharding config", describe(result))

    decoder = "sharded-decoder.json"
    expect_ok("new for sharding a nested configuration", run(
        "new", "HpDecoderConfig", "-o", decoder, "--set",
        'layers=[{"@type": "HpTransformerBlockConfig", "attention": {"@type": "HpGQAttentionConfig"}}]',
        "--set", "layers.0.attention.sharding-config.state-shardings.wq.weight=tp:S(0)"))
    result = run("get", decoder, "layers.0.attention.sharding-config.state-shardings.wq.weight")
    tap.check(result.stdout == "tp:S(0)\n", "sharding entries of list items", describe(result))

    before = read(other)
    cases = [
        ("set with a placement that does not parse", ["sharding-config.state-shardings.weight=tp:Q"],
         ["sharding-config.state-shardings.weight: cannot parse named placement 'tp:Q'"]),
        ("set of an unknown sharding member", ["sharding-config.state.weight=tp:R"],
         ["sharding-config.state: no field 'state' in HpShardingConfig"]),
        ("set of a sharding map without a name", ["sharding-config.in-src-shardings=tp:R"],
         ["sharding-config.in-src-shardings: expected an entry name after it"]),
        ("set of an output that is not an index", ["sharding-config.out-src-shardings.y=tp:R"],
         ["sharding-config.out-src-shardings.y: expected an output index, got 'y'"]),
        ("set with a bad sharding entry after a good one",
         ["sharding-config.state-shardings.bias=tp:R", "sharding-config.local-map={"],
         ["sharding-config.local-map: not valid JSON"]),
    ]
    for name, assignments, words in cases:
        expect_error(name, run("set", other, *assignments), other, *words)
        tap.check(read(other) == before, name + " leaves the file as it was")
    expect_error("get of an unknown sharding member", run("get", other, "sharding-config.nope.x"),
                 "sharding-config.nope: no field 'nope' in HpShardingConfig")
    parity.check("the sharding paths")


def test_usage():
    result = run("--help", compare=False)
    tap.check(result.returncode == 0 and "COMMAND" in result.stdout and
              all(name in result.stdout for name in
                  ["types", "show", "new", "get", "set", "validate", "diff", "--require",
                   "GI_TYPELIB_PATH", "Exit status"]),
              "--help lists the commands and the global options", describe(result))
    for command in ["types", "show", "new", "get", "set", "validate", "diff"]:
        result = run(command, "--help", compare=False)
        tap.check(result.returncode == 0 and ("hp-config %s [OPTION" % command) in result.stdout
                  and "--require" in result.stdout,
                  "%s --help" % command, describe(result))
        via_help = run("help", command, compare=False)
        tap.check(via_help.returncode == 0 and via_help.stdout == result.stdout,
                  "help %s" % command, describe(via_help))
    tap.check("--set=PATH=VALUE" in run("new", "--help", compare=False).stdout,
              "new --help gives --set")
    tap.check(run("help", compare=False).stdout == run("--help", compare=False).stdout,
              "help without a command")
    version = run("--version")
    tap.check(version.returncode == 0 and version.stdout.startswith("hp-config ")
              and version.stdout.strip().split(" ")[1][0].isdigit(), "--version", describe(version))
    expect_error("no command", run(), "no command given", status=2)
    expect_error("an unknown command", run("frob"), "unknown command 'frob'", status=2)
    expect_error("help of an unknown command", run("help", "frob"), "unknown command 'frob'",
                 status=2)
    expect_error("an unknown global option", run("--frob", "types"), "--frob", status=2)
    expect_error("an unknown option of a command", run("types", "--frob"), "--frob", status=2)
    parity.check("the usage")


COMMANDS = ["types", "show", "new", "get", "set", "validate", "diff"]


def test_python_route(tmp):
    """What only the Python route does: --import, and Python classes"""
    here = os.path.join(tmp, "python-only")
    os.mkdir(here)

    def py(*args):
        return route_run("python", args, here)

    def c(*args):
        return route_run("c", args, here)

    def put(name, text):
        with open(os.path.join(here, name), "w", encoding="utf-8") as f:
            f.write(text)

    result = py("--import", "toolmodels", "types")
    names = result.stdout.split()
    expect_ok("--import before the command", result)
    tap.check(sorted(set(names) - set(c("types").stdout.split())) ==
              ["toolmodels+Rig+Config", "toolmodels+Tool+Config"] and names == sorted(names),
              "types lists the configuration classes of the imported module among the others",
              result.stdout)
    after = py("types", "-i", "toolmodels")
    tap.check(after.returncode == 0 and after.stdout == result.stdout, "--import after the command",
              describe(after))
    both = py("--import", "toolmodels", "--require", TOOL_TEST, "types")
    tap.check(both.returncode == 0 and {"HpToolTestConfig", "toolmodels+Tool+Config"} <=
              set(both.stdout.split()), "--import and --require together", describe(both))

    expect_error("--import of a missing module", py("--import", "nosuch", "types"),
                 "hp-config types: --import nosuch: ModuleNotFoundError: No module named 'nosuch'")
    put("broken.py", 'raise RuntimeError("no widgets here")\n')
    expect_error("--import of a module that raises", py("types", "--import", "broken"),
                 "hp-config types: --import broken: RuntimeError: no widgets here")
    expect_error("--import without a module", py("types", "--import"), "--import", status=2)
    put("noisy.py", 'import sys\nimport toolmodels\nprint("noisy: out")\n'
                    'print("noisy: err", file=sys.stderr)\n')
    result = py("--import", "noisy", "show", "toolmodels+Tool+Config")
    tap.check(result.returncode == 0 and result.stdout.splitlines()[:2] ==
              ["noisy: out", "toolmodels+Tool+Config"] and result.stderr == "noisy: err\n",
              "what an imported module prints comes before the output of the command",
              describe(result))

    # one stream for both outputs: each error line where it happens
    expect_ok("new for the order of the output", c("new", "HpLinearConfig", "-o", "good.json"))
    put("bad.json", "{")
    merged = {}
    for route in ROUTES:
        merged[route] = subprocess.run(ROUTES[route] + ["validate", "good.json", "bad.json", "good.json"],
                                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                       cwd=here).stdout
    tap.check(merged["c"].splitlines() == [
        "good.json: valid HpLinearConfig",
        "hp-config validate: bad.json: not valid JSON: unexpected end at byte 1",
        "good.json: valid HpLinearConfig"] and merged["python"] == merged["c"],
        "the standard output and the standard error come in order, through both routes",
        "%s\n%s" % (merged["c"], merged["python"]))

    # Python classes nested in Python classes and lists
    result = py("-i", "toolmodels", "show", "toolmodels+Rig+Config")
    lines = result.stdout.splitlines()
    tap.check(result.returncode == 0 and lines[:4] == [
        "toolmodels+Rig+Config",
        "  tool (toolmodels+Tool+Config) = toolmodels+Tool+Config",
        "      The tool on the rig",
        "    size (int) = 3, range [1, 100]"] and lines[-4:] == [
        "  spares (HpConfigList) = null",
        "      Spare tools",
        "  count (uint) = 2, <= 8",
        "      Number of rigs"], "show a Python class with a nested Python class", describe(result))
    expect_ok("new of a Python class", py(
        "-i", "toolmodels", "new", "toolmodels+Rig+Config", "-o", "rig.json", "--set", "tool.size=7",
        "--set", 'spares=[{"@type": "toolmodels+Tool+Config", "label": "spare"}]'))
    config = json.loads(slurp(os.path.join(here, "rig.json")))
    tap.check(config == {"@type": "toolmodels+Rig+Config",
                         "tool": {"@type": "toolmodels+Tool+Config", "size": 7, "scale": 0.5,
                                  "label": "toy", "linear": None},
                         "spares": [{"@type": "toolmodels+Tool+Config", "size": 3, "scale": 0.5,
                                     "label": "spare", "linear": None}],
                         "count": 2}, "new writes the fields of the Python classes in order",
              json.dumps(config))
    result = py("-i", "toolmodels", "get", "rig.json", "tool.size", "spares.0.label", "count")
    tap.check(result.stdout.splitlines() == ["7", "spare", "2"], "get through Python classes",
              describe(result))
    shutil.copy(os.path.join(here, "rig.json"), os.path.join(here, "rig-2.json"))
    expect_ok("set through Python classes", py("-i", "toolmodels", "set", "rig-2.json",
                                               "spares.0.size=60", "spares.0.scale=0.9", "count=8"))
    expect_error("validate runs the check of a Python class in a list",
                 py("-i", "toolmodels", "validate", "rig-2.json"),
                 "hp-config validate: rig-2.json: spares.0: size * scale is 54, more than 50")
    result = py("-i", "toolmodels", "diff", "rig.json", "rig-2.json")
    tap.check(result.returncode == 1 and result.stdout.splitlines() == [
        "spares.0.size: 3 -> 60", "spares.0.scale: 0.5 -> 0.9", "count: 2 -> 8"],
        "diff of Python classes", describe(result))
    before = slurp(os.path.join(here, "rig-2.json"))
    expect_error("set out of the range of a Python field",
                 py("-i", "toolmodels", "set", "rig-2.json", "count=1", "count=9"),
                 "rig-2.json: count: value 9 out of range [0, 8]")
    tap.check(slurp(os.path.join(here, "rig-2.json")) == before,
              "a bad value leaves the file of a Python class byte for byte as it was")

    hint = ("unknown type 'toolmodels+Rig+Config', defined in the Python module 'toolmodels': "
            "import it (python3 -m hp_config --import toolmodels)")
    expect_error("hp-config says which module to import for a Python class",
                 c("validate", "rig.json"), "hp-config validate: rig.json: @type: " + hint)
    expect_error("so does the Python route without --import", py("validate", "rig.json"),
                 "hp-config validate: rig.json: @type: " + hint)
    expect_error("new of a Python class without --import", py("new", "toolmodels+Tool+Config"),
                 "hp-config new: no configuration type named 'toolmodels+Tool+Config' (hp-config "
                 "types lists them), defined in the Python module 'toolmodels': import it "
                 "(python3 -m hp_config --import toolmodels)")
    expect_error("a missing C type says what to load", c("new", "HpNoSuchConfig"),
                 "hp-config new: no configuration type named 'HpNoSuchConfig' (hp-config types "
                 "lists them): load the library or introspection namespace that defines it "
                 "(hp-config --require NAMESPACE-VERSION)")

    expect_ok("the Python route writes a file of C types",
              py("new", "HpDecoderConfig", "--set", "dim=128", "-o", "decoder.json"))
    result = c("validate", "decoder.json")
    tap.check(result.returncode == 0 and result.stdout == "decoder.json: valid HpDecoderConfig\n",
              "hp-config validates the file the Python route wrote", describe(result))

    result = py("--help")
    tap.check(result.returncode == 0 and all(word in result.stdout for word in [
        "-i, --import=MODULE", "-r, --require=NAMESPACE-VERSION", "sys.path", "GI_TYPELIB_PATH",
        "Exit status"]) and all(name in result.stdout for name in COMMANDS),
        "--help of the Python route gives --import", describe(result))
    tap.check("--import" not in c("--help").stdout, "--help of hp-config has no --import")
    help_failures = []
    for command in COMMANDS:
        result = py(command, "--help")
        via_help = py("help", command)
        if (result.returncode != 0 or ("hp-config %s [OPTION" % command) not in result.stdout
                or "--import=MODULE" not in result.stdout or via_help.stdout != result.stdout):
            help_failures.append(describe(result) + describe(via_help))
    tap.check(not help_failures, "COMMAND --help and help COMMAND of the Python route",
              "\n".join(help_failures))


def test_gjs_route(tmp):
    """What only the gjs route does: --import of ES modules"""
    here = os.path.join(tmp, "gjs-only")
    os.mkdir(here)
    models = os.path.join(HERE, "toolmodels.js")

    def gjs(*args):
        return route_run("gjs", args, here)

    result = gjs("--import", models, "types")
    expect_ok("--import of an ES module", result)
    tap.check(sorted(set(result.stdout.split()) - set(route_run("c", ["types"], here).stdout.split()))
              == ["Gjs_ToolConfig"], "types lists the configuration classes of the module",
              result.stdout)
    after = gjs("types", "-i", models)
    tap.check(after.returncode == 0 and after.stdout == result.stdout, "--import after the command",
              describe(after))
    shutil.copy(models, os.path.join(here, "models.js"))
    relative = gjs("--import", "./models.js", "types")
    tap.check(relative.stdout == result.stdout, "--import of a file relative to the current directory",
              describe(relative))
    expect_error("--import of a missing file", gjs("--import", "nosuch.js", "types"),
                 "hp-config types: --import nosuch.js: ImportError:")
    with open(os.path.join(here, "broken.js"), "w", encoding="utf-8") as f:
        f.write('throw new Error("no widgets here");\n')
    expect_error("--import of a module that throws", gjs("types", "--import", "broken.js"),
                 "hp-config types: --import broken.js: Error: no widgets here")
    with open(os.path.join(here, "noisy.js"), "w", encoding="utf-8") as f:
        f.write('print("noisy: imported");\n')
    expect_error("the value of another option is no module to import",
                 gjs("new", "Gjs_ToolConfig", "--set", "--import=noisy.js", "-i", models),
                 "hp-config new: --import: no field '--import' in Gjs_ToolConfig")
    expect_ok("new of a JavaScript class", gjs("-i", models, "new", "Gjs_ToolConfig", "-o", "tool.json"))
    expect_error("hp-config says to import the module of a JavaScript class",
                 route_run("c", ["validate", "tool.json"], here),
                 "hp-config validate: tool.json: @type: unknown type 'Gjs_ToolConfig', defined in "
                 "JavaScript: import its module (gjs -m hp-config.js --import FILE)")
    result = gjs("--help")
    tap.check(result.returncode == 0 and "-i, --import=FILE" in result.stdout
              and "-r, --require=NAMESPACE-VERSION" in result.stdout
              and "JavaScript modules imported with --import" in result.stdout,
              "--help of the gjs route gives --import", describe(result))


# The twins: HpToolTestConfig through hp-config, toolmodels+Tool+Config
# through the Python route and Gjs_ToolConfig through the gjs route
TWINS = {
    "c": ("HpToolTestConfig", ["-r", TOOL_TEST]),
    "python": ("toolmodels+Tool+Config", ["--import", "toolmodels"]),
    "gjs": ("Gjs_ToolConfig", ["--import", os.path.join(HERE, "toolmodels.js")]),
}
TWIN_STEPS = [
    ["show", "{T}"],
    ["new", "{T}", "-o", "tool.json"],
    ["show", "tool.json"],
    ["get", "tool.json", "size", "scale", "label", "linear"],
    ["set", "tool.json", "size=7", "label=big", 'linear={"@type": "HpLinearConfig"}',
     "linear.sharding-config.state-shardings.weight=tp:S(1)"],
    ["get", "tool.json", "size", "label", "linear.in-features",
     "linear.sharding-config.state-shardings.weight"],
    ["validate", "tool.json"],
    ["set", "tool.json", "size=101"],
    ["set", "tool.json", "scale=wide"],
    ["set", "tool.json", "width=3"],
    ["set", "tool.json", "size=8", "linear.sharding-config.state-shardings.weight=tp:Q"],
    ["set", "tool.json", "linear.dtype=float16"],
    ["new", "{T}", "--set", "size=100", "--set", "scale=1", "-o", "big.json"],
    ["validate", "big.json"],
    ["validate", "tool.json", "big.json"],
    ["diff", "tool.json", "big.json"],
    ["diff", "tool.json", "tool.json"],
    ["new", "{T}", "--set", "linear.bias=true"],
    ["new", "{T}", "--set", "scale=2"],
    ["show", "big.json"],
    ["set", "big.json", "scale=0.5"],
    ["validate", "big.json"],
    ["set", "big.json", "linear.bias=true"],
]


def test_twins(tmp):
    """The Python and the JavaScript configuration classes go through the
    commands as their C twin does: the same output, exit status and
    files, but for the name"""
    twins = {route: twin for route, twin in TWINS.items() if route in ROUTES}
    dirs = {route: os.path.join(tmp, "twin-" + route) for route in twins}
    for directory in dirs.values():
        os.mkdir(directory)

    def normal(text, route):
        return logged(text).replace(TWINS[route][0], "{T}")

    results = {}
    for step in TWIN_STEPS:
        outcome = {}
        for route, (name, load) in twins.items():
            before = snapshot(dirs[route])
            result = route_run(route, load + [arg.replace("{T}", name) for arg in step],
                               dirs[route])
            results.setdefault(" ".join(step), {})[route] = result
            outcome[route] = (result.returncode, normal(result.stdout, route),
                              normal(result.stderr, route),
                              {f: normal(t.decode(), route) for f, t in snapshot(dirs[route]).items()},
                              result.returncode == 0 or snapshot(dirs[route]) == before)
        for route in OTHER_ROUTES:
            tap.check(outcome["c"] == outcome[route],
                      "the %s class as its C twin: %s" % (route, " ".join(step)),
                      "\n".join(describe(results[" ".join(step)][twin]) for twin in ("c", route)))
        if outcome["c"][0] != 0:
            tap.check(all(unchanged for *_, unchanged in outcome.values()),
                      "the error leaves the files byte for byte as they were: " + " ".join(step))

    for route in OTHER_ROUTES:
        name = twins[route][0]
        result = results["validate tool.json big.json"][route]
        tap.check(result.returncode == 1 and result.stdout == "tool.json: valid %s\n" % name
                  and result.stderr == "hp-config validate: big.json: size * scale is 100, "
                  "more than 50\n", "validate runs the check of the %s class" % route,
                  describe(result))
        result = results["diff tool.json big.json"][route]
        tap.check(result.returncode == 1 and result.stdout.splitlines() == [
            "size: 7 -> 100", "scale: 0.5 -> 1.0", 'label: big -> toy',
            "linear: HpLinearConfig -> null"], "diff of the %s class" % route, describe(result))
        result = results["set tool.json size=8 linear.sharding-config.state-shardings.weight=tp:Q"][route]
        tap.check(result.returncode == 1 and "tool.json: linear.sharding-config.state-shardings.weight: "
                  "cannot parse named placement 'tp:Q'" in result.stderr,
                  "set of a bad sharding entry under a %s class" % route, describe(result))


def main():
    with tempfile.TemporaryDirectory() as tmp:
        for route in ROUTES:
            DIRS[route] = os.path.join(tmp, route)
            os.mkdir(DIRS[route])
        names = test_types()
        test_show()
        test_every_type(names)
        test_new()
        test_get_set()
        test_validate()
        test_checks()
        test_sharding_paths()
        test_diff()
        test_usage()
        if "python" in ROUTES:
            test_python_route(tmp)
        else:
            tap.skip("the Python route", "no Python with PyGObject (HP_CONFIG_PYTHON)")
        if "gjs" in ROUTES:
            test_gjs_route(tmp)
        else:
            tap.skip("the gjs route", "no gjs (HP_CONFIG_GJS)")
        test_twins(tmp)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
