/* hp-protocols.h: umbrella header of hp-protocols
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#define HP_PROTOCOLS_INSIDE

#include "hp-version-macros.h"
#include "hp-version.h"
#include "hp-enum-types.h"

#include "hp-error.h"
#include "hp-grad-mode.h"
#include "hp-init.h"

#include "hp-dtype.h"
#include "hp-tensor.h"
#include "hp-tensor-ops.h"

#include "hp-device-mesh.h"
#include "hp-placement.h"
#include "hp-shard.h"
#include "hp-replicate.h"
#include "hp-partial.h"
#include "hp-dtensor.h"
#include "hp-pipeline-schedule.h"
#include "hp-local-map.h"

#include "hp-mesh-axis-name.h"
#include "hp-named-placement.h"
#include "hp-config.h"
#include "hp-config-field.h"
#include "hp-config-list.h"
#include "hp-configurable.h"
#include "hp-initializer.h"
#include "hp-param-init.h"
#include "hp-local-map-config.h"
#include "hp-sharding-config.h"
#include "hp-state-dict.h"

#include "hp-module-config.h"
#include "hp-module.h"
#include "hp-module-list.h"
#include "hp-sequential.h"
#include "hp-module-dict.h"
#include "hp-function-module.h"
#include "hp-base-model-config.h"
#include "hp-base-model.h"

#include "hp-model-config-converter.h"
#include "hp-state-dict-adapter.h"
#include "hp-parallel-dims.h"
#include "hp-model-spec.h"
#include "hp-config-tool.h"

/* nn: basic layers and tensor-parallel styles */
#include "hp-linear.h"
#include "hp-embedding.h"
#include "hp-rms-norm.h"
#include "hp-feed-forward.h"
#include "hp-decoder-sharding.h"

/* nn: attention */
#include "hp-rotary-embedding.h"
#include "hp-sdpa.h"
#include "hp-gq-attention.h"
#include "hp-attention-sharding.h"

/* nn: decoder */
#include "hp-transformer-block.h"
#include "hp-decoder.h"
#include "hp-kv-cache.h"
#include "hp-generator.h"
#include "hp-data-parallel.h"

/* nn: optimizers */
#include "hp-optimizer-config.h"
#include "hp-optimizer.h"
#include "hp-sgd-config.h"
#include "hp-sgd.h"
#include "hp-adamw-config.h"
#include "hp-adamw.h"
#include "hp-clip-grad.h"

/* io: safetensors */
#include "hp-safetensors-file.h"
#include "hp-checkpoint-manager.h"
#include "hp-checkpoint-step.h"
#include "hp-safetensors-checkpoint.h"
#include "hp-safetensors.h"

/* io: checkpoints of models */
#include "hp-base-state-dict-adapter.h"
#include "hp-decoder-state-dict-adapter.h"
#include "hp-model-source.h"

/* io: tokens for training */
#include "hp-byte-tokenizer.h"
#include "hp-token-dataset.h"
#include "hp-token-loader.h"

#undef HP_PROTOCOLS_INSIDE
