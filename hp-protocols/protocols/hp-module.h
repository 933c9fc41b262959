/* hp-module.h: configurable modules with parameters, buffers and children
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-protocols.h> can be included directly."
#endif

#include "hp-configurable.h"
#include "hp-device-mesh.h"
#include "hp-local-map.h"
#include "hp-module-config.h"
#include "hp-state-dict.h"
#include "hp-tensor.h"
#include "hp-version-macros.h"

G_BEGIN_DECLS

#define HP_TYPE_MODULE (hp_module_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_DERIVABLE_TYPE (HpModule, hp_module, HP, MODULE, HpConfigurable)

/**
 * HpModuleCallableFunc:
 * @module: the module the callable is registered with
 * @args: (element-type HpTensor): the arguments; after
 *   [method@Hp.Module.parallelize] with a local map, the local shards of
 *   the DTensor arguments
 * @user_data: (closure): the data given to
 *   [method@Hp.Module.register_callable]
 * @error: return location for a [struct@GLib.Error]
 *
 * An inner callable of a module. It gets the module it belongs to, so
 * that it needs no reference of its own to it: a callable written in a
 * language binding that held its module (a bound method, a closure over
 * `self` or `this`) would keep the module alive for good, through the
 * module that holds the callable.
 *
 * Returns: (transfer full) (element-type HpTensor) (nullable): a new
 *   array holding a new reference to each output, or %NULL with @error
 *   set
 *
 * Since: 1.0
 */
typedef GPtrArray *(*HpModuleCallableFunc) (HpModule   *module,
                                            GPtrArray  *args,
                                            gpointer    user_data,
                                            GError    **error);

/**
 * HpModuleClass::init_self_buffers:
 *
 * Computes the module's own buffers
 *
 * Since: 1.0
 */

/**
 * HpModuleClass::reset_parameters:
 *
 * Gives the module's own parameters their first values when the module has no
 * [class@Hp.ParamInit]; @seed is different for every module of a tree and the
 * same on every rank (derive one per parameter with
 * [func@Hp.Module.derive_seed])
 *
 * Since: 1.0
 */

/**
 * HpModuleClass:
 * @parent_class: the parent class
 * @forward: computes the outputs from the arguments, the `forward` of a
 *   PyTorch module; [method@Hp.Module.call] calls it between the
 *   redistributions a sharding configuration asks for (see
 *   [vfunc@Hp.Module.forward] for what it owns and returns)
 * @reset_parameters: gives the module's own parameters their first
 *   values when the module has no [class@Hp.ParamInit]; @seed is
 *   different for every module of a tree and the same on every rank
 *   (derive one per parameter with [func@Hp.Module.derive_seed])
 * @init_self_buffers: computes the module's own buffers
 *
 * The class of modules. A subclass implements @forward and, when it has
 * parameters, @reset_parameters or an initialiser per parameter in its
 * configuration's [class@Hp.ParamInit]; it names its forward arguments
 * with [func@Hp.Module.type_set_forward_arg_names].
 *
 * Since: 1.0
 */
struct _HpModuleClass
{
  HpConfigurableClass parent_class;

  GPtrArray *(*forward)               (HpModule   *self,
                                       GPtrArray  *args,
                                       GError    **error);
  gboolean   (*reset_parameters)      (HpModule   *self,
                                       guint64     seed,
                                       GError    **error);
  gboolean   (*init_self_buffers)     (HpModule   *self,
                                       GError    **error);

  /*< private >*/
  gpointer padding[13];
};

HP_AVAILABLE_IN_ALL
void              hp_module_type_set_forward_arg_names  (GType                module_type,
                                                         const gchar * const *names);
HP_AVAILABLE_IN_ALL
void              hp_module_type_set_embedding          (GType                module_type,
                                                         gboolean             embedding);

HP_AVAILABLE_IN_ALL
HpModule         *hp_module_new                         (void);
HP_AVAILABLE_IN_ALL
guint64           hp_module_derive_seed                 (guint64              seed,
                                                         const gchar         *name);

HP_AVAILABLE_IN_ALL
gboolean          hp_module_register_parameter          (HpModule            *self,
                                                         const gchar         *name,
                                                         HpTensor            *tensor,
                                                         GError             **error);
HP_AVAILABLE_IN_ALL
gboolean          hp_module_register_buffer             (HpModule            *self,
                                                         const gchar         *name,
                                                         HpTensor            *tensor,
                                                         gboolean             persistent,
                                                         GError             **error);
HP_AVAILABLE_IN_ALL
gboolean          hp_module_add_child                   (HpModule            *self,
                                                         const gchar         *name,
                                                         HpModule            *child,
                                                         GError             **error);

HP_AVAILABLE_IN_ALL
gboolean          hp_module_remove_child                (HpModule            *self,
                                                         const gchar         *name);
HP_AVAILABLE_IN_ALL
HpTensor         *hp_module_get_parameter               (HpModule            *self,
                                                         const gchar         *path);
HP_AVAILABLE_IN_ALL
HpTensor         *hp_module_get_buffer                  (HpModule            *self,
                                                         const gchar         *path);
HP_AVAILABLE_IN_ALL
gboolean          hp_module_buffer_is_persistent        (HpModule            *self,
                                                         const gchar         *path);
HP_AVAILABLE_IN_ALL
HpModule         *hp_module_get_child                   (HpModule            *self,
                                                         const gchar         *path);
HP_AVAILABLE_IN_ALL
GStrv             hp_module_get_parameter_names         (HpModule            *self);
HP_AVAILABLE_IN_ALL
GStrv             hp_module_get_buffer_names            (HpModule            *self);
HP_AVAILABLE_IN_ALL
GStrv             hp_module_get_child_names             (HpModule            *self);
HP_AVAILABLE_IN_ALL
HpStateDict      *hp_module_named_parameters            (HpModule            *self);
HP_AVAILABLE_IN_ALL
HpStateDict      *hp_module_named_buffers               (HpModule            *self);
HP_AVAILABLE_IN_ALL
GPtrArray        *hp_module_parameters                  (HpModule            *self);

HP_AVAILABLE_IN_ALL
HpParamInit      *hp_module_get_param_init              (HpModule            *self);
HP_AVAILABLE_IN_ALL
void              hp_module_set_param_init              (HpModule            *self,
                                                         HpParamInit         *param_init);
HP_AVAILABLE_IN_ALL
HpShardingConfig *hp_module_get_sharding_config         (HpModule            *self);
HP_AVAILABLE_IN_ALL
void              hp_module_set_sharding_config         (HpModule            *self,
                                                         HpShardingConfig    *sharding_config);

HP_AVAILABLE_IN_ALL
gboolean          hp_module_init_states                 (HpModule            *self,
                                                         guint64              seed,
                                                         GError             **error);
HP_AVAILABLE_IN_ALL
gboolean          hp_module_init_self_parameters        (HpModule            *self,
                                                         guint64              seed,
                                                         GError             **error);

HP_AVAILABLE_IN_ALL
const gchar * const *hp_module_get_forward_arg_names    (HpModule            *self);

HP_AVAILABLE_IN_ALL
void              hp_module_register_callable           (HpModule            *self,
                                                         const gchar         *name,
                                                         HpModuleCallableFunc func,
                                                         gpointer             user_data,
                                                         GDestroyNotify       destroy);
HP_AVAILABLE_IN_ALL
gboolean          hp_module_has_callable                (HpModule            *self,
                                                         const gchar         *path);
HP_AVAILABLE_IN_ALL
gboolean          hp_module_callable_is_local_mapped    (HpModule            *self,
                                                         const gchar         *path);
HP_AVAILABLE_IN_ALL
GPtrArray        *hp_module_run_callable                        (HpModule            *self,
                                                         const gchar         *path,
                                                         GPtrArray           *args,
                                                         GError             **error);

HP_AVAILABLE_IN_ALL
GPtrArray        *hp_module_call                     (HpModule            *self,
                                                         GPtrArray           *args,
                                                         GError             **error);
HP_AVAILABLE_IN_ALL
HpTensor         *hp_module_call1                    (HpModule            *self,
                                                         HpTensor            *input,
                                                         GError             **error);

HP_AVAILABLE_IN_ALL
HpStateDict      *hp_module_state_dict                  (HpModule            *self);
HP_AVAILABLE_IN_ALL
gboolean          hp_module_load_state_dict             (HpModule            *self,
                                                         HpStateDict         *state_dict,
                                                         gboolean             strict,
                                                         GError             **error);

HP_AVAILABLE_IN_ALL
gboolean          hp_module_parallelize                 (HpModule            *self,
                                                         HpDeviceMesh        *mesh,
                                                         GError             **error);
HP_AVAILABLE_IN_ALL
gboolean          hp_module_fully_shard                 (HpModule            *self,
                                                         HpDeviceMesh        *mesh,
                                                         gboolean             reshard_after_forward,
                                                         GError             **error);
HP_AVAILABLE_IN_ALL
guint             hp_module_set_fsdp_prefetch           (HpModule            *self,
                                                         gboolean             prefetch);
HP_AVAILABLE_IN_ALL
HpDeviceMesh     *hp_module_get_mesh                    (HpModule            *self);

G_END_DECLS
