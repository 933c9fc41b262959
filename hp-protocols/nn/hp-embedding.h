/* hp-embedding.h: a table of embedding vectors looked up by id
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-protocols.h> can be included directly."
#endif

#include "hp-dtype.h"
#include "hp-module.h"
#include "hp-module-config.h"
#include "hp-version-macros.h"

G_BEGIN_DECLS

#define HP_TYPE_EMBEDDING_CONFIG (hp_embedding_config_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (HpEmbeddingConfig, hp_embedding_config, HP, EMBEDDING_CONFIG, HpModuleConfig)

#define HP_TYPE_EMBEDDING (hp_embedding_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (HpEmbedding, hp_embedding, HP, EMBEDDING, HpModule)

HP_AVAILABLE_IN_ALL
HpEmbeddingConfig *hp_embedding_config_new                    (gint                num_embeddings,
                                                               gint                embedding_dim);

HP_AVAILABLE_IN_ALL
HpEmbedding       *hp_embedding_new                           (HpEmbeddingConfig  *config,
                                                               GError            **error);

G_END_DECLS

#include "hp-embedding-fields.h"
