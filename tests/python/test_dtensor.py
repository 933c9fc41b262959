# test_dtensor.py: HpDeviceMesh and HpDTensor from Python, under mpirun
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Every rank runs every test; results are compared with numpy on the
# whole tensor, exactly (small integers in float64).

import unittest

import numpy as np

from hptest import GLib, Hp, assert_error


def from_numpy(array):
    return Hp.Tensor.from_numpy(array)


def to_numpy(tensor):
    return tensor.numpy()


def placements(text):
    return [Hp.Placement.new_from_string(p) for p in text.split(",")]


def names(placement_list):
    return [p.to_string() for p in placement_list]


def chunks(size, n):
    piece = -(-size // n)
    return [(min(piece * r, size), min(piece * r + piece, size)) for r in range(n)]


class DTensorTest(unittest.TestCase):
    def setUp(self):
        Hp.init()
        self.size = Hp.get_world_size()
        self.rank = Hp.get_world_rank()
        self.mesh = Hp.DeviceMesh.new([self.size], ["tp"])
        self.whole = (np.arange(7 * 5, dtype=np.float64).reshape(7, 5) * 7919 % 201) - 100

    def test_mesh(self):
        self.assertEqual(self.mesh.get_shape(), [self.size])
        self.assertEqual(self.mesh.get_dim_names(), ["tp"])
        self.assertEqual(self.mesh.get_coordinate(), [self.rank])
        self.assertEqual(self.mesh.get_dim_index("tp"), 0)

    def test_distribute_from_rank_0(self):
        source = from_numpy(self.whole) if self.rank == 0 else None
        dt = Hp.DTensor.distribute(source, self.mesh, placements("S(0)"), 0)
        start, end = chunks(7, self.size)[self.rank]
        np.testing.assert_array_equal(to_numpy(dt.get_local()), self.whole[start:end])
        self.assertEqual(dt.get_shape(), [7, 5])
        np.testing.assert_array_equal(to_numpy(dt.full_tensor()), self.whole)

    def test_redistribute(self):
        dt = Hp.DTensor.distribute(from_numpy(self.whole), self.mesh, placements("S(0)"), -1)
        for target in ("S(1)", "R", "S(-1)", "S(0)"):
            moved = dt.redistribute(placements(target))
            local = to_numpy(moved.get_local())
            if target == "R":
                np.testing.assert_array_equal(local, self.whole)
            else:
                dim = 0 if target == "S(0)" else 1
                start, end = chunks(self.whole.shape[dim], self.size)[self.rank]
                np.testing.assert_array_equal(local, np.take(self.whole, range(start, end), axis=dim))
            np.testing.assert_array_equal(to_numpy(moved.full_tensor()), self.whole)

    def test_partial(self):
        local = self.whole * (self.rank + 1)
        dt = Hp.DTensor.new_from_local(from_numpy(local), self.mesh, placements("P(sum)"), None, False)
        total = sum(range(1, self.size + 1))
        np.testing.assert_array_equal(to_numpy(dt.full_tensor()), self.whole * total)
        scattered = dt.redistribute(placements("S(0)"))
        start, end = chunks(7, self.size)[self.rank]
        np.testing.assert_array_equal(to_numpy(scattered.get_local()), self.whole[start:end] * total)

    def test_gradient(self):
        weights = np.arange(35, dtype=np.float64).reshape(7, 5) - 17
        dt = Hp.DTensor.distribute(from_numpy(self.whole), self.mesh, placements("S(1)"), -1)
        dt.set_requires_grad(True)
        full = dt.redistribute(placements("S(0)")).full_tensor()
        loss = full.mul(from_numpy(weights)).sum_all()
        loss.backward(None)
        grad = dt.get_grad()
        self.assertIsInstance(grad, Hp.DTensor)
        self.assertEqual([p.to_string() for p in grad.get_placements()], ["S(1)"])
        start, end = chunks(5, self.size)[self.rank]
        np.testing.assert_array_equal(to_numpy(grad.get_local()), weights[:, start:end])

    def test_errors_on_every_rank(self):
        dt = Hp.DTensor.distribute(from_numpy(self.whole), self.mesh, placements("S(0)"), -1)
        with self.assertRaises(GLib.Error) as caught:
            dt.redistribute(placements("P(sum)"))
        self.assertTrue(caught.exception.matches(Hp.error_quark(), Hp.Error.PLACEMENT))
        with self.assertRaises(GLib.Error) as caught:
            Hp.DTensor.distribute(None, self.mesh, placements("S(0)"), 0)
        self.assertTrue(caught.exception.matches(Hp.error_quark(), Hp.Error.INVALID_ARGUMENT))
        with self.assertRaises(GLib.Error) as caught:
            Hp.DeviceMesh.new([self.size + 1], None)
        self.assertTrue(caught.exception.matches(Hp.error_quark(), Hp.Error.MESH))

    def test_placements_from_strings(self):
        """Every way of writing placements gives the same DTensor"""
        whole = from_numpy(self.whole)
        for written in (Hp.placements_new_from_string("S(0)"), placements("S(0)"),
                        [Hp.Shard.new(0)], Hp.placements_new_from_string("Shard(dim=0)"),
                        placements("Shard(0)")):
            dt = Hp.DTensor.distribute(whole, self.mesh, written, -1)
            self.assertEqual(names(dt.get_placements()), ["S(0)"])
        dt = Hp.DTensor.distribute(whole if self.rank == 0 else None, self.mesh,
                                   placements("S(1)"), 0)
        np.testing.assert_array_equal(to_numpy(dt.full_tensor()), self.whole)
        moved = dt.redistribute(placements("R"))
        self.assertEqual(names(moved.get_placements()), ["R"])
        np.testing.assert_array_equal(to_numpy(moved.get_local()), self.whole)
        local = Hp.DTensor.new_from_local(from_numpy(self.whole), self.mesh, placements("P(sum)"),
                                          None, False)
        self.assertEqual(names(local.get_placements()), ["P(sum)"])
        checked = Hp.DTensor.new_from_local(from_numpy(self.whole), self.mesh, placements("R"),
                                            [7, 5], True)
        np.testing.assert_array_equal(to_numpy(checked.full_tensor()), self.whole)
        assert_error(self, Hp.Error.INVALID_ARGUMENT,
                     "placement 0: cannot parse placement 'X(0)': expected S(dim), R or P(op)",
                     Hp.placements_new_from_string, "X(0)")
        assert_error(self, Hp.Error.INVALID_ARGUMENT,
                     "cannot parse placement 'X(0)': expected S(dim), R or P(op)",
                     Hp.Placement.new_from_string, "X(0)")

    def test_two_dim_mesh_and_lists(self):
        shape = [2, self.size // 2] if self.size % 2 == 0 else [self.size, 1]
        mesh = Hp.DeviceMesh.new(shape, ["dp", "tp"])
        self.assertEqual(mesh.get_ndim(), 2)
        self.assertEqual(mesh.get_size(), self.size)
        self.assertEqual(mesh.get_rank(), self.rank)
        self.assertEqual(mesh.get_ranks(), list(range(self.size)))
        row, column = divmod(self.rank, shape[1])
        self.assertEqual(mesh.get_coordinate(), [row, column])
        self.assertEqual([mesh.get_local_rank(0), mesh.get_local_rank(1)], [row, column])
        tp = mesh.slice(["tp"])
        self.assertEqual(tp.get_shape(), [shape[1]])
        self.assertEqual(tp.get_dim_names(), ["tp"])
        self.assertEqual(tp.get_ranks(), [row * shape[1] + c for c in range(shape[1])])
        self.assertTrue(tp.equal(mesh.slice(["tp"])))
        self.assertFalse(tp.equal(mesh))

        dt = Hp.DTensor.distribute(from_numpy(self.whole), mesh,
                                   Hp.placements_new_from_string("S(0), R"), -1)
        self.assertIs(dt.get_mesh(), mesh)
        self.assertIs(dt.props.mesh, mesh)
        self.assertEqual(names(dt.get_placements()), ["S(0)", "R"])
        self.assertEqual(Hp.placements_to_string(dt.get_placements()), "(S(0), R)")
        self.assertEqual(names(Hp.placements_new_from_string("S(1), P(max)")), ["S(1)", "P(max)"])
        back = dt.redistribute(Hp.placements_new_from_string("R, S(1)"))
        np.testing.assert_array_equal(to_numpy(back.full_tensor()), self.whole)
        self.assertEqual(repr(dt), "DTensor(local_tensor=%s, device_mesh=%s, placements=(S(0), R), "
                                   "shape=[7, 5])" % (dt.get_local().to_string(), mesh.to_string()))

    def test_placement_classes(self):
        shard = Hp.Shard.new(1)
        self.assertIsInstance(shard, Hp.Shard)
        self.assertIsInstance(shard, Hp.Placement)
        self.assertEqual(shard.get_dim(), 1)
        self.assertEqual(shard.props.dim, 1)
        self.assertTrue(shard.is_shard())
        self.assertFalse(shard.is_replicate() or shard.is_partial())
        self.assertTrue(shard.equal(Hp.Placement.new_from_string("S(1)")))
        self.assertFalse(shard.equal(Hp.Shard.new(0)))
        replicate = Hp.Replicate.new()
        self.assertTrue(replicate.is_replicate())
        self.assertEqual(replicate.to_string(), "R")
        partial = Hp.Partial.new(Hp.ReduceOp.MAX)
        self.assertTrue(partial.is_partial())
        self.assertEqual(partial.get_reduce_op(), Hp.ReduceOp.MAX)
        self.assertEqual(partial.props.reduce_op, Hp.ReduceOp.MAX)
        self.assertEqual(partial.to_string(), "P(max)")
        self.assertEqual([repr(p) for p in (shard, replicate, partial)],
                         ["Shard('S(1)')", "Replicate('R')", "Partial('P(max)')"])
        self.assertEqual(repr(Hp.placements_new_from_string("S(0), R")),
                         "[Shard('S(0)'), Replicate('R')]")
        for op, name in ((Hp.ReduceOp.SUM, "sum"), (Hp.ReduceOp.MAX, "max")):
            self.assertEqual(Hp.reduce_op_to_string(op), name)
            self.assertEqual(Hp.ReduceOp.to_string(op), name)
            self.assertEqual(Hp.reduce_op_from_string(name), (True, op))
            self.assertEqual(Hp.ReduceOp.from_string(name), (True, op))
        with self.assertRaises(GLib.Error) as caught:
            Hp.reduce_op_from_string("median")
        self.assertTrue(caught.exception.matches(Hp.error_quark(), Hp.Error.INVALID_ARGUMENT))

    def test_repr(self):
        """A mesh and a DTensor show their to_string(), from the layout alone"""
        self.assertEqual(repr(self.mesh), self.mesh.to_string())
        self.assertIn("dim_names=(tp)", repr(self.mesh))
        dt = Hp.DTensor.distribute(from_numpy(self.whole), self.mesh, placements("S(0)"), -1)
        start, end = chunks(7, self.size)[self.rank]
        self.assertEqual(repr(dt), dt.to_string())
        self.assertTrue(repr(dt).startswith("DTensor(local_tensor=tensor("))
        self.assertTrue(repr(dt).endswith(", device_mesh=%s, placements=(S(0)), shape=[7, 5])"
                                          % self.mesh.to_string()))
        self.assertEqual(dt.get_local().get_shape(), [end - start, 5])
        with self.assertRaises(TypeError) as caught:
            dt.numpy()
        self.assertIn("use get_local().numpy()", str(caught.exception))

    def test_visualize(self):
        dt = Hp.DTensor.distribute(from_numpy(self.whole), self.mesh, placements("S(0)"), -1)
        table = dt.visualize()
        self.assertEqual(len(table.strip().split("\n")), self.size + 2)


if __name__ == "__main__":
    unittest.main(verbosity=2)
