# test_pointwise_math.py: the element-wise math ops, the comparisons, where
# and masked_fill of HpTensor against numpy
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import unittest

import numpy as np

from hptest import Hp, assert_error


def tensor(array, requires_grad=False):
    t = Hp.Tensor.from_numpy(np.asarray(array))
    if requires_grad:
        t.set_requires_grad(True)
    return t


def grad_of_sum(func, array, *args):
    """The gradient of sum(func(x, *args)) with respect to x"""
    x = tensor(array, requires_grad=True)
    func(x, *args).sum_all().backward(None)
    return x.get_grad().numpy()


class PointwiseMathTest(unittest.TestCase):
    def setUp(self):
        self.rng = np.random.default_rng(7)

    def assert_close(self, t, expected, rtol=1e-12):
        np.testing.assert_allclose(t.numpy(), expected, rtol=rtol, atol=1e-14)

    def test_unary(self):
        x = self.rng.standard_normal((3, 4))
        p = self.rng.uniform(0.5, 3.0, (3, 4))
        self.assert_close(tensor(p).log(), np.log(p))
        self.assert_close(tensor(p).sqrt(), np.sqrt(p))
        self.assert_close(tensor(p).rsqrt(), 1 / np.sqrt(p))
        self.assert_close(tensor(x).tanh(), np.tanh(x))
        self.assert_close(tensor(x).sigmoid(), 1 / (1 + np.exp(-x)))
        self.assert_close(tensor(x).abs(), np.abs(x))
        self.assert_close(tensor(x).clamp(-0.5, 0.25), np.clip(x, -0.5, 0.25))
        self.assert_close(tensor(x).clamp(-np.inf, 0.25), np.minimum(x, 0.25))
        self.assert_close(tensor(p).pow_scalar(1.5), p ** 1.5)
        self.assert_close(tensor(x).pow_scalar(3.0), x ** 3)
        # float32 stays float32
        self.assertEqual(tensor(p.astype(np.float32)).log().numpy().dtype, np.float32)
        np.testing.assert_array_equal(tensor(np.array([-3, 0, 4])).abs().numpy(), [3, 0, 4])

    def test_pow(self):
        a = self.rng.uniform(0.5, 2.0, (4, 1, 3))
        b = self.rng.standard_normal((5, 3))
        self.assert_close(tensor(a).pow(tensor(b)), a ** b)
        ta, tb = tensor(a, True), tensor(b, True)
        ta.pow(tb).sum_all().backward(None)
        out = a ** b
        np.testing.assert_allclose(ta.get_grad().numpy(),
                                   (b * a ** (b - 1)).sum(axis=1, keepdims=True), rtol=1e-12)
        np.testing.assert_allclose(tb.get_grad().numpy(), (out * np.log(a)).sum(axis=0), rtol=1e-12)

    def test_gradients(self):
        x = np.array([-2.0, -0.5, 0.0, 0.5, 1.0, 3.0])
        p = np.array([0.25, 1.0, 4.0])
        np.testing.assert_allclose(grad_of_sum(Hp.Tensor.log, p), 1 / p)
        np.testing.assert_allclose(grad_of_sum(Hp.Tensor.sqrt, p), 0.5 / np.sqrt(p))
        np.testing.assert_allclose(grad_of_sum(Hp.Tensor.rsqrt, p), -0.5 * p ** -1.5)
        np.testing.assert_allclose(grad_of_sum(Hp.Tensor.tanh, x), 1 - np.tanh(x) ** 2)
        s = 1 / (1 + np.exp(-x))
        np.testing.assert_allclose(grad_of_sum(Hp.Tensor.sigmoid, x), s * (1 - s))
        # as torch: sign(x), 0 at 0; clamp passes on its bounds
        np.testing.assert_array_equal(grad_of_sum(Hp.Tensor.abs, x), np.sign(x))
        np.testing.assert_array_equal(grad_of_sum(Hp.Tensor.clamp, x, -0.5, 1.0),
                                      [0, 1, 1, 1, 1, 0])
        np.testing.assert_allclose(grad_of_sum(Hp.Tensor.pow_scalar, x, 3.0), 3 * x ** 2)

    def test_compare(self):
        a = np.array([[1.0, 2.0, 3.0], [4.0, np.nan, 6.0]])
        b = np.array([2.0, 2.0, 6.0])
        ta, tb = tensor(a), tensor(b)
        for name, got, ref in [("eq", ta.eq(tb), np.equal), ("ne", ta.ne(tb), np.not_equal),
                               ("lt", ta.lt(tb), np.less), ("le", ta.le(tb), np.less_equal),
                               ("gt", ta.gt(tb), np.greater), ("ge", ta.ge(tb), np.greater_equal)]:
            with np.errstate(invalid="ignore"):
                want = ref(a, b).astype(np.int64)
            self.assertEqual(got.numpy().dtype, np.int64, name)
            np.testing.assert_array_equal(got.numpy(), want, name)
        big = np.array([2 ** 53 + 1, -5], dtype=np.int64)
        np.testing.assert_array_equal(
            tensor(big).gt(tensor(np.array([2 ** 53, -5], dtype=np.int64))).numpy(), [1, 0])

    def test_where_and_masked_fill(self):
        cond = np.array([[1, 0, 2], [0, 0, -1]], dtype=np.int64)
        x = self.rng.standard_normal((2, 3))
        y = self.rng.standard_normal((3,))
        self.assert_close(tensor(cond).where(tensor(x), tensor(y)), np.where(cond != 0, x, y))
        self.assert_close(Hp.Tensor.where(tensor(cond), tensor(y), tensor(x)), np.where(cond != 0, y, x))
        tx, ty = tensor(x, True), tensor(y, True)
        tensor(cond).where(tx, ty).sum_all().backward(None)
        np.testing.assert_array_equal(tx.get_grad().numpy(), (cond != 0).astype(float))
        np.testing.assert_array_equal(ty.get_grad().numpy(), (cond == 0).sum(axis=0))

        mask = np.array([0, 1, 1], dtype=np.int64)
        filled = tensor(x).masked_fill(tensor(mask), -np.inf).numpy()
        np.testing.assert_array_equal(filled, np.where(mask != 0, -np.inf, x))
        np.testing.assert_array_equal(grad_of_sum(Hp.Tensor.masked_fill, x, tensor(mask), 0.0),
                                      np.broadcast_to(mask == 0, x.shape).astype(float))

    def test_errors(self):
        ids = tensor(np.array([1, 2], dtype=np.int64))
        x = tensor(np.ones((2, 3)))
        assert_error(self, Hp.Error.INVALID_ARGUMENT,
                     "log: needs a floating point tensor, got int64 [2]", ids.log)
        assert_error(self, Hp.Error.INVALID_ARGUMENT,
                     "clamp: min 1 is greater than max 0", x.clamp, 1.0, 0.0)
        assert_error(self, Hp.Error.SHAPE,
                     "lt: shapes [2, 3] and [2] cannot be broadcast together", x.lt, tensor(np.ones(2)))
        assert_error(self, Hp.Error.INVALID_ARGUMENT,
                     "where: condition must be int64, got float64 [2, 3]", x.where, x, x)
        assert_error(self, Hp.Error.SHAPE,
                     "masked_fill: mask of shape [2] does not broadcast to the shape [2, 3] of self",
                     x.masked_fill, ids, 0.0)


if __name__ == "__main__":
    unittest.main()
