# test_idioms.py: the torchtitan idioms of the PyGObject override, each
# asserted: callable modules, attributes, iteration, slotted configs,
# fields in declaration order with default instances, stable type names,
# and that the override uses public PyGObject API only
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import gc
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import typing
import unittest

import numpy as np

from hptest import OVERRIDES_DIR, GLib, GObject, Hp, assert_error, from_numpy, to_numpy

HERE = os.path.dirname(os.path.abspath(__file__))
MODULE = "test_idioms"      # this file's name when imported; it runs as __main__


class MLP(Hp.Module):
    """w2(gelu(w1(x))): two children with default configurations"""

    class Config(Hp.ModuleConfig):
        w1: Hp.LinearConfig = Hp.field(default_factory=lambda: Hp.LinearConfig(
            in_features=3, out_features=5, dtype=Hp.DType.FLOAT64))
        w2: Hp.LinearConfig         # a default instance of the type
        extra: Hp.LinearConfig = None

    def do_setup(self):
        super().do_setup()
        self.w1 = self.config.w1.build()
        self.w2 = self.config.w2.replace(in_features=5, out_features=2,
                                         dtype=Hp.DType.FLOAT64).build()

    def forward(self, x):
        return self.w2(self.w1(x).gelu())


class Projection(Hp.Module):
    """Two outputs and a keyword argument: q, k = proj(x, scale=s)"""

    class Config(Hp.ModuleConfig):
        dim: int = Hp.field(2, minimum=1, maximum=64, blurb="width")

    def do_setup(self):
        super().do_setup()
        self.register_parameter("wq", Hp.Tensor.new_ones(Hp.DType.FLOAT64, [2, self.config.dim]))
        self.register_buffer("offset", Hp.Tensor.new_full(Hp.DType.FLOAT64, [2], 0.5), True)
        self.register_buffer("scratch", Hp.Tensor.new_zeros(Hp.DType.FLOAT64, [1]), False)

    def forward(self, x, scale=None):
        q = x.linear(self.wq, None)
        k = q.add(self.offset)
        return q, k if scale is None else k.mul(scale)


class Ordered(Hp.Config):
    """Fields of every kind, declared out of name order"""

    zeta: int = Hp.field(3, minimum=0, maximum=9)
    alpha: float = 0.5
    flag: bool = True
    label: str = "x"
    dtype: Hp.DType = Hp.DType.FLOAT64
    tags: typing.List[str]                  # starts empty
    steps: GObject.TYPE_INT64 = 1 << 40
    middle: float
    shared: typing.ClassVar[int] = 7       # a class attribute, not a field


class Legacy(Hp.Config):
    """Fields declared the old way, with GObject.Property"""

    size = GObject.Property(type=int, default=2, minimum=1, maximum=8, blurb="a size")
    name = GObject.Property(type=str, default="legacy")
    inner = GObject.Property(type=Hp.LinearConfig)


class Checked(Hp.Config):
    """A config whose fields must agree, checked by do_validate"""

    low: int = 0
    high: int = 1
    validations = 0

    @property
    def span(self):
        return self.high - self.low

    def do_validate(self):
        super().do_validate()
        type(self).validations += 1
        if self.low > self.high:
            raise ValueError("low %d is above high %d" % (self.low, self.high))


class Holder(Hp.Config):
    checked: Checked
    many: Hp.ConfigList


def run_python(code, cwd):
    """Runs code in a child interpreter with the test environment; its
    stdout"""
    result = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True,
                            text=True, check=False, timeout=120)
    if result.returncode != 0:
        raise AssertionError("child failed:\n" + result.stdout + result.stderr)
    return result.stdout


class CallableTest(unittest.TestCase):
    def setUp(self):
        self.proj = Projection.Config(param_init=Hp.ParamInit.new_from_string("wq=ones")).build()
        self.x = from_numpy([[1.0, 2.0]])

    def test_call_and_outputs(self):
        self.assertEqual(self.proj.get_forward_arg_names(), ["x", "scale"])
        q, k = self.proj(self.x)
        np.testing.assert_array_equal(to_numpy(q), [[3.0, 3.0]])
        np.testing.assert_array_equal(to_numpy(k), [[3.5, 3.5]])
        model = MLP.Config().build()
        y = model(from_numpy(np.ones((4, 3))))
        self.assertIsInstance(y, Hp.Tensor)
        self.assertEqual(y.get_shape(), [4, 2])
        # the same as the library's call, which the module runs
        np.testing.assert_array_equal(to_numpy(y), to_numpy(model.call1(from_numpy(np.ones((4, 3))))))
        # a C module is callable too
        linear = Hp.LinearConfig(in_features=2, out_features=1, dtype=Hp.DType.FLOAT64,
                                 param_init=Hp.ParamInit.new_from_string("weight=ones")).build()
        linear.init_states(0)
        np.testing.assert_array_equal(to_numpy(linear(self.x)), [[3.0]])
        np.testing.assert_array_equal(to_numpy(linear(input=self.x)), [[3.0]])

    def test_keyword_arguments(self):
        half = from_numpy([[0.5, 0.5]])
        for q, k in (self.proj(self.x, half), self.proj(self.x, scale=half),
                     self.proj(scale=half, x=self.x)):
            np.testing.assert_array_equal(to_numpy(k), [[1.75, 1.75]])
        with self.assertRaises(TypeError) as caught:
            self.proj(self.x, sclae=half)
        self.assertIn("sclae", str(caught.exception))
        with self.assertRaises(TypeError):
            self.proj(self.x, x=self.x)
        with self.assertRaises(TypeError):
            self.proj(self.x, half, half)

    def test_forward_is_the_virtual_function(self):
        # C calls forward() through the virtual function: a container of
        # Python modules
        chain = Hp.Sequential.new()
        chain.append(MLP.Config().build())
        self.assertEqual(chain(from_numpy(np.ones((1, 3)))).get_shape(), [1, 2])
        self.assertEqual(chain[0].get_forward_arg_names(), ["x"])


class Counted(Hp.Module):
    """softmax through a callable that is a method of the module"""

    def do_setup(self):
        super().do_setup()
        self.calls = 0
        self.register_callable("inner", self.inner)

    def inner(self, args):
        self.calls += 1
        return [args[0].softmax(-1)]

    def forward(self, x):
        return self.run_callable("inner", [x])[0]


class CallableTest2(unittest.TestCase):
    def test_method_callable_does_not_keep_its_module(self):
        module = Counted()
        module(from_numpy([[1.0, 2.0]]))
        self.assertEqual(module.calls, 1)
        finalized = []
        module.weak_ref(lambda: finalized.append(True))
        del module
        gc.collect()
        self.assertEqual(finalized, [True])

    def test_plain_function_callable(self):
        module = Hp.Module.new()
        module.register_callable("double", lambda args: [args[0].scale(2.0)])
        out, = module.run_callable("double", [from_numpy([1.5])])
        np.testing.assert_array_equal(to_numpy(out), [3.0])


class AttributeTest(unittest.TestCase):
    def test_children_parameters_buffers(self):
        proj = Projection()
        self.assertIs(proj.wq, proj.get_parameter("wq"))
        self.assertIs(proj.offset, proj.get_buffer("offset"))
        model = MLP.Config().build()
        self.assertIs(model.w1, model.get_child("w1"))
        self.assertIs(model.w1.weight, model.get_parameter("w1.weight"))
        self.assertEqual(model.get_child_names(), ["w1", "w2"])
        with self.assertRaises(AttributeError) as caught:
            model.w3  # noqa: B018
        self.assertIn("'w3'", str(caught.exception))
        self.assertFalse(hasattr(model, "_private"))

        decoder = Hp.DecoderConfig(n_layers=2, dim=8, n_heads=2, vocab_size=11).build()
        self.assertEqual(decoder.layers[0].attention.wq.weight.get_shape(), [8, 8])
        self.assertIs(decoder.layers[-1], decoder.get_child("layers.1"))
        self.assertEqual(len(decoder.layers), 2)
        self.assertEqual([type(layer) for layer in decoder.layers], [Hp.TransformerBlock] * 2)
        with self.assertRaises(IndexError):
            decoder.layers[2]  # noqa: B018

    def test_assignment(self):
        model = MLP.Config().build()
        model.note = "kept"
        self.assertEqual(model.note, "kept")
        self.assertNotIn("note", model.get_child_names())
        # a module becomes a child, a tensor replaces a parameter or buffer
        model.w3 = Projection()
        self.assertEqual(model.get_child_names(), ["w1", "w2", "w3"])
        weight = from_numpy(np.ones((5, 3)))
        model.w1.weight = weight
        self.assertIs(model.get_parameter("w1.weight"), weight)
        proj = Projection()
        proj.scratch = from_numpy([2.0])
        self.assertEqual(proj.scratch.item(), 2.0)
        self.assertFalse(proj.buffer_is_persistent("scratch"))
        with self.assertRaises(TypeError) as caught:
            model.w1 = None
        self.assertEqual(str(caught.exception), "MLP.w1 is a child: assign a module")
        with self.assertRaises(TypeError):
            proj.wq = 1.0


class IterationTest(unittest.TestCase):
    def test_named_states(self):
        proj = Projection()
        self.assertEqual([name for name, _ in proj.named_parameters()], ["wq"])
        self.assertEqual([name for name, _ in proj.named_buffers()], ["offset", "scratch"])
        model = MLP.Config().build()
        params = dict(model.named_parameters())
        self.assertEqual(list(params), ["w1.weight", "w2.weight"])
        self.assertIs(params["w1.weight"], model.w1.weight)
        for name, tensor in model.state_dict():
            self.assertIs(tensor, model.get_parameter(name))
        states = proj.state_dict()       # persistent buffers only
        self.assertEqual(len(states), 2)
        self.assertIn("offset", states)
        self.assertNotIn("scratch", states)
        self.assertIs(states["wq"], proj.wq)
        with self.assertRaises(KeyError):
            states["scratch"]  # noqa: B018

    def test_config_lists(self):
        layers = Hp.ConfigList.new()
        for width in (1, 2, 3):
            layers.append(Hp.LinearConfig(in_features=width))
        self.assertEqual([layer.in_features for layer in layers], [1, 2, 3])
        self.assertEqual(len(layers), 3)
        self.assertEqual(layers[-1].in_features, 3)


class SlottedConfigTest(unittest.TestCase):
    def test_typo_raises(self):
        config = Hp.LinearConfig()
        with self.assertRaises(AttributeError) as caught:
            config.in_feature = 3
        self.assertEqual(str(caught.exception),
                         "Hp.LinearConfig has no field 'in_feature' (did you mean 'in_features'?)")
        with self.assertRaises(AttributeError) as caught:
            config.out_feature  # noqa: B018
        self.assertIn("did you mean 'out_features'?", str(caught.exception))
        with self.assertRaises(AttributeError) as caught:
            Projection.Config(dims=3)
        self.assertIn("did you mean 'dim'?", str(caught.exception))
        self.assertEqual(config.to_dict(), Hp.LinearConfig().to_dict())

    def test_values_are_checked(self):
        config = Projection.Config()
        assert_error(self, Hp.Error.CONFIG, "dim: value 65 out of range [1, 64]",
                     setattr, config, "dim", 65)
        assert_error(self, Hp.Error.CONFIG, "dim: expected a value of type gint, got gchararray",
                     setattr, config, "dim", "3")
        self.assertEqual(config.dim, 2)
        # a Python property of the class is not a field, and works as usual
        checked = Checked(low=1, high=4)
        self.assertEqual(checked.span, 3)
        with self.assertRaises(AttributeError):
            checked.span = 2            # no setter
        with self.assertRaises(AttributeError):
            checked.build = None        # methods stay methods

    def test_repr(self):
        self.assertEqual(repr(Projection.Config(dim=3)),
                         "Projection.Config(param_init=None, sharding_config=None, dim=3)")
        self.assertEqual(repr(Ordered()), "Ordered(zeta=3, alpha=0.5, flag=True, label='x', "
                         "dtype=Hp.DType.FLOAT64, tags=[], steps=1099511627776, "
                         "middle=0.0)")


class FieldTest(unittest.TestCase):
    def test_declaration_order(self):
        names = ["zeta", "alpha", "flag", "label", "dtype", "tags", "steps", "middle"]
        self.assertEqual([p.name for p in Ordered().list_fields()], names)
        self.assertEqual(list(Ordered().to_dict())[1:], names)
        self.assertEqual([p.name for p in Legacy().list_fields()], ["size", "name", "inner"])
        self.assertFalse(hasattr(Ordered(), "shared") and "shared" in Ordered().to_dict())
        self.assertEqual(Ordered.shared, 7)

    def test_kinds_and_defaults(self):
        config = Ordered()
        pspecs = {p.name: p for p in config.list_fields()}
        self.assertEqual(pspecs["zeta"].value_type, GObject.TYPE_INT)
        self.assertEqual(pspecs["steps"].value_type, GObject.TYPE_INT64)
        self.assertEqual(pspecs["tags"].value_type, GObject.TYPE_STRV)
        self.assertEqual((pspecs["zeta"].minimum, pspecs["zeta"].maximum), (0, 9))
        self.assertEqual((config.zeta, config.alpha, config.flag, config.label, config.dtype,
                          config.tags, config.steps, config.middle),
                         (3, 0.5, True, "x", Hp.DType.FLOAT64, [], 1 << 40, 0.0))
        config.steps = 1 << 50
        config.tags = ["c"]
        config.dtype = Hp.DType.INT64
        back = Ordered.from_dict(config.to_dict())
        self.assertTrue(back.equal(config))
        self.assertEqual((back.steps, back.tags, back.dtype), (1 << 50, ["c"], Hp.DType.INT64))
        legacy = Legacy()
        self.assertEqual((legacy.size, legacy.name, legacy.inner), (2, "legacy", None))
        self.assertEqual(legacy.props.size, 2)
        self.assertEqual({p.name: p.blurb for p in legacy.list_fields()}["size"], "a size")
        assert_error(self, Hp.Error.CONFIG, "size: value 9 out of range [1, 8]",
                     Legacy, size=9)

    def test_nested_defaults(self):
        # torchtitan's MLP.Config().build() fails on None.build; here the
        # nested fields have default instances
        first, second = MLP.Config(), MLP.Config()
        self.assertIsInstance(first.w1, Hp.LinearConfig)
        self.assertEqual(first.w1.in_features, 3)
        self.assertEqual(first.w2.to_dict(), Hp.LinearConfig().to_dict())
        self.assertIsNone(first.extra)
        # each configuration has its own default instance
        self.assertIsNot(first.w1, second.w1)
        first.w1.in_features = 4
        self.assertEqual(second.w1.in_features, 3)
        self.assertEqual(MLP.Config().w1.in_features, 3)
        self.assertIsNot(Holder().many, Holder().many)
        self.assertEqual(MLP.Config().build().w1.weight.get_shape(), [5, 3])

    def test_declared_at_run_time(self):
        """Hp.field is sugar over Hp.Config.type_add_field, which any
        binding calls"""
        cls = type("RunTime", (Hp.Config,), {"__module__": MODULE})
        self.assertTrue(Hp.Config.type_add_field(cls, "width", GObject.TYPE_INT, 4, 1, 10,
                                                 "a width"))
        self.assertTrue(Hp.Config.type_add_field(cls, "proj", Hp.LinearConfig,
                                                 Hp.LinearConfig(in_features=3), None, None,
                                                 None))
        assert_error(self, Hp.Error.INVALID_ARGUMENT,
                     MODULE + "+RunTime already has a field or property 'width'",
                     Hp.Config.type_add_field, cls, "width", GObject.TYPE_INT, None, None, None,
                     None)
        config = cls(width=7)
        self.assertEqual(config.to_dict(), {"@type": MODULE + "+RunTime", "width": 7, "proj": dict(
            Hp.LinearConfig(in_features=3).to_dict())})
        self.assertEqual(config.get_value("proj.in_features"), 3)
        self.assertTrue(config.set_value("proj.in_features", 5))
        self.assertEqual(config.proj.in_features, 5)
        assert_error(self, Hp.Error.CONFIG, "width: value 11 out of range [1, 10]",
                     config.set_value, "width", 11)
        assert_error(self, Hp.Error.CONFIG, "wide: no field 'wide' in " + MODULE + "+RunTime",
                     config.get_value, "wide")

    def test_bad_declarations(self):
        with self.assertRaises(GLib.Error) as caught:
            type("Bad", (Hp.Config,), {"__module__": MODULE, "__annotations__": {"n": int},
                                       "n": Hp.field(0, minimum=1)})
        self.assertEqual(caught.exception.message, MODULE + "+Bad.n: default 0 is outside [1, -]")
        with self.assertRaises(AttributeError):
            type("Worse", (Hp.Config,), {"__module__": MODULE, "__annotations__": {"n": dict}})
        # a list of strings keeps its default, copied for each config
        listed = type("Listed", (Hp.Config,), {"__module__": MODULE,
                                               "__annotations__": {"tags": typing.List[str]},
                                               "tags": ["a", "b"]})
        first, second = listed(), listed()
        self.assertEqual((first.tags, second.tags), (["a", "b"], ["a", "b"]))
        first.tags = ["c"]
        self.assertEqual((first.tags, second.tags), (["c"], ["a", "b"]))


class ValidateTest(unittest.TestCase):
    def test_validate(self):
        good, bad = Checked(low=1, high=2), Checked(low=3, high=2)
        self.assertTrue(good.validate())
        message = "Checked.validate() raised ValueError: low 3 is above high 2"
        assert_error(self, Hp.Error.CONFIG, message, bad.validate)
        # recursive, from a parent, through lists too
        holder = Holder(checked=bad)
        assert_error(self, Hp.Error.CONFIG, "checked: " + message, holder.validate)
        holder = Holder()
        holder.many.append(Checked(low=5, high=0))
        with self.assertRaises(GLib.Error) as caught:
            holder.validate()
        self.assertIn("low 5 is above high 0", caught.exception.message)
        self.assertTrue(Holder().validate())
        before = Checked.validations
        self.assertTrue(Hp.Config.validate(good))
        self.assertEqual(Checked.validations, before + 1)


class TypeNameTest(unittest.TestCase):
    """A configuration written by a script run as __main__ reads back in
    a program that imports the script's module"""

    MODELS = textwrap.dedent("""\
        from __future__ import annotations      # annotations as strings

        import json
        import sys
        sys.path.insert(0, %r)
        from hptest import Hp


        class Tiny(Hp.Module):
            class Config(Hp.ModuleConfig):
                width: int = 3


        if __name__ == "__main__":
            config = Tiny.Config(width=int(sys.argv[1]))
            print(json.dumps(config.to_dict()))
        """) % HERE

    READ = textwrap.dedent("""\
        import json
        import sys
        sys.path.insert(0, %r)
        from hptest import Hp
        import {module}
        config = Hp.Config.from_dict(json.loads(sys.stdin.read()))
        assert isinstance(config, {module}.Tiny.Config), type(config)
        assert isinstance(config.build(), {module}.Tiny)
        print(config.width, {module}.Tiny.Config.__gtype__.name)
        """) % HERE

    def check(self, directory, command, module, type_name):
        written = subprocess.run(command + ["7"], cwd=directory, capture_output=True, text=True,
                                 check=True, timeout=120).stdout
        self.assertEqual(json.loads(written)["@type"], type_name)
        self.assertNotIn("__main__", written)
        read = subprocess.run([sys.executable, "-c", self.READ.format(module=module)],
                              cwd=directory, input=written, capture_output=True, text=True,
                              check=False, timeout=120)
        self.assertEqual(read.returncode, 0, read.stderr)
        self.assertEqual(read.stdout.split(), ["7", type_name])

    def test_script_and_module(self):
        with tempfile.TemporaryDirectory() as directory:
            os.mkdir(os.path.join(directory, "pkg"))
            for path in ("tiny.py", os.path.join("pkg", "tiny.py")):
                with open(os.path.join(directory, path), "w", encoding="utf-8") as source:
                    source.write(self.MODELS)
            with open(os.path.join(directory, "pkg", "__init__.py"), "w", encoding="utf-8"):
                pass
            self.check(directory, [sys.executable, "tiny.py"], "tiny", "tiny+Tiny+Config")
            self.check(directory, [sys.executable, "-m", "tiny"], "tiny", "tiny+Tiny+Config")
            self.check(directory, [sys.executable, os.path.join("pkg", "tiny.py")], "pkg.tiny",
                       "pkg-tiny+Tiny+Config")
            self.check(directory, [sys.executable, "-m", "pkg.tiny"], "pkg.tiny",
                       "pkg-tiny+Tiny+Config")

    def test_interactive(self):
        """python -c, a REPL or a notebook have no module: the qualified
        name alone, which holds only within the session"""
        code = textwrap.dedent("""\
            import sys
            sys.path.insert(0, %r)
            from hptest import Hp


            class Tiny(Hp.Module):
                class Config(Hp.ModuleConfig):
                    width: int = 3


            print(Tiny.Config.__gtype__.name, Tiny.__gtype__.name)
            """) % HERE
        self.assertEqual(run_python(code, HERE).split(), ["Tiny+Config", "Tiny"])

    def test_this_file(self):
        self.assertEqual(MLP.Config.__gtype__.name, MODULE + "+MLP+Config")
        self.assertEqual(MLP.__gtype__.name, MODULE + "+MLP")
        self.assertEqual(MLP.Config().to_dict()["@type"], MODULE + "+MLP+Config")


class PublicApiTest(unittest.TestCase):
    def test_no_private_pygobject_api(self):
        with open(os.path.join(OVERRIDES_DIR, "Hp.py"), encoding="utf-8") as source:
            text = source.read()
        for private in ("gi._gi", "_gi.", "ctypes", "_PyGObject_API", "hook_up_vfunc",
                        "pygobject_new", "gi._"):
            self.assertNotIn(private, text)

    def test_runs_without_private_pygobject_api(self):
        """The override imported with PyGObject's private vfunc hook and
        its C API table removed, ctypes unavailable: a small model still
        builds, runs and trades values with numpy"""
        code = textwrap.dedent("""\
            import sys
            sys.modules["ctypes"] = None
            import gi
            import gi.types     # PyGObject's own module keeps its reference
            import gi._gi
            del gi._gi.hook_up_vfunc_implementation
            del gi._gi._PyGObject_API
            sys.path.insert(0, %r)
            import numpy as np
            from hptest import Hp


            class Scale(Hp.Module):
                class Config(Hp.ModuleConfig):
                    size: int = 3

                def do_setup(self):
                    super().do_setup()
                    self.register_parameter("weight", Hp.Tensor.from_numpy(
                        np.arange(float(self.config.size))))

                def forward(self, x):
                    return x.mul(self.weight)


            y = Scale.Config(size=3).build()(Hp.Tensor.from_numpy(np.ones(3)))
            assert "ctypes" not in sys.modules or sys.modules["ctypes"] is None
            print(list(y.numpy()))
            """) % HERE
        self.assertEqual(run_python(code, HERE).strip(), "[0.0, 1.0, 2.0]")


if __name__ == "__main__":
    unittest.main(verbosity=2)
