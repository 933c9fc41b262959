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

# This file runs as __main__; the GType names of its classes start with
# the name it has when imported
MODULE = "test_protocols"


class Linear(Hp.Module):
    """y = gain * x W^T, with W of shape [out_features, in_features]"""

    class Config(Hp.ModuleConfig):
        in_features: int = Hp.field(4, minimum=1, maximum=1 << 20, blurb="input width")
        out_features: int = Hp.field(4, minimum=1, maximum=1 << 20)

    # a property of the module, not a field: set by build(gain=...)
    gain = GObject.Property(type=float, default=1.0)

    def do_setup(self):
        super().do_setup()
        config = self.config
        self.setups = getattr(self, "setups", 0) + 1
        self.register_parameter("weight", Hp.Tensor.new_zeros(
            Hp.DType.FLOAT64, [config.out_features, config.in_features]))

    def forward(self, x):
        return x.linear(self.weight, None).scale(self.props.gain)


class ResetLinear(Linear):
    """Linear whose weight, without param_init, is uniform in [-1, 1) from
    the seed it gets, which it keeps; it also has a buffer (the sum of the
    weight) and a second, optional, argument and output. Written with the
    virtual function itself, do_forward(args), and its argument names
    declared by hand."""

    def do_setup(self):
        super().do_setup()
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

    def do_forward(self, args):
        x, mask = args
        y = x.linear(self.get_parameter("weight"), None)
        return [y, None if mask is None else y.mul(mask)]


Hp.Module.type_set_forward_arg_names(ResetLinear, ["x", "mask"])


class Failing(Hp.Module):
    """A module whose setup() or forward fails as its config says"""

    class Config(Hp.ModuleConfig):
        mode: str = ""

    def do_setup(self):
        super().do_setup()
        if self.config.mode == "value":
            raise ValueError("mode 'value' is not supported")
        if self.config.mode == "glib":
            raise GLib.Error.new_literal(Hp.error_quark(), "no shape for this mode",
                                         int(Hp.Error.SHAPE))

    def forward(self, x):
        raise GLib.Error.new_literal(Hp.error_quark(), "Failing cannot run", int(Hp.Error.STATE))


class Block(Hp.Module):
    """Holds a nested config and a list of configs and builds children
    from them"""

    class Config(Hp.ModuleConfig):
        middle: Linear.Config = None        # no child unless given
        layers: Hp.ConfigList               # each configuration gets a new empty list
        name: str = "block"

    def do_setup(self):
        super().do_setup()
        if self.config.middle is not None:
            self.middle = self.config.middle.build()
        for i, layer in enumerate(self.config.layers):
            self.add_child("layers_%d" % i, layer.build())


class Unowned(Hp.Config):
    size: int = 1


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
        self.assertEqual(repr(block_config()), "Block.Config(param_init=None, sharding_config=None, "
                         "middle=Linear.Config(param_init=None, sharding_config=None, in_features=5, "
                         "out_features=4), layers=[Linear.Config(param_init=None, sharding_config=None, "
                         "in_features=2, out_features=3), Linear.Config(param_init=None, "
                         "sharding_config=None, in_features=3, out_features=2)], name='block')")
        blurbs = {p.name: p.blurb for p in config.list_fields()}
        self.assertEqual(blurbs["in-features"], "input width")

    def test_field_attributes(self):
        config = Linear.Config(in_features=3)
        self.assertIsNone(config.param_init)
        param_init = Hp.ParamInit.new_from_string("weight=zeros")
        config.param_init = param_init
        self.assertIs(config.props.param_init, param_init)
        config.out_features = 9
        self.assertEqual(config.props.out_features, 9)
        assert_error(self, Hp.Error.CONFIG, "out_features: value 0 out of range [1, 1048576]",
                     setattr, config, "out_features", 0)
        self.assertEqual(config.out_features, 9)
        # the fields are the only attributes, as in a slotted dataclass
        with self.assertRaises(AttributeError) as caught:
            config.note = "not a field"
        self.assertEqual(str(caught.exception), "Linear.Config has no field 'note'")
        with self.assertRaises(AttributeError):
            config.no_such_field  # noqa: B018
        self.assertNotIn("note", config.to_dict())

    def test_type_names(self):
        first = type("Local", (Hp.ModuleConfig,), {"__module__": "models"})
        second = type("Local", (Hp.ModuleConfig,), {"__module__": "models"})
        named = type("Local", (Hp.ModuleConfig,), {"__module__": "models",
                                                     "__gtype_name__": "ModelsLocalConfig"})
        dotted = type("Local", (Hp.ModuleConfig,), {"__module__": "models.llama",
                                                      "__qualname__": "Llama.Config"})
        self.assertEqual(first.__gtype__.name, "models+Local")
        self.assertEqual(second.__gtype__.name, "models+Local-v2")
        self.assertEqual(named.__gtype__.name, "ModelsLocalConfig")
        # the module path (dots as '-') before the first '+', then the
        # qualified name
        self.assertEqual(dotted.__gtype__.name, "models-llama+Llama+Config")

        class Inner(Hp.Config):
            pass

        self.assertEqual(Inner.__gtype__.name, MODULE + "+ConfigTest+test_type_names+Inner")
        for cls in (Linear, Linear.Config, ResetLinear, Block.Config, Unowned, Inner):
            self.assertNotIn("__main__", cls.__gtype__.name)

    def test_field_errors(self):
        assert_error(self, Hp.Error.CONFIG, "in_features: value 0 out of range [1, 1048576]",
                     Linear.Config, in_features=0)
        with self.assertRaises(AttributeError) as caught:
            Linear.Config(bias=True)
        self.assertEqual(str(caught.exception), "Linear.Config has no field 'bias'")
        assert_error(self, Hp.Error.CONFIG,
                     MODULE + "+Linear+Config has no field 'bias'",
                     Linear.Config().replace, bias=True)
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
        # fields in declaration order
        self.assertEqual(seen, [("", "Block.Config", None, None, -1),
                                ("middle", "Linear.Config", "Block.Config", "middle", -1),
                                ("layers.0", "Linear.Config", "Block.Config", "layers", 0),
                                ("layers.1", "Linear.Config", "Block.Config", "layers", 1)])
        seen.clear()
        root.traverse(Linear.Config, False, visit)
        self.assertEqual([entry[0] for entry in seen], ["middle", "layers.0", "layers.1"])

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
        assert_error(self, Hp.Error.CONFIG,
                     "Failing.setup() raised ValueError: mode 'value' is not supported",
                     Failing, config=Failing.Config(mode="value"))
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
        # named after the arguments of forward()
        self.assertEqual(linear.get_forward_arg_names(), ["x"])
        pre, post = [], []
        linear.connect("forward-pre", lambda _, args: pre.append(args))
        linear.connect("forward-post", lambda _, args, outputs: post.append((args, outputs)))

        x_tensor = from_numpy(x)
        outputs = linear.call([x_tensor])
        self.assertEqual(len(outputs), 1)
        np.testing.assert_array_equal(to_numpy(outputs[0]), 2.0 * x @ w.T)
        self.assertEqual(len(pre), 1)
        self.assertIs(pre[0][0], x_tensor)
        self.assertEqual(len(post), 1)
        self.assertIs(post[0][0][0], x_tensor)
        self.assertIs(post[0][1][0], outputs[0])
        np.testing.assert_array_equal(to_numpy(linear.call1(x_tensor)), 2.0 * x @ w.T)
        self.assertEqual(len(pre), 2)
        # calling the module runs Hp.Module.call: signals, then forward()
        np.testing.assert_array_equal(to_numpy(linear(x_tensor)), 2.0 * x @ w.T)
        np.testing.assert_array_equal(to_numpy(linear(x=x_tensor)), 2.0 * x @ w.T)
        self.assertEqual(len(pre), 4)
        self.assertEqual(len(post), 4)

    def test_forward_arguments_and_outputs(self):
        reset = ResetLinear(config=Linear.Config(in_features=2, out_features=2))
        reset.register_parameter("weight", from_numpy([[1.0, 0.5], [2.0, 3.0]]))
        self.assertEqual(reset.get_forward_arg_names(), ["x", "mask"])
        x = from_numpy([[1.0, 2.0]])
        y, masked = reset.call([x, None])
        self.assertIsNone(masked)
        np.testing.assert_array_equal(to_numpy(y), [[2.0, 8.0]])
        y, masked = reset.call([x, from_numpy([[0.0, 1.0]])])
        np.testing.assert_array_equal(to_numpy(masked), [[0.0, 8.0]])
        # several outputs come back as a tuple; a missing argument is None
        y, masked = reset(x)
        self.assertIsNone(masked)
        y, masked = reset(x, mask=from_numpy([[0.0, 1.0]]))
        np.testing.assert_array_equal(to_numpy(masked), [[0.0, 8.0]])
        y, masked = reset(mask=from_numpy([[1.0, 0.0]]), x=x)
        np.testing.assert_array_equal(to_numpy(masked), [[2.0, 0.0]])

    def test_forward_references(self):
        """Tensors going in and out of forward() keep exactly the
        references Python holds"""
        kept = []

        class Echo(Hp.Module):
            def forward(self, x):
                fresh = x.scale(2.0)
                kept.append(fresh)
                return x, fresh, x.scale(3.0)

        echo = Echo()
        x = from_numpy([1.0, 2.0])
        self.assertEqual(x.__grefcount__, 1)
        for _ in range(3):
            same, fresh, other = echo(x)
            gc.collect()
            self.assertIs(same, x)
            self.assertIs(fresh, kept[-1])
            self.assertEqual(x.__grefcount__, 1)
            self.assertEqual(fresh.__grefcount__, 1)
            self.assertEqual(other.__grefcount__, 1)
            np.testing.assert_array_equal(to_numpy(other), [3.0, 6.0])

        # the same, when C calls forward() and only C holds the module
        sequential = Hp.Sequential.new()
        sequential.append(Echo())
        gc.collect()
        same, fresh, other = sequential.call([x])
        self.assertIs(same, x)
        self.assertEqual(x.__grefcount__, 1)
        self.assertEqual(fresh.__grefcount__, 1)

    def test_python_state_lives_with_the_module(self):
        sequential = Hp.Sequential.new()
        sequential.append(Linear.Config(in_features=3, out_features=3).build())
        gc.collect()
        child = sequential.get_child("0")
        self.assertEqual(child.setups, 1)
        self.assertEqual(sequential.call([from_numpy(np.ones((1, 3)))])[0].get_shape(), [1, 3])

    def test_forward_errors(self):
        failing = Failing()
        assert_error(self, Hp.Error.STATE, "Failing cannot run", failing.call, [from_numpy([1.0])])
        assert_error(self, Hp.Error.STATE, "Failing cannot run", failing, from_numpy([1.0]))
        assert_error(self, Hp.Error.NOT_SUPPORTED, "HpModule does not implement forward",
                     Hp.Module.new().call, [from_numpy([1.0])])


class StateDictTest(unittest.TestCase):
    def test_state_dict_round_trip(self):
        root = Hp.Module.new()
        first = Linear(config=Linear.Config(in_features=2, out_features=3))
        second = Linear(config=Linear.Config(in_features=3, out_features=1))
        root.add_child("first", first)
        root.add_child("second", second)
        states = root.state_dict()
        self.assertEqual(states.get_names(), ["first.weight", "second.weight"])
        weight = first.get_parameter("weight")
        self.assertIs(states.lookup("first.weight"), weight)

        values = Hp.StateDict.new()
        values.insert("first.weight", from_numpy(np.arange(6.0).reshape(3, 2)))
        values.insert("second.weight", from_numpy(np.array([[1.0, 2.0, 3.0]])))
        root.load_state_dict(values, True)
        self.assertIs(first.get_parameter("weight"), weight)
        np.testing.assert_array_equal(to_numpy(weight), np.arange(6.0).reshape(3, 2))

        values.remove("second.weight")
        values.insert("third.weight", from_numpy(np.zeros(1)))
        assert_error(self, Hp.Error.INVALID_ARGUMENT,
                     "Error(s) in loading state_dict for HpModule: Missing key(s): "
                     "'second.weight'. Unexpected key(s): 'third.weight'.",
                     root.load_state_dict, values, True)
        np.testing.assert_array_equal(to_numpy(second.get_parameter("weight")), [[1.0, 2.0, 3.0]])


class ConfigApiTest(unittest.TestCase):
    def test_json_and_paths(self):
        root = block_config()
        text = root.to_json(True)
        self.assertEqual(json.loads(text), root.to_dict())
        node = root.to_json_node()
        back = Hp.Config.new_from_json_node(Block.Config, node)
        self.assertTrue(back.equal(root))
        self.assertTrue(Hp.Config.new_from_json(Hp.Config, text).equal(root))

        self.assertEqual(root.get_path_as_string("layers.1.in_features"), "3")
        root.set_path_from_string("layers.1.in-features", "9")
        self.assertEqual(root.layers.peek(1).in_features, 9)
        root.set_path_from_string("middle.param_init", "weight=normal(std=0.5)")
        self.assertEqual(root.get_path_as_string("middle.param-init"),
                         "weight=normal(mean=0, std=0.5)")
        assert_error(self, Hp.Error.CONFIG, "layers.5: index out of range (2 items)",
                     root.get_path_as_string, "layers.5")

    def test_register_owner_and_config_list(self):
        owned = type("Owned", (Hp.ModuleConfig,), {"__module__": MODULE})
        self.assertEqual(owned().get_owner_type(), Hp.Module.__gtype__)
        Hp.Config.register_owner(owned.__gtype__, Linear.__gtype__)
        self.assertEqual(owned().get_owner_type(), Linear.__gtype__)

        layers = Hp.ConfigList.new()
        first, second = Linear.Config(in_features=1), Linear.Config(in_features=2)
        layers.append(first)
        layers.insert(0, second)
        self.assertEqual([layers.peek(i).in_features for i in range(layers.get_length())], [2, 1])
        self.assertEqual(layers.props.n_items, 2)
        copy = layers.copy()
        layers.remove(0)
        self.assertEqual(layers.get_length(), 1)
        self.assertIs(layers.peek(0), first)
        self.assertEqual(copy.get_length(), 2)

    def test_module_config(self):
        config = Hp.ModuleConfig.new()
        self.assertIsNone(config.get_param_init())
        self.assertIsNone(config.get_sharding_config())
        param_init = Hp.ParamInit.new_from_string("weight=zeros")
        sharding = Hp.ShardingConfig.new()
        config.set_param_init(param_init)
        config.set_sharding_config(sharding)
        self.assertIs(config.get_param_init(), param_init)
        self.assertIs(config.get_sharding_config(), sharding)
        module = config.build()
        self.assertIsInstance(module, Hp.Module)
        self.assertIsInstance(module, Hp.Configurable)
        self.assertIsInstance(module.get_config(), Hp.ModuleConfig)
        self.assertTrue(module.get_param_init().equal(param_init))
        self.assertTrue(module.get_sharding_config().equal(sharding))
        self.assertIsNone(module.get_mesh())
        module.set_param_init(None)
        module.set_sharding_config(None)
        self.assertIsNone(module.get_param_init())
        self.assertIsNone(module.get_sharding_config())

    def test_repr_of_fields(self):
        config = Hp.LinearConfig(in_features=2, out_features=3,
                                 param_init=Hp.ParamInit.new_from_string("weight=ones"))
        self.assertEqual(repr(config), "Hp.LinearConfig(param_init=ParamInit('weight=ones'), "
                                       "sharding_config=None, in_features=2, out_features=3, "
                                       "bias=False, dtype=Hp.DType.FLOAT32)")


class InitializerTest(unittest.TestCase):
    def test_kinds(self):
        cases = ((Hp.Initializer.new_zeros(), Hp.InitKind.ZEROS, "zeros"),
                 (Hp.Initializer.new_ones(), Hp.InitKind.ONES, "ones"),
                 (Hp.Initializer.new_constant(0.5), Hp.InitKind.CONSTANT, "constant(value=0.5)"),
                 (Hp.Initializer.new_normal(1.0, 0.02), Hp.InitKind.NORMAL,
                  "normal(mean=1, std=0.02)"),
                 (Hp.Initializer.new_trunc_normal(0.0, 0.02, -0.04, 0.04), Hp.InitKind.TRUNC_NORMAL,
                  "trunc_normal(mean=0, std=0.02, a=-0.04, b=0.04)"),
                 (Hp.Initializer.new_uniform(-1.0, 1.0), Hp.InitKind.UNIFORM,
                  "uniform(a=-1, b=1)"),
                 (Hp.Initializer.new_depth_scaled_normal(0.02, 4), Hp.InitKind.DEPTH_SCALED_NORMAL,
                  "depth_scaled_normal(std=0.02, depth=4)"))
        for initializer, kind, text in cases:
            self.assertEqual(initializer.get_kind(), kind)
            self.assertEqual(initializer.to_string(), text)
            self.assertEqual(repr(initializer), "Initializer(%r)" % text)
            self.assertTrue(Hp.Initializer.new_from_string(text).equal(initializer))
        trunc = cases[4][0]
        self.assertEqual((trunc.get_mean(), trunc.get_std(), trunc.get_a(), trunc.get_b()),
                         (0.0, 0.02, -0.04, 0.04))
        self.assertEqual(cases[2][0].get_value(), 0.5)
        self.assertEqual(cases[6][0].get_depth(), 4)

        weight = Hp.Tensor.new_zeros(Hp.DType.FLOAT64, [200])
        self.assertTrue(trunc.apply(weight, 3))
        values = to_numpy(weight)
        self.assertTrue(np.all(np.abs(values) <= 0.04) and values.std() > 0.005)
        assert_error(self, Hp.Error.INVALID_ARGUMENT,
                     "cannot parse initializer 'gaussian(1)': unknown kind 'gaussian' (expected one "
                     "of zeros, ones, constant, normal, trunc_normal, uniform, depth_scaled_normal)",
                     Hp.Initializer.new_from_string, "gaussian(1)")

    def test_param_init(self):
        param_init = Hp.ParamInit.new()
        param_init.set("weight", Hp.Initializer.new_ones())
        param_init.set("bias", Hp.Initializer.new_zeros())
        self.assertEqual(param_init.get_n_entries(), 2)
        self.assertEqual(param_init.get_names(), ["weight", "bias"])
        self.assertEqual(param_init.get("bias").get_kind(), Hp.InitKind.ZEROS)
        self.assertIsNone(param_init.get("scale"))
        self.assertEqual(param_init.to_string(), "weight=ones; bias=zeros")
        self.assertEqual(repr(param_init), "ParamInit('weight=ones; bias=zeros')")
        copy = param_init.copy()
        self.assertTrue(copy.equal(param_init))
        copy.set("bias", None)
        self.assertEqual(copy.get_names(), ["weight"])
        self.assertFalse(copy.equal(param_init))


class ShardingConfigTest(unittest.TestCase):
    def test_entries(self):
        sharding = Hp.ShardingConfig.new()
        changes = []
        sharding.connect("changed", lambda _: changes.append(1))
        named = Hp.NamedPlacement.new_from_string
        sharding.set_state_sharding("weight", named("tp:S(0)"))
        sharding.set_state_sharding("bias", named("tp:S(0)"))
        sharding.set_in_src_sharding("x", named("tp:R"))
        sharding.set_in_dst_sharding("x", named("tp:S(1)"))
        sharding.set_out_src_sharding(1, named("tp:P(sum)"))
        sharding.set_out_dst_sharding(0, named("tp:S(-1)"))
        self.assertEqual(len(changes), 6)
        self.assertEqual(sharding.get_state_sharding("weight").to_string(), "tp:S(0)")
        self.assertIsNone(sharding.get_state_sharding("scale"))
        self.assertEqual(sharding.list_state_shardings(), ["weight", "bias"])
        self.assertEqual(sharding.list_in_src_shardings(), ["x"])
        self.assertEqual(sharding.list_in_dst_shardings(), ["x"])
        self.assertEqual(sharding.get_in_src_sharding("x").to_string(), "tp:R")
        self.assertEqual(sharding.get_in_dst_sharding("x").to_string(), "tp:S(1)")
        self.assertEqual(sharding.get_n_out_src_shardings(), 2)
        self.assertIsNone(sharding.get_out_src_sharding(0))
        self.assertEqual(sharding.get_out_src_sharding(1).to_string(), "tp:P(sum)")
        self.assertEqual(sharding.get_n_out_dst_shardings(), 1)
        self.assertEqual(sharding.get_out_dst_sharding(0).to_string(), "tp:S(-1)")
        self.assertIsNone(sharding.get_local_map())
        self.assertEqual(repr(sharding), sharding.to_string())
        self.assertEqual(sharding.to_string(),
                         "ShardingConfig(state={weight: tp:S(0), bias: tp:S(0)}, in_src={x: tp:R}, "
                         "in_dst={x: tp:S(1)}, out_src=[None, tp:P(sum)], out_dst=[tp:S(-1)], "
                         "local_map=None)")
        copy = sharding.copy()
        self.assertTrue(copy.equal(sharding))
        copy.set_state_sharding("bias", None)
        self.assertEqual(copy.list_state_shardings(), ["weight"])
        self.assertFalse(copy.equal(sharding))


class ContainerTest(unittest.TestCase):
    def test_module_list_dict_sequential(self):
        layers = Hp.ModuleList.new()
        first = Linear(config=Linear.Config(in_features=2, out_features=3))
        layers.append(first)
        layers.append(Linear(config=Linear.Config(in_features=3, out_features=2)))
        self.assertEqual(layers.get_length(), 2)
        self.assertIs(layers.get(0), first)
        self.assertIsNone(layers.get(2))
        self.assertEqual(layers.get_child_names(), ["0", "1"])

        heads = Hp.ModuleDict.new()
        self.assertTrue(heads.insert("left", first))
        self.assertIs(heads.lookup("left"), first)
        self.assertIsNone(heads.lookup("right"))

        chain = Hp.Sequential.new()
        chain.append(Linear(config=Linear.Config(in_features=2, out_features=3)))
        chain.append(Linear(config=Linear.Config(in_features=3, out_features=1)))
        chain.get_child("0").register_parameter("weight", from_numpy(np.ones((3, 2))))
        chain.get_child("1").register_parameter("weight", from_numpy([[1.0, 2.0, 3.0]]))
        np.testing.assert_array_equal(to_numpy(chain.call1(from_numpy([[1.0, 1.0]]))), [[12.0]])

    def test_function_module(self):
        calls = []

        def add(module, args):
            calls.append(module)
            return [args[0].add(args[1])]

        added = Hp.FunctionModule.new(None, ["a", "b"], add)
        self.assertEqual(added.get_forward_arg_names(), ["a", "b"])
        out, = added.call([from_numpy([1.0]), from_numpy([2.0])])
        np.testing.assert_array_equal(to_numpy(out), [3.0])
        self.assertEqual(calls, [added])
        self.assertEqual(Hp.FunctionModule.new(Hp.ModuleConfig.new(), None,
                                               add).get_forward_arg_names(), ["input"])


class ModuleStateTest(unittest.TestCase):
    def test_parameters_and_buffers(self):
        block = block_config().build()
        names = ["middle.weight", "layers_0.weight", "layers_1.weight"]
        self.assertEqual(block.named_parameters().get_names(), names)
        self.assertEqual(len(block.parameters()), 3)
        self.assertIs(block.parameters()[0], block.get_parameter("middle.weight"))
        self.assertEqual(block.get_parameter_names(), [])
        self.assertEqual(block.get_child("middle").get_parameter_names(), ["weight"])

        reset = ResetLinear(config=Linear.Config(in_features=2))
        reset.register_buffer("scratch", from_numpy([0.0]), False)
        self.assertTrue(reset.buffer_is_persistent("total"))
        self.assertFalse(reset.buffer_is_persistent("scratch"))
        self.assertFalse(reset.buffer_is_persistent("missing"))
        self.assertEqual(reset.named_buffers().get_names(), ["total", "scratch"])
        self.assertTrue(reset.init_self_parameters(3))
        self.assertEqual(reset.seeds, [3])

    def test_state_dict(self):
        sd = Hp.StateDict.new()
        a, b = from_numpy([1.0]), from_numpy([2.0, 3.0])
        sd.insert("a", a)
        sd.insert("b", b)
        self.assertEqual(sd.get_size(), 2)
        self.assertEqual(sd.get_names(), ["a", "b"])
        self.assertEqual(sd.get_name(1), "b")
        self.assertIs(sd.get_tensor(0), a)
        self.assertIs(sd.lookup("b"), b)
        self.assertIsNone(sd.lookup("c"))
        self.assertTrue(sd.contains("a"))
        sd.insert("a", b)
        self.assertIs(sd.lookup("a"), b)
        self.assertEqual(sd.get_size(), 2)
        self.assertTrue(sd.remove("a"))
        self.assertFalse(sd.remove("a"))
        self.assertFalse(sd.contains("a"))
        self.assertEqual(sd.get_names(), ["b"])


class Toy(Hp.BaseModel):
    """A model of one Linear whose width follows the job's tp degree"""

    class Config(Hp.BaseModelConfig):
        dim: int = Hp.field(3, minimum=1, maximum=64)

        def do_update_from_config(self, job_config):
            self.dim = 2 * job_config.get_tp()
            return True

    def do_setup(self):
        super().do_setup()
        self.proj = Hp.LinearConfig(
            in_features=self.config.dim, out_features=2, dtype=Hp.DType.FLOAT64,
            param_init=Hp.ParamInit.new_from_string("weight=ones")).build()

    def forward(self, x):
        return self.proj(x)


class Table(Hp.Module):
    """An embedding table of 5 rows of 2, whose lookups do no
    multiply-adds"""

    def do_setup(self):
        super().do_setup()
        self.register_parameter("weight", Hp.Tensor.new_zeros(Hp.DType.FLOAT64, [5, 2]))


Hp.Module.type_set_embedding(Table, True)


class HalfWidth(Hp.ModelConfigConverter):
    def do_convert(self, model_config):
        return model_config.replace(dim=max(1, model_config.dim // 2))


class Renamer(GObject.Object, Hp.StateDictAdapter):
    """Adds or strips "model." and keeps checkpoints in a dict by path"""

    def __init__(self):
        super().__init__()
        self.files = {}

    @staticmethod
    def _renamed(sd, rename):
        out = Hp.StateDict.new()
        for i in range(sd.get_size()):
            out.insert(rename(sd.get_name(i)), sd.get_tensor(i))
        return out

    def do_to_hf(self, sd):
        return self._renamed(sd, lambda name: "model." + name)

    def do_from_hf(self, hf_sd):
        return self._renamed(hf_sd, lambda name: name[len("model."):])

    def do_save_hf_state_dict(self, sd, model_config, path):
        self.files[path] = sd
        return True

    def do_load_hf_state_dict(self, path, model_config, dtype):
        return self.files[path]


class ModelTest(unittest.TestCase):
    def test_base_model(self):
        config = Toy.Config()
        dims = Hp.ParallelDims(tp=1).resolve(1)
        self.assertTrue(config.update_from_config(dims))
        self.assertEqual(config.dim, 2)
        model = config.build()
        self.assertIsInstance(model, Hp.BaseModel)
        self.assertTrue(model.verify_module_protocol())
        self.assertTrue(model.init_weights(4))
        np.testing.assert_array_equal(to_numpy(model.get_parameter("proj.weight")), np.ones((2, 2)))
        nparams, flops = config.get_nparams_and_flops(model, 16)
        self.assertEqual((nparams, flops), (4, 24))
        # an embedding table's parameters count, but not in the FLOPs
        with_table = config.build()
        with_table.add_child("table", Table())
        self.assertEqual(config.get_nparams_and_flops(with_table, 16), (14, 24))

        # a child whose parameter nothing initialises
        model.add_child("extra", Linear())
        with self.assertRaises(GLib.Error) as caught:
            model.verify_module_protocol()
        self.assertEqual(caught.exception.message, MODULE + "+Toy does not follow the module "
                         "protocol: parameter 'extra.weight' has no initializer")

        converted = HalfWidth().convert(Toy.Config(dim=8))
        self.assertIsInstance(converted, Toy.Config)
        self.assertEqual(converted.dim, 4)

    def test_model_spec(self):
        spec = Hp.ModelSpec.new("toy-python")
        self.assertEqual(spec.get_name(), "toy-python")
        assert_error(self, Hp.Error.CONFIG,
                     "ModelSpec 'toy-python' requires build_model_fn or model config", spec.validate)
        spec.set_flavor("tiny")
        self.assertEqual(spec.get_flavor(), "tiny")
        config = Toy.Config(dim=3)
        spec.set_model(config)
        self.assertIs(spec.get_model(), config)
        self.assertTrue(spec.validate())
        self.assertIsInstance(spec.build_model(), Toy)
        spec.set_build_model_func(lambda spec: Toy.Config(dim=5).build())
        self.assertTrue(spec.has_build_model_func())
        assert_error(self, Hp.Error.CONFIG,
                     "ModelSpec 'toy-python' must not set both build_model_fn and model config",
                     spec.validate)
        spec.set_model(None)
        self.assertIsNone(spec.get_model())
        model = spec.build_model()
        self.assertEqual(model.config.dim, 5)

        spec.set_state_dict_adapter_type(Renamer.__gtype__)
        self.assertEqual(spec.get_state_dict_adapter_type(), Renamer.__gtype__)
        dims = Hp.ParallelDims.new().resolve(1)
        self.assertFalse(spec.has_parallelize_func())
        with self.assertRaises(GLib.Error) as caught:
            spec.parallelize(model, dims)
        self.assertTrue(caught.exception.matches(Hp.error_quark(), Hp.Error.NOT_SUPPORTED))
        seen = []
        spec.set_parallelize_func(lambda model, dims: seen.append(("parallelize", model)) or True)
        spec.set_pipelining_func(lambda model, dims: seen.append(("pipeline", model)) or True)
        spec.set_post_optimizer_build_func(
            lambda optimizers, model: seen.append(("post", optimizers)))
        self.assertTrue(spec.has_parallelize_func() and spec.has_pipelining_func()
                        and spec.has_post_optimizer_build_func())
        self.assertTrue(spec.parallelize(model, dims))
        self.assertTrue(spec.pipeline(model, dims))
        optimizer = Hp.SGDConfig(lr=0.1).build_optimizer(model.parameters())
        spec.post_optimizer_build(optimizer, model)
        self.assertEqual(seen, [("parallelize", model), ("pipeline", model), ("post", optimizer)])

        registry = Hp.ModelSpecRegistry.get_default()
        registered = []
        handler = registry.connect("registered", lambda _, spec: registered.append(spec))
        try:
            self.assertTrue(spec.register())
            self.assertEqual(registered, [spec])
            self.assertIn("toy-python", Hp.ModelSpec.list_names())
            self.assertIs(Hp.ModelSpec.lookup("toy-python"), spec)
            assert_error(self, Hp.Error.CONFIG, "ModelSpec 'toy-python' is already registered",
                         spec.register)
        finally:
            registry.disconnect(handler)
            self.assertTrue(Hp.ModelSpec.unregister("toy-python"))
        self.assertFalse(Hp.ModelSpec.unregister("toy-python"))
        with self.assertRaises(GLib.Error) as caught:
            Hp.ModelSpec.lookup("toy-python")
        self.assertTrue(caught.exception.message.startswith("Unknown model 'toy-python'. Available: ["))

    def test_state_dict_adapter(self):
        model = Toy.Config(dim=2).build()
        model.init_weights(1)
        adapter = Renamer()
        self.assertIsInstance(adapter, Hp.StateDictAdapter)
        hf = adapter.to_hf(model.named_parameters())
        self.assertEqual(hf.get_names(), ["model.proj.weight"])
        self.assertTrue(adapter.save_hf_state_dict(hf, model.config, "/checkpoints/toy"))
        loaded = adapter.load_hf_state_dict("/checkpoints/toy", None, Hp.DType.FLOAT64)
        self.assertIs(loaded, hf)
        self.assertEqual(adapter.from_hf(loaded).get_names(), ["proj.weight"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
