# test_config_tool.py: Hp.ConfigTool, the hp-config commands, from Python:
# its load options, its description, and its commands on a configuration
# class written in Python (the tools suite runs the whole command set
# through every route)
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import json
import os
import sys
import tempfile
import unittest

from hptest import GLib, Hp


class Scale(Hp.Module):
    class Config(Hp.ModuleConfig):
        factor: float = Hp.field(1.0, minimum=-10.0, maximum=10.0, blurb="what x is multiplied by")
        steps: int = Hp.field(1, minimum=1)

        def do_validate(self):
            super().do_validate()
            if self.factor == 0.0:
                raise ValueError("factor 0 makes every output 0")

    def forward(self, x):
        return x.scale(self.config.factor)


def run(tool, args):
    """The exit status, standard output and standard error of one run; the
    tool writes to the process's file descriptors 1 and 2"""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        sys.stdout.flush()
        sys.stderr.flush()
        saved = os.dup(1), os.dup(2)
        os.dup2(out.fileno(), 1)
        os.dup2(err.fileno(), 2)
        try:
            status = tool.run(args)
        finally:
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
        out.seek(0)
        err.seek(0)
        return status, out.read().decode(), err.read().decode()


class ConfigToolTest(unittest.TestCase):
    def setUp(self):
        self.directory = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.directory.name, "scale.json")
        self.loads = []
        self.tool = Hp.ConfigTool.new()
        self.tool.add_load_option("load", ord("l"), "Record a value", "NAME", self.load)

    def tearDown(self):
        self.directory.cleanup()

    def load(self, tool, values):
        self.assertIs(tool, self.tool)
        self.loads.append(list(values))
        if "missing" in values:
            raise GLib.Error.new_literal(Hp.error_quark(), "no module 'missing'",
                                         int(Hp.Error.IO))
        return True

    def test_description(self):
        self.tool.set_description("Types come from this test.")
        self.assertEqual(self.tool.get_description(), "Types come from this test.")
        status, out, _ = run(self.tool, ["--help"])
        self.assertEqual(status, 0)
        self.assertIn("Types come from this test.", out)
        self.assertIn("--load=NAME", out)

    def test_commands_on_a_python_class(self):
        name = Scale.Config.__gtype__.name
        status, out, err = run(self.tool, ["--load", "a", "new", name, "--set", "factor=2.5",
                                           "-o", self.path, "--load", "b"])
        self.assertEqual((status, err), (0, ""))
        self.assertEqual(self.loads, [["a", "b"]])
        with open(self.path, encoding="utf-8") as f:
            written = json.load(f)
        self.assertEqual(written["@type"], name)
        self.assertEqual(written["factor"], 2.5)

        status, out, err = run(self.tool, ["get", self.path, "factor", "steps"])
        self.assertEqual((status, out, err), (0, "2.5\n1\n", ""))
        status, out, err = run(self.tool, ["validate", self.path])
        self.assertEqual((status, err), (0, ""))
        self.assertIn("valid", out)

        # a value the field refuses, and one validate refuses: the file stays
        with open(self.path, "rb") as f:
            before = f.read()
        status, _, err = run(self.tool, ["set", self.path, "factor=11"])
        self.assertEqual(status, 1)
        self.assertIn("factor", err)
        status, _, err = run(self.tool, ["set", self.path, "factor=0"])
        self.assertEqual(status, 0)
        status, _, err = run(self.tool, ["validate", self.path])
        self.assertEqual(status, 1)
        self.assertIn("factor 0 makes every output 0", err)
        run(self.tool, ["set", self.path, "factor=2.5"])
        with open(self.path, "rb") as f:
            self.assertEqual(f.read(), before)

    def test_attention_variants(self):
        """The decoder's attention fields through hp-config, down to the
        layers' paths"""
        path = os.path.join(self.directory.name, "decoder.json")
        status, _, err = run(self.tool, ["new", "HpDecoderConfig", "--set", "head-dim=6",
                                         "--set", "attention-bias=true",
                                         "--set", "rope-scaling=llama3",
                                         "--set", "rope-scaling-factor=32", "-o", path])
        self.assertEqual((status, err), (0, ""))
        status, out, err = run(self.tool, ["get", path, "head-dim", "attention-bias", "rope-scaling",
                                           "rope-scaling-factor", "rope-original-max-seq-len"])
        self.assertEqual((status, out, err), (0, "6\ntrue\nllama3\n32.0\n8192\n", ""))
        status, out, err = run(self.tool, ["validate", path])
        self.assertEqual((status, err), (0, ""))

        # a value the field refuses, and ones validate refuses
        status, _, err = run(self.tool, ["set", path, "rope-scaling=yarn"])
        self.assertEqual(status, 1)
        self.assertIn("rope-scaling", err)
        status, _, err = run(self.tool, ["set", path, "rope-scaling-factor=0"])
        self.assertEqual(status, 1)
        self.assertIn("rope-scaling-factor", err)
        run(self.tool, ["set", path, "head-dim=5"])
        status, _, err = run(self.tool, ["validate", path])
        self.assertEqual(status, 1)
        self.assertIn("head-dim: 5 must be even", err)
        run(self.tool, ["set", path, "head-dim=6", "rope-high-freq-factor=1"])
        status, _, err = run(self.tool, ["validate", path])
        self.assertEqual(status, 1)
        self.assertIn("rope-high-freq-factor 1 must be greater than rope-low-freq-factor 1", err)

        # the expanded layers carry them, as paths
        config = Hp.DecoderConfig(head_dim=6, attention_bias=True, rope_scaling=Hp.RopeScaling.LINEAR)
        config.expand()
        self.assertEqual([config.get_path_as_string("layers.1.attention." + path)
                          for path in ("head-dim", "rope-scaling", "wo.bias", "wq.out-features",
                                       "rope.scaling")],
                         ["6", "linear", "true", "24", "linear"])

    def test_errors(self):
        status, _, err = run(self.tool, ["--load", "missing", "types"])
        self.assertEqual(status, 1)
        self.assertIn("no module 'missing'", err)
        status, _, err = run(self.tool, ["frobnicate"])
        self.assertEqual(status, 2)
        self.assertIn("frobnicate", err)


if __name__ == "__main__":
    unittest.main(verbosity=2)
