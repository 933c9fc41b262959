#!/usr/bin/env python3
# test-hp-config.py: runs every hp-config command with good and bad input
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Run by meson (suite "tools") with HP_CONFIG naming the program and
# GI_TYPELIB_PATH / LD_LIBRARY_PATH pointing at the build's Hp typelib
# and at the HpToolTest test library. Output is TAP.

import json
import os
import subprocess
import sys
import tempfile

HP_CONFIG = os.environ["HP_CONFIG"]
TOOL_TEST = "HpToolTest-1.0"


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

    def done(self):
        print("1..%d" % self.count)
        return 1 if self.failures else 0


tap = Tap()


def run(*args, env=None):
    return subprocess.run([HP_CONFIG] + list(args), capture_output=True, text=True,
                          errors="replace", env=env)


def describe(result):
    return "argv: %s\nstatus: %d\nstdout:\n%s\nstderr:\n%s" % (
        " ".join(result.args[1:]), result.returncode, result.stdout, result.stderr)


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


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def write(path, text):
    with open(path, "w", encoding="utf-8") as f:
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
    return names


def test_show(tmp):
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

    decoder = os.path.join(tmp, "show-decoder.json")
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
    expect_error("show a missing file", run("show", os.path.join(tmp, "missing.json")),
                 "missing.json")
    expect_error("show without a type", run("show"), "expected TYPE|FILE", status=2)
    expect_error("show with two types", run("show", "HpLinearConfig", "HpDecoderConfig"),
                 "unexpected argument 'HpDecoderConfig'", status=2)


def test_every_type(names, tmp):
    """new, validate and show work for every configuration type"""
    failures = []
    for name in names:
        path = os.path.join(tmp, "every-%s.json" % name)
        made = run("new", name, "-o", path)
        valid = run("validate", path)
        shown = run("show", name)
        if (made.returncode != 0 or valid.stdout != "%s: valid %s\n" % (path, name)
                or shown.returncode != 0 or shown.stderr != ""):
            failures.append("%s\n%s\n%s" % (describe(made), describe(valid), describe(shown)))
    tap.check(not failures, "new, validate and show for each of the %d types" % len(names),
              "\n".join(failures))


def test_new(tmp):
    result = run("new", "HpLinearConfig")
    expect_ok("new to the standard output", result)
    config = json.loads(result.stdout)
    tap.check(list(config)[0] == "@type" and config["@type"] == "HpLinearConfig"
              and config["in-features"] == 1 and config["bias"] is False
              and config["dtype"] == "float32",
              "new writes the defaults with @type first", result.stdout)

    path = os.path.join(tmp, "new.json")
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

    unwritten = os.path.join(tmp, "unwritten.json")
    expect_error("new with a value of the wrong type",
                 run("new", "HpLinearConfig", "--set", "in-features=four", "-o", unwritten),
                 "in-features", "'four'")
    tap.check(not os.path.exists(unwritten), "new writes no file on error")
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
                 run("new", "HpLinearConfig", "-o", os.path.join(tmp, "no", "such", "dir.json")),
                 "dir.json")


def test_get_set(tmp):
    path = os.path.join(tmp, "model.json")
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
    expect_error("get of a missing file", run("get", os.path.join(tmp, "missing.json"), "dim"),
                 "missing.json")
    expect_error("get without a path", run("get", path), "expected FILE PATH", status=2)

    result = run("set", path, "dim=128", "n-heads=8", "norm_eps=1e-6", "dtype=float64",
                 "layers.0.attention.n-heads=2", 'lm-head={"@type": "HpLinearConfig", "bias": true}')
    tap.check(result.returncode == 0 and result.stdout == "" and result.stderr == "",
              "set several fields", describe(result))
    result = run("get", path, "dim", "n-heads", "norm-eps", "dtype", "layers.0.attention.n-heads",
                 "lm-head.bias")
    tap.check(result.stdout.splitlines() == ["128", "8", "1.0e-06", "float64", "2", "true"],
              "get reads back what set wrote", describe(result))
    tap.check(read(path).endswith("}\n") and json.loads(read(path))["dim"] == 128,
              "set writes the file back as JSON", read(path))
    tap.check(run("validate", path).returncode == 0, "the file set writes is valid")
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
    missing = os.path.join(tmp, "missing.json")
    expect_error("set on a missing file", run("set", missing, "dim=8"), "missing.json")
    tap.check(not os.path.exists(missing), "set on a missing file makes no file")


def test_validate(tmp):
    good = os.path.join(tmp, "good.json")
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
        path = os.path.join(tmp, "bad-%d.json" % index)
        write(path, text)
        expect_error(name, run("validate", path), path + ": ", *words)
    expect_error("validate a missing file", run("validate", os.path.join(tmp, "missing.json")),
                 "missing.json")

    bad = os.path.join(tmp, "bad-1.json")
    result = run("validate", good, bad)
    tap.check(result.returncode == 1 and result.stdout == good + ": valid HpParallelDims\n"
              and len(result.stderr.splitlines()) == 1 and bad in result.stderr,
              "validate checks every file", describe(result))

    other = os.path.join(tmp, "other.json")
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


def test_diff(tmp):
    a = os.path.join(tmp, "a.json")
    b = os.path.join(tmp, "b.json")
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

    linear = os.path.join(tmp, "linear.json")
    expect_ok("new for diff of types", run("new", "HpLinearConfig", "-o", linear))
    result = run("diff", a, linear)
    tap.check(result.returncode == 1 and
              result.stdout == "@type: HpDecoderConfig -> HpLinearConfig\n",
              "diff of different types", describe(result))

    expect_error("diff with a missing file", run("diff", a, os.path.join(tmp, "missing.json")),
                 "missing.json", status=2)
    invalid = os.path.join(tmp, "invalid.json")
    write(invalid, "{")
    expect_error("diff with an invalid file", run("diff", invalid, a), invalid,
                 "not valid JSON: unexpected end at byte 1",
                 status=2)
    expect_error("diff with one file", run("diff", a), "expected A B", status=2)


def test_usage():
    result = run("--help")
    tap.check(result.returncode == 0 and "COMMAND" in result.stdout and
              all(name in result.stdout for name in
                  ["types", "show", "new", "get", "set", "validate", "diff", "--require",
                   "GI_TYPELIB_PATH", "Exit status"]),
              "--help lists the commands and the global options", describe(result))
    for command in ["types", "show", "new", "get", "set", "validate", "diff"]:
        result = run(command, "--help")
        tap.check(result.returncode == 0 and ("hp-config %s [OPTION" % command) in result.stdout
                  and "--require" in result.stdout,
                  "%s --help" % command, describe(result))
        via_help = run("help", command)
        tap.check(via_help.returncode == 0 and via_help.stdout == result.stdout,
                  "help %s" % command, describe(via_help))
    tap.check("--set=PATH=VALUE" in run("new", "--help").stdout, "new --help gives --set")
    tap.check(run("help").stdout == run("--help").stdout, "help without a command")
    version = run("--version")
    tap.check(version.returncode == 0 and version.stdout.startswith("hp-config ")
              and version.stdout.strip().split(" ")[1][0].isdigit(), "--version", describe(version))
    expect_error("no command", run(), "no command given", status=2)
    expect_error("an unknown command", run("frob"), "unknown command 'frob'", status=2)
    expect_error("help of an unknown command", run("help", "frob"), "unknown command 'frob'",
                 status=2)
    expect_error("an unknown global option", run("--frob", "types"), "--frob", status=2)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        names = test_types()
        test_show(tmp)
        test_every_type(names, tmp)
        test_new(tmp)
        test_get_set(tmp)
        test_validate(tmp)
        test_diff(tmp)
        test_usage()
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
