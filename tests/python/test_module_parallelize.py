# test_module_parallelize.py: a module written in Python, laid out over a
# tensor-parallel mesh by its sharding config, against the same module on
# one rank (the seed's test_module_parallelize group), under mpirun
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Every rank builds the reference and the parallel module from the same
# configuration and initialises both with the same seed, so the values
# and gradients must agree to rounding.

import unittest

import numpy as np

from hptest import Hp, assert_error, from_numpy, to_numpy


class Linear(Hp.Module):
    """y = x W^T, with W of shape [out_features, in_features]"""

    class Config(Hp.ModuleConfig):
        in_features: int = Hp.field(4, minimum=1, maximum=1 << 20)
        out_features: int = Hp.field(4, minimum=1, maximum=1 << 20)

    def do_setup(self):
        super().do_setup()
        config = self.config
        self.register_parameter("weight", Hp.Tensor.new_zeros(
            Hp.DType.FLOAT64, [config.out_features, config.in_features]))

    def forward(self, input):  # pylint: disable=redefined-builtin
        return input.linear(self.weight, None)


class Inner(Hp.Module):
    """softmax(x) over the last dim, through the registered callable
    "inner", which parallelize() may wrap with local_map"""

    def do_setup(self):
        super().do_setup()
        self.inner_calls = 0
        self.register_callable("inner", self.inner)

    def inner(self, args):
        self.inner_calls += 1
        self.seen_dtensor = isinstance(args[0], Hp.DTensor)
        return [args[0].softmax(-1)]

    def forward(self, x):
        return self.run_callable("inner", [x])[0]


def named(text):
    return Hp.NamedPlacement.new_from_string(text)


def inner_config():
    """x arrives replicated, is split by rows, and the callable runs on
    the local rows"""
    local_map = Hp.LocalMapConfig.new("inner")
    local_map.set_in_placements([named("tp:S(0)")])
    local_map.set_out_placements([named("tp:S(0)")])
    sharding = Hp.ShardingConfig.new()
    sharding.set_in_src_sharding("x", named("tp:R"))
    sharding.set_in_dst_sharding("x", named("tp:S(0)"))
    sharding.set_local_map(local_map)
    return Hp.ModuleConfig(sharding_config=sharding)


def placements(tensor):
    return [p.to_string() for p in tensor.get_placements()]


def chunk(size, n, index):
    """The slice of torch.chunk piece index of size in n"""
    piece = -(-size // n)
    start = min(piece * index, size)
    return slice(start, min(start + piece, size))


def linear_sharding():
    sharding = Hp.ShardingConfig.new()
    sharding.set_state_sharding("weight", named("tp:S(0)"))
    sharding.set_in_dst_sharding("input", named("tp:R"))
    sharding.set_out_dst_sharding(0, named("tp:S(-1)"))
    return sharding


class ModuleParallelizeTest(unittest.TestCase):
    def setUp(self):
        Hp.init()
        self.mesh = Hp.DeviceMesh.new([Hp.get_world_size()], ["tp"])
        self.config = Linear.Config(in_features=6, out_features=5,
                                    param_init=Hp.ParamInit.new_from_string(
                                        "weight=normal(std=0.5)"))
        self.x = (np.arange(18.0).reshape(3, 6) * 7 % 11 - 5) / 4

    def test_linear_equals_one_rank(self):
        reference = self.config.build()
        parallel = self.config.replace(sharding_config=linear_sharding()).build()
        self.assertIsInstance(parallel, Linear)
        meshes = []
        parallel.connect("parallelized", lambda _, mesh: meshes.append(mesh))

        parallel.parallelize(self.mesh)
        self.assertEqual(meshes, [self.mesh])
        self.assertIs(parallel.props.mesh, self.mesh)
        weight = parallel.get_parameter("weight")
        self.assertIsInstance(weight, Hp.DTensor)
        self.assertIs(parallel.weight, weight)
        self.assertEqual(placements(weight), ["S(0)"])
        self.assertEqual(weight.get_shape(), [5, 6])
        self.assertTrue(weight.get_requires_grad())
        self.assertTrue(weight.is_leaf())

        reference.init_states(42)
        parallel.init_states(42)
        self.assertIs(parallel.get_parameter("weight"), weight)
        whole = to_numpy(reference.get_parameter("weight"))
        np.testing.assert_array_equal(to_numpy(weight.full_tensor()), whole)
        rows = chunk(5, Hp.get_world_size(), Hp.get_world_rank())
        np.testing.assert_array_equal(to_numpy(weight.get_local()), whole[rows])

        x_ref = from_numpy(self.x)
        x = from_numpy(self.x)
        x_ref.set_requires_grad(True)
        x.set_requires_grad(True)
        y_ref = reference(x_ref)
        y = parallel(input=x)
        self.assertIsInstance(y, Hp.DTensor)
        self.assertEqual(placements(y), ["S(1)"])
        self.assertEqual(y.get_shape(), [3, 5])
        np.testing.assert_allclose(to_numpy(y.full_tensor()), to_numpy(y_ref), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(to_numpy(y.get_local()), to_numpy(y_ref)[:, rows],
                                   rtol=1e-12, atol=1e-12)

        y_ref.sum_all().backward(None)
        y.sum_all().backward(None)
        grad = weight.get_grad()
        self.assertIsInstance(grad, Hp.DTensor)
        self.assertEqual(placements(grad), ["S(0)"])
        np.testing.assert_allclose(to_numpy(grad.full_tensor()),
                                   to_numpy(reference.get_parameter("weight").get_grad()),
                                   rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(to_numpy(x.get_grad()), to_numpy(x_ref.get_grad()),
                                   rtol=1e-12, atol=1e-12)

    def test_parallelize_errors(self):
        parallel = self.config.replace(sharding_config=linear_sharding()).build()
        parallel.parallelize(self.mesh)
        assert_error(self, Hp.Error.STATE, "%s has already been parallelized" % Linear.__gtype__.name,
                     parallel.parallelize, self.mesh)

        dtensor_input = Hp.DTensor.distribute(from_numpy(self.x), self.mesh,
                                              [Hp.Placement.new_from_string("S(0)")], -1)
        strict = Hp.ShardingConfig.new()
        strict.set_in_src_sharding("input", named("tp:R"))
        checked = self.config.replace(sharding_config=strict).build()
        checked.parallelize(self.mesh)
        assert_error(self, Hp.Error.PLACEMENT,
                     "%s.input: input DTensor has placements (S(0)), but in_src_shardings "
                     "expects (R)." % Linear.__gtype__.name,
                     checked, dtensor_input)

    def test_local_mapped_callable(self):
        module = Inner(config=inner_config())
        reference = Inner()
        self.assertTrue(module.has_callable("inner"))
        self.assertFalse(module.has_callable("outer"))
        self.assertFalse(module.callable_is_local_mapped("inner"))
        module.parallelize(self.mesh)
        self.assertTrue(module.callable_is_local_mapped("inner"))
        self.assertFalse(reference.callable_is_local_mapped("inner"))

        x = np.arange(21.0).reshape(7, 3) % 5 - 2
        y = module(from_numpy(x))
        self.assertEqual(module.inner_calls, 1)
        self.assertFalse(module.seen_dtensor, "local_map hands the callable local tensors")
        self.assertEqual(placements(y), ["S(0)"])
        y_ref = reference(from_numpy(x))
        self.assertFalse(reference.seen_dtensor)
        np.testing.assert_allclose(to_numpy(y.full_tensor()), to_numpy(y_ref), rtol=1e-14)

        # the callable may be called by path, on distributed inputs
        rows = Hp.DTensor.distribute(from_numpy(x), self.mesh,
                                     Hp.placements_new_from_string("S(0)"), -1)
        out, = module.run_callable("inner", [rows])
        np.testing.assert_allclose(to_numpy(out.full_tensor()), to_numpy(y_ref), rtol=1e-14)
        parent = Hp.Module.new()
        parent.add_child("attention", Inner())
        self.assertTrue(parent.has_callable("attention.inner"))
        assert_error(self, Hp.Error.INVALID_ARGUMENT,
                     "HpModule has no callable 'attention.outer'",
                     parent.run_callable, "attention.outer", [from_numpy(x)])


if __name__ == "__main__":
    unittest.main(verbosity=2)
