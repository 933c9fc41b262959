/* hp-module-private.h: the state of a module, shared by the files that
 * implement it
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "hp-module.h"

G_BEGIN_DECLS

typedef struct
{
  gchar *name;
  HpTensor *tensor;
  gboolean persistent;
} HpModuleStateEntry;

typedef struct
{
  gchar *name;
  HpModule *module;
} HpModuleChildEntry;

typedef struct
{
  HpModule *module;               /* the owner, which the callable does not own */
  HpModuleCallableFunc func;
  gpointer user_data;
  GDestroyNotify destroy;
  HpLocalMap *mapped;
} HpModuleCallable;

typedef struct
{
  GPtrArray *parameters;          /* HpModuleStateEntry */
  GPtrArray *buffers;             /* HpModuleStateEntry */
  GPtrArray *children;            /* HpModuleChildEntry */
  GHashTable *callables;          /* name -> HpModuleCallable */

  HpParamInit *param_init;
  HpShardingConfig *sharding_config;

  GStrv forward_arg_names;        /* an instance's own, or NULL for its class's */

  /* set by hp_module_parallelize() */
  HpDeviceMesh *mesh;
  GHashTable *in_src;             /* argument name -> placements */
  GHashTable *in_dst;
  GPtrArray *out_src;             /* per output: placements or NULL */
  GPtrArray *out_dst;

  /* a forward-pre handler's failure, which hp_module_call() returns */
  GError *forward_pre_error;
} HpModulePrivate;

HpModulePrivate    *_hp_module_get_private       (HpModule      *self);
const gchar        *_hp_module_type_name         (gpointer       instance);
void                _hp_module_fail_forward      (HpModule      *self,
                                                  GError        *error);
void                _hp_module_placements_free   (gpointer       placements);
HpModuleStateEntry *_hp_module_lookup_state      (HpModule      *self,
                                                  const gchar   *path,
                                                  gboolean       buffer);
HpModuleCallable   *_hp_module_lookup_callable   (HpModule      *self,
                                                  const gchar   *path);
void                _hp_module_emit_parallelized (HpModule      *self);
gboolean            _hp_module_is_embedding      (HpModule      *self);

/* hp-module-parallelize.c */
GPtrArray          *_hp_module_shard_inputs      (HpModule      *self,
                                                  GPtrArray     *args,
                                                  GError       **error);
GPtrArray          *_hp_module_shard_outputs     (HpModule      *self,
                                                  GPtrArray     *outputs,
                                                  GError       **error);

/* hp-module-checkpoint.c */
GPtrArray          *_hp_module_call_checkpointed (HpModule      *self,
                                                  GPtrArray     *args,
                                                  GError       **error);

G_END_DECLS
