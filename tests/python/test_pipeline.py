# test_pipeline.py: pipeline parallelism from Python, under mpirun: the
# decoder's model spec splits it into one stage per rank, and a
# HpPipelineSchedule driving a Python stage function gives the loss and
# gradients of the whole decoder on one rank
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import unittest

import numpy as np

from hptest import Hp, to_numpy


def decoder_config():
    return Hp.DecoderConfig(dim=8, n_layers=3, n_heads=2, n_kv_heads=1, vocab_size=11,
                            ffn_hidden=12, max_seq_len=16, dtype=Hp.DType.FLOAT64)


def batch(rows):
    r = np.arange(rows)[:, None]
    s = np.arange(6)[None, :]
    return (Hp.Tensor.from_numpy((r * 7 + s * 3) % 11),
            Hp.Tensor.from_numpy((r * 5 + s * 4 + 1) % 11))


class PipelineTest(unittest.TestCase):
    def setUp(self):
        Hp.init()
        self.world = Hp.get_world_size()

    def reference(self, ids, targets):
        model = decoder_config().build()
        self.assertTrue(model.init_states(7))
        loss = model(ids).cross_entropy(targets, -100)
        loss.backward(None)
        return model, loss.item()

    def test_stages_give_the_whole_loss_and_gradients(self):
        if self.world > 3:
            self.skipTest("3 blocks split over at most 3 stages; this world has %d ranks"
                          % self.world)
        ids, targets = batch(4)
        reference, reference_loss = self.reference(ids, targets)

        dims = Hp.ParallelDims(pp=self.world, dp_shard=1).resolve(self.world)
        spec = decoder_config().build_model_spec()
        self.assertTrue(spec.has_pipelining_func())
        model = spec.build_model()
        self.assertTrue(spec.pipeline(model, dims))
        self.assertTrue(model.init_states(7))
        mesh = Hp.DeviceMesh.new([self.world], ["pp"])
        for kind in (Hp.PipelineScheduleKind.GPIPE, Hp.PipelineScheduleKind.ONE_F_ONE_B):
            schedule = Hp.PipelineSchedule.new(mesh, "pp", kind, 2)
            self.assertEqual(schedule.get_kind(), kind)
            self.assertEqual(schedule.get_n_microbatches(), 2)
            self.assertEqual(schedule.get_stage(), Hp.get_world_rank())
            self.assertEqual(schedule.get_n_stages(), self.world)
            self.assertEqual(schedule.is_first_stage(), Hp.get_world_rank() == 0)
            ids_parts = schedule.split(ids)
            target_parts = schedule.split(targets)
            self.assertEqual(len(ids_parts), 2)

            def stage(sched, microbatch, hidden):
                out = model(ids_parts[microbatch] if hidden is None else hidden)
                if sched.is_last_stage():
                    return out.cross_entropy(target_parts[microbatch], -100)
                return out

            for p in model.parameters():
                p.zero_grad()
            loss = schedule.step(stage)
            self.assertAlmostEqual(loss, reference_loss, delta=1e-12)
            states = model.named_parameters()
            for name in states.get_names():
                mine = to_numpy(states.lookup(name).get_grad())
                expected = to_numpy(reference.get_parameter(name).get_grad())
                np.testing.assert_allclose(mine, expected, rtol=1e-9, atol=1e-12)

    def test_evaluate_gives_the_whole_loss_without_gradients(self):
        if self.world > 3:
            self.skipTest("3 blocks split over at most 3 stages; this world has %d ranks"
                          % self.world)
        ids, targets = batch(4)
        reference = decoder_config().build()
        self.assertTrue(reference.init_states(7))
        Hp.grad_mode_set_enabled(False)
        reference_loss = reference(ids).cross_entropy(targets, -100).item()
        Hp.grad_mode_set_enabled(True)

        dims = Hp.ParallelDims(pp=self.world, dp_shard=1).resolve(self.world)
        spec = decoder_config().build_model_spec()
        model = spec.build_model()
        self.assertTrue(spec.pipeline(model, dims))
        self.assertTrue(model.init_states(7))
        mesh = Hp.DeviceMesh.new([self.world], ["pp"])
        schedule = Hp.PipelineSchedule.new(mesh, "pp", Hp.PipelineScheduleKind.ONE_F_ONE_B, 2)
        ids_parts, target_parts = schedule.split(ids), schedule.split(targets)
        recording = []

        def stage(sched, microbatch, hidden):
            recording.append(Hp.grad_mode_is_enabled())
            out = model(ids_parts[microbatch] if hidden is None else hidden)
            if sched.is_last_stage():
                return out.cross_entropy(target_parts[microbatch], -100)
            return out

        loss = schedule.evaluate(stage)
        self.assertAlmostEqual(loss, reference_loss, delta=1e-12)
        self.assertEqual(recording, [False, False])
        self.assertTrue(Hp.grad_mode_is_enabled())
        params = model.named_parameters()
        for name in params.get_names():
            self.assertIsNone(params.lookup(name).get_grad())

    def test_gather_brings_every_stage_to_the_first(self):
        mesh = Hp.DeviceMesh.new([self.world], ["pp"])
        schedule = Hp.PipelineSchedule.new(mesh, "pp", Hp.PipelineScheduleKind.GPIPE, 1)
        stage = schedule.get_stage()
        mine = [Hp.Tensor.from_numpy(np.full((2, stage + 1), stage + 0.5))]
        result = schedule.gather(["w%d" % stage], mine)
        names, tensors = result[-2], result[-1]
        if stage > 0:
            self.assertFalse(names)
            return
        self.assertEqual(list(names), ["w%d" % s for s in range(self.world)])
        for s, tensor in enumerate(tensors):
            np.testing.assert_array_equal(to_numpy(tensor), np.full((2, s + 1), s + 0.5))

    def test_split_and_remove_child(self):
        self.assertEqual(Hp.Decoder.stage_layers(3, 2, 1), (2, 1))
        model = decoder_config().build()
        self.assertTrue(model.split_stage(0, 1))
        self.assertIsNotNone(model.get_child("tok_embeddings"))
        self.assertTrue(model.remove_child("norm"))
        self.assertFalse(model.remove_child("norm"))
        self.assertNotIn("norm", model.get_child_names())

    def test_errors(self):
        model = decoder_config().build()
        with self.assertRaises(Exception) as caught:
            model.split_stage(0, 4)
        self.assertIn("n-layers 3 cannot be split into 4 pipeline stages", str(caught.exception))
        mesh = Hp.DeviceMesh.new([self.world], ["pp"])
        schedule = Hp.PipelineSchedule.new(mesh, "pp", Hp.PipelineScheduleKind.GPIPE, 4)
        with self.assertRaises(Exception) as caught:
            schedule.split(Hp.Tensor.new_zeros(Hp.DType.FLOAT64, [6, 2]))
        self.assertIn("a batch of 6 rows cannot be split into 4 microbatches",
                      str(caught.exception))


if __name__ == "__main__":
    unittest.main(verbosity=2)
