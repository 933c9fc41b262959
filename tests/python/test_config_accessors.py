# test_config_accessors.py: the typed accessors that hp-mkfields.py makes
# of the field tables of the library's configuration classes: every
# field of every class has a getter and a setter, the setter notifies
# once (for a value other than the field's) and keeps an object as it
# is, and both agree with the field read as an attribute
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import unittest

from hptest import GObject, Hp

CLASSES = [Hp.LinearConfig, Hp.EmbeddingConfig, Hp.RMSNormConfig, Hp.FeedForwardConfig,
           Hp.RotaryEmbeddingConfig, Hp.SDPAConfig, Hp.GQAttentionConfig,
           Hp.TransformerBlockConfig, Hp.DecoderConfig, Hp.OptimizerConfig, Hp.SGDConfig,
           Hp.AdamWConfig, Hp.ModuleConfig, Hp.ParallelDims]


class AccessorTest(unittest.TestCase):
    def check(self, config, field, value, get, set_):
        notified = []
        handler = config.connect("notify::" + field.replace("_", "-"),
                                 lambda *args: notified.append(field))
        set_(config, value)
        config.disconnect(handler)
        self.assertEqual(notified, [field])
        if isinstance(value, GObject.Object):
            self.assertIs(get(config), value)       # kept, not copied
            self.assertIs(getattr(config, field), value)
            set_(config, None)      # a child that follows the sizes may be derived again
            self.assertIs(get(config), getattr(config, field))
        else:
            self.assertEqual(get(config), value)
            self.assertEqual(getattr(config, field), value)

    def test_every_field_has_both(self):
        for cls in CLASSES:
            for pspec in GObject.list_properties(cls.__gtype__):
                if pspec.owner_type != cls.__gtype__:
                    continue
                member = pspec.name.replace("-", "_")
                for accessor in ("get_" + member, "set_" + member):
                    with self.subTest(cls=cls.__name__, accessor=accessor):
                        self.assertTrue(callable(getattr(cls, accessor, None)))

    def test_linear_config(self):
        config = Hp.LinearConfig()
        self.check(config, "bias", True,
                   lambda c: c.get_bias(), lambda c, v: c.set_bias(v))
        self.check(config, "dtype", Hp.DType.FLOAT64,
                   lambda c: c.get_dtype(), lambda c, v: c.set_dtype(v))
        self.check(config, "in_features", 3,
                   lambda c: c.get_in_features(), lambda c, v: c.set_in_features(v))
        self.check(config, "out_features", 3,
                   lambda c: c.get_out_features(), lambda c, v: c.set_out_features(v))

    def test_embedding_config(self):
        config = Hp.EmbeddingConfig()
        self.check(config, "dtype", Hp.DType.FLOAT64,
                   lambda c: c.get_dtype(), lambda c, v: c.set_dtype(v))
        self.check(config, "embedding_dim", 3,
                   lambda c: c.get_embedding_dim(), lambda c, v: c.set_embedding_dim(v))
        self.check(config, "num_embeddings", 3,
                   lambda c: c.get_num_embeddings(), lambda c, v: c.set_num_embeddings(v))

    def test_rms_norm_config(self):
        config = Hp.RMSNormConfig()
        self.check(config, "dim", 3,
                   lambda c: c.get_dim(), lambda c, v: c.set_dim(v))
        self.check(config, "dtype", Hp.DType.FLOAT64,
                   lambda c: c.get_dtype(), lambda c, v: c.set_dtype(v))
        self.check(config, "eps", 0.5,
                   lambda c: c.get_eps(), lambda c, v: c.set_eps(v))

    def test_feed_forward_config(self):
        config = Hp.FeedForwardConfig()
        self.check(config, "dim", 3,
                   lambda c: c.get_dim(), lambda c, v: c.set_dim(v))
        self.check(config, "dtype", Hp.DType.FLOAT64,
                   lambda c: c.get_dtype(), lambda c, v: c.set_dtype(v))
        self.check(config, "hidden_dim", 3,
                   lambda c: c.get_hidden_dim(), lambda c, v: c.set_hidden_dim(v))
        self.check(config, "w1", Hp.LinearConfig(in_features=2),
                   lambda c: c.get_w1(), lambda c, v: c.set_w1(v))
        self.check(config, "w2", Hp.LinearConfig(in_features=2),
                   lambda c: c.get_w2(), lambda c, v: c.set_w2(v))
        self.check(config, "w3", Hp.LinearConfig(in_features=2),
                   lambda c: c.get_w3(), lambda c, v: c.set_w3(v))

    def test_rotary_embedding_config(self):
        config = Hp.RotaryEmbeddingConfig()
        self.check(config, "dtype", Hp.DType.FLOAT64,
                   lambda c: c.get_dtype(), lambda c, v: c.set_dtype(v))
        self.check(config, "head_dim", 3,
                   lambda c: c.get_head_dim(), lambda c, v: c.set_head_dim(v))
        self.check(config, "max_seq_len", 3,
                   lambda c: c.get_max_seq_len(), lambda c, v: c.set_max_seq_len(v))
        self.check(config, "theta", 500000.0,
                   lambda c: c.get_theta(), lambda c, v: c.set_theta(v))
        self.check(config, "scaling", Hp.RopeScaling.LLAMA3,
                   lambda c: c.get_scaling(), lambda c, v: c.set_scaling(v))
        self.check(config, "scaling_factor", 0.5,
                   lambda c: c.get_scaling_factor(), lambda c, v: c.set_scaling_factor(v))
        self.check(config, "low_freq_factor", 0.5,
                   lambda c: c.get_low_freq_factor(), lambda c, v: c.set_low_freq_factor(v))
        self.check(config, "high_freq_factor", 0.5,
                   lambda c: c.get_high_freq_factor(), lambda c, v: c.set_high_freq_factor(v))
        self.check(config, "original_max_seq_len", 3,
                   lambda c: c.get_original_max_seq_len(), lambda c, v: c.set_original_max_seq_len(v))

    def test_sdpa_config(self):
        config = Hp.SDPAConfig()
        self.check(config, "causal", False,
                   lambda c: c.get_causal(), lambda c, v: c.set_causal(v))
        self.check(config, "return_lse", True,
                   lambda c: c.get_return_lse(), lambda c, v: c.set_return_lse(v))
        self.check(config, "scale", 0.5,
                   lambda c: c.get_scale(), lambda c, v: c.set_scale(v))

    def test_gq_attention_config(self):
        config = Hp.GQAttentionConfig()
        self.check(config, "bias", True,
                   lambda c: c.get_bias(), lambda c, v: c.set_bias(v))
        self.check(config, "head_dim", 6,
                   lambda c: c.get_head_dim(), lambda c, v: c.set_head_dim(v))
        self.check(config, "rope_scaling", Hp.RopeScaling.LLAMA3,
                   lambda c: c.get_rope_scaling(), lambda c, v: c.set_rope_scaling(v))
        self.check(config, "rope_scaling_factor", 0.5,
                   lambda c: c.get_rope_scaling_factor(), lambda c, v: c.set_rope_scaling_factor(v))
        self.check(config, "rope_low_freq_factor", 0.5,
                   lambda c: c.get_rope_low_freq_factor(), lambda c, v: c.set_rope_low_freq_factor(v))
        self.check(config, "rope_high_freq_factor", 0.5,
                   lambda c: c.get_rope_high_freq_factor(), lambda c, v: c.set_rope_high_freq_factor(v))
        self.check(config, "rope_original_max_seq_len", 3,
                   lambda c: c.get_rope_original_max_seq_len(), lambda c, v: c.set_rope_original_max_seq_len(v))
        self.check(config, "dim", 3,
                   lambda c: c.get_dim(), lambda c, v: c.set_dim(v))
        self.check(config, "dtype", Hp.DType.FLOAT64,
                   lambda c: c.get_dtype(), lambda c, v: c.set_dtype(v))
        self.check(config, "inner_attention", Hp.SDPAConfig(causal=False),
                   lambda c: c.get_inner_attention(), lambda c, v: c.set_inner_attention(v))
        self.check(config, "max_seq_len", 3,
                   lambda c: c.get_max_seq_len(), lambda c, v: c.set_max_seq_len(v))
        self.check(config, "n_heads", 3,
                   lambda c: c.get_n_heads(), lambda c, v: c.set_n_heads(v))
        self.check(config, "rope", Hp.RotaryEmbeddingConfig(),
                   lambda c: c.get_rope(), lambda c, v: c.set_rope(v))
        self.check(config, "rope_theta", 500000.0,
                   lambda c: c.get_rope_theta(), lambda c, v: c.set_rope_theta(v))
        self.check(config, "wk", Hp.LinearConfig(in_features=2),
                   lambda c: c.get_wk(), lambda c, v: c.set_wk(v))
        self.check(config, "wo", Hp.LinearConfig(in_features=2),
                   lambda c: c.get_wo(), lambda c, v: c.set_wo(v))
        self.check(config, "wq", Hp.LinearConfig(in_features=2),
                   lambda c: c.get_wq(), lambda c, v: c.set_wq(v))
        self.check(config, "wv", Hp.LinearConfig(in_features=2),
                   lambda c: c.get_wv(), lambda c, v: c.set_wv(v))

    def test_transformer_block_config(self):
        config = Hp.TransformerBlockConfig()
        self.check(config, "attention", Hp.GQAttentionConfig(),
                   lambda c: c.get_attention(), lambda c, v: c.set_attention(v))
        self.check(config, "attention_norm", Hp.RMSNormConfig(),
                   lambda c: c.get_attention_norm(), lambda c, v: c.set_attention_norm(v))
        self.check(config, "feed_forward", Hp.FeedForwardConfig(),
                   lambda c: c.get_feed_forward(), lambda c, v: c.set_feed_forward(v))
        self.check(config, "ffn_norm", Hp.RMSNormConfig(),
                   lambda c: c.get_ffn_norm(), lambda c, v: c.set_ffn_norm(v))

    def test_decoder_config(self):
        config = Hp.DecoderConfig()
        self.check(config, "activation_checkpointing", Hp.ActivationCheckpointing.EVERY_K,
                   lambda c: c.get_activation_checkpointing(),
                   lambda c, v: c.set_activation_checkpointing(v))
        self.check(config, "ac_every", 3,
                   lambda c: c.get_ac_every(), lambda c, v: c.set_ac_every(v))
        self.check(config, "attention_bias", True,
                   lambda c: c.get_attention_bias(), lambda c, v: c.set_attention_bias(v))
        self.check(config, "head_dim", 6,
                   lambda c: c.get_head_dim(), lambda c, v: c.set_head_dim(v))
        self.check(config, "rope_scaling", Hp.RopeScaling.LLAMA3,
                   lambda c: c.get_rope_scaling(), lambda c, v: c.set_rope_scaling(v))
        self.check(config, "rope_scaling_factor", 0.5,
                   lambda c: c.get_rope_scaling_factor(), lambda c, v: c.set_rope_scaling_factor(v))
        self.check(config, "rope_low_freq_factor", 0.5,
                   lambda c: c.get_rope_low_freq_factor(), lambda c, v: c.set_rope_low_freq_factor(v))
        self.check(config, "rope_high_freq_factor", 0.5,
                   lambda c: c.get_rope_high_freq_factor(), lambda c, v: c.set_rope_high_freq_factor(v))
        self.check(config, "rope_original_max_seq_len", 3,
                   lambda c: c.get_rope_original_max_seq_len(), lambda c, v: c.set_rope_original_max_seq_len(v))
        self.check(config, "dim", 3,
                   lambda c: c.get_dim(), lambda c, v: c.set_dim(v))
        self.check(config, "dtype", Hp.DType.FLOAT64,
                   lambda c: c.get_dtype(), lambda c, v: c.set_dtype(v))
        self.check(config, "ffn_hidden", 3,
                   lambda c: c.get_ffn_hidden(), lambda c, v: c.set_ffn_hidden(v))
        self.check(config, "layers", Hp.ConfigList(),
                   lambda c: c.get_layers(), lambda c, v: c.set_layers(v))
        self.check(config, "lm_head", Hp.LinearConfig(in_features=2),
                   lambda c: c.get_lm_head(), lambda c, v: c.set_lm_head(v))
        self.check(config, "loss_parallel", False,
                   lambda c: c.get_loss_parallel(), lambda c, v: c.set_loss_parallel(v))
        self.check(config, "max_seq_len", 3,
                   lambda c: c.get_max_seq_len(), lambda c, v: c.set_max_seq_len(v))
        self.check(config, "n_heads", 3,
                   lambda c: c.get_n_heads(), lambda c, v: c.set_n_heads(v))
        self.check(config, "n_kv_heads", 3,
                   lambda c: c.get_n_kv_heads(), lambda c, v: c.set_n_kv_heads(v))
        self.check(config, "n_layers", 3,
                   lambda c: c.get_n_layers(), lambda c, v: c.set_n_layers(v))
        self.check(config, "norm", Hp.RMSNormConfig(),
                   lambda c: c.get_norm(), lambda c, v: c.set_norm(v))
        self.check(config, "norm_eps", 0.5,
                   lambda c: c.get_norm_eps(), lambda c, v: c.set_norm_eps(v))
        self.check(config, "rope_theta", 500000.0,
                   lambda c: c.get_rope_theta(), lambda c, v: c.set_rope_theta(v))
        self.check(config, "sequence_parallel", True,
                   lambda c: c.get_sequence_parallel(), lambda c, v: c.set_sequence_parallel(v))
        self.check(config, "tie_word_embeddings", True,
                   lambda c: c.get_tie_word_embeddings(), lambda c, v: c.set_tie_word_embeddings(v))
        self.check(config, "tok_embeddings", Hp.EmbeddingConfig(),
                   lambda c: c.get_tok_embeddings(), lambda c, v: c.set_tok_embeddings(v))
        self.check(config, "vocab_size", 3,
                   lambda c: c.get_vocab_size(), lambda c, v: c.set_vocab_size(v))

    def test_optimizer_config(self):
        config = Hp.AdamWConfig()
        self.check(config, "lr", 0.5,
                   lambda c: c.get_lr(), lambda c, v: c.set_lr(v))
        self.check(config, "weight_decay", 0.5,
                   lambda c: c.get_weight_decay(), lambda c, v: c.set_weight_decay(v))

    def test_sgd_config(self):
        config = Hp.SGDConfig()
        self.check(config, "dampening", 0.5,
                   lambda c: c.get_dampening(), lambda c, v: c.set_dampening(v))
        self.check(config, "momentum", 0.5,
                   lambda c: c.get_momentum(), lambda c, v: c.set_momentum(v))
        self.check(config, "nesterov", True,
                   lambda c: c.get_nesterov(), lambda c, v: c.set_nesterov(v))

    def test_adamw_config(self):
        config = Hp.AdamWConfig()
        self.check(config, "beta1", 0.5,
                   lambda c: c.get_beta1(), lambda c, v: c.set_beta1(v))
        self.check(config, "beta2", 0.5,
                   lambda c: c.get_beta2(), lambda c, v: c.set_beta2(v))
        self.check(config, "eps", 0.5,
                   lambda c: c.get_eps(), lambda c, v: c.set_eps(v))

    def test_module_config(self):
        config = Hp.LinearConfig()
        self.check(config, "param_init", Hp.ParamInit.new_from_string("weight=ones"),
                   lambda c: c.get_param_init(), lambda c, v: c.set_param_init(v))
        self.check(config, "sharding_config", Hp.ShardingConfig.new(),
                   lambda c: c.get_sharding_config(), lambda c, v: c.set_sharding_config(v))

    def test_parallel_dims(self):
        config = Hp.ParallelDims()
        self.check(config, "cp", 3,
                   lambda c: c.get_cp(), lambda c, v: c.set_cp(v))
        self.check(config, "dp_replicate", 3,
                   lambda c: c.get_dp_replicate(), lambda c, v: c.set_dp_replicate(v))
        self.check(config, "dp_shard", 3,
                   lambda c: c.get_dp_shard(), lambda c, v: c.set_dp_shard(v))
        self.check(config, "ep", 3,
                   lambda c: c.get_ep(), lambda c, v: c.set_ep(v))
        self.check(config, "pp", 3,
                   lambda c: c.get_pp(), lambda c, v: c.set_pp(v))
        self.check(config, "tp", 3,
                   lambda c: c.get_tp(), lambda c, v: c.set_tp(v))


    def test_derived_getter(self):
        """get_n_kv_heads is the source's own: the heads the module has"""
        config = Hp.GQAttentionConfig(n_heads=4)
        config.set_n_kv_heads(0)
        self.assertEqual((config.n_kv_heads, config.get_n_kv_heads()), (0, 4))

    def test_derived_head_dim(self):
        """get_head_dim of the attention is the source's own: the head dim in use"""
        config = Hp.GQAttentionConfig(dim=24, n_heads=4)
        self.assertEqual((config.head_dim, config.get_head_dim()), (0, 6))
        config.set_head_dim(10)
        self.assertEqual((config.head_dim, config.get_head_dim()), (10, 10))


if __name__ == "__main__":
    unittest.main(verbosity=2)
