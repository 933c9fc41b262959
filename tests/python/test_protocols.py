# test_protocols.py: configurations and modules written in Python, through
# the PyGObject override (one process, no mesh)
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import gc
import json
import sys
import unittest

import numpy as np

from hptest import OVERRIDES_DIR, GLib, GObject, Hp, assert_error, from_numpy, to_numpy

# The GType names of the classes below start with the module's name
MODULE = __name__


class Linear(Hp.Module):
    """y = x W^T, with W of shape [out_features, in_features]"""

    class Config(Hp.ModuleConfig):
        in_features = GObject.Property(type=int, default=4, minimum=1, maximum=1 << 20)
        out_features = GObject.Property(type=int, default=4, minimum=1, maximum=1 << 20)

    gain = GObject.Property(type=float, default=1.0)

    def setup(self):
        config = self.config
        self.setups = getattr(self, "setups", 0) + 1
        self.register_parameter("weight", Hp.Tensor.new_zeros(
            Hp.DType.FLOAT64, [config.out_features, config.in_features]))

    def do_forward(self, args):
        return [args[0].linear(self.get_parameter("weight"), None).scale(self.props.gain)]


class ResetLinear(Linear):
    """Linear whose weight, without param_init, is uniform in [-1, 1) from
    the seed it gets, which it keeps; it also has a buffer (the sum of the
    weight) and a second, optional, argument and output"""

    def setup(self):
        super().setup()
        self.seeds = []
        self.buffer_inits = 0
        self.register_buffer("total", Hp.Tensor.new_zeros(Hp.DType.FLOAT64, [1]), True)

    def do_reset_parameters(self, seed):
        self.seeds.append(seed)
        return Hp.Initializer.new_uniform(-1.0, 1.0).apply(self.get_parameter("weight"),
                                                           Hp.Module.derive_seed(seed, "weight"))

    def do_init_self_buffers(self):
        self.buffer_inits += 1
        total = to_numpy(self.get_parameter("weight")).sum()
        self.register_buffer("total", from_numpy([total]), True)
        return True

    def do_get_forward_arg_names(self):
        return ["x", "mask"]

    def do_forward(self, args):
        x, mask = args
        y = x.linear(self.get_parameter("weight"), None)
        return [y, None if mask is None else y.mul(mask)]


class Failing(Hp.Module):
    """A module whose setup() or forward fails as its config says"""

    class Config(Hp.ModuleConfig):
        mode = GObject.Property(type=str, default="")

    def setup(self):
        if self.config.mode == "value":
            raise ValueError("mode 'value' is not supported")
        if self.config.mode == "glib":
            raise GLib.Error.new_literal(Hp.error_quark(), "no shape for this mode",
                                         int(Hp.Error.SHAPE))

    def do_forward(self, args):
        raise GLib.Error.new_literal(Hp.error_quark(), "Failing cannot run", int(Hp.Error.STATE))


class Block(Hp.Module):
    """Holds a nested config and a list of configs and builds children
    from them"""

    class Config(Hp.ModuleConfig):
        middle = GObject.Property(type=Linear.Config)
        layers = GObject.Property(type=Hp.ConfigList)
        name = GObject.Property(type=str, default="block")

    def setup(self):
        config = self.config
        if config.middle is not None:
            self.add_child("middle", config.middle.build())
        layers = config.layers
        for i in range(layers.get_length() if layers is not None else 0):
            self.add_child("layers_%d" % i, layers.peek(i).build())


class Unowned(Hp.Config):
    size = GObject.Property(type=int, default=1)


def block_config():
    layers = Hp.ConfigList.new()
    layers.append(Linear.Config(in_features=2, out_features=3))
    layers.append(Linear.Config(in_features=3, out_features=2))
    return Block.Config(middle=Linear.Config(in_features=5), layers=layers)


class OverrideTest(unittest.TestCase):
    def test_loaded_from_source_tree(self):
        override = sys.modules["gi.overrides.Hp"]
        self.assertEqual(override.__file__, OVERRIDES_DIR + "/Hp.py")
        self.assertIs(Hp.Config, override.Config)
        self.assertTrue(issubclass(Hp.Module, override.Configurable))
        self.assertTrue(issubclass(Hp.ModuleConfig, override.Config))


class ConfigTest(unittest.TestCase):
    def test_nested_config_registers_owner(self):
        self.assertEqual(Linear.Config().get_owner_type(), Linear.__gtype__)
        self.assertEqual(Hp.Config.type_for_owner(Linear.__gtype__), Linear.Config.__gtype__)
        self.assertEqual(Hp.Config.type_for_owner(ResetLinear.__gtype__), Linear.Config.__gtype__)
        self.assertEqual(Linear.Config.__gtype__.name, MODULE + "+Linear+Config")
        self.assertEqual(Failing.Config.__gtype__.name, MODULE + "+Failing+Config")
        self.assertEqual(Linear.__gtype__.name, MODULE + "+Linear")
        self.assertEqual(Unowned().get_owner_type(), GObject.TYPE_INVALID)

    def test_fields(self):
        config = Linear.Config(in_features=3)
        self.assertEqual((config.in_features, config.out_features), (3, 4))
        self.assertEqual([p.name for p in config.list_fields()],
                         ["param-init", "sharding-config", "in-features", "out-features"])
        self.assertEqual(repr(config), "Linear.Config(param_init=None, sharding_config=None, "
                                       "in_features=3, out_features=4)")
        self.assertEqual(repr(Hp.ModuleConfig()),
                         "Hp.ModuleConfig(param_init=None, sharding_config=None)")
        self.assertIn("layers=[Linear.Config(", repr(block_config()))

    def test_field_attributes(self):
        config = Linear.Config(in_features=3)
        self.assertIsNone(config.param_init)
        param_init = Hp.ParamInit.new_from_string("weight=zeros")
        config.param_init = param_init
        self.assertIs(config.props.param_init, param_init)
        config.out_features = 9
        self.assertEqual(config.props.out_features, 9)
        assert_error(self, Hp.Error.CONFIG,
                     MODULE + "+Linear+Config.out-features: value 0 out of range [1, 1048576]",
                     setattr, config, "out_features", 0)
        self.assertEqual(config.out_features, 9)
        config.note = "not a field"
        self.assertEqual(config.note, "not a field")
        self.assertNotIn("note", config.to_dict())
        with self.assertRaises(AttributeError):
            config.no_such_field  # noqa: B018

    def test_type_names(self):
        first = type("Local", (Hp.ModuleConfig,), {"__module__": "models"})
        second = type("Local", (Hp.ModuleConfig,), {"__module__": "models"})
        named = type("Local", (Hp.ModuleConfig,), {"__module__": "models",
                                                     "__gtype_name__": "ModelsLocalConfig"})
        self.assertEqual(first.__gtype__.name, "models+Local")
        self.assertEqual(second.__gtype__.name, "models+Local-v2")
        self.assertEqual(named.__gtype__.name, "ModelsLocalConfig")

    def test_field_errors(self):
        assert_error(self, Hp.Error.CONFIG,
                     MODULE + "+Linear+Config.in-features: value 0 out of range [1, 1048576]",
                     Linear.Config, in_features=0)
        assert_error(self, Hp.Error.CONFIG,
                     MODULE + "+Linear+Config has no field 'bias'",
                     Linear.Config, bias=True)
        assert_error(self, Hp.Error.CONFIG,
                     MODULE + "+Linear+Config.in-features: expected a value of type gint, "
                     "got gchararray",
                     Linear.Config().replace, in_features="3")

    def test_replace_isolation(self):
        param_init = Hp.ParamInit.new_from_string("weight=ones")
        config = Linear.Config(in_features=3, param_init=param_init)
        changed = config.replace(out_features=7)
        self.assertIsInstance(changed, Linear.Config)
        self.assertEqual((changed.in_features, changed.out_features), (3, 7))
        self.assertEqual(config.out_features, 4)
        self.assertIs(changed.param_init, param_init)
        self.assertFalse(changed.equal(config))
        self.assertTrue(changed.replace(out_features=4).equal(config))

    def test_traverse(self):
        root = block_config()
        seen = []

        def visit(fqn, config, parent, attribute, index):
            seen.append((fqn, type(config).__qualname__,
                         None if parent is None else type(parent).__qualname__, attribute, index))

        root.traverse(Hp.Config, True, visit)
        # fields of a Python class come in name order (see the override)
        self.assertEqual(seen, [("", "Block.Config", None, None, -1),
                                ("layers.0", "Linear.Config", "Block.Config", "layers", 0),
                                ("layers.1", "Linear.Config", "Block.Config", "layers", 1),
                                ("middle", "Linear.Config", "Block.Config", "middle", -1)])
        seen.clear()
        root.traverse(Linear.Config, False, visit)
        self.assertEqual([entry[0] for entry in seen], ["layers.0", "layers.1", "middle"])

    def test_to_dict_round_trip(self):
        sharding = Hp.ShardingConfig.new()
        sharding.set_state_sharding("weight", Hp.NamedPlacement.new_from_string("tp:S(0)"))
        sharding.set_in_dst_sharding("input", Hp.NamedPlacement.new_from_string("tp:R"))
        sharding.set_out_dst_sharding(0, Hp.NamedPlacement.new_from_string("tp:S(-1)"))
        root = block_config()
        root.middle.param_init = Hp.ParamInit.new_from_string("weight=normal(std=0.02)")
        root.middle.sharding_config = sharding

        data = root.to_dict()
        text = json.dumps(data)
        self.assertEqual(json.loads(text), data)
        self.assertEqual(data["@type"], MODULE + "+Block+Config")
        self.assertEqual(data["name"], "block")
        middle = data["middle"]
        self.assertEqual(middle["@type"], MODULE + "+Linear+Config")
        self.assertEqual(middle["in-features"], 5)
        self.assertEqual(middle["param-init"], {"weight": "normal(mean=0, std=0.02)"})
        self.assertEqual(middle["sharding-config"]["state-shardings"], {"weight": {"tp": "S(0)"}})
        self.assertEqual(middle["sharding-config"]["in-dst-shardings"], {"input": {"tp": "R"}})
        self.assertEqual(middle["sharding-config"]["out-dst-shardings"], [{"tp": "S(-1)"}])
        self.assertEqual([layer["out-features"] for layer in data["layers"]], [3, 2])

        back = Block.Config.from_dict(data)
        self.assertIsInstance(back, Block.Config)
        self.assertTrue(back.equal(root))
        self.assertTrue(Hp.Config.from_dict(data).equal(root))
        self.assertEqual(back.to_dict(), data)

        data["middle"]["bias"] = True
        assert_error(self, Hp.Error.CONFIG, "middle.bias: no field 'bias' in " + MODULE + "+Linear+Config",
                     Block.Config.from_dict, data)


class BuildTest(unittest.TestCase):
    def test_build_from_python(self):
        config = Linear.Config(in_features=3, out_features=2)
        built = []
        config.connect("built", lambda _, instance: built.append(instance))
        linear = config.build()
        self.assertIsInstance(linear, Linear)
        self.assertEqual(built, [linear])
        self.assertEqual(linear.setups, 1)
        self.assertEqual(linear.get_parameter("weight").get_shape(), [2, 3])
        self.assertIsNot(linear.config, config)
        self.assertTrue(linear.config.equal(config))
        config.in_features = 6
        self.assertEqual(linear.config.in_features, 3)

        scaled = config.build(gain=2.5)
        self.assertEqual(scaled.props.gain, 2.5)
        self.assertEqual(len(built), 2)
        assert_error(self, Hp.Error.CONFIG, "build() arguments {in_features} overlap with config fields",
                     config.build, in_features=2)
        assert_error(self, Hp.Error.CONFIG,
                     "build() argument 'bias' is not a writable property of " + MODULE + "+Linear",
                     config.build, bias=True)
        assert_error(self, Hp.Error.NOT_SUPPORTED, MODULE + "+Unowned has no owner class",
                     Unowned().build)

    def test_construct_from_python(self):
        linear = Linear(config=Linear.Config(out_features=5), gain=3.0)
        self.assertEqual(linear.setups, 1)
        self.assertEqual(linear.get_parameter("weight").get_shape(), [5, 4])
        self.assertEqual(linear.props.gain, 3.0)
        default = Linear()
        self.assertIsInstance(default.config, Linear.Config)
        self.assertEqual(default.get_parameter("weight").get_shape(), [4, 4])

    def test_build_from_c(self):
        # configurations that C made: a copy and one read from JSON
        copied = Linear.Config(in_features=2).copy()
        read = Hp.Config.new_from_json(Hp.Config, json.dumps(
            {"@type": MODULE + "+Linear+Config", "out_features": 6}))
        for config, shape in ((copied, [4, 2]), (read, [6, 4])):
            self.assertIsInstance(config, Linear.Config)
            linear = config.build_with_properties(["gain"], [GObject.Value(float, 0.5)])
            self.assertIsInstance(linear, Linear)
            self.assertEqual(linear.setups, 1)
            self.assertEqual(linear.get_parameter("weight").get_shape(), shape)
            self.assertEqual(linear.props.gain, 0.5)

    def test_subclass_and_children(self):
        self.assertIs(type(Linear.Config(in_features=2).build()), Linear)
        sub = ResetLinear(config=Linear.Config(in_features=2))
        self.assertEqual(sub.setups, 1)
        self.assertEqual(sub.get_buffer_names(), ["total"])

        block = block_config().build()
        self.assertEqual(block.get_child_names(), ["middle", "layers_0", "layers_1"])
        self.assertEqual(block.get_parameter("layers_1.weight").get_shape(), [2, 3])
        self.assertEqual(block.get_child("middle").setups, 1)

    def test_setup_errors(self):
        assert_error(self, Hp.Error.CONFIG,
                     "Failing.setup() raised ValueError: mode 'value' is not supported",
                     Failing.Config(mode="value").build)
        assert_error(self, Hp.Error.SHAPE, "no shape for this mode",
                     Failing.Config(mode="glib").build)
        with self.assertRaises(ValueError):
            Failing(config=Failing.Config(mode="value"))
        assert_error(self, Hp.Error.SHAPE, "no shape for this mode",
                     Failing, config=Failing.Config(mode="glib"))
        self.assertIsInstance(Failing.Config().build(), Failing)


class ModuleTest(unittest.TestCase):
    def test_init_states_with_param_init(self):
        param_init = Hp.ParamInit.new_from_string("weight=ones")
        reset = ResetLinear(config=Linear.Config(in_features=2, out_features=3,
                                                 param_init=param_init))
        initialized = []
        reset.connect("states-initialized", lambda _: initialized.append(1))
        reset.init_states(11)
        self.assertEqual(initialized, [1])
        self.assertEqual(reset.seeds, [])
        np.testing.assert_array_equal(to_numpy(reset.get_parameter("weight")), np.ones((3, 2)))
        self.assertEqual(reset.buffer_inits, 1)
        np.testing.assert_array_equal(to_numpy(reset.get_buffer("total")), [6.0])

    def test_init_states_with_reset_parameters(self):
        block = Hp.Module.new()
        reset = ResetLinear(config=Linear.Config(in_features=2, out_features=2))
        block.add_child("reset", reset)
        block.init_states(5)
        self.assertEqual(len(reset.seeds), 1)
        seed = reset.seeds[0]
        self.assertEqual(seed, Hp.Module.derive_seed(5, "reset"))
        expected = Hp.Tensor.new_zeros(Hp.DType.FLOAT64, [2, 2])
        Hp.Initializer.new_uniform(-1.0, 1.0).apply(expected, Hp.Module.derive_seed(seed, "weight"))
        expected = to_numpy(expected)
        self.assertTrue(np.all(np.abs(expected) < 1.0) and len(np.unique(expected)) == 4)
        np.testing.assert_array_equal(to_numpy(block.get_parameter("reset.weight")), expected)
        np.testing.assert_array_equal(to_numpy(reset.get_buffer("total")), [expected.sum()])
        self.assertEqual(reset.buffer_inits, 1)

    def test_init_states_errors(self):
        linear = Linear(config=Linear.Config(in_features=2))
        assert_error(self, Hp.Error.CONFIG,
                     MODULE + "+Linear has parameters ['weight'] but neither param_init "
                     "nor reset_parameters is available",
                     linear.init_states, 1)
        partial = Linear(config=Linear.Config(param_init=Hp.ParamInit.new_from_string("bias=zeros")))
        assert_error(self, Hp.Error.CONFIG,
                     "No initializer for parameter 'weight' in " + MODULE + "+Linear. Available: ['bias']",
                     partial.init_states, 1)

    def test_forward(self):
        x = np.arange(6.0).reshape(2, 3)
        w = np.arange(12.0).reshape(4, 3) - 5
        linear = Linear(config=Linear.Config(in_features=3), gain=2.0)
        linear.register_parameter("weight", from_numpy(w))
        self.assertEqual(linear.get_forward_arg_names(), ["input"])
        pre, post = [], []
        linear.connect("forward-pre", lambda _, args: pre.append(args))
        linear.connect("forward-post", lambda _, args, outputs: post.append((args, outputs)))

        x_tensor = from_numpy(x)
        outputs = linear.forward([x_tensor])
        self.assertEqual(len(outputs), 1)
        np.testing.assert_array_equal(to_numpy(outputs[0]), 2.0 * x @ w.T)
        self.assertEqual(len(pre), 1)
        self.assertIs(pre[0][0], x_tensor)
        self.assertEqual(len(post), 1)
        self.assertIs(post[0][0][0], x_tensor)
        self.assertIs(post[0][1][0], outputs[0])
        np.testing.assert_array_equal(to_numpy(linear.forward1(x_tensor)), 2.0 * x @ w.T)
        self.assertEqual(len(pre), 2)

    def test_forward_arguments_and_outputs(self):
        reset = ResetLinear(config=Linear.Config(in_features=2, out_features=2))
        reset.register_parameter("weight", from_numpy([[1.0, 0.5], [2.0, 3.0]]))
        self.assertEqual(reset.get_forward_arg_names(), ["x", "mask"])
        x = from_numpy([[1.0, 2.0]])
        y, masked = reset.forward([x, None])
        self.assertIsNone(masked)
        np.testing.assert_array_equal(to_numpy(y), [[2.0, 8.0]])
        y, masked = reset.forward([x, from_numpy([[0.0, 1.0]])])
        np.testing.assert_array_equal(to_numpy(masked), [[0.0, 8.0]])

    def test_forward_references(self):
        """Tensors going in and out of do_forward keep exactly the
        references Python holds"""
        kept = []

        class Echo(Hp.Module):
            def do_forward(self, args):
                fresh = args[0].scale(2.0)
                kept.append(fresh)
                return [args[0], fresh, args[0].scale(3.0)]

        echo = Echo()
        x = from_numpy([1.0, 2.0])
        self.assertEqual(x.__grefcount__, 1)
        for _ in range(3):
            same, fresh, other = echo.forward([x])
            gc.collect()
            self.assertIs(same, x)
            self.assertIs(fresh, kept[-1])
            self.assertEqual(x.__grefcount__, 1)
            self.assertEqual(fresh.__grefcount__, 1)
            self.assertEqual(other.__grefcount__, 1)
            np.testing.assert_array_equal(to_numpy(other), [3.0, 6.0])

        # the same, when C calls do_forward and only C holds the module
        sequential = Hp.Sequential.new()
        sequential.append(Echo())
        gc.collect()
        same, fresh, other = sequential.forward([x])
        self.assertIs(same, x)
        self.assertEqual(x.__grefcount__, 1)
        self.assertEqual(fresh.__grefcount__, 1)

    def test_python_state_lives_with_the_module(self):
        sequential = Hp.Sequential.new()
        sequential.append(Linear.Config(in_features=3, out_features=3).build())
        gc.collect()
        child = sequential.get_child("0")
        self.assertEqual(child.setups, 1)
        self.assertEqual(sequential.forward([from_numpy(np.ones((1, 3)))])[0].get_shape(), [1, 3])

    def test_forward_errors(self):
        failing = Failing()
        assert_error(self, Hp.Error.STATE, "Failing cannot run", failing.forward, [from_numpy([1.0])])
        assert_error(self, Hp.Error.NOT_SUPPORTED, "HpModule does not implement compute (its forward)",
                     Hp.Module.new().forward, [from_numpy([1.0])])


if __name__ == "__main__":
    unittest.main(verbosity=2)
