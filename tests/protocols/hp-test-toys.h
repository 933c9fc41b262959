/* hp-test-toys.h: small module classes the protocol tests build
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <hp-protocols/hp-protocols.h>

G_BEGIN_DECLS

/* y = x W^T (+ b); W [out-features, in-features] float64, b optional */
#define HP_TYPE_TOY_LINEAR_CONFIG (hp_toy_linear_config_get_type ())
G_DECLARE_FINAL_TYPE (HpToyLinearConfig, hp_toy_linear_config, HP, TOY_LINEAR_CONFIG, HpModuleConfig)

#define HP_TYPE_TOY_LINEAR (hp_toy_linear_get_type ())
G_DECLARE_FINAL_TYPE (HpToyLinear, hp_toy_linear, HP, TOY_LINEAR, HpModule)

/* How often reset_parameters ran on this instance */
guint hp_toy_linear_get_reset_count (HpToyLinear *self);

/* An embedding table: weight [vocab, dim]; marked as embedding */
#define HP_TYPE_TOY_EMBEDDING (hp_toy_embedding_get_type ())
G_DECLARE_FINAL_TYPE (HpToyEmbedding, hp_toy_embedding, HP, TOY_EMBEDDING, HpModule)

HpToyEmbedding *hp_toy_embedding_new (gint64 vocab,
                                      gint64 dim);

/* Buffers: persistent "table" = arange (6) * (number of init calls),
 * computed by init_self_buffers; non-persistent "scratch" */
#define HP_TYPE_TOY_BUFFERED (hp_toy_buffered_get_type ())
G_DECLARE_FINAL_TYPE (HpToyBuffered, hp_toy_buffered, HP, TOY_BUFFERED, HpModule)

HpToyBuffered *hp_toy_buffered_new (void);

/* A parameter and no way to initialise it */
#define HP_TYPE_TOY_NO_INIT (hp_toy_no_init_get_type ())
G_DECLARE_FINAL_TYPE (HpToyNoInit, hp_toy_no_init, HP, TOY_NO_INIT, HpModule)

HpToyNoInit *hp_toy_no_init_new (void);

/* Forward runs its registered callable "inner" (softmax over the last
 * dim) on its one argument, which its class names "x" */
#define HP_TYPE_TOY_INNER (hp_toy_inner_get_type ())
G_DECLARE_FINAL_TYPE (HpToyInner, hp_toy_inner, HP, TOY_INNER, HpModule)

HpToyInner *hp_toy_inner_new      (HpModuleConfig *config);
guint       hp_toy_inner_get_inner_calls (HpToyInner *self);

/* A model: "embed" (HpToyEmbedding vocab x dim), "layers" (a list of
 * n-layers HpToyLinear dim -> dim with bias); forward takes ids. Its
 * update_from_config takes a HpParallelDims whose tp divides n-heads. */
#define HP_TYPE_TOY_MODEL_CONFIG (hp_toy_model_config_get_type ())
G_DECLARE_FINAL_TYPE (HpToyModelConfig, hp_toy_model_config, HP, TOY_MODEL_CONFIG, HpBaseModelConfig)

#define HP_TYPE_TOY_MODEL (hp_toy_model_get_type ())
G_DECLARE_FINAL_TYPE (HpToyModel, hp_toy_model, HP, TOY_MODEL, HpBaseModel)

/* Text that describes everything of a module tree the protocol
 * functions may change, module by module (depth first, a shared module
 * once): its type, the names of its children, its parameters and
 * buffers (name, the tensor object, dtype, shape, placements,
 * requires-grad, gradient object, a checksum of the local values), its
 * mesh, sharding configuration and param init. Equal texts before and
 * after a call that failed mean the call changed nothing. */
gchar *hp_test_module_snapshot (HpModule *module);

/* The same for a state dict: names, tensor objects and checksums of
 * their local values */
gchar *hp_test_state_dict_snapshot (HpStateDict *state_dict);

G_END_DECLS
