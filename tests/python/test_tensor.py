# test_tensor.py: HpTensor from Python through PyGObject, checked with numpy
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import gc
import math
import unittest
import weakref

import numpy as np

from hptest import GLib, Hp, assert_error

DTYPES = {np.float32: Hp.DType.FLOAT32, np.float64: Hp.DType.FLOAT64, np.int64: Hp.DType.INT64}


def tensor(array, requires_grad=False):
    t = Hp.Tensor.from_numpy(np.asarray(array, dtype=np.float64))
    if requires_grad:
        t.set_requires_grad(True)
    return t


class NumpyBridgeTest(unittest.TestCase):
    def test_round_trip_per_dtype(self):
        rng = np.random.default_rng(0)
        for dtype, hp_dtype in DTYPES.items():
            a = (rng.standard_normal((2, 3, 4)) * 10).astype(dtype)
            t = Hp.Tensor.from_numpy(a)
            self.assertEqual(t.get_dtype(), hp_dtype)
            self.assertEqual(t.get_shape(), [2, 3, 4])
            self.assertEqual(t.get_ndim(), 3)
            self.assertEqual(t.get_numel(), 24)
            self.assertEqual(t.props.numel, 24)
            back = t.numpy()
            self.assertEqual(back.dtype, dtype)
            np.testing.assert_array_equal(back, a)

    def test_copies_both_ways(self):
        """Values cross between numpy and the library by copy (GLib.Bytes
        can neither wrap numpy's memory nor show its own without a copy):
        what happens to one side later does not show on the other"""
        a = np.arange(6.0).reshape(2, 3)
        t = Hp.Tensor.from_numpy(a)
        view = t.numpy()
        self.assertFalse(np.shares_memory(view, a))
        self.assertFalse(np.shares_memory(t.numpy(), view))
        a[0, 0] = 42.0
        self.assertEqual(t.numpy()[0, 0], 0.0)
        # an optimizer step updates the parameter in place: arrays taken
        # before keep the old values
        t.set_requires_grad(True)
        t.sum_all().backward(None)
        Hp.SGDConfig(lr=1.0).build_optimizer([t]).step()
        np.testing.assert_array_equal(view, np.arange(6.0).reshape(2, 3))
        np.testing.assert_array_equal(t.numpy(), np.arange(6.0).reshape(2, 3) - 1)

    def test_views_are_read_only(self):
        view = Hp.Tensor.new_ones(Hp.DType.FLOAT64, [3]).numpy()
        self.assertFalse(view.flags.writeable)
        with self.assertRaises(ValueError):
            view[0] = 2.0
        with self.assertRaises(ValueError):
            view.flags.writeable = True
        copy = view.copy()
        copy[0] = 2.0
        np.testing.assert_array_equal(copy, [2.0, 1.0, 1.0])

    def test_lifetimes(self):
        a = np.arange(4.0)
        array_ref = weakref.ref(a)
        t = Hp.Tensor.from_numpy(a)
        del a
        gc.collect()
        self.assertIsNone(array_ref(), "the tensor holds a copy, not the array")
        view = t.numpy()
        tensor_ref = weakref.ref(t)
        del t
        gc.collect()
        self.assertIsNone(tensor_ref())
        np.testing.assert_array_equal(view, [0.0, 1.0, 2.0, 3.0])

    def test_layouts(self):
        base = np.arange(12.0).reshape(3, 4)
        read_only = base.copy()
        read_only.flags.writeable = False
        for array in (base.T, base[:, ::2], base.astype(">f8"), np.asfortranarray(base), read_only):
            t = Hp.Tensor.from_numpy(array)
            self.assertEqual(t.get_shape(), list(array.shape))
            np.testing.assert_array_equal(t.numpy(), array)
        # lists and scalars go through numpy.asarray
        self.assertEqual(Hp.Tensor.from_numpy([[1, 2], [3, 4]]).get_dtype(), Hp.DType.INT64)
        scalar = Hp.Tensor.from_numpy(np.float64(2.5))
        self.assertEqual(scalar.get_shape(), [])
        self.assertEqual(scalar.numpy().shape, ())
        self.assertEqual(scalar.item(), 2.5)
        empty = Hp.Tensor.from_numpy(np.zeros((0, 3)))
        self.assertEqual(empty.get_shape(), [0, 3])
        self.assertEqual(empty.numpy().shape, (0, 3))

    def test_errors(self):
        with self.assertRaises(TypeError) as caught:
            Hp.Tensor.from_numpy(np.arange(3, dtype=np.int32))
        self.assertEqual(str(caught.exception),
                         "Hp.Tensor.from_numpy: unsupported dtype int32 (float32, float64 or "
                         "int64 are)")
        with self.assertRaises(TypeError):
            Hp.Tensor.from_numpy(np.array(["a"]))


class TensorTest(unittest.TestCase):
    def setUp(self):
        self.rng = np.random.default_rng(0)

    def randn(self, *shape):
        return self.rng.standard_normal(shape)

    def assert_close(self, got, want, rtol=1e-12, atol=1e-12):
        np.testing.assert_allclose(got.numpy(), want, rtol=rtol, atol=atol)

    def test_constructors(self):
        np.testing.assert_array_equal(Hp.Tensor.new_arange(Hp.DType.INT64, 5).numpy(), np.arange(5))
        np.testing.assert_array_equal(Hp.Tensor.new_full(Hp.DType.FLOAT64, [2, 2], 1.5).numpy(),
                                      np.full((2, 2), 1.5))
        np.testing.assert_array_equal(Hp.Tensor.new_zeros(Hp.DType.FLOAT32, [3]).numpy(), np.zeros(3))
        np.testing.assert_array_equal(Hp.Tensor.new_ones(Hp.DType.INT64, [2]).numpy(), [1, 1])
        t = Hp.Tensor.new_from_data(Hp.DType.FLOAT32, [1.0, 2.0, 3.0, 4.0], [2, 2])
        self.assertEqual(t.to_float64_array(), [1.0, 2.0, 3.0, 4.0])
        self.assertEqual(t.to_string(), "tensor([[1., 2.],\n        [3., 4.]], dtype=float32)")
        ids = Hp.Tensor.new_from_int64_data([3, 1, 4, 1, 5, 9], [2, 3])
        self.assertEqual(ids.get_dtype(), Hp.DType.INT64)
        np.testing.assert_array_equal(ids.numpy(), [[3, 1, 4], [1, 5, 9]])
        raw = Hp.Tensor.new_from_bytes(GLib.Bytes.new(np.arange(3.0).tobytes()), Hp.DType.FLOAT64, [3])
        np.testing.assert_array_equal(raw.numpy(), [0.0, 1.0, 2.0])
        assert_error(self, Hp.Error.SHAPE, "12 bytes given for a float64 tensor of shape [2], "
                     "which needs 16 bytes",
                     Hp.Tensor.new_from_bytes, GLib.Bytes.new(b"\0" * 12), Hp.DType.FLOAT64, [2])
        with self.assertRaises(GLib.Error) as caught:
            Hp.Tensor.new_from_int64_data([1, 2, 3], [2, 2])
        self.assertTrue(caught.exception.matches(Hp.error_quark(), Hp.Error.SHAPE))

    def test_random(self):
        whole = Hp.Tensor.new_randn(Hp.DType.FLOAT64, [8, 6], 3).numpy()
        part = Hp.Tensor.new_randn_slice(Hp.DType.FLOAT64, [8, 6], [4, 2], [4, 3], 3).numpy()
        np.testing.assert_array_equal(part, whole[4:8, 2:5])
        self.assertAlmostEqual(whole.std(), 1.0, delta=0.3)
        uniform = Hp.Tensor.new_uniform(Hp.DType.FLOAT64, [50, 4], -2.0, 3.0, 7).numpy()
        self.assertTrue(np.all((uniform >= -2.0) & (uniform < 3.0)))
        self.assertGreater(len(np.unique(uniform)), 190)
        np.testing.assert_array_equal(
            Hp.Tensor.new_uniform_slice(Hp.DType.FLOAT64, [50, 4], [10, 1], [5, 2], -2.0, 3.0, 7).numpy(),
            uniform[10:15, 1:3])
        np.testing.assert_array_equal(Hp.Tensor.new_uniform(Hp.DType.FLOAT64, [50, 4], -2.0, 3.0, 7).numpy(),
                                      uniform)

    def test_pointwise(self):
        a, b = self.randn(4, 1, 3), self.randn(5, 3)
        ta, tb = tensor(a), tensor(b)
        self.assert_close(ta.add(tb), a + b)
        self.assert_close(ta.sub(tb), a - b)
        self.assert_close(ta.mul(tb), a * b)
        self.assert_close(ta.div(tb), a / b)
        self.assert_close(ta.neg(), -a)
        self.assert_close(ta.scale(2.5), 2.5 * a)
        self.assert_close(ta.exp(), np.exp(a))
        self.assert_close(ta.relu(), np.maximum(a, 0))
        self.assert_close(ta.silu(), a / (1 + np.exp(-a)))
        erf = np.vectorize(math.erf)
        self.assert_close(ta.gelu(), a * 0.5 * (1 + erf(a / math.sqrt(2))))

    def test_linear_algebra_and_shapes(self):
        x, y = self.randn(2, 3, 4), self.randn(4, 5)
        self.assert_close(tensor(x).matmul(tensor(y)), x @ y)
        w, bias = self.randn(6, 4), self.randn(6)
        self.assert_close(tensor(x).linear(tensor(w), tensor(bias)), x @ w.T + bias)
        self.assert_close(tensor(x).linear(tensor(w), None), x @ w.T)
        self.assert_close(tensor(x).transpose(0, 2), x.transpose(2, 1, 0))
        self.assert_close(tensor(x).permute([2, 0, 1]), x.transpose(2, 0, 1))
        self.assert_close(tensor(x).reshape([6, -1]), x.reshape(6, 4))
        self.assert_close(tensor(x).narrow(2, 1, 2), x[:, :, 1:3])
        a, b = self.randn(2, 3), self.randn(4, 3)
        self.assert_close(Hp.Tensor.cat([tensor(a), tensor(b)], 0), np.concatenate([a, b]))

    def test_reductions(self):
        x = self.randn(2, 3, 4)
        t = tensor(x)
        self.assert_close(t.sum(1, False), x.sum(1))
        self.assert_close(t.mean(-1, True), x.mean(-1, keepdims=True))
        self.assertAlmostEqual(t.sum_all().item(), x.sum(), places=12)
        self.assertAlmostEqual(t.mean_all().item(), x.mean(), places=12)
        e = np.exp(x - x.max(-1, keepdims=True))
        self.assert_close(t.softmax(-1), e / e.sum(-1, keepdims=True))
        self.assert_close(t.log_softmax(-1), np.log(e / e.sum(-1, keepdims=True)))

    def test_nn_ops(self):
        x, weight = self.randn(2, 5, 4), self.randn(4)
        normed = x / np.sqrt((x ** 2).mean(-1, keepdims=True) + 1e-6)
        self.assert_close(tensor(x).rms_norm(tensor(weight), 1e-6), normed * weight)
        self.assert_close(tensor(x).rms_norm(None, 1e-6), normed)

        ids = np.array([[0, 2], [5, 2]], dtype=np.int64)
        table = self.randn(6, 3)
        self.assert_close(tensor(table).embedding(Hp.Tensor.from_numpy(ids)), table[ids])

        # rotary: pairs (x0, x1) of [..., S, H, D] turned by angle[s, i]
        q = self.randn(1, 3, 2, 4)
        angles = self.randn(3, 2)
        cos, sin = np.cos(angles), np.sin(angles)
        rotated = tensor(q).apply_rotary(tensor(cos), tensor(sin)).numpy()
        x0, x1 = q[..., 0::2], q[..., 1::2]
        c, s = cos[None, :, None, :], sin[None, :, None, :]
        np.testing.assert_allclose(rotated[..., 0::2], x0 * c - x1 * s, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(rotated[..., 1::2], x0 * s + x1 * c, rtol=1e-12, atol=1e-12)

        # attention [B, H, S, D] with 2 query heads per key/value head
        query, key, value = self.randn(1, 4, 3, 2), self.randn(1, 2, 3, 2), self.randn(1, 2, 3, 5)
        kv = np.repeat(np.arange(2), 2)
        scores = query @ key[:, kv].transpose(0, 1, 3, 2) * 0.5
        scores = scores + np.triu(np.full((3, 3), -np.inf), 1)
        p = np.exp(scores - scores.max(-1, keepdims=True))
        p /= p.sum(-1, keepdims=True)
        out = tensor(query).scaled_dot_product_attention(tensor(key), tensor(value), None, True, 0.5)
        self.assert_close(out, p @ value[:, kv])

    def test_indexing(self):
        x = self.randn(3, 4, 5)
        index = np.array([[[0, 2, 1, 1, 0], [2, 2, 0, 1, 1]]] * 3, dtype=np.int64)
        gathered = tensor(x).gather(1, Hp.Tensor.from_numpy(index))
        self.assert_close(gathered, np.take_along_axis(x, index, 1))
        self.assert_close(tensor(x).gather(-1, Hp.Tensor.from_numpy(index[:, :, :2] % 5)),
                          np.take_along_axis(x[:, :2, :], index[:, :, :2], 2))
        picks = np.array([3, 0, 3], dtype=np.int64)
        self.assert_close(tensor(x).index_select(1, Hp.Tensor.from_numpy(picks)), x[:, picks])
        self.assert_close(tensor(x).index_select(-1, Hp.Tensor.from_numpy(picks)), x[..., picks])

        # the gradient adds up where an element is read more than once
        tx = tensor(x, True)
        weights = self.randn(3, 3, 5)
        tx.index_select(1, Hp.Tensor.from_numpy(picks)).mul(tensor(weights)).sum_all().backward(None)
        want = np.zeros_like(x)
        np.add.at(want, (slice(None), picks), weights)
        np.testing.assert_allclose(tx.get_grad().numpy(), want, rtol=1e-12)

        assert_error(self, Hp.Error.INVALID_ARGUMENT,
                     "gather: index 4 is out of range for dim 0 of float64 [3, 4, 5]",
                     tensor(x).gather, 0, Hp.Tensor.from_numpy(index + 2))
        assert_error(self, Hp.Error.SHAPE, "index_select: index must have one dim, got int64 [3, 2, 5]",
                     tensor(x).index_select, 0, Hp.Tensor.from_numpy(index))

    def test_layout(self):
        col = self.randn(3, 1)
        self.assert_close(tensor(col).expand([2, -1, 4]), np.broadcast_to(col, (2, 3, 4)))
        x = self.randn(2, 3)
        self.assert_close(tensor(x).repeat([2, 1, 3]), np.tile(x, (2, 1, 3)))
        m = self.randn(2, 4, 5)
        for diagonal in (-2, 0, 1, 7):
            self.assert_close(tensor(m).tril(diagonal), np.tril(m, diagonal))
            self.assert_close(tensor(m).triu(diagonal), np.triu(m, diagonal))

        # the gradients: sums over the copies and the tiles, and the mask
        tcol, tx, tm = tensor(col, True), tensor(x, True), tensor(m, True)
        tcol.expand([2, -1, 4]).sum_all().backward(None)
        np.testing.assert_array_equal(tcol.get_grad().numpy(), np.full((3, 1), 8.0))
        tx.repeat([2, 1, 3]).sum_all().backward(None)
        np.testing.assert_array_equal(tx.get_grad().numpy(), np.full((2, 3), 6.0))
        tm.triu(1).sum_all().backward(None)
        np.testing.assert_array_equal(tm.get_grad().numpy(), np.triu(np.ones((2, 4, 5)), 1))

        assert_error(self, Hp.Error.SHAPE,
                     "expand: cannot expand float64 [2, 3] to [4, 3]: only dims of size 1 expand",
                     tensor(x).expand, [4, 3])
        assert_error(self, Hp.Error.INVALID_ARGUMENT,
                     "repeat: cannot repeat float64 [2, 3] by [2]: needs a count for every dim",
                     tensor(x).repeat, [2])
        assert_error(self, Hp.Error.SHAPE, "tril: needs a tensor of at least 2 dims, got float64 [3]",
                     tensor([1.0, 2.0, 3.0]).tril, 0)

    def test_to_dtype(self):
        x = np.array([[1.5, -1.5, 2.7], [-2.7, 0.1, 1e15]])
        as_int = tensor(x).to_dtype(Hp.DType.INT64)
        self.assertEqual(as_int.get_dtype(), Hp.DType.INT64)
        np.testing.assert_array_equal(as_int.numpy(), np.trunc(x).astype(np.int64))
        as_f32 = tensor(x).to_dtype(Hp.DType.FLOAT32)
        np.testing.assert_array_equal(as_f32.numpy(), x.astype(np.float32))
        ids = np.array([16777217, -3], dtype=np.int64)
        np.testing.assert_array_equal(Hp.Tensor.from_numpy(ids).to_dtype(Hp.DType.FLOAT32).numpy(),
                                      ids.astype(np.float32))

        tx = tensor(x, True)
        tx.to_dtype(Hp.DType.FLOAT32).sum_all().backward(None)
        self.assertEqual(tx.get_grad().get_dtype(), Hp.DType.FLOAT64)
        np.testing.assert_array_equal(tx.get_grad().numpy(), np.ones((2, 3)))

        assert_error(self, Hp.Error.INVALID_ARGUMENT,
                     "to_dtype: element 1 of float64 [2] is nan, which has no int64 value",
                     tensor([1.0, np.nan]).to_dtype, Hp.DType.INT64)

    def test_allclose(self):
        a = tensor([1.0, 2.0])
        self.assertTrue(a.allclose(tensor([1.0, 2.0 + 1e-9]), 1e-8, 0.0))
        self.assertFalse(a.allclose(tensor([1.0, 2.1]), 1e-8, 0.0))
        self.assertFalse(a.allclose(tensor([1.0, 2.0, 3.0]), 1.0, 1.0))

    def test_backward_matches_numpy(self):
        x, w, b = self.randn(8, 4), self.randn(3, 4), self.randn(3)
        targets = np.array([0, 2, 1, 1, 0, 2, 2, 1], dtype=np.int64)
        tw, tb = tensor(w, True), tensor(b, True)
        self.assertTrue(tw.is_leaf())

        logits = tensor(x).linear(tw, tb)
        self.assertFalse(logits.is_leaf())
        loss = logits.cross_entropy(Hp.Tensor.from_numpy(targets), -100)
        loss.backward(None)

        z = x @ w.T + b
        p = np.exp(z - z.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        self.assertAlmostEqual(loss.item(), -np.log(p[np.arange(8), targets]).mean(), places=12)
        dz = (p - np.eye(3)[targets]) / 8
        np.testing.assert_allclose(tw.get_grad().numpy(), dz.T @ x, rtol=1e-10)
        np.testing.assert_allclose(tb.get_grad().numpy(), dz.sum(0), rtol=1e-10)

        # gradients accumulate until zero_grad
        tensor(x).linear(tw, tb).sum_all().backward(None)
        np.testing.assert_allclose(tb.get_grad().numpy(), dz.sum(0) + 8, rtol=1e-10)
        tw.zero_grad()
        self.assertIsNone(tw.get_grad())
        tw.set_grad(tensor(np.ones((3, 4))))
        np.testing.assert_array_equal(tw.props.grad.numpy(), np.ones((3, 4)))
        tw.set_grad(None)
        self.assertIsNone(tw.get_grad())

        # a detached tensor is a leaf that needs no gradient
        detached = logits.detach()
        self.assertTrue(detached.is_leaf())
        self.assertFalse(detached.get_requires_grad())

    def test_backward_with_gradient(self):
        x = tensor([1.0, 2.0, 3.0], True)
        x.mul(x).backward(tensor([1.0, 0.5, 2.0]))
        np.testing.assert_array_equal(x.get_grad().numpy(), [2.0, 2.0, 12.0])

    def test_errors(self):
        assert_error(self, Hp.Error.SHAPE, "add: shapes [2, 3] and [4] cannot be broadcast together",
                     tensor(self.randn(2, 3)).add, tensor(self.randn(4)))
        with self.assertRaises(GLib.Error) as caught:
            Hp.Tensor.new_arange(Hp.DType.INT64, 3).exp()
        self.assertTrue(caught.exception.matches(Hp.error_quark(), Hp.Error.INVALID_ARGUMENT))


class GradModeTest(unittest.TestCase):
    def test_set_enabled(self):
        x = tensor([1.0, 2.0], True)
        self.assertTrue(Hp.grad_mode_is_enabled())
        Hp.grad_mode_set_enabled(False)
        try:
            self.assertFalse(Hp.grad_mode_is_enabled())
            self.assertFalse(x.exp().props.requires_grad)
        finally:
            Hp.grad_mode_set_enabled(True)
        self.assertTrue(x.exp().get_requires_grad())

    def test_no_grad(self):
        x = tensor([1.0, 2.0], True)
        with Hp.no_grad():
            self.assertFalse(Hp.grad_mode_is_enabled())
            y = x.exp()
            with Hp.no_grad():
                self.assertFalse(Hp.grad_mode_is_enabled())
            self.assertFalse(Hp.grad_mode_is_enabled(), "an inner block restores the outer mode")
        self.assertTrue(Hp.grad_mode_is_enabled())
        self.assertFalse(y.get_requires_grad())
        self.assertTrue(y.is_leaf())

    def test_no_grad_restores_on_exceptions(self):
        with self.assertRaises(GLib.Error):
            with Hp.no_grad():
                Hp.Tensor.new_arange(Hp.DType.INT64, 3).exp()
        self.assertTrue(Hp.grad_mode_is_enabled())

        # and restores the mode it found, off included
        Hp.grad_mode_set_enabled(False)
        try:
            with self.assertRaises(KeyError):
                with Hp.no_grad():
                    raise KeyError("inside")
            self.assertFalse(Hp.grad_mode_is_enabled())
        finally:
            Hp.grad_mode_set_enabled(True)

    def test_no_grad_decorator(self):
        @Hp.no_grad()
        def double(t):
            self.assertFalse(Hp.grad_mode_is_enabled())
            return t.scale(2.0)

        y = double(tensor([1.0], True))
        self.assertFalse(y.get_requires_grad())
        self.assertTrue(Hp.grad_mode_is_enabled())


class ReprTest(unittest.TestCase):
    """A tensor's repr is its to_string(), in the style of torch"""

    def test_tensor(self):
        t = Hp.Tensor.new_from_data(Hp.DType.FLOAT32, [1.0, 2.0, 3.0, 4.0], [2, 2])
        self.assertEqual(repr(t), t.to_string())
        self.assertEqual(repr(t), "tensor([[1., 2.],\n        [3., 4.]], dtype=float32)")
        self.assertEqual(repr(Hp.Tensor.new_full(Hp.DType.FLOAT64, [], 2.5)),
                         "tensor(2.5, dtype=float64)")
        self.assertEqual(repr(Hp.Tensor.new_zeros(Hp.DType.INT64, [0, 3])),
                         "tensor([], size=[0, 3], dtype=int64)")
        w = tensor([1.0, -2.0], True)
        self.assertEqual(repr(w), "tensor([1., -2.], dtype=float64, requires_grad=True)")
        self.assertEqual(repr(w.scale(2.0)), "tensor([2., -4.], dtype=float64, grad_fn=<scale>)")

    def test_large_tensors_are_abbreviated(self):
        text = repr(Hp.Tensor.new_arange(Hp.DType.INT64, 2000).reshape([2, 1000]))
        self.assertEqual(text, "tensor([[0, 1, 2, ..., 997, 998, 999],\n"
                               "        [1000, 1001, 1002, ..., 1997, 1998, 1999]], dtype=int64)")


class DTypeTest(unittest.TestCase):
    def test_functions(self):
        for dtype, name, size, floating in ((Hp.DType.FLOAT32, "float32", 4, True),
                                            (Hp.DType.FLOAT64, "float64", 8, True),
                                            (Hp.DType.INT64, "int64", 8, False)):
            self.assertEqual(Hp.dtype_to_string(dtype), name)
            self.assertEqual(Hp.DType.to_string(dtype), name)
            self.assertEqual(Hp.dtype_get_size(dtype), size)
            self.assertEqual(Hp.DType.get_size(dtype), size)
            self.assertEqual(Hp.dtype_is_floating(dtype), floating)
            self.assertEqual(Hp.DType.is_floating(dtype), floating)
            self.assertEqual(Hp.dtype_from_string(name), (True, dtype))
            self.assertEqual(Hp.DType.from_string(name), (True, dtype))
        assert_error(self, Hp.Error.INVALID_ARGUMENT,
                     "unknown dtype 'float16' (expected float32, float64 or int64)",
                     Hp.dtype_from_string, "float16")


class RuntimeTest(unittest.TestCase):
    def test_init(self):
        self.assertTrue(Hp.init())
        self.assertEqual(Hp.get_world_size(), 1)
        self.assertEqual(Hp.get_world_rank(), 0)

    def test_version_and_constants(self):
        self.assertEqual(Hp.VERSION_S, "%d.%d.%d" % (Hp.MAJOR_VERSION, Hp.MINOR_VERSION,
                                                     Hp.MICRO_VERSION))
        self.assertEqual(Hp.TENSOR_MAX_NDIM, 16)
        self.assertEqual(Hp.error_quark(), Hp.Error.quark())
        self.assertEqual(GLib.quark_to_string(Hp.error_quark()), "hp-error-quark")


if __name__ == "__main__":
    unittest.main(verbosity=2)
