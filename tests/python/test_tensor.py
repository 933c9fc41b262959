# test_tensor.py: HpTensor from Python through PyGObject, checked with numpy
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import unittest

import numpy as np

from hptest import GLib, Hp

DTYPES = {np.float32: Hp.DType.FLOAT32, np.float64: Hp.DType.FLOAT64, np.int64: Hp.DType.INT64}
NP_DTYPES = {v: k for k, v in DTYPES.items()}


def from_numpy(array, requires_grad=False):
    array = np.ascontiguousarray(array)
    tensor = Hp.Tensor.new_from_bytes(GLib.Bytes.new(array.tobytes()),
                                      DTYPES[array.dtype.type], list(array.shape))
    if requires_grad:
        tensor.set_requires_grad(True)
    return tensor


def to_numpy(tensor):
    data = tensor.get_bytes().get_data()
    return np.frombuffer(data, dtype=NP_DTYPES[tensor.get_dtype()]).reshape(tensor.get_shape())


class TensorTest(unittest.TestCase):
    def setUp(self):
        self.rng = np.random.default_rng(0)

    def randn(self, *shape):
        return self.rng.standard_normal(shape)

    def test_round_trip(self):
        for dtype in (np.float32, np.float64, np.int64):
            a = (self.randn(2, 3, 4) * 10).astype(dtype)
            t = from_numpy(a)
            self.assertEqual(t.get_shape(), [2, 3, 4])
            self.assertEqual(t.props.numel, 24)
            np.testing.assert_array_equal(to_numpy(t), a)

    def test_constructors(self):
        np.testing.assert_array_equal(to_numpy(Hp.Tensor.new_arange(Hp.DType.INT64, 5)), np.arange(5))
        np.testing.assert_array_equal(to_numpy(Hp.Tensor.new_full(Hp.DType.FLOAT64, [2, 2], 1.5)),
                                      np.full((2, 2), 1.5))
        t = Hp.Tensor.new_from_data(Hp.DType.FLOAT32, [1.0, 2.0, 3.0, 4.0], [2, 2])
        self.assertEqual(t.to_float64_array(), [1.0, 2.0, 3.0, 4.0])
        self.assertEqual(t.to_string(), "tensor([[1., 2.],\n        [3., 4.]], dtype=float32)")

    def test_random_slices(self):
        whole = to_numpy(Hp.Tensor.new_randn(Hp.DType.FLOAT64, [8, 6], 3))
        part = to_numpy(Hp.Tensor.new_randn_slice(Hp.DType.FLOAT64, [8, 6], [4, 2], [4, 3], 3))
        np.testing.assert_array_equal(part, whole[4:8, 2:5])

    def test_ops_match_numpy(self):
        a, b = self.randn(4, 1, 3), self.randn(5, 3)
        np.testing.assert_allclose(to_numpy(from_numpy(a).add(from_numpy(b))), a + b)
        np.testing.assert_allclose(to_numpy(from_numpy(a).mul(from_numpy(b))), a * b)
        np.testing.assert_allclose(to_numpy(from_numpy(a).div(from_numpy(b))), a / b)

        x, y = self.randn(2, 3, 4), self.randn(4, 5)
        np.testing.assert_allclose(to_numpy(from_numpy(x).matmul(from_numpy(y))), x @ y, rtol=1e-12)

        w, bias = self.randn(6, 4), self.randn(6)
        np.testing.assert_allclose(to_numpy(from_numpy(x).linear(from_numpy(w), from_numpy(bias))),
                                   x @ w.T + bias, rtol=1e-12)

        np.testing.assert_allclose(to_numpy(from_numpy(x).sum(1, False)), x.sum(1))
        np.testing.assert_allclose(to_numpy(from_numpy(x).mean(-1, True)), x.mean(-1, keepdims=True))
        np.testing.assert_allclose(to_numpy(from_numpy(x).transpose(0, 2)), x.transpose(2, 1, 0))
        np.testing.assert_allclose(to_numpy(from_numpy(x).reshape([6, -1])), x.reshape(6, 4))

        e = np.exp(x - x.max(-1, keepdims=True))
        np.testing.assert_allclose(to_numpy(from_numpy(x).softmax(-1)), e / e.sum(-1, keepdims=True),
                                   rtol=1e-12)

        ids = np.array([[0, 2], [5, 2]], dtype=np.int64)
        table = self.randn(6, 3)
        np.testing.assert_array_equal(to_numpy(from_numpy(table).embedding(from_numpy(ids))), table[ids])

        cat = Hp.Tensor.cat([from_numpy(a[0]), from_numpy(b)], 0)
        np.testing.assert_array_equal(to_numpy(cat), np.concatenate([a[0], b]))

    def test_backward_matches_numpy(self):
        x, w, b = self.randn(8, 4), self.randn(3, 4), self.randn(3)
        targets = np.array([0, 2, 1, 1, 0, 2, 2, 1], dtype=np.int64)
        tw, tb = from_numpy(w, True), from_numpy(b, True)

        logits = from_numpy(x).linear(tw, tb)
        loss = logits.cross_entropy(from_numpy(targets), -100)
        loss.backward(None)

        z = x @ w.T + b
        p = np.exp(z - z.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        self.assertAlmostEqual(loss.item(), -np.log(p[np.arange(8), targets]).mean(), places=12)
        dz = (p - np.eye(3)[targets]) / 8
        np.testing.assert_allclose(to_numpy(tw.get_grad()), dz.T @ x, rtol=1e-10)
        np.testing.assert_allclose(to_numpy(tb.get_grad()), dz.sum(0), rtol=1e-10)

    def test_grad_mode(self):
        x = from_numpy(self.randn(3), True)
        Hp.grad_mode_set_enabled(False)
        try:
            y = x.exp()
        finally:
            Hp.grad_mode_set_enabled(True)
        self.assertFalse(y.props.requires_grad)
        self.assertTrue(x.exp().get_requires_grad())

    def test_errors(self):
        with self.assertRaises(GLib.Error) as caught:
            from_numpy(self.randn(2, 3)).add(from_numpy(self.randn(4)))
        self.assertTrue(caught.exception.matches(Hp.error_quark(), Hp.Error.SHAPE))
        self.assertIn("[2, 3] and [4]", caught.exception.message)

        with self.assertRaises(GLib.Error) as caught:
            Hp.Tensor.new_from_bytes(GLib.Bytes.new(b"\0" * 12), Hp.DType.FLOAT64, [2])
        self.assertTrue(caught.exception.matches(Hp.error_quark(), Hp.Error.SHAPE))

    def test_init(self):
        self.assertTrue(Hp.init())
        self.assertEqual(Hp.get_world_size(), 1)
        self.assertEqual(Hp.get_world_rank(), 0)


if __name__ == "__main__":
    unittest.main(verbosity=2)
