# test_dtensor.py: HpDeviceMesh and HpDTensor from Python, under mpirun
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Every rank runs every test; results are compared with numpy on the
# whole tensor, exactly (small integers in float64).

import unittest

import numpy as np

from hptest import GLib, Hp

DTYPES = {np.float32: Hp.DType.FLOAT32, np.float64: Hp.DType.FLOAT64, np.int64: Hp.DType.INT64}
NP_DTYPES = {v: k for k, v in DTYPES.items()}


def from_numpy(array):
    array = np.ascontiguousarray(array)
    return Hp.Tensor.new_from_bytes(GLib.Bytes.new(array.tobytes()),
                                    DTYPES[array.dtype.type], list(array.shape))


def to_numpy(tensor):
    data = tensor.get_bytes().get_data()
    return np.frombuffer(data, dtype=NP_DTYPES[tensor.get_dtype()]).reshape(tensor.get_shape())


def placements(text):
    return [Hp.Placement.new_from_string(p) for p in text.split(",")]


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

    def test_visualize(self):
        dt = Hp.DTensor.distribute(from_numpy(self.whole), self.mesh, placements("S(0)"), -1)
        table = dt.visualize()
        self.assertEqual(len(table.strip().split("\n")), self.size + 2)


if __name__ == "__main__":
    unittest.main(verbosity=2)
