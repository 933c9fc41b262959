# test_local_map.py: named placements and local_map from Python, under mpirun
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Every rank runs every test; results are compared exactly with numpy on
# the whole tensors (small integers in float64).

import unittest

import numpy as np

from hptest import GLib, Hp


def from_numpy(array):
    array = np.ascontiguousarray(array, dtype=np.float64)
    return Hp.Tensor.new_from_bytes(GLib.Bytes.new(array.tobytes()), Hp.DType.FLOAT64,
                                    list(array.shape))


def to_numpy(tensor):
    data = tensor.get_bytes().get_data()
    return np.frombuffer(data, dtype=np.float64).reshape(tensor.get_shape())


def named(text):
    return Hp.NamedPlacement.new_from_string(text)


def placements(text):
    return [Hp.Placement.new_from_string(p) for p in text.split(",")]


def chunk(size, n, index):
    piece = -(-size // n)
    start = min(piece * index, size)
    return start, min(start + piece, size)


def small_ints(shape, salt):
    return (np.arange(np.prod(shape)).reshape(shape) * 37 + salt * 11) % 13 - 6.0


class NamedPlacementTest(unittest.TestCase):
    def test_axis_names(self):
        self.assertEqual(Hp.mesh_axis_name_to_string(Hp.MeshAxisName.DP_SHARD), "dp_shard")
        ok, axis = Hp.mesh_axis_name_from_string("efsdp")
        self.assertTrue(ok)
        self.assertEqual(axis, Hp.MeshAxisName.EFSDP)
        with self.assertRaises(GLib.Error) as caught:
            Hp.mesh_axis_name_from_string("TP")
        self.assertTrue(caught.exception.matches(Hp.error_quark(), Hp.Error.INVALID_ARGUMENT))

    def test_map(self):
        p = Hp.NamedPlacement.new()
        changes = []
        p.connect("changed", lambda _: changes.append(1))
        p.set_axis(Hp.MeshAxisName.TP, Hp.Placement.new_from_string("S(0)"))
        p.set("dp", Hp.Placement.new_from_string("R"))
        p.set("tp", Hp.Placement.new_from_string("S(1)"))
        self.assertEqual(len(changes), 3)
        self.assertEqual(p.get_axes(), ["tp", "dp"])
        self.assertEqual(p.get_n_axes(), 2)
        self.assertEqual(p.get("tp").to_string(), "S(1)")
        self.assertIsNone(p.get("ep"))
        self.assertEqual(p.to_string(), "tp:S(1), dp:R")
        self.assertTrue(p.equal(named("dp:R, tp:S(1)")))
        self.assertTrue(p.copy().equal(p))
        with self.assertRaises(GLib.Error) as caught:
            named("tp:S(0), tp:R")
        self.assertIn("repeats axis 'tp'", caught.exception.message)

    def test_repr_and_bad_strings(self):
        p = Hp.NamedPlacement.new()
        p.set("tp", Hp.Placement.new_from_string("S(1)"))
        p.set_axis(Hp.MeshAxisName.DP_SHARD, Hp.Placement.new_from_string("R"))
        self.assertEqual(p.to_string(), "tp:S(1), dp_shard:R")
        self.assertEqual(repr(p), "NamedPlacement('tp:S(1), dp_shard:R')")
        self.assertEqual(repr(p.get("tp")), "Shard('S(1)')")
        self.assertEqual(Hp.MeshAxisName.to_string(Hp.MeshAxisName.TP), "tp")
        self.assertEqual(Hp.MeshAxisName.from_string("cp"), (True, Hp.MeshAxisName.CP))
        resolved = Hp.resolve_placements(named("tp:S(0)"), ["dp", "tp"])
        self.assertEqual(repr(resolved), "[Replicate('R'), Shard('S(0)')]")
        with self.assertRaises(GLib.Error) as caught:
            Hp.Placement.new_from_string("S(")
        self.assertTrue(caught.exception.matches(Hp.error_quark(), Hp.Error.INVALID_ARGUMENT))
        self.assertEqual(p.get("tp").to_string(), "S(1)")

    def test_resolve(self):
        resolved = Hp.resolve_placements(named("tp:S(0)"), ["dp", "tp"])
        self.assertEqual([q.to_string() for q in resolved], ["R", "S(0)"])
        self.assertEqual(Hp.resolve_placements(None, None), [])
        with self.assertRaises(GLib.Error) as caught:
            Hp.resolve_placements(named("ep:R, pp:R"), ["dp", "tp"])
        self.assertTrue(caught.exception.matches(Hp.error_quark(), Hp.Error.PLACEMENT))
        self.assertIn("NamedPlacement has axes not in mesh: {ep, pp}", caught.exception.message)


class LocalMapTest(unittest.TestCase):
    def setUp(self):
        Hp.init()
        self.size = Hp.get_world_size()
        self.rank = Hp.get_world_rank()
        self.mesh = Hp.DeviceMesh.new([self.size], ["tp"])
        self.x = small_ints((7, 4), 1)
        self.y = small_ints((4, 3), 2)

    def distribute(self, array, text):
        return Hp.DTensor.distribute(from_numpy(array), self.mesh, placements(text), -1)

    def test_seed(self):
        seen = []

        def f(args):
            seen.append([a.get_shape() for a in args])
            self.assertFalse(any(isinstance(a, Hp.DTensor) for a in args))
            return [args[0].matmul(args[1])]

        lm = Hp.LocalMap.new(f, [named("tp:S(0)")], [named("tp:S(0)"), named("tp:R")],
                             None, self.mesh, True)
        self.assertIs(lm.props.mesh, self.mesh)
        self.assertTrue(lm.props.redistribute_inputs)
        out, = lm.call([self.distribute(self.x, "S(0)"), self.distribute(self.y, "R")])
        start, end = chunk(7, self.size, self.rank)
        self.assertEqual(seen, [[[end - start, 4], [4, 3]]])
        self.assertIsInstance(out, Hp.DTensor)
        self.assertEqual([p.to_string() for p in out.get_placements()], ["S(0)"])
        np.testing.assert_array_equal(to_numpy(out.get_local()), (self.x @ self.y)[start:end])
        np.testing.assert_array_equal(to_numpy(out.full_tensor()), self.x @ self.y)

    def test_no_redistribution_and_none_outputs(self):
        lm = Hp.LocalMap.new(lambda args: [args[0].matmul(args[1])], [named("tp:S(0)")],
                             [named("tp:S(0)"), named("tp:R")], None, self.mesh, False)
        self.assertIs(lm.get_mesh(), self.mesh)
        self.assertFalse(lm.get_redistribute_inputs())
        out, = lm.call([self.distribute(self.x, "S(0)"), self.distribute(self.y, "R")])
        self.assertEqual([p.to_string() for p in out.get_placements()], ["S(0)"])
        np.testing.assert_array_equal(to_numpy(out.full_tensor()), self.x @ self.y)

        with_grad = Hp.LocalMap.new(lambda args: [args[0].scale(3.0), None],
                                    [named("tp:S(0)"), None], [named("tp:S(0)")],
                                    [named("tp:S(0)")], self.mesh, True)
        dx = self.distribute(self.x, "R")
        dx.set_requires_grad(True)
        out, nothing = with_grad.call([dx])
        self.assertIsNone(nothing)
        out.full_tensor().sum_all().backward(None)
        np.testing.assert_array_equal(to_numpy(dx.get_grad().full_tensor()), np.full((7, 4), 3.0))

    def test_uneven_and_redistribute(self):
        x = small_ints((5, 2), 3)
        lm = Hp.LocalMap.new(lambda args: [args[0].scale(2.0)], [named("tp:S(0)")],
                             [named("tp:S(0)")], None, self.mesh, True)
        out, = lm.call([self.distribute(x, "S(1)")])
        self.assertEqual(out.get_shape(), [5, 2])
        np.testing.assert_array_equal(to_numpy(out.full_tensor()), 2 * x)

        strict = Hp.LocalMap.new(lambda args: [args[0]], [named("tp:S(0)")],
                                 [named("tp:S(0)")], None, self.mesh, False)
        with self.assertRaises(GLib.Error) as caught:
            strict.call([self.distribute(x, "S(1)")])
        self.assertTrue(caught.exception.matches(Hp.error_quark(), Hp.Error.PLACEMENT))
        self.assertIn("argument 0 has placements (S(1)), but in_placements expects (S(0))",
                      caught.exception.message)

    def test_pass_through_and_errors(self):
        made = []

        def f(args):
            made.append(args[0].scale(2.0))
            return [made[-1], None]

        lm = Hp.LocalMap.new(f, [named("tp:S(0)"), None], [named("tp:S(0)"), None], None,
                             self.mesh, False)
        outs = lm.call([from_numpy(self.x), None])
        self.assertIs(outs[0], made[0])
        self.assertIsNone(outs[1])

        def fail(args):
            raise GLib.Error("no good")

        failing = Hp.LocalMap.new(fail, [named("tp:S(0)")], [named("tp:S(0)")], None,
                                  self.mesh, False)
        with self.assertRaises(GLib.Error) as caught:
            failing.call([self.distribute(self.x, "S(0)")])
        self.assertIn("no good", caught.exception.message)

    def test_grad(self):
        weights = small_ints((7, 3), 4)
        grad_y = self.x.T @ weights
        start, end = chunk(7, self.size, self.rank)
        for in_grad, expected_y in ((None, grad_y),
                                    ([None, named("tp:P(sum)")], grad_y),
                                    ([None, named("tp:R")], self.x[start:end].T @ weights[start:end])):
            dx = self.distribute(self.x, "S(0)")
            dy = self.distribute(self.y, "R")
            dx.set_requires_grad(True)
            dy.set_requires_grad(True)
            lm = Hp.LocalMap.new(lambda args: [args[0].matmul(args[1])], [named("tp:S(0)")],
                                 [named("tp:S(0)"), named("tp:R")], in_grad, self.mesh, True)
            out, = lm.call([dx, dy])
            out.full_tensor().mul(from_numpy(weights)).sum_all().backward(None)
            self.assertEqual([p.to_string() for p in dx.get_grad().get_placements()], ["S(0)"])
            np.testing.assert_array_equal(to_numpy(dx.get_grad().full_tensor()),
                                          weights @ self.y.T)
            np.testing.assert_array_equal(to_numpy(dy.get_grad().get_local()), expected_y)


class LocalMapConfigTest(unittest.TestCase):
    def test_fields(self):
        config = Hp.LocalMapConfig.new("attention.inner")
        self.assertEqual(config.get_callable_path(), "attention.inner")
        self.assertEqual(config.props.callable_path, "attention.inner")
        changes = []
        config.connect("notify::in-placements", lambda *_: changes.append(1))
        config.set_in_placements([named("tp:S(1)"), None, named("tp:R")])
        self.assertEqual(changes, [1])
        self.assertEqual([None if p is None else p.to_string() for p in config.get_in_placements()],
                         ["tp:S(1)", None, "tp:R"])
        config.set_out_placements([named("tp:S(1)")])
        self.assertEqual([p.to_string() for p in config.get_out_placements()], ["tp:S(1)"])
        self.assertEqual(config.get_in_grad_placements(), [])   # NULL: PyGObject gives []
        config.set_in_grad_placements([named("tp:P(sum)"), None, None])
        self.assertEqual(config.get_in_grad_placements()[0].to_string(), "tp:P(sum)")

        copy = config.copy()
        self.assertTrue(copy.equal(config))
        copy.set_callable_path("other")
        self.assertEqual(copy.get_callable_path(), "other")
        self.assertFalse(copy.equal(config))
        config.set_in_grad_placements(None)
        self.assertEqual(config.get_in_grad_placements(), [])

        sharding = Hp.ShardingConfig.new()
        sharding.set_local_map(config)
        self.assertIs(sharding.get_local_map(), config)
        self.assertIs(sharding.props.local_map, config)


if __name__ == "__main__":
    unittest.main(verbosity=2)
