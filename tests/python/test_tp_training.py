# test_tp_training.py: one tensor-parallel training step of a small
# decoder from Python, against the same step on one rank, under mpirun
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Every rank builds two decoders from the same configuration and seed: a
# reference it runs whole, and one parallelized over a "tp" mesh of every
# rank. Both run forward, cross entropy, backward, gradient clipping and
# an AdamW step; the losses, the gradients and the updated parameters
# must agree to rounding. float64 throughout. A second test splits the
# world into data-parallel replicas with their own rows of the batch.

import unittest

import numpy as np
from gi.repository import GLib

from hptest import Hp, to_numpy


def decoder_config(tp):
    """A decoder whose heads split over tp ranks"""
    return Hp.DecoderConfig(dim=8 * tp, n_layers=2, n_heads=2 * tp, n_kv_heads=tp, vocab_size=11,
                            ffn_hidden=12, max_seq_len=16, dtype=Hp.DType.FLOAT64)


def batch(first_row, rows):
    """Token ids [rows, 6] and their next tokens, from a fixed formula"""
    r = np.arange(first_row, first_row + rows)[:, None]
    s = np.arange(6)[None, :]
    return (Hp.Tensor.from_numpy((r * 7 + s * 3) % 11),
            Hp.Tensor.from_numpy((r * 5 + s * 4 + 1) % 11))


def whole(tensor):
    return to_numpy(tensor.full_tensor() if isinstance(tensor, Hp.DTensor) else tensor)


def adamw():
    return Hp.AdamWConfig(lr=0.01, weight_decay=0.1)


class TensorParallelTrainingTest(unittest.TestCase):
    def setUp(self):
        Hp.init()
        self.world = Hp.get_world_size()

    def build(self, config, dims):
        self.assertTrue(config.update_from_config(dims))
        model = config.build()
        self.assertTrue(model.init_weights(7))
        return model

    def step(self, model, ids, targets, mesh=None):
        """forward, loss, backward, clipping and AdamW: the loss and the
        gradient norm"""
        optimizer = adamw().build_optimizer(model.parameters())
        if mesh is not None:
            targets = Hp.DTensor.new_from_local(targets, mesh, Hp.placements_new_from_string("R"),
                                                None, False)
        logits = model(ids)
        loss = logits.cross_entropy(targets, -100)
        self.assertTrue(loss.backward(None))
        norm = Hp.clip_grad_norm(model.parameters(), 1.0, 2.0)
        self.assertTrue(optimizer.step())
        self.assertEqual(optimizer.get_step_count(), 1)
        return loss, norm, logits

    def assert_same_parameters(self, model, reference, grads):
        names = [name for name, _ in model.named_parameters()]
        self.assertEqual(names, [name for name, _ in reference.named_parameters()])
        for name in names:
            param, expected = model.get_parameter(name), reference.get_parameter(name)
            if grads:
                np.testing.assert_allclose(whole(param.get_grad()), to_numpy(expected.get_grad()),
                                           rtol=1e-9, atol=1e-11, err_msg=name)
            np.testing.assert_allclose(whole(param), to_numpy(expected), rtol=1e-10, atol=1e-12,
                                       err_msg=name)

    def test_tensor_parallel_step(self):
        tp = self.world
        reference = self.build(decoder_config(tp), Hp.ParallelDims(dp_shard=1, tp=1).resolve(1))

        config = decoder_config(tp)
        # the torchtitan layout of every layer, from the job's parallel
        # dims: update_from_config applies it when tp > 1, and the
        # helper does the same by hand (also on one rank)
        self.assertTrue(Hp.set_decoder_sharding_config(config, True, False))
        dims = Hp.ParallelDims(dp_shard=1, tp=tp).resolve(self.world)
        model = self.build(config, dims)
        mesh = Hp.DeviceMesh.new([tp], ["tp"])
        parallelized = []
        model.connect("parallelized", lambda _, mesh: parallelized.append(mesh))
        self.assertTrue(model.parallelize(mesh))
        self.assertEqual(parallelized, [mesh])
        self.assertTrue(model.verify_module_protocol())
        # parallelize keeps the values init_weights gave
        wq = model.layers[0].attention.wq.weight
        self.assertIsInstance(wq, Hp.DTensor)
        self.assertEqual([p.to_string() for p in wq.get_placements()], ["S(0)"])
        self.assert_same_parameters(model, reference, grads=False)

        ids, targets = batch(0, 3)
        reference_loss, reference_norm, reference_logits = self.step(reference, ids, targets)
        loss, norm, logits = self.step(model, ids, targets, mesh)
        np.testing.assert_allclose(whole(logits), to_numpy(reference_logits), rtol=1e-10, atol=1e-12)
        self.assertAlmostEqual(whole(loss).item(), reference_loss.item(), delta=1e-12)
        self.assertGreater(reference_loss.item(), 1.0)
        self.assertAlmostEqual(norm, reference_norm, delta=1e-10 * reference_norm)
        self.assert_same_parameters(model, reference, grads=True)

    def test_data_and_tensor_parallel_step(self):
        dp = 2 if self.world % 2 == 0 else self.world
        tp = self.world // dp
        rows = 2
        reference = self.build(decoder_config(tp), Hp.ParallelDims(dp_shard=1, tp=1).resolve(1))
        dims = Hp.ParallelDims(dp_replicate=dp, dp_shard=1, tp=tp).resolve(self.world)
        self.assertEqual((dims.get_dp_replicate(), dims.get_tp()), (dp, tp))
        model = self.build(decoder_config(tp), dims)
        mesh = dims.build_mesh()
        tp_mesh = mesh.slice(["tp"]) if tp > 1 else None
        dp_mesh = mesh.slice(["dp_replicate"]) if dp > 1 else mesh
        if tp_mesh is not None:
            self.assertTrue(model.parallelize(tp_mesh))

        ids, targets = batch(0, dp * rows)
        reference_loss, _, _ = self.step(reference, ids, targets)

        first = rows * dp_mesh.get_local_rank(0)
        ids, targets = batch(first, rows)
        if tp_mesh is not None:
            targets = Hp.DTensor.new_from_local(targets, tp_mesh,
                                                Hp.placements_new_from_string("R"), None, False)
        optimizer = adamw().build_optimizer(model.parameters())
        loss = model(ids).cross_entropy(targets, -100)
        loss.backward(None)
        self.assertTrue(Hp.data_parallel_average_gradients(model.parameters(), dp_mesh))
        ok, mean_loss = Hp.data_parallel_average_scalar(dp_mesh, whole(loss).item())
        self.assertTrue(ok)
        self.assertAlmostEqual(mean_loss, reference_loss.item(), delta=1e-12)
        Hp.clip_grad_norm(model.parameters(), 1.0, 2.0)
        optimizer.step()
        self.assert_same_parameters(model, reference, grads=True)

    def test_fully_sharded_step(self):
        # FSDP over every rank: each block a unit, then the root; each
        # rank takes its rows, and the step is that of the whole batch
        rows = 2
        reference = self.build(decoder_config(1), Hp.ParallelDims(dp_shard=1, tp=1).resolve(1))
        dims = Hp.ParallelDims(dp_shard=self.world, tp=1).resolve(self.world)
        model = self.build(decoder_config(1), Hp.ParallelDims(dp_shard=1, tp=1).resolve(1))
        mesh = Hp.DeviceMesh.new([self.world], ["dp_shard"])
        self.assertEqual(dims.get_dp_shard(), self.world)
        self.assertIsInstance(model, Hp.Module)
        for layer in model.layers:
            self.assertTrue(layer.fully_shard(mesh, True))
        self.assertTrue(model.fully_shard(mesh, False))
        # prefetch on (the default) and off give the same numbers
        self.assertEqual(model.set_fsdp_prefetch(False), len(model.layers) + 1)
        self.assertEqual(model.set_fsdp_prefetch(True), len(model.layers) + 1)
        weight = model.layers[0].feed_forward.w1.weight
        self.assertIsInstance(weight, Hp.DTensor)
        self.assertEqual([p.to_string() for p in weight.get_placements()], ["S(0)"])
        with self.assertRaises(GLib.Error) as raised:
            model.fully_shard(mesh, True)
        self.assertIn("fully_shard was called on this module already", raised.exception.message)
        self.assert_same_parameters(model, reference, grads=False)

        ids, targets = batch(0, self.world * rows)
        reference_loss, _, _ = self.step(reference, ids, targets)
        ids, targets = batch(rows * mesh.get_local_rank(0), rows)
        optimizer = adamw().build_optimizer(model.parameters())
        loss = model(ids).cross_entropy(targets, -100)
        loss.backward(None)
        ok, mean_loss = Hp.data_parallel_average_scalar(mesh, loss.item())
        self.assertTrue(ok)
        self.assertAlmostEqual(mean_loss, reference_loss.item(), delta=1e-12)
        Hp.clip_grad_norm(model.parameters(), 1.0, 2.0)
        optimizer.step()
        self.assert_same_parameters(model, reference, grads=True)


if __name__ == "__main__":
    unittest.main(verbosity=2)
