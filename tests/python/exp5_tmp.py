from hptest import Hp, from_numpy, GObject
import numpy as np
F = Hp.DType.FLOAT64
for cfg in (Hp.LinearConfig.new(3, 2), Hp.EmbeddingConfig.new(5, 3), Hp.RMSNormConfig.new(4), Hp.FeedForwardConfig.new(4, 6),
            Hp.RotaryEmbeddingConfig.new(), Hp.SDPAConfig.new(), Hp.GQAttentionConfig.new(), Hp.DecoderConfig.new()):
    print(repr(cfg))
    try:
        m = cfg.build()
        print("  ", type(m).__name__, m.get_forward_arg_names(), m.named_parameters().get_names(), m.named_buffers().get_names(), m.get_child_names())
    except Exception as e: print("  build error", e)
print(Hp.sharding_colwise(), Hp.sharding_rowwise(True), Hp.sharding_colwise_with_bias(), Hp.sharding_rowwise_with_bias(False), Hp.sharding_embedding(True), Hp.sharding_norm(True))
f = Hp.FeedForwardConfig.new(4, 6); Hp.set_dense_ffn_sharding(f, False); print(repr(f))
g = Hp.GQAttentionConfig.new(); print(g.fill_children()); print(repr(g))
print(Hp.set_gqa_attention_sharding(g, False)); print(repr(g.get_inner_attention()))
s = Hp.SDPAConfig.new(); Hp.set_gqa_inner_attention_local_map(s, True); print(repr(s))
d = Hp.DecoderConfig(dim=8, n_layers=1, n_heads=2, n_kv_heads=1, vocab_size=11, ffn_hidden=12, max_seq_len=16, dtype=F)
print(d.expand(), d.get_ffn_hidden_size(), d.get_vocab_size()); print(repr(d)[:2000])
print(repr(Hp.TransformerBlockConfig.new(Hp.GQAttentionConfig.new(), Hp.FeedForwardConfig.new(4,6), Hp.RMSNormConfig.new(4), Hp.RMSNormConfig.new(4))))
p = Hp.ParallelDims(dp_shard=-1, tp=2); print(repr(p)); r = p.resolve(4); print(repr(r), r.get_dp_shard(), r.get_fsdp_enabled(), r.get_non_data_parallel_size(), r.get_world_size())
print(repr(Hp.AdamWConfig.new()), repr(Hp.SGDConfig.new()))
