# test_select.py: topk, max, min, argmax, argmin, cumsum and the
# categorical samplers from Python, against numpy
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import unittest

import numpy as np

from hptest import Hp, assert_error


def tied(shape, seed):
    """Values from a small set, so that many are equal"""
    return np.random.default_rng(seed).integers(-3, 4, size=shape).astype(np.float64) / 2


def reference_topk(x, k, dim, largest):
    """numpy's stable sort puts equal values in index order"""
    order = np.argsort(-x if largest else x, axis=dim, kind="stable")
    indices = np.take(order, np.arange(k), axis=dim)
    return np.take_along_axis(x, indices, axis=dim), indices


class TopkTest(unittest.TestCase):
    def test_against_numpy(self):
        for shape in ([9], [3, 4, 5], [2, 1, 6]):
            x = tied(shape, len(shape))
            t = Hp.Tensor.from_numpy(x)
            for dim in range(-len(shape), len(shape)):
                for k in range(shape[dim] + 1):
                    for largest in (True, False):
                        values, indices = t.topk(k, dim, largest)
                        want, want_indices = reference_topk(x, k, dim, largest)
                        np.testing.assert_array_equal(values.numpy(), want)
                        np.testing.assert_array_equal(indices.numpy(), want_indices)
                        self.assertEqual(indices.get_dtype(), Hp.DType.INT64)

    def test_nan_is_largest(self):
        t = Hp.Tensor.from_numpy(np.array([1.0, np.nan, 3.0]))
        values, indices = t.topk(2, 0, True)
        self.assertTrue(np.isnan(values.numpy()[0]))
        np.testing.assert_array_equal(indices.numpy(), [1, 2])
        values, indices = t.topk(3, 0, False)
        np.testing.assert_array_equal(indices.numpy(), [0, 2, 1])

    def test_gradient_goes_to_the_picked(self):
        x = np.array([[3.0, 1.0, 4.0], [1.0, 5.0, 9.0]])
        t = Hp.Tensor.from_numpy(x)
        t.set_requires_grad(True)
        values, _ = t.topk(2, 1, True)
        values.sum_all().backward(None)
        np.testing.assert_array_equal(t.get_grad().numpy(), [[1, 0, 1], [0, 1, 1]])

    def test_bad_k(self):
        t = Hp.Tensor.from_numpy(np.zeros((2, 3)))
        assert_error(self, Hp.Error.INVALID_ARGUMENT,
                     "topk: k 4 is more than the 3 elements of dim 1 of float64 [2, 3]",
                     t.topk, 4, 1, True)


class MaxMinTest(unittest.TestCase):
    def test_against_numpy(self):
        x = tied([3, 4, 5], 1)
        t = Hp.Tensor.from_numpy(x)
        for dim in range(-3, 3):
            for keepdim in (False, True):
                values, indices = t.max(dim, keepdim)
                np.testing.assert_array_equal(values.numpy(), np.max(x, axis=dim, keepdims=keepdim))
                np.testing.assert_array_equal(indices.numpy(),
                                              np.argmax(x, axis=dim, keepdims=keepdim))
                values, indices = t.min(dim, keepdim)
                np.testing.assert_array_equal(values.numpy(), np.min(x, axis=dim, keepdims=keepdim))
                np.testing.assert_array_equal(indices.numpy(),
                                              np.argmin(x, axis=dim, keepdims=keepdim))
                np.testing.assert_array_equal(t.argmax(dim, keepdim).numpy(),
                                              np.argmax(x, axis=dim, keepdims=keepdim))
                np.testing.assert_array_equal(t.argmin(dim, keepdim).numpy(),
                                              np.argmin(x, axis=dim, keepdims=keepdim))

    def test_nan_propagates(self):
        x = np.array([[2.0, np.nan, 1.0, np.nan]])
        t = Hp.Tensor.from_numpy(x)
        self.assertEqual(t.argmax(1, False).numpy()[0], np.argmax(x, axis=1)[0])
        self.assertEqual(t.argmin(1, False).numpy()[0], np.argmin(x, axis=1)[0])
        self.assertTrue(np.isnan(t.max(1, False)[0].numpy()[0]))
        self.assertTrue(np.isnan(t.min(1, False)[0].numpy()[0]))

    def test_empty_dim(self):
        t = Hp.Tensor.new_zeros(Hp.DType.FLOAT32, [2, 0])
        assert_error(self, Hp.Error.INVALID_ARGUMENT,
                     "argmax: dim 1 of float32 [2, 0] is empty, so there is nothing to pick",
                     t.argmax, 1, False)


class CumsumTest(unittest.TestCase):
    def test_against_numpy(self):
        x = np.random.default_rng(3).standard_normal((3, 4, 5))
        t = Hp.Tensor.from_numpy(x)
        for dim in range(-3, 3):
            np.testing.assert_allclose(t.cumsum(dim).numpy(), np.cumsum(x, axis=dim),
                                       rtol=1e-14, atol=1e-14)
        ids = Hp.Tensor.from_numpy(np.array([[1, 2], [3, 4]], dtype=np.int64))
        np.testing.assert_array_equal(ids.cumsum(0).numpy(), [[1, 2], [4, 6]])

    def test_gradient_is_the_reverse_cumsum(self):
        t = Hp.Tensor.from_numpy(np.ones(4))
        t.set_requires_grad(True)
        w = Hp.Tensor.from_numpy(np.array([1.0, 2.0, 3.0, 4.0]))
        t.cumsum(0).mul(w).sum_all().backward(None)
        np.testing.assert_array_equal(t.get_grad().numpy(), [10, 9, 7, 4])

    def test_bad_dim(self):
        assert_error(self, Hp.Error.INVALID_ARGUMENT,
                     "cumsum: dim 1 is out of range for a tensor of 1 dims",
                     Hp.Tensor.from_numpy(np.ones(3)).cumsum, 1)


class SampleTest(unittest.TestCase):
    def test_matches_the_uniform_numbers(self):
        p = np.random.default_rng(5).uniform(0, 1, size=(4, 3, 6))
        p[0, 0, 2] = 0.0
        t = Hp.Tensor.from_numpy(p)
        ids = t.sample_from_probabilities(21, 100).numpy()
        self.assertEqual(ids.shape, (4, 3))
        u = Hp.Tensor.new_uniform(Hp.DType.FLOAT64, [100 + 12], 0.0, 1.0, 21).numpy()[100:]
        rows = p.reshape(12, 6)
        want = [np.searchsorted(np.cumsum(row), u[r] * row.sum(), side="right")
                for r, row in enumerate(rows)]
        np.testing.assert_array_equal(ids.reshape(12), want)
        np.testing.assert_array_equal(t.sample_from_probabilities(21, 100).numpy(), ids)

    def test_logits_draw_like_their_softmax(self):
        logits = Hp.Tensor.from_numpy(np.random.default_rng(6).standard_normal((20, 9)) * 2)
        probabilities = logits.softmax(-1)
        np.testing.assert_array_equal(logits.sample_from_logits(3, 7).numpy(),
                                      probabilities.sample_from_probabilities(3, 7).numpy())

    def test_frequencies(self):
        weights = np.array([0.1, 0.0, 0.6, 0.3])
        p = Hp.Tensor.from_numpy(np.tile(weights, (20000, 1)))
        counts = np.bincount(p.sample_from_probabilities(8, 0).numpy(), minlength=4) / 20000
        self.assertEqual(counts[1], 0.0)
        np.testing.assert_allclose(counts, weights, atol=0.015)

    def test_bad_probabilities(self):
        assert_error(self, Hp.Error.INVALID_ARGUMENT,
                     "sample_from_probabilities: row 0 holds the probability -1",
                     Hp.Tensor.from_numpy(np.array([1.0, -1.0])).sample_from_probabilities, 0, 0)
        assert_error(self, Hp.Error.INVALID_ARGUMENT,
                     "sample_from_logits: row 0 is all -inf",
                     Hp.Tensor.from_numpy(np.array([-np.inf])).sample_from_logits, 0, 0)


if __name__ == "__main__":
    unittest.main(verbosity=2)
