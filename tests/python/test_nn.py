# test_nn.py: the nn layers, their configurations, the tensor-parallel
# sharding helpers, optimizers and gradient clipping from Python, checked
# against numpy (one process)
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import unittest

import numpy as np

from hptest import GLib, Hp, assert_error, from_numpy, to_numpy

F64 = Hp.DType.FLOAT64


def randn(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape)


def params(module):
    """The parameters of module as numpy arrays, by dotted name"""
    return {name: to_numpy(tensor) for name, tensor in module.named_parameters()}


def silu(x):
    return x / (1 + np.exp(-x))


def rms_norm(x, weight, eps):
    return x / np.sqrt((x ** 2).mean(-1, keepdims=True) + eps) * weight


def rotary_tables(head_dim, seq_len, theta):
    freqs = theta ** (-np.arange(0, head_dim, 2) / head_dim)
    angles = np.outer(np.arange(seq_len), freqs)
    return np.cos(angles), np.sin(angles)


def rotate(x, cos, sin):
    """x [B, S, H, D]; pairs (2i, 2i+1) turned by angle[s, i]"""
    x0, x1 = x[..., 0::2], x[..., 1::2]
    c, s = cos[None, :, None, :], sin[None, :, None, :]
    out = np.empty_like(x)
    out[..., 0::2] = x0 * c - x1 * s
    out[..., 1::2] = x0 * s + x1 * c
    return out


def causal_attention(q, k, v, scale=None):
    """q [B, H, S, D], k and v [B, Hkv, S, D]"""
    group = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
    scores = q @ k.transpose(0, 1, 3, 2) * (scale or 1 / np.sqrt(q.shape[-1]))
    scores = scores + np.triu(np.full(scores.shape[-2:], -np.inf), 1)
    p = np.exp(scores - scores.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v


def float64(ffn):
    """A feed-forward config whose layers are all float64"""
    return ffn.replace(dtype=F64, **{name: getattr(ffn, name).replace(dtype=F64)
                                     for name in ("w1", "w2", "w3")})


class LayerTest(unittest.TestCase):
    def assert_close(self, got, want, rtol=1e-12, atol=1e-12):
        np.testing.assert_allclose(to_numpy(got), want, rtol=rtol, atol=atol)

    def test_linear(self):
        config = Hp.LinearConfig.new(3, 2)
        self.assertEqual((config.get_in_features(), config.get_out_features(), config.get_bias(),
                          config.get_dtype()), (3, 2, False, Hp.DType.FLOAT32))
        param_init = Hp.ParamInit.new_from_string("weight=normal(std=1); bias=uniform(a=-1, b=1)")
        config = config.replace(bias=True, dtype=F64, param_init=param_init)
        built = []
        config.connect("built", lambda _, module: built.append(module))
        linear = config.build()
        self.assertIsInstance(linear, Hp.Linear)
        self.assertEqual(built, [linear])
        self.assertIsInstance(Hp.Linear.new(config), Hp.Linear)
        linear.init_states(3)
        p = params(linear)
        self.assertEqual(sorted(p), ["bias", "weight"])
        x = randn((4, 3), 1)
        self.assert_close(linear(from_numpy(x)), x @ p["weight"].T + p["bias"])
        assert_error(self, Hp.Error.SHAPE, "linear: input [4, 2] and weight [2, 3] do not fit (2 != 3)",
                     linear.call1, from_numpy(np.ones((4, 2))))

    def test_embedding(self):
        config = Hp.EmbeddingConfig.new(5, 3).replace(dtype=F64)
        self.assertEqual((config.get_num_embeddings(), config.get_embedding_dim(), config.get_dtype()),
                         (5, 3, F64))
        embedding = Hp.Embedding.new(config)
        embedding.init_states(2)
        ids = np.array([[0, 4], [2, 2]], dtype=np.int64)
        self.assert_close(embedding(Hp.Tensor.from_numpy(ids)), params(embedding)["weight"][ids])

    def test_rms_norm(self):
        config = Hp.RMSNormConfig.new(4).replace(dtype=F64, eps=1e-5)
        self.assertEqual((config.get_dim(), config.get_eps(), config.get_dtype()), (4, 1e-5, F64))
        norm = Hp.RMSNorm.new(config)
        norm.init_states(0)
        np.testing.assert_array_equal(params(norm)["weight"], np.ones(4))
        norm.register_parameter("weight", from_numpy([1.0, 2.0, 0.5, -1.0]))
        x = randn((2, 3, 4), 2)
        self.assert_close(norm(from_numpy(x)), rms_norm(x, [1.0, 2.0, 0.5, -1.0], 1e-5))

    def test_feed_forward(self):
        config = float64(Hp.FeedForwardConfig.new(4, 6))
        self.assertEqual((config.get_dim(), config.get_hidden_dim(), config.get_dtype()), (4, 6, F64))
        self.assertEqual((config.get_w1().get_out_features(), config.get_w2().get_in_features(),
                          config.get_w3().get_in_features()), (6, 6, 4))
        for name in ("w1", "w2", "w3"):
            getattr(config, name).param_init = Hp.ParamInit.new_from_string("weight=normal(std=0.5)")
        ffn = Hp.FeedForward.new(config)
        ffn.init_states(5)
        p = params(ffn)
        x = randn((3, 4), 3)
        expected = (silu(x @ p["w1.weight"].T) * (x @ p["w3.weight"].T)) @ p["w2.weight"].T
        self.assert_close(ffn(from_numpy(x)), expected)

    def test_rotary_embedding(self):
        config = Hp.RotaryEmbeddingConfig.new().replace(head_dim=4, max_seq_len=6, theta=100.0, dtype=F64)
        self.assertEqual((config.get_head_dim(), config.get_max_seq_len(), config.get_theta(),
                          config.get_dtype()), (4, 6, 100.0, F64))
        rope = Hp.RotaryEmbedding.new(config)
        rope.init_states(0)
        cos, sin = rotary_tables(4, 6, 100.0)
        self.assert_close(rope.get_buffer("cos"), cos)
        self.assert_close(rope.get_buffer("sin"), sin)
        x = randn((2, 5, 3, 4), 4)
        self.assert_close(rope(from_numpy(x)), rotate(x, cos[:5], sin[:5]))

    def test_sdpa(self):
        config = Hp.SDPAConfig.new()
        self.assertEqual((config.get_causal(), config.get_return_lse(), config.get_scale()),
                         (True, False, 0.0))
        sdpa = Hp.SDPA.new(config.replace(scale=0.25))
        self.assertEqual(sdpa.get_forward_arg_names(), ["q", "k", "v"])
        # the module takes [B, S, H, D]
        q, k, v = randn((1, 3, 4, 2), 5), randn((1, 3, 2, 2), 6), randn((1, 3, 2, 2), 7)
        out = sdpa(from_numpy(q), from_numpy(k), v=from_numpy(v))
        heads = causal_attention(q.transpose(0, 2, 1, 3), k.transpose(0, 2, 1, 3),
                                 v.transpose(0, 2, 1, 3), 0.25)
        self.assert_close(out, heads.transpose(0, 2, 1, 3))
        self.assertEqual(Hp.SDPA_CALLABLE, "inner_sdpa")
        self.assertTrue(sdpa.has_callable(Hp.SDPA_CALLABLE))

    def test_gq_attention(self):
        config = Hp.GQAttentionConfig.new().replace(dim=8, n_heads=4, n_kv_heads=2, max_seq_len=8,
                                                    rope_theta=50.0, dtype=F64)
        self.assertIsNone(config.get_wq())
        self.assertTrue(config.fill_children())
        self.assertEqual((config.get_dim(), config.get_n_heads(), config.get_n_kv_heads(),
                          config.get_head_dim(), config.get_max_seq_len(), config.get_rope_theta(),
                          config.get_dtype()), (8, 4, 2, 2, 8, 50.0, F64))
        self.assertEqual((config.get_wq().get_out_features(), config.get_wk().get_out_features(),
                          config.get_wv().get_out_features(), config.get_wo().get_in_features()),
                         (8, 4, 4, 8))
        self.assertEqual(config.get_rope().get_head_dim(), 2)
        self.assertTrue(config.get_inner_attention().get_causal())
        for name in ("wq", "wk", "wv", "wo"):
            getattr(config, name).param_init = Hp.ParamInit.new_from_string("weight=normal(std=0.5)")
        attention = Hp.GQAttention.new(config)
        attention.init_states(9)
        p = params(attention)
        x = randn((2, 5, 8), 8)
        b, s = 2, 5
        cos, sin = rotary_tables(2, 8, 50.0)
        q = rotate((x @ p["wq.weight"].T).reshape(b, s, 4, 2), cos[:s], sin[:s])
        k = rotate((x @ p["wk.weight"].T).reshape(b, s, 2, 2), cos[:s], sin[:s])
        v = (x @ p["wv.weight"].T).reshape(b, s, 2, 2)
        heads = causal_attention(q.transpose(0, 2, 1, 3), k.transpose(0, 2, 1, 3),
                                 v.transpose(0, 2, 1, 3))
        expected = heads.transpose(0, 2, 1, 3).reshape(b, s, 8) @ p["wo.weight"].T
        self.assert_close(attention(from_numpy(x)), expected, rtol=1e-10)

        # the children can be replaced one by one
        wider = Hp.LinearConfig.new(8, 8).replace(dtype=F64, bias=True)
        config.set_wq(wider)
        config.set_wk(config.get_wk().replace(bias=True))
        config.set_wv(config.get_wv().replace(bias=True))
        config.set_wo(config.get_wo().replace(bias=True))
        config.set_rope(config.get_rope().replace(theta=10.0))
        config.set_inner_attention(Hp.SDPAConfig.new().replace(scale=0.5))
        self.assertTrue(config.get_wq().get_bias() and config.get_wo().get_bias())
        self.assertEqual(config.get_rope().get_theta(), 10.0)
        self.assertEqual(config.get_inner_attention().get_scale(), 0.5)
        self.assertIn("wq.bias", config.build().named_parameters().get_names())

    def test_transformer_block_and_decoder(self):
        attention = Hp.GQAttentionConfig.new().replace(dim=8, n_heads=2, n_kv_heads=1, max_seq_len=8,
                                                       dtype=F64)
        feed_forward = float64(Hp.FeedForwardConfig.new(8, 12))
        attention_norm = Hp.RMSNormConfig.new(8).replace(dtype=F64)
        ffn_norm = Hp.RMSNormConfig.new(8).replace(dtype=F64)
        config = Hp.TransformerBlockConfig.new(attention, feed_forward, attention_norm, ffn_norm)
        self.assertIs(config.get_attention(), attention)
        self.assertIs(config.get_feed_forward(), feed_forward)
        self.assertIs(config.get_attention_norm(), attention_norm)
        self.assertIs(config.get_ffn_norm(), ffn_norm)
        self.assertTrue(attention.fill_children())
        block = config.build()
        self.assertIsInstance(block, Hp.TransformerBlock)
        self.assertEqual(block.get_child_names(),
                         ["attention_norm", "attention", "ffn_norm", "feed_forward"])

        decoder_config = Hp.DecoderConfig.new().replace(dim=8, n_layers=2, n_heads=2, n_kv_heads=1,
                                                        vocab_size=11, max_seq_len=16, dtype=F64)
        self.assertEqual(decoder_config.get_vocab_size(), 11)
        # with ffn_hidden 0: 2/3 of 4 * dim, rounded up to a multiple of 8
        self.assertEqual(decoder_config.get_ffn_hidden_size(), 24)
        self.assertIsNone(decoder_config.layers)
        self.assertTrue(decoder_config.expand())
        self.assertEqual(len(decoder_config.layers), 2)
        self.assertIsInstance(decoder_config.layers[0], Hp.TransformerBlockConfig)
        decoder = decoder_config.build()
        self.assertIsInstance(decoder, Hp.Decoder)
        self.assertIsInstance(decoder, Hp.BaseModel)
        self.assertTrue(decoder.verify_module_protocol())
        self.assertTrue(decoder.init_weights(1))
        ids = Hp.Tensor.from_numpy(np.array([[1, 2, 3], [4, 5, 6]], dtype=np.int64))
        logits = decoder(ids)
        self.assertEqual(logits.get_shape(), [2, 3, 11])
        self.assertTrue(np.all(np.isfinite(to_numpy(logits))))

        # the blocks see causal attention: logits of position 0 ignore later tokens
        changed = Hp.Tensor.from_numpy(np.array([[1, 7, 8], [4, 5, 6]], dtype=np.int64))
        np.testing.assert_allclose(to_numpy(decoder(changed))[0, 0], to_numpy(logits)[0, 0],
                                   rtol=1e-12)
        nparams, flops = decoder_config.get_nparams_and_flops(decoder, 16)
        self.assertEqual(nparams, sum(p.size for p in params(decoder).values()))
        self.assertGreater(flops, 6 * (nparams - 2 * 11 * 8))

    def test_activation_checkpointing(self):
        """Blocks that recompute their activations in the backward give
        the gradients of blocks that keep them, to the bit"""
        ids = Hp.Tensor.from_numpy(np.array([[1, 2, 3, 4], [5, 6, 7, 8]], dtype=np.int64))
        targets = Hp.Tensor.from_numpy(np.array([[2, 3, 4, 5], [6, 7, 8, 9]], dtype=np.int64))
        grads = {}
        for mode in (Hp.ActivationCheckpointing.NONE, Hp.ActivationCheckpointing.FULL,
                     Hp.ActivationCheckpointing.EVERY_K):
            config = Hp.DecoderConfig.new().replace(dim=8, n_layers=3, n_heads=2, n_kv_heads=1,
                                                    vocab_size=11, max_seq_len=16, dtype=F64,
                                                    activation_checkpointing=mode, ac_every=2)
            decoder = config.build()
            self.assertTrue(decoder.init_weights(3))
            decoder(ids).cross_entropy(targets, -100).backward(None)
            grads[mode] = {name: to_numpy(p.get_grad()) for name, p in decoder.named_parameters()}
        for mode in (Hp.ActivationCheckpointing.FULL, Hp.ActivationCheckpointing.EVERY_K):
            self.assertEqual(grads[mode].keys(), grads[Hp.ActivationCheckpointing.NONE].keys())
            for name, grad in grads[mode].items():
                np.testing.assert_array_equal(grad, grads[Hp.ActivationCheckpointing.NONE][name])

        config = Hp.DecoderConfig.new().replace(n_layers=2, ac_every=3,
                                                activation_checkpointing=Hp.ActivationCheckpointing.EVERY_K)
        assert_error(self, Hp.Error.CONFIG, "ac-every: 3 is more than n-layers 2, so "
                     "activation-checkpointing every-k would checkpoint no block", config.validate)

    def test_kv_cache(self):
        config = Hp.DecoderConfig.new().replace(dim=8, n_layers=2, n_heads=2, n_kv_heads=1,
                                                vocab_size=11, max_seq_len=16, dtype=F64)
        decoder = config.build()
        self.assertTrue(decoder.init_weights(2))
        ids = np.array([[1, 2, 3, 4, 5], [6, 7, 8, 9, 10]], dtype=np.int64)
        whole = to_numpy(decoder(Hp.Tensor.from_numpy(ids)))

        cache = Hp.KVCache.new(2, 2, 8)
        self.assertEqual((cache.get_n_layers(), cache.get_batch_size(), cache.get_capacity()),
                         (2, 2, 8))
        self.assertIsNone(cache.get_keys(0))
        # the prompt in two pieces, then one token at a time
        pieces = [to_numpy(decoder.forward_with_cache(Hp.Tensor.from_numpy(ids[:, :3]), cache))]
        for s in (3, 4):
            pieces.append(to_numpy(decoder.forward_with_cache(Hp.Tensor.from_numpy(ids[:, s:s + 1]),
                                                              cache)))
        np.testing.assert_allclose(np.concatenate(pieces, axis=1), whole, rtol=1e-12, atol=1e-12)
        self.assertEqual(cache.get_length(), 5)
        self.assertEqual(cache.props.length, 5)
        self.assertEqual(cache.get_keys(1).get_shape(), [2, 5, 1, 4])
        self.assertEqual(cache.get_values(0).get_shape(), [2, 5, 1, 4])

        assert_error(self, Hp.Error.INVALID_ARGUMENT,
                     "HpDecoder.forward_with_cache: 4 new positions do not fit in the cache "
                     "(5 of 8 positions used)", decoder.forward_with_cache,
                     Hp.Tensor.from_numpy(np.zeros((2, 4), dtype=np.int64)), cache)
        assert_error(self, Hp.Error.SHAPE,
                     "HpDecoder.forward_with_cache: ids have shape [1, 1], but the cache holds a "
                     "batch of 2", decoder.forward_with_cache, Hp.Tensor.from_numpy(ids[:1, :1]),
                     cache)
        self.assertEqual(cache.get_length(), 5)
        cache.reset()
        self.assertEqual(cache.get_length(), 0)
        self.assertIsNone(cache.get_values(1))


    def test_generator(self):
        config = Hp.DecoderConfig.new().replace(dim=8, n_layers=2, n_heads=2, n_kv_heads=1,
                                                vocab_size=11, max_seq_len=16, dtype=F64)
        decoder = config.build()
        self.assertTrue(decoder.init_weights(5))
        prompt = [1, 4, 2]

        # greedy: the largest logit of the last position, fed back
        generator = Hp.Generator.new()
        generator.props.max_new_tokens = 6
        self.assertEqual(generator.props.temperature, 0.0)
        self.assertTrue(generator.props.use_cache)
        tokens = generator.generate(decoder, prompt)
        self.assertEqual(len(tokens), 6)
        sequence = list(prompt)
        for _ in range(6):
            logits = to_numpy(decoder(Hp.Tensor.from_numpy(np.array([sequence], dtype=np.int64))))
            sequence.append(int(np.argmax(logits[0, -1])))
        self.assertEqual(list(tokens), sequence[len(prompt):])

        # seeded sampling: the same tokens without the cache and again
        generator.set_property("temperature", 1.3)
        generator.props.top_k = 5
        generator.props.top_p = 0.9
        generator.props.seed = 12
        sampled = generator.generate(decoder, prompt)
        generator.props.use_cache = False
        self.assertEqual(list(generator.generate(decoder, prompt)), list(sampled))
        self.assertTrue(all(0 <= t < 11 for t in sampled))

        assert_error(self, Hp.Error.INVALID_ARGUMENT,
                     "HpGenerator: prompt token 0 is 11, outside the vocabulary [0, 11)",
                     generator.generate, decoder, [11])


class ShardingHelperTest(unittest.TestCase):
    def test_linear_and_embedding_shardings(self):
        self.assertEqual(Hp.sharding_colwise().to_string(),
                         "ShardingConfig(state={weight: tp:S(0)}, in_src={input: tp:R}, "
                         "in_dst={input: tp:R}, out_src=[], out_dst=[tp:S(-1)], local_map=None)")
        self.assertEqual(Hp.sharding_colwise_with_bias().get_state_sharding("bias").to_string(),
                         "tp:S(0)")
        self.assertEqual(Hp.sharding_rowwise(True).get_out_dst_sharding(0).to_string(), "tp:S(1)")
        self.assertEqual(Hp.sharding_rowwise(False).get_out_dst_sharding(0).to_string(), "tp:R")
        self.assertEqual(Hp.sharding_rowwise_with_bias(False).get_state_sharding("bias").to_string(),
                         "tp:R")
        self.assertEqual(Hp.sharding_embedding(True).get_out_dst_sharding(0).to_string(), "tp:S(1)")
        self.assertEqual(Hp.sharding_norm(True).get_state_sharding("weight").to_string(), "tp:R")

    def test_layer_shardings(self):
        ffn = Hp.FeedForwardConfig.new(4, 6)
        Hp.set_dense_ffn_sharding(ffn, False)
        self.assertTrue(ffn.w1.sharding_config.equal(Hp.sharding_colwise()))
        self.assertTrue(ffn.w2.sharding_config.equal(Hp.sharding_rowwise(False)))

        attention = Hp.GQAttentionConfig.new().replace(dim=8, n_heads=2)
        self.assertTrue(attention.fill_children())
        self.assertTrue(Hp.set_gqa_attention_sharding(attention, False))
        self.assertTrue(attention.wq.sharding_config.equal(Hp.sharding_colwise()))
        self.assertTrue(attention.wo.sharding_config.equal(Hp.sharding_rowwise(False)))

        sdpa = Hp.SDPAConfig.new()
        Hp.set_gqa_inner_attention_local_map(sdpa, True)
        local_map = sdpa.sharding_config.get_local_map()
        self.assertEqual(local_map.get_callable_path(), Hp.SDPA_CALLABLE)
        self.assertEqual([p.to_string() for p in local_map.get_out_placements()],
                         ["tp:S(2)", "tp:S(2)"])

        decoder = Hp.DecoderConfig.new().replace(dim=8, n_heads=2, vocab_size=11)
        self.assertTrue(Hp.set_decoder_sharding_config(decoder, True, False))
        self.assertTrue(decoder.tok_embeddings.sharding_config.equal(Hp.sharding_embedding(False)))


class OptimizerTest(unittest.TestCase):
    def test_sgd(self):
        config = Hp.SGDConfig.new()
        self.assertIsInstance(config, Hp.OptimizerConfig)
        config.set_lr(0.1)
        config.set_momentum(0.9)
        config.set_dampening(0.1)
        config.set_nesterov(False)
        config.set_weight_decay(0.01)
        self.assertEqual((config.get_lr(), config.get_momentum(), config.get_dampening(),
                          config.get_nesterov(), config.get_weight_decay()), (0.1, 0.9, 0.1, False, 0.01))
        p0 = np.array([1.0, -2.0, 3.0])
        array = p0.copy()
        param = Hp.Tensor.from_numpy(array)
        param.set_requires_grad(True)
        optimizer = config.build_optimizer([param])
        self.assertIsInstance(optimizer, Hp.SGD)
        self.assertIsInstance(optimizer, Hp.Optimizer)
        self.assertEqual(optimizer.get_n_parameters(), 1)
        self.assertIs(optimizer.get_parameters()[0], param)
        self.assertEqual(optimizer.get_lr(), 0.1)

        expected, buffer = p0.copy(), None
        for step in range(2):
            param.mul(from_numpy([1.0, 2.0, 3.0])).sum_all().backward(None)
            self.assertTrue(optimizer.step())
            g = np.array([1.0, 2.0, 3.0]) + 0.01 * expected
            buffer = g if buffer is None else 0.9 * buffer + 0.9 * g
            expected = expected - 0.1 * buffer
            optimizer.zero_grad()
            self.assertIsNone(param.get_grad())
        self.assertEqual(optimizer.get_step_count(), 2)
        self.assertEqual(optimizer.props.step_count, 2)
        np.testing.assert_allclose(param.numpy(), expected, rtol=1e-14)
        # the parameter holds a copy of the array, which stays as it was
        np.testing.assert_array_equal(array, p0)
        self.assertEqual(optimizer.get_state().get_names(), ["0.momentum_buffer"])
        np.testing.assert_allclose(to_numpy(optimizer.get_state().lookup("0.momentum_buffer")),
                                   buffer, rtol=1e-14)

        optimizer.set_lr(0.5)
        self.assertEqual(optimizer.props.lr, 0.5)
        extra = from_numpy([0.0])
        extra.set_requires_grad(True)
        self.assertTrue(optimizer.add_parameters([extra]))
        self.assertEqual(optimizer.get_n_parameters(), 2)
        assert_error(self, Hp.Error.INVALID_ARGUMENT,
                     "HpSGD: parameter 2 (float64 [1]) is already optimised, as parameter 1",
                     optimizer.add_parameters, [extra])

    def test_adamw(self):
        config = Hp.AdamWConfig.new()
        config.set_beta1(0.8)
        config.set_beta2(0.95)
        config.set_eps(1e-6)
        config.set_lr(0.01)
        config.set_weight_decay(0.1)
        self.assertEqual((config.get_beta1(), config.get_beta2(), config.get_eps(), config.get_lr(),
                          config.get_weight_decay()), (0.8, 0.95, 1e-6, 0.01, 0.1))
        param = from_numpy([[0.5, -1.0], [2.0, 0.0]])
        param.set_requires_grad(True)
        optimizer = config.build_optimizer([param])
        self.assertIsInstance(optimizer, Hp.AdamW)
        p, m, v = param.numpy().copy(), np.zeros((2, 2)), np.zeros((2, 2))
        weights = np.array([[1.0, 2.0], [-3.0, 0.5]])
        for t in (1, 2, 3):
            param.mul(param).mul(from_numpy(weights)).sum_all().backward(None)
            optimizer.step()
            optimizer.zero_grad()
            g = 2 * p * weights
            p = p * (1 - 0.01 * 0.1)
            m = m + 0.2 * (g - m)
            v = 0.95 * v + 0.05 * g * g
            p = p - (0.01 / (1 - 0.8 ** t)) * m / (np.sqrt(v) / np.sqrt(1 - 0.95 ** t) + 1e-6)
        np.testing.assert_allclose(param.numpy(), p, rtol=1e-12)
        state = optimizer.get_state()
        self.assertEqual(state.get_names(), ["0.step", "0.exp_avg", "0.exp_avg_sq"])
        self.assertEqual(state.lookup("0.step").item(), 3.0)
        np.testing.assert_allclose(to_numpy(state.lookup("0.exp_avg_sq")), v, rtol=1e-12)

        # a new optimizer takes the states over and steps as this one would
        resumed = config.build_optimizer([param])
        resumed.load_state(state, optimizer.get_step_count())
        self.assertEqual(resumed.get_step_count(), 3)
        np.testing.assert_array_equal(to_numpy(resumed.get_state().lookup("0.exp_avg")),
                                      to_numpy(state.lookup("0.exp_avg")))

    def test_optimizer_config_errors(self):
        with self.assertRaises(GLib.Error) as caught:
            Hp.AdamWConfig(beta1=1.5)
        self.assertTrue(caught.exception.matches(Hp.error_quark(), Hp.Error.CONFIG))

    def test_clip_grad_norm(self):
        a, b = from_numpy([3.0, 0.0]), from_numpy([[4.0]])
        for t in (a, b):
            t.set_requires_grad(True)
        a.sum_all().backward(None)
        a.set_grad(from_numpy([3.0, 0.0]))
        b.set_grad(from_numpy([[4.0]]))
        self.assertAlmostEqual(Hp.clip_grad_norm([a, b], 10.0, 2.0), 5.0, places=14)
        np.testing.assert_array_equal(a.get_grad().numpy(), [3.0, 0.0])
        self.assertAlmostEqual(Hp.clip_grad_norm([a, b], 1.0, 2.0), 5.0, places=14)
        np.testing.assert_allclose(a.get_grad().numpy(), [0.6, 0.0], rtol=1e-5)
        np.testing.assert_allclose(b.get_grad().numpy(), [[0.8]], rtol=1e-5)
        self.assertAlmostEqual(Hp.clip_grad_norm([a, b], 100.0, 1.0), 1.4, delta=1e-5)
        assert_error(self, Hp.Error.INVALID_ARGUMENT,
                     "hp_clip_grad_norm: max_norm must be 0 or more, not -1",
                     Hp.clip_grad_norm, [a, b], -1.0, 2.0)


class CheckpointTest(unittest.TestCase):
    def test_hugging_face_round_trip(self):
        import tempfile

        config = Hp.DecoderConfig.new().replace(dim=8, n_layers=1, n_heads=2, n_kv_heads=1,
                                                vocab_size=11, max_seq_len=8, dtype=F64)
        model = config.build()
        model.init_weights(3)
        adapter = Hp.DecoderStateDictAdapter.new(config)
        self.assertIsInstance(adapter, Hp.BaseStateDictAdapter)
        self.assertIs(adapter.get_model_config(), config)
        adapter.set_max_shard_size(1024)
        self.assertEqual(adapter.get_max_shard_size(), 1024)

        hf = adapter.to_hf(model.state_dict())
        self.assertIn("model.layers.0.self_attn.q_proj.weight", hf.get_names())
        with tempfile.TemporaryDirectory() as directory:
            adapter.save_hf_state_dict(hf, config, directory)
            shards = adapter.fqn_to_index_mapping(directory)
            self.assertEqual(sorted(shards), sorted(hf.get_names()))
            self.assertGreater(max(shards.values()), 1)
            loaded = adapter.from_hf(adapter.load_hf_state_dict(directory, config, F64))
            other = config.build()
            other.load_state_dict(loaded, True)
        for name in model.state_dict().get_names():
            np.testing.assert_array_equal(to_numpy(other.state_dict().lookup(name)),
                                          to_numpy(model.state_dict().lookup(name)))

    def test_model_source(self):
        import os
        import tempfile

        config = Hp.DecoderConfig.new().replace(dim=8, n_layers=1, n_heads=2, n_kv_heads=1,
                                                vocab_size=11, max_seq_len=8, dtype=F64)
        model = config.build()
        model.init_weights(4)
        adapter = Hp.DecoderStateDictAdapter.new(config)
        ids = Hp.Tensor.from_numpy(np.array([[1, 2, 3]], dtype=np.int64))
        with tempfile.TemporaryDirectory() as directory:
            adapter.save_hf_state_dict(adapter.to_hf(model.state_dict()), config, directory)
            with open(os.path.join(directory, "config.json"), "w") as f:
                f.write(adapter.to_hf_config())
            source = Hp.ModelSource.open(directory)
            self.assertEqual(source.get_path(), directory)
            self.assertIsNone(source.get_step())
            self.assertEqual(Hp.MODEL_SOURCE_CONFIG_FILE, "hp-config.json")
            self.assertEqual(source.load_config().get_vocab_size(), 11)
            loaded = source.load_decoder(None)
            np.testing.assert_allclose(to_numpy(loaded(ids)), to_numpy(model(ids)), rtol=1e-12)
            other = config.build()
            other.init_weights(9)
            self.assertTrue(source.load_weights(other))
            np.testing.assert_allclose(to_numpy(other(ids)), to_numpy(model(ids)), rtol=1e-12)
            empty = os.path.join(directory, "empty")
            os.mkdir(empty)
            assert_error(self, Hp.Error.IO,
                         empty + ": no checkpoint: neither a step (with manifest.json), a folder "
                         "of complete step-N directories, nor a Hugging Face directory (with "
                         "config.json)", Hp.ModelSource.open, empty)

    def test_hugging_face_save_dtype(self):
        import json
        import tempfile

        config = Hp.DecoderConfig.new().replace(dim=8, n_layers=1, n_heads=2, n_kv_heads=1,
                                                vocab_size=11, max_seq_len=8, dtype=F64)
        model = config.build()
        model.init_weights(3)
        adapter = Hp.DecoderStateDictAdapter.new(config)
        self.assertEqual(adapter.get_save_dtype(), Hp.SafetensorsDType.AS_IS)
        self.assertEqual(json.loads(adapter.to_hf_config())["torch_dtype"], "float64")
        adapter.set_save_dtype(Hp.SafetensorsDType.BF16)
        self.assertEqual(adapter.props.save_dtype, Hp.SafetensorsDType.BF16)
        self.assertEqual(json.loads(adapter.to_hf_config())["torch_dtype"], "bfloat16")
        adapter.props.save_dtype = Hp.SafetensorsDType.F16
        self.assertEqual(json.loads(adapter.to_hf_config())["torch_dtype"], "float16")

        hf = adapter.to_hf(model.state_dict())
        with tempfile.TemporaryDirectory() as directory:
            adapter.save_hf_state_dict(hf, config, directory)
            file = Hp.SafetensorsFile.new_for_path(directory + "/model.safetensors")
            self.assertEqual(file.get_dtype("lm_head.weight"), "F16")
            # into float64, exactly the stored half-precision values
            loaded = adapter.load_hf_state_dict(directory, config, F64)
        for name in hf.get_names():
            expected = to_numpy(hf.lookup(name)).astype(np.float32).astype(np.float16)
            np.testing.assert_array_equal(to_numpy(loaded.lookup(name)), expected.astype(np.float64))

    def test_hugging_face_config(self):
        import json

        config = Hp.DecoderConfig.new().replace(dim=8, n_layers=1, n_heads=2, n_kv_heads=1,
                                                vocab_size=11, max_seq_len=8, dtype=F64)
        hf = json.loads(Hp.DecoderStateDictAdapter.new(config).to_hf_config())
        self.assertEqual((hf["model_type"], hf["architectures"]), ("llama", ["LlamaForCausalLM"]))
        self.assertEqual((hf["hidden_size"], hf["num_key_value_heads"], hf["head_dim"]), (8, 1, 4))
        read = Hp.DecoderStateDictAdapter.new_from_hf_config(json.dumps(hf), -1)
        self.assertEqual(read.get_model_config().n_kv_heads, 1)
        self.assertIs(hf["tie_word_embeddings"], False)
        hf["tie_word_embeddings"] = True
        tied = Hp.DecoderStateDictAdapter.new_from_hf_config(json.dumps(hf), -1)
        self.assertTrue(tied.get_model_config().get_tie_word_embeddings())
        self.assertIs(json.loads(tied.to_hf_config())["tie_word_embeddings"], True)
        hf["tie_word_embeddings"] = 1
        with self.assertRaises(GLib.Error) as raised:
            Hp.DecoderStateDictAdapter.new_from_hf_config(json.dumps(hf), -1)
        self.assertIn("tie_word_embeddings: expected true or false", raised.exception.message)

    def test_tied_round_trip(self):
        import json
        import tempfile

        config = Hp.DecoderConfig.new().replace(dim=8, n_layers=1, n_heads=2, vocab_size=11,
                                                max_seq_len=8, dtype=F64)
        config.set_tie_word_embeddings(True)
        self.assertIs(json.loads(config.to_json(False))["tie-word-embeddings"], True)
        read = Hp.Config.new_from_json(Hp.Config, config.to_json(False))
        self.assertTrue(read.get_tie_word_embeddings() and read.equal(config))
        model = config.build()
        model.init_weights(3)
        self.assertNotIn("lm_head.weight", model.named_parameters().get_names())
        self.assertIs(model.state_dict().lookup("lm_head.weight"),
                      model.get_parameter("tok_embeddings.weight"))
        adapter = Hp.DecoderStateDictAdapter.new(config)
        hf = adapter.to_hf(model.state_dict())
        self.assertNotIn("lm_head.weight", hf.get_names())
        with tempfile.TemporaryDirectory() as directory:
            adapter.save_hf_state_dict(hf, config, directory)
            loaded = adapter.load_hf_state_dict(directory, config, F64)
            other = config.build()
            other.load_state_dict(adapter.from_hf(loaded), True)
            np.testing.assert_array_equal(to_numpy(other.get_parameter("lm_head.weight")),
                                          to_numpy(model.get_parameter("tok_embeddings.weight")))
            loaded.insert("lm_head.weight", from_numpy(np.zeros((11, 8))))
            assert_error(self, Hp.Error.INVALID_ARGUMENT,
                         "HpDecoderStateDictAdapter: 'lm_head.weight' differs from "
                         "'model.embed_tokens.weight', which a decoder with tie-word-embeddings "
                         "uses as its head", adapter.from_hf, loaded)

    def test_hugging_face_attention_variants(self):
        import json

        config = Hp.DecoderConfig.new().replace(dim=8, n_layers=1, n_heads=2, n_kv_heads=1,
                                                head_dim=6, attention_bias=True,
                                                rope_scaling=Hp.RopeScaling.LLAMA3,
                                                rope_scaling_factor=32.0,
                                                rope_original_max_seq_len=64,
                                                vocab_size=11, max_seq_len=8, dtype=F64)
        hf = json.loads(Hp.DecoderStateDictAdapter.new(config).to_hf_config())
        self.assertEqual((hf["head_dim"], hf["attention_bias"]), (6, True))
        self.assertEqual(hf["rope_scaling"], {"rope_type": "llama3", "factor": 32.0,
                                              "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                              "original_max_position_embeddings": 64})
        read = Hp.DecoderStateDictAdapter.new_from_hf_config(json.dumps(hf), -1).get_model_config()
        self.assertEqual((read.head_dim, read.attention_bias, read.rope_scaling,
                          read.rope_scaling_factor, read.rope_original_max_seq_len),
                         (6, True, Hp.RopeScaling.LLAMA3, 32.0, 64))
        self.assertTrue(read.equal(config.replace(ffn_hidden=config.get_ffn_hidden_size())))
        hf["rope_scaling"] = {"type": "linear", "factor": 2.0}
        read = Hp.DecoderStateDictAdapter.new_from_hf_config(json.dumps(hf), -1).get_model_config()
        self.assertEqual((read.rope_scaling, read.rope_scaling_factor), (Hp.RopeScaling.LINEAR, 2.0))
        for scaling, message in (({"rope_type": "yarn", "factor": 2.0},
                                  'rope_scaling.rope_type: "yarn" is not supported'),
                                 ({"rope_type": "linear", "factor": 2.0, "beta_fast": 32},
                                  "rope_scaling.beta_fast: unknown key")):
            hf["rope_scaling"] = scaling
            with self.assertRaises(GLib.Error) as raised:
                Hp.DecoderStateDictAdapter.new_from_hf_config(json.dumps(hf), -1)
            self.assertIn(message, raised.exception.message)

        # the decoder built from it has the biases and head size
        model = read.build()
        self.assertEqual(model.get_parameter("layers.0.attention.wq.weight").get_shape(), [12, 8])
        self.assertEqual(model.get_parameter("layers.0.attention.wo.bias").get_shape(), [8])


class ParallelDimsTest(unittest.TestCase):
    def test_resolve(self):
        dims = Hp.ParallelDims.new()
        self.assertEqual((dims.get_dp_replicate(), dims.get_dp_shard(), dims.get_cp(), dims.get_tp(),
                          dims.get_pp(), dims.get_ep()), (1, -1, 1, 1, 1, 1))
        resolved = Hp.ParallelDims(dp_replicate=2, tp=2, pp=2, cp=2, ep=2).resolve(32)
        self.assertEqual(resolved.get_dp_shard(), 2)
        self.assertEqual(resolved.get_world_size(), 32)
        self.assertEqual(resolved.get_non_data_parallel_size(), 8)
        self.assertTrue(resolved.get_dp_enabled() and resolved.get_dp_replicate_enabled()
                        and resolved.get_dp_shard_enabled() and resolved.get_fsdp_enabled()
                        and resolved.get_cp_enabled() and resolved.get_dp_cp_enabled()
                        and resolved.get_tp_enabled() and resolved.get_pp_enabled()
                        and resolved.get_ep_enabled())
        alone = Hp.ParallelDims.new().resolve(1)
        self.assertFalse(alone.get_dp_enabled() or alone.get_tp_enabled() or alone.get_pp_enabled()
                         or alone.get_cp_enabled() or alone.get_ep_enabled()
                         or alone.get_dp_cp_enabled() or alone.get_fsdp_enabled()
                         or alone.get_dp_replicate_enabled() or alone.get_dp_shard_enabled())
        assert_error(self, Hp.Error.CONFIG,
                     "HpParallelDims: dp_replicate (1) * dp_shard (1) * cp (1) * tp (3) * pp (1) "
                     "= 3 != world size 2",
                     Hp.ParallelDims(dp_shard=1, tp=3).resolve, 2)

    def test_meshes(self):
        Hp.init()
        dims = Hp.ParallelDims.new().resolve(Hp.get_world_size())
        mesh = dims.build_mesh()
        self.assertEqual(mesh.get_dim_names(), ["dp_shard"])
        self.assertEqual(mesh.get_shape(), [Hp.get_world_size()])
        self.assertEqual(dims.build_expert_mesh().get_dim_names(), ["efsdp"])



class CheckpointFolderTest(unittest.TestCase):
    def test_steps_with_manifests(self):
        import hashlib
        import json
        import os
        import tempfile

        states = Hp.StateDict.new()
        states.insert("w", from_numpy(np.arange(6.0).reshape(2, 3)))
        with tempfile.TemporaryDirectory() as tmp:
            folder = os.path.join(tmp, "checkpoint")
            manager = Hp.CheckpointManager.new(folder)
            self.assertEqual(manager.get_folder(), folder)
            manager.set_keep(2)
            self.assertEqual((manager.get_keep(), manager.props.keep), (2, 2))
            self.assertEqual(manager.list_steps(), [])
            for step in (10, 20, 30):
                staged = manager.stage(step)
                self.assertFalse(staged.get_complete())
                self.assertEqual(staged.get_file_names(), [])
                Hp.safetensors_save(states, None, os.path.join(staged.get_path(), "model.safetensors"))
                staged.set_metadata("data-position", str(step * 64))
                manager.commit(staged)
                self.assertTrue(staged.props.complete)
                self.assertEqual(staged.get_path(), os.path.join(folder, f"step-{step}"))
            self.assertEqual(manager.list_steps(), [20, 30])
            self.assertEqual(sorted(os.listdir(folder)), ["step-20", "step-30"])

            latest = manager.open_latest()
            self.assertEqual((latest.get_step(), latest.get_metadata()), (30, {"data-position": "1920"}))
            self.assertEqual(latest.get_file_names(), ["model.safetensors"])
            model_file = latest.get_file("model.safetensors")
            np.testing.assert_array_equal(to_numpy(Hp.safetensors_load(model_file).lookup("w")),
                                          np.arange(6.0).reshape(2, 3))
            with open(os.path.join(latest.get_path(), Hp.CHECKPOINT_MANIFEST), encoding="utf-8") as f:
                entry = json.load(f)["files"][0]
            with open(model_file, "rb") as f:
                self.assertEqual(entry["sha256"], hashlib.sha256(f.read()).hexdigest())
            self.assertEqual(Hp.CheckpointStep.open(latest.get_path()).get_step(), 30)
            assert_error(self, Hp.Error.IO, latest.get_path() + ": no file 'other' in this checkpoint",
                         latest.get_file, "other")

            # a discarded save leaves the steps alone
            staged = manager.stage(40)
            manager.discard(staged)
            self.assertFalse(os.path.exists(staged.get_path()))
            self.assertEqual(manager.list_steps(), [20, 30])

            # the file of another step: refused, naming it
            older = manager.open_step(20)
            states.insert("w", from_numpy(np.zeros((2, 3))))
            Hp.safetensors_save(states, None, model_file)
            assert_error(self, Hp.Error.FORMAT,
                         model_file + ": its SHA-256 differs from the one " +
                         os.path.join(latest.get_path(), "manifest.json") +
                         " lists: not the file of this checkpoint", manager.open_latest)
            self.assertEqual(older.get_step(), 20)
            assert_error(self, Hp.Error.IO, latest.get_path() +
                         ": already exists; a checkpoint step is never overwritten", manager.stage, 30)

if __name__ == "__main__":
    unittest.main(verbosity=2)
