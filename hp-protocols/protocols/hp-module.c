/* hp-module.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include <gio/gio.h>

#include "hp-dtensor-private.h"
#include "hp-dtensor.h"
#include "hp-error.h"
#include "hp-grad-mode.h"
#include "hp-module.h"
#include "hp-module-private.h"
#include "hp-tensor-private.h"

/**
 * HpModule:
 *
 * A building block of a model, built from a [class@Hp.ModuleConfig]: named
 * parameters and buffers, ordered named children, named inner
 * callables, and a [vfunc@Hp.Module.forward] that computes outputs from
 * tensors.
 *
 * This is the `Module` of the torchtitan protocols. Parameters and
 * buffers are registered by name ([method@Hp.Module.register_parameter],
 * [method@Hp.Module.register_buffer]), children by name
 * ([method@Hp.Module.add_child]); all three are found by dotted paths such as
 * `layers.0.attention.wq.weight`.
 *
 * [method@Hp.Module.init_states] gives every parameter of the tree its first
 * values, children first: each parameter named in the module's
 * [class@Hp.ParamInit] gets that initialiser, otherwise the module's
 * [vfunc@Hp.Module.reset_parameters] runs; then
 * [vfunc@Hp.Module.init_self_buffers] computes the buffers. Random
 * initialisers draw from a counter-based generator keyed by a seed
 * derived from the root seed and the path of the parameter
 * ([func@Hp.Module.derive_seed]), so the values are the same on every rank
 * and for every layout: a sharded parameter gets exactly its slice of
 * the unsharded values.
 *
 * [method@Hp.Module.parallelize] lays the tree out over a device mesh as the
 * modules' [class@Hp.ShardingConfig] say: states named in `state_shardings`
 * become DTensors, forward arguments and outputs are converted and
 * redistributed by [method@Hp.Module.call], and the inner callable named by
 * the [class@Hp.LocalMapConfig] runs on local shards through a [class@Hp.LocalMap].
 *
 * Subclasses implement [vfunc@Hp.Module.forward] in every language the
 * same way: [vfunc@Hp.Module.forward] in C, `do_forward` in Python (or
 * `forward (self, x, ...)` through the override), `vfunc_forward` in
 * gjs, `public override ... forward (...)` in Vala. The names of the
 * forward arguments, which the input shardings refer to, belong to the
 * class ([func@Hp.Module.type_set_forward_arg_names]); the Python
 * override reads them from the signature of `forward`.
 *
 * Since: 1.0
 */

/* What a module class declares once for all its instances; a subclass
 * starts with a copy of its parent's (GType copies class private data) */
typedef struct
{
  GStrv forward_arg_names;        /* NULL: ["input"] */
  GType forward_arg_names_owner;  /* the type that set them */
  gboolean embedding;
} HpModuleClassPrivate;

G_DEFINE_TYPE_WITH_CODE (HpModule, hp_module, HP_TYPE_CONFIGURABLE,
                         G_ADD_PRIVATE (HpModule)
                         g_type_add_class_private (g_define_type_id,
                                                   sizeof (HpModuleClassPrivate)))

#define HP_MODULE_CLASS_PRIVATE(klass) \
  G_TYPE_CLASS_GET_PRIVATE ((klass), HP_TYPE_MODULE, HpModuleClassPrivate)

enum {
  PROP_0,
  PROP_PARAM_INIT,
  PROP_SHARDING_CONFIG,
  PROP_MESH,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

enum {
  SIGNAL_FORWARD_PRE,
  SIGNAL_FORWARD_POST,
  SIGNAL_PARALLELIZED,
  SIGNAL_STATES_INITIALIZED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

static void
state_entry_free (gpointer data)
{
  HpModuleStateEntry *entry = data;

  g_free (entry->name);
  g_object_unref (entry->tensor);
  g_free (entry);
}

static void
child_entry_free (gpointer data)
{
  HpModuleChildEntry *entry = data;

  g_free (entry->name);
  g_object_unref (entry->module);
  g_free (entry);
}

static void
callable_free (gpointer data)
{
  HpModuleCallable *callable = data;

  if (callable->destroy != NULL)
    callable->destroy (callable->user_data);
  g_clear_object (&callable->mapped);
  g_free (callable);
}

void
_hp_module_placements_free (gpointer placements)
{
  if (placements != NULL)
    g_ptr_array_unref (placements);
}

HpModulePrivate *
_hp_module_get_private (HpModule *self)
{
  return hp_module_get_instance_private (self);
}

const gchar *
_hp_module_type_name (gpointer instance)
{
  return G_OBJECT_TYPE_NAME (instance);
}

/* In constructed rather than setup: a binding's setup that forgets to
 * chain up must not lose the initialisers and the layout */
static void
hp_module_constructed (GObject *object)
{
  HpModule *self = HP_MODULE (object);
  HpModulePrivate *priv = _hp_module_get_private (self);
  HpConfig *config;

  G_OBJECT_CLASS (hp_module_parent_class)->constructed (object);

  config = hp_configurable_get_config (HP_CONFIGURABLE (self));
  if (HP_IS_MODULE_CONFIG (config))
    {
      HpModuleConfig *module_config = HP_MODULE_CONFIG (config);

      g_set_object (&priv->param_init, hp_module_config_get_param_init (module_config));
      g_set_object (&priv->sharding_config,
                    hp_module_config_get_sharding_config (module_config));
    }
}

static void
hp_module_dispose (GObject *object)
{
  HpModulePrivate *priv = _hp_module_get_private (HP_MODULE (object));

  g_ptr_array_set_size (priv->children, 0);
  g_ptr_array_set_size (priv->parameters, 0);
  g_ptr_array_set_size (priv->buffers, 0);
  g_hash_table_remove_all (priv->callables);
  g_clear_object (&priv->param_init);
  g_clear_object (&priv->sharding_config);
  g_clear_object (&priv->mesh);

  G_OBJECT_CLASS (hp_module_parent_class)->dispose (object);
}

static void
hp_module_finalize (GObject *object)
{
  HpModulePrivate *priv = _hp_module_get_private (HP_MODULE (object));

  g_ptr_array_unref (priv->children);
  g_ptr_array_unref (priv->parameters);
  g_ptr_array_unref (priv->buffers);
  g_hash_table_unref (priv->callables);
  g_strfreev (priv->forward_arg_names);
  g_clear_pointer (&priv->in_src, g_hash_table_unref);
  g_clear_pointer (&priv->in_dst, g_hash_table_unref);
  g_clear_pointer (&priv->out_src, g_ptr_array_unref);
  g_clear_pointer (&priv->out_dst, g_ptr_array_unref);
  g_clear_error (&priv->forward_pre_error);

  G_OBJECT_CLASS (hp_module_parent_class)->finalize (object);
}

static void
hp_module_get_property (GObject    *object,
                        guint       prop_id,
                        GValue     *value,
                        GParamSpec *pspec)
{
  HpModule *self = HP_MODULE (object);

  switch (prop_id)
    {
    case PROP_PARAM_INIT:
      g_value_set_object (value, hp_module_get_param_init (self));
      break;
    case PROP_SHARDING_CONFIG:
      g_value_set_object (value, hp_module_get_sharding_config (self));
      break;
    case PROP_MESH:
      g_value_set_object (value, hp_module_get_mesh (self));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
hp_module_set_property (GObject      *object,
                        guint         prop_id,
                        const GValue *value,
                        GParamSpec   *pspec)
{
  HpModule *self = HP_MODULE (object);

  switch (prop_id)
    {
    case PROP_PARAM_INIT:
      hp_module_set_param_init (self, g_value_get_object (value));
      break;
    case PROP_SHARDING_CONFIG:
      hp_module_set_sharding_config (self, g_value_get_object (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static GPtrArray *
hp_module_real_forward (HpModule   *self,
                        GPtrArray  *args,
                        GError    **error)
{
  g_set_error (error, HP_ERROR, HP_ERROR_NOT_SUPPORTED,
               "%s does not implement forward", _hp_module_type_name (self));
  return NULL;
}

/**
 * HpModuleClass::forward:
 * @self: the module
 * @args: (element-type HpTensor) (transfer none): the arguments, in the
 *   order of [method@Hp.Module.get_forward_arg_names], already laid out
 *   as the input shardings say; entries may be %NULL. The array and the
 *   tensors belong to the caller.
 * @error: return location for a [struct@GLib.Error]
 *
 * Computes the module's outputs: the `forward` of a PyTorch module.
 * [method@Hp.Module.call] calls it; call that, not this, to run a
 * module.
 *
 * The ownership contract, the same in every language: the arguments are
 * borrowed; the implementation returns a new array holding a new
 * reference to each output (entries may be %NULL). The array may have
 * [method@GObject.Object.unref] as its free function or none; the caller takes both
 * the array and the references. [method@Hp.Module.call] hands the
 * outputs on as an array that owns its tensors.
 *
 * Returns: (transfer full) (element-type HpTensor) (nullable): the
 *   outputs, or %NULL with @error set
 *
 * Since: 1.0
 */

static void
hp_module_class_init (HpModuleClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->constructed = hp_module_constructed;
  object_class->dispose = hp_module_dispose;
  object_class->finalize = hp_module_finalize;
  object_class->get_property = hp_module_get_property;
  object_class->set_property = hp_module_set_property;

  klass->forward = hp_module_real_forward;

  /**
   * HpModule:param-init:
   *
   * The initialiser of each own parameter by name, from the
   * configuration the module was built from.
   *
   * Since: 1.0
   */
  properties[PROP_PARAM_INIT] =
    g_param_spec_object ("param-init", NULL, NULL,
                         HP_TYPE_PARAM_INIT,
                         (G_PARAM_READWRITE |
                          G_PARAM_EXPLICIT_NOTIFY |
                          G_PARAM_STATIC_STRINGS));

  /**
   * HpModule:sharding-config:
   *
   * How [method@Hp.Module.parallelize] lays out the module's states, inputs
   * and outputs, from the configuration the module was built from.
   *
   * Since: 1.0
   */
  properties[PROP_SHARDING_CONFIG] =
    g_param_spec_object ("sharding-config", NULL, NULL,
                         HP_TYPE_SHARDING_CONFIG,
                         (G_PARAM_READWRITE |
                          G_PARAM_EXPLICIT_NOTIFY |
                          G_PARAM_STATIC_STRINGS));

  /**
   * HpModule:mesh:
   *
   * The device mesh the module was parallelized over, or %NULL.
   *
   * Since: 1.0
   */
  properties[PROP_MESH] =
    g_param_spec_object ("mesh", NULL, NULL,
                         HP_TYPE_DEVICE_MESH,
                         (G_PARAM_READABLE |
                          G_PARAM_EXPLICIT_NOTIFY |
                          G_PARAM_STATIC_STRINGS));

  g_object_class_install_properties (object_class, N_PROPS, properties);

  /**
   * HpModule::forward-pre:
   * @self: the module
   * @args: (element-type HpTensor): the arguments, as given to
   *   [method@Hp.Module.call]
   *
   * Emitted by [method@Hp.Module.call] before anything else.
   *
   * Since: 1.0
   */
  signals[SIGNAL_FORWARD_PRE] =
    g_signal_new ("forward-pre",
                  G_TYPE_FROM_CLASS (klass),
                  G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 1, G_TYPE_PTR_ARRAY);

  /**
   * HpModule::forward-post:
   * @self: the module
   * @args: (element-type HpTensor): the arguments, as given to
   *   [method@Hp.Module.call]
   * @outputs: (element-type HpTensor): the outputs [method@Hp.Module.call]
   *   returns
   *
   * Emitted by [method@Hp.Module.call] when the outputs are ready.
   *
   * Since: 1.0
   */
  signals[SIGNAL_FORWARD_POST] =
    g_signal_new ("forward-post",
                  G_TYPE_FROM_CLASS (klass),
                  G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 2, G_TYPE_PTR_ARRAY, G_TYPE_PTR_ARRAY);

  /**
   * HpModule::parallelized:
   * @self: the module
   * @mesh: the device mesh
   *
   * Emitted on every module of a tree once [method@Hp.Module.parallelize] has
   * laid the whole tree out over @mesh.
   *
   * Since: 1.0
   */
  signals[SIGNAL_PARALLELIZED] =
    g_signal_new ("parallelized",
                  G_TYPE_FROM_CLASS (klass),
                  G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 1, HP_TYPE_DEVICE_MESH);

  /**
   * HpModule::states-initialized:
   * @self: the module
   *
   * Emitted on every module of a tree when [method@Hp.Module.init_states] has
   * initialised its parameters and buffers.
   *
   * Since: 1.0
   */
  signals[SIGNAL_STATES_INITIALIZED] =
    g_signal_new ("states-initialized",
                  G_TYPE_FROM_CLASS (klass),
                  G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 0);
}

static void
hp_module_init (HpModule *self)
{
  HpModulePrivate *priv = _hp_module_get_private (self);

  priv->parameters = g_ptr_array_new_with_free_func (state_entry_free);
  priv->buffers = g_ptr_array_new_with_free_func (state_entry_free);
  priv->children = g_ptr_array_new_with_free_func (child_entry_free);
  priv->callables = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, callable_free);
}

/* The class of @module_type, which may be in its class_init */
static HpModuleClassPrivate *
module_type_private (GType      module_type,
                     gpointer  *klass)
{
  *klass = g_type_class_ref (module_type);
  return HP_MODULE_CLASS_PRIVATE (*klass);
}

/**
 * hp_module_type_set_forward_arg_names:
 * @module_type: a module type (a subtype of [class@Hp.Module])
 * @names: (array zero-terminated=1): the names of the forward
 *   arguments, in order
 *
 * Declares the names of the forward arguments of the modules of
 * @module_type, and of the subclasses made after this call that do not
 * declare their own. The input shardings of a [class@Hp.ShardingConfig]
 * refer to arguments by these names; without a declaration a module has
 * one argument, `input`.
 *
 * Call it from the class_init function in C
 * (`hp_module_type_set_forward_arg_names (G_TYPE_FROM_CLASS (klass), names)`),
 * from a static construct block in Vala, or right after registering the
 * class in gjs; the Python override calls it with the parameter names of
 * `forward`.
 *
 * Since: 1.0
 */
void
hp_module_type_set_forward_arg_names (GType                module_type,
                                      const gchar * const *names)
{
  HpModuleClassPrivate *priv;
  gpointer klass;

  g_return_if_fail (g_type_is_a (module_type, HP_TYPE_MODULE));
  g_return_if_fail (names != NULL);

  priv = module_type_private (module_type, &klass);
  /* names inherited from the parent class belong to the parent */
  if (priv->forward_arg_names_owner == module_type)
    g_strfreev (priv->forward_arg_names);
  priv->forward_arg_names = g_strdupv ((GStrv) names);
  priv->forward_arg_names_owner = module_type;
  g_type_class_unref (klass);
}

/**
 * hp_module_type_set_embedding:
 * @module_type: a module type (a subtype of [class@Hp.Module])
 * @embedding: whether the modules of @module_type are embedding tables
 *
 * Marks the modules of @module_type (and of the subclasses made after
 * this call) as embedding tables, whose parameters the default
 * [vfunc@Hp.BaseModelConfig.get_nparams_and_flops] leaves out of the
 * FLOP count: a lookup does no multiply-adds.
 *
 * Since: 1.0
 */
void
hp_module_type_set_embedding (GType    module_type,
                              gboolean embedding)
{
  gpointer klass;

  g_return_if_fail (g_type_is_a (module_type, HP_TYPE_MODULE));

  module_type_private (module_type, &klass)->embedding = embedding;
  g_type_class_unref (klass);
}

/* Whether @self is an embedding table, as its class says */
gboolean
_hp_module_is_embedding (HpModule *self)
{
  return HP_MODULE_CLASS_PRIVATE (HP_MODULE_GET_CLASS (self))->embedding;
}

/**
 * hp_module_new:
 *
 * Creates a module with nothing in it and no forward: a container to
 * which children, parameters and buffers are added.
 *
 * Returns: (transfer full): a new [class@Hp.Module]
 *
 * Since: 1.0
 */
HpModule *
hp_module_new (void)
{
  /* cannot fail: an empty configuration has nothing to set up */
  return g_initable_new (HP_TYPE_MODULE, NULL, NULL, NULL);
}

/**
 * hp_module_derive_seed:
 * @seed: a seed
 * @name: a name
 *
 * The seed of the part of a tree called @name, from the seed of the
 * whole: [method@Hp.Module.init_states] gives each child and each parameter
 * the seed derived from its module's seed and its own name. A
 * [vfunc@Hp.Module.reset_parameters] implementation uses it to give each
 * of its parameters a seed of its own.
 *
 * Returns: the derived seed
 *
 * Since: 1.0
 */
guint64
hp_module_derive_seed (guint64      seed,
                       const gchar *name)
{
  guint64 hash = G_GUINT64_CONSTANT (0xcbf29ce484222325);
  guint64 z;

  g_return_val_if_fail (name != NULL, seed);

  for (const guchar *p = (const guchar *) name; *p != '\0'; p++)
    {
      hash ^= *p;
      hash *= G_GUINT64_CONSTANT (0x100000001b3);
    }

  /* splitmix64 finaliser: nearby seeds and names give unrelated results */
  z = seed ^ hash;
  z += G_GUINT64_CONSTANT (0x9e3779b97f4a7c15);
  z = (z ^ (z >> 30)) * G_GUINT64_CONSTANT (0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * G_GUINT64_CONSTANT (0x94d049bb133111eb);
  return z ^ (z >> 31);
}

static HpModuleStateEntry *
find_state (GPtrArray   *entries,
            const gchar *name,
            guint       *index)
{
  for (guint i = 0; i < entries->len; i++)
    {
      HpModuleStateEntry *entry = g_ptr_array_index (entries, i);

      if (g_str_equal (entry->name, name))
        {
          if (index != NULL)
            *index = i;
          return entry;
        }
    }
  return NULL;
}

static HpModuleChildEntry *
find_child (HpModule    *self,
            const gchar *name)
{
  HpModulePrivate *priv = _hp_module_get_private (self);

  for (guint i = 0; i < priv->children->len; i++)
    {
      HpModuleChildEntry *entry = g_ptr_array_index (priv->children, i);

      if (g_str_equal (entry->name, name))
        return entry;
    }
  return NULL;
}

/* What @name already is in @self, or NULL */
static const gchar *
name_kind (HpModule    *self,
           const gchar *name)
{
  HpModulePrivate *priv = _hp_module_get_private (self);

  if (find_state (priv->parameters, name, NULL) != NULL)
    return "parameter";
  if (find_state (priv->buffers, name, NULL) != NULL)
    return "buffer";
  if (find_child (self, name) != NULL)
    return "child module";
  return NULL;
}

static gboolean
check_name (HpModule     *self,
            const gchar  *name,
            const gchar  *kind,
            GError      **error)
{
  const gchar *existing;

  if (name[0] == '\0' || strchr (name, '.') != NULL)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "%s: '%s' is not a valid %s name (empty or with a '.')",
                   _hp_module_type_name (self), name, kind);
      return FALSE;
    }
  existing = name_kind (self, name);
  if (existing != NULL && !g_str_equal (existing, kind))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "%s: cannot register %s '%s': the name is already a %s",
                   _hp_module_type_name (self), kind, name, existing);
      return FALSE;
    }
  return TRUE;
}

/* Puts @tensor under @name in @entries, in place of an entry of that
 * name (keeping its position) or at the end */
static void
store_state (GPtrArray   *entries,
             const gchar *name,
             HpTensor    *tensor,
             gboolean     persistent)
{
  HpModuleStateEntry *entry = find_state (entries, name, NULL);

  if (entry == NULL)
    {
      entry = g_new0 (HpModuleStateEntry, 1);
      entry->name = g_strdup (name);
      g_ptr_array_add (entries, entry);
    }
  g_set_object (&entry->tensor, tensor);
  entry->persistent = persistent;
}

/**
 * hp_module_register_parameter:
 * @self: a [class@Hp.Module]
 * @name: the parameter's name, without dots
 * @tensor: a floating-point leaf tensor (plain or DTensor)
 * @error: return location for a [struct@GLib.Error]
 *
 * Registers @tensor as the parameter @name of @self and makes it
 * require gradients. A parameter of that name is replaced, keeping its
 * position in the registration order.
 *
 * Returns: %TRUE, or %FALSE with [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] when @name
 *   is empty, has a dot or is a buffer or child, or @tensor is not a
 *   floating-point leaf
 *
 * Since: 1.0
 */
gboolean
hp_module_register_parameter (HpModule     *self,
                              const gchar  *name,
                              HpTensor     *tensor,
                              GError      **error)
{
  g_return_val_if_fail (HP_IS_MODULE (self), FALSE);
  g_return_val_if_fail (name != NULL, FALSE);
  g_return_val_if_fail (HP_IS_TENSOR (tensor), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!check_name (self, name, "parameter", error))
    return FALSE;
  if (hp_tensor_get_dtype (tensor) == HP_DTYPE_INT64)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "%s: parameter '%s' must be a floating-point tensor, not int64",
                   _hp_module_type_name (self), name);
      return FALSE;
    }
  if (!hp_tensor_is_leaf (tensor))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "%s: parameter '%s' must be a leaf tensor, not the result of an op",
                   _hp_module_type_name (self), name);
      return FALSE;
    }

  hp_tensor_set_requires_grad (tensor, TRUE);
  store_state (_hp_module_get_private (self)->parameters, name, tensor, TRUE);
  return TRUE;
}

/**
 * hp_module_register_buffer:
 * @self: a [class@Hp.Module]
 * @name: the buffer's name, without dots
 * @tensor: the buffer
 * @persistent: whether the buffer belongs in a state dict
 * @error: return location for a [struct@GLib.Error]
 *
 * Registers @tensor as the buffer @name of @self: state that is not
 * trained, such as a rotary cache. A buffer of that name is replaced,
 * keeping its position.
 *
 * Returns: %TRUE, or %FALSE with [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] when @name
 *   is empty, has a dot or is a parameter or child
 *
 * Since: 1.0
 */
gboolean
hp_module_register_buffer (HpModule     *self,
                           const gchar  *name,
                           HpTensor     *tensor,
                           gboolean      persistent,
                           GError      **error)
{
  g_return_val_if_fail (HP_IS_MODULE (self), FALSE);
  g_return_val_if_fail (name != NULL, FALSE);
  g_return_val_if_fail (HP_IS_TENSOR (tensor), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!check_name (self, name, "buffer", error))
    return FALSE;

  store_state (_hp_module_get_private (self)->buffers, name, tensor, persistent);
  return TRUE;
}

static gboolean
is_ancestor_or_self (HpModule *self,
                     HpModule *other)
{
  HpModulePrivate *priv = _hp_module_get_private (other);

  if (self == other)
    return TRUE;
  for (guint i = 0; i < priv->children->len; i++)
    {
      HpModuleChildEntry *entry = g_ptr_array_index (priv->children, i);

      if (is_ancestor_or_self (self, entry->module))
        return TRUE;
    }
  return FALSE;
}

/**
 * hp_module_add_child:
 * @self: a [class@Hp.Module]
 * @name: the child's name, without dots
 * @child: the child module
 * @error: return location for a [struct@GLib.Error]
 *
 * Adds @child to @self under @name, after the children already there;
 * a child of that name is replaced in its position. A module may be the
 * child of several modules (it is then shared, with its parameters).
 *
 * Returns: %TRUE, or %FALSE with [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] when @name
 *   is empty, has a dot or is a parameter or buffer, or @child contains
 *   @self (a cycle)
 *
 * Since: 1.0
 */
gboolean
hp_module_add_child (HpModule     *self,
                     const gchar  *name,
                     HpModule     *child,
                     GError      **error)
{
  HpModuleChildEntry *entry;

  g_return_val_if_fail (HP_IS_MODULE (self), FALSE);
  g_return_val_if_fail (name != NULL, FALSE);
  g_return_val_if_fail (HP_IS_MODULE (child), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!check_name (self, name, "child module", error))
    return FALSE;
  if (is_ancestor_or_self (self, child))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "%s: cannot add child '%s': %s contains the module itself",
                   _hp_module_type_name (self), name, _hp_module_type_name (child));
      return FALSE;
    }

  entry = find_child (self, name);
  if (entry == NULL)
    {
      entry = g_new0 (HpModuleChildEntry, 1);
      entry->name = g_strdup (name);
      g_ptr_array_add (_hp_module_get_private (self)->children, entry);
    }
  g_set_object (&entry->module, child);
  return TRUE;
}

/**
 * hp_module_remove_child:
 * @self: a [class@Hp.Module]
 * @name: the name of a child of @self
 *
 * Removes the child @name from @self (torchtitan sets it to `None`), so
 * that its parameters and buffers leave @self's state dict; the other
 * children keep their names and order. A pipeline stage removes the
 * parts of a model that other stages hold this way.
 *
 * Returns: %TRUE if @self had a child @name
 *
 * Since: 1.0
 */
gboolean
hp_module_remove_child (HpModule    *self,
                        const gchar *name)
{
  HpModuleChildEntry *entry;

  g_return_val_if_fail (HP_IS_MODULE (self), FALSE);
  g_return_val_if_fail (name != NULL, FALSE);

  entry = find_child (self, name);
  if (entry == NULL)
    return FALSE;
  return g_ptr_array_remove (_hp_module_get_private (self)->children, entry);
}

/* The module that holds the last component of @path, and that
 * component; NULL when a module on the way does not exist */
static HpModule *
resolve_owner (HpModule     *self,
               const gchar  *path,
               const gchar **leaf)
{
  const gchar *dot = strrchr (path, '.');
  g_autofree gchar *prefix = NULL;

  *leaf = dot != NULL ? dot + 1 : path;
  if (dot == NULL)
    return self;
  prefix = g_strndup (path, dot - path);
  return hp_module_get_child (self, prefix);
}

/**
 * hp_module_get_child:
 * @self: a [class@Hp.Module]
 * @path: a dotted path of child names, such as `layers.0.attention`
 *
 * Looks a descendant module up by dotted path.
 *
 * Returns: (transfer none) (nullable): the module at @path, or %NULL
 *
 * Since: 1.0
 */
HpModule *
hp_module_get_child (HpModule    *self,
                     const gchar *path)
{
  g_auto(GStrv) parts = NULL;
  HpModule *module = self;

  g_return_val_if_fail (HP_IS_MODULE (self), NULL);
  g_return_val_if_fail (path != NULL, NULL);

  parts = g_strsplit (path, ".", -1);
  for (guint i = 0; parts[i] != NULL && module != NULL; i++)
    {
      HpModuleChildEntry *entry = find_child (module, parts[i]);

      module = entry != NULL ? entry->module : NULL;
    }
  return module;
}

HpModuleStateEntry *
_hp_module_lookup_state (HpModule    *self,
                         const gchar *path,
                         gboolean     buffer)
{
  const gchar *leaf;
  HpModule *owner = resolve_owner (self, path, &leaf);

  if (owner == NULL)
    return NULL;
  return find_state (buffer ? _hp_module_get_private (owner)->buffers : _hp_module_get_private (owner)->parameters,
                     leaf, NULL);
}

/**
 * hp_module_get_parameter:
 * @self: a [class@Hp.Module]
 * @path: a parameter name, or a dotted path such as `attention.wq.weight`
 *
 * Looks a parameter up by name or dotted path.
 *
 * Returns: (transfer none) (nullable): the parameter at @path, or %NULL
 *
 * Since: 1.0
 */
HpTensor *
hp_module_get_parameter (HpModule    *self,
                         const gchar *path)
{
  HpModuleStateEntry *entry;

  g_return_val_if_fail (HP_IS_MODULE (self), NULL);
  g_return_val_if_fail (path != NULL, NULL);

  entry = _hp_module_lookup_state (self, path, FALSE);
  return entry != NULL ? entry->tensor : NULL;
}

/**
 * hp_module_get_buffer:
 * @self: a [class@Hp.Module]
 * @path: a buffer name, or a dotted path
 *
 * Looks a buffer up by name or dotted path.
 *
 * Returns: (transfer none) (nullable): the buffer at @path, or %NULL
 *
 * Since: 1.0
 */
HpTensor *
hp_module_get_buffer (HpModule    *self,
                      const gchar *path)
{
  HpModuleStateEntry *entry;

  g_return_val_if_fail (HP_IS_MODULE (self), NULL);
  g_return_val_if_fail (path != NULL, NULL);

  entry = _hp_module_lookup_state (self, path, TRUE);
  return entry != NULL ? entry->tensor : NULL;
}

/**
 * hp_module_buffer_is_persistent:
 * @self: a [class@Hp.Module]
 * @path: a buffer name, or a dotted path
 *
 * Whether the buffer at @path goes into state dicts.
 *
 * Returns: whether the buffer at @path exists and belongs in a state
 *   dict
 *
 * Since: 1.0
 */
gboolean
hp_module_buffer_is_persistent (HpModule    *self,
                                const gchar *path)
{
  HpModuleStateEntry *entry;

  g_return_val_if_fail (HP_IS_MODULE (self), FALSE);
  g_return_val_if_fail (path != NULL, FALSE);

  entry = _hp_module_lookup_state (self, path, TRUE);
  return entry != NULL && entry->persistent;
}

static GStrv
entry_names (GPtrArray *entries,
             gsize      name_offset)
{
  GStrvBuilder *builder = g_strv_builder_new ();
  GStrv names;

  for (guint i = 0; i < entries->len; i++)
    g_strv_builder_add (builder,
                        G_STRUCT_MEMBER (const gchar *, g_ptr_array_index (entries, i),
                                         name_offset));
  names = g_strv_builder_end (builder);
  g_strv_builder_unref (builder);
  return names;
}

/**
 * hp_module_get_parameter_names:
 * @self: a [class@Hp.Module]
 *
 * Lists the module's own parameters.
 *
 * Returns: (transfer full): the names of the module's own parameters,
 *   in registration order
 *
 * Since: 1.0
 */
GStrv
hp_module_get_parameter_names (HpModule *self)
{
  g_return_val_if_fail (HP_IS_MODULE (self), NULL);

  return entry_names (_hp_module_get_private (self)->parameters, G_STRUCT_OFFSET (HpModuleStateEntry, name));
}

/**
 * hp_module_get_buffer_names:
 * @self: a [class@Hp.Module]
 *
 * Lists the module's own buffers.
 *
 * Returns: (transfer full): the names of the module's own buffers, in
 *   registration order
 *
 * Since: 1.0
 */
GStrv
hp_module_get_buffer_names (HpModule *self)
{
  g_return_val_if_fail (HP_IS_MODULE (self), NULL);

  return entry_names (_hp_module_get_private (self)->buffers, G_STRUCT_OFFSET (HpModuleStateEntry, name));
}

/**
 * hp_module_get_child_names:
 * @self: a [class@Hp.Module]
 *
 * Lists the module's children.
 *
 * Returns: (transfer full): the names of the module's children, in
 *   order
 *
 * Since: 1.0
 */
GStrv
hp_module_get_child_names (HpModule *self)
{
  g_return_val_if_fail (HP_IS_MODULE (self), NULL);

  return entry_names (_hp_module_get_private (self)->children, G_STRUCT_OFFSET (HpModuleChildEntry, name));
}

static void
collect_states (HpModule    *self,
                const gchar *prefix,
                gboolean     buffers,
                GHashTable  *seen,
                HpStateDict *out)
{
  HpModulePrivate *priv = _hp_module_get_private (self);
  GPtrArray *entries = buffers ? priv->buffers : priv->parameters;

  for (guint i = 0; i < entries->len; i++)
    {
      HpModuleStateEntry *entry = g_ptr_array_index (entries, i);
      g_autofree gchar *fqn = g_strconcat (prefix, entry->name, NULL);

      if (g_hash_table_add (seen, entry->tensor))
        hp_state_dict_insert (out, fqn, entry->tensor);
    }
  for (guint i = 0; i < priv->children->len; i++)
    {
      HpModuleChildEntry *entry = g_ptr_array_index (priv->children, i);
      g_autofree gchar *child_prefix = g_strconcat (prefix, entry->name, ".", NULL);

      collect_states (entry->module, child_prefix, buffers, seen, out);
    }
}

static HpStateDict *
named_states (HpModule *self,
              gboolean  buffers)
{
  g_autoptr(GHashTable) seen = g_hash_table_new (NULL, NULL);
  HpStateDict *out = hp_state_dict_new ();

  collect_states (self, "", buffers, seen, out);
  return out;
}

/**
 * hp_module_named_parameters:
 * @self: a [class@Hp.Module]
 *
 * All parameters of the tree by dotted path: own parameters in
 * registration order, then each child's, depth first. A tensor shared
 * by several modules appears once, under its first path.
 *
 * Returns: (transfer full): the parameters
 *
 * Since: 1.0
 */
HpStateDict *
hp_module_named_parameters (HpModule *self)
{
  g_return_val_if_fail (HP_IS_MODULE (self), NULL);

  return named_states (self, FALSE);
}

/**
 * hp_module_named_buffers:
 * @self: a [class@Hp.Module]
 *
 * All buffers of the tree by dotted path, persistent or not, in the
 * order of [method@Hp.Module.named_parameters].
 *
 * Returns: (transfer full): the buffers
 *
 * Since: 1.0
 */
HpStateDict *
hp_module_named_buffers (HpModule *self)
{
  g_return_val_if_fail (HP_IS_MODULE (self), NULL);

  return named_states (self, TRUE);
}

/**
 * hp_module_parameters:
 * @self: a [class@Hp.Module]
 *
 * The tensors of [method@Hp.Module.named_parameters], for an optimizer.
 *
 * Returns: (transfer container) (element-type HpTensor): the parameters
 *
 * Since: 1.0
 */
GPtrArray *
hp_module_parameters (HpModule *self)
{
  g_autoptr(HpStateDict) named = NULL;
  GPtrArray *out;
  guint n;

  g_return_val_if_fail (HP_IS_MODULE (self), NULL);

  named = hp_module_named_parameters (self);
  n = hp_state_dict_get_size (named);
  out = g_ptr_array_new_full (n, g_object_unref);
  for (guint i = 0; i < n; i++)
    g_ptr_array_add (out, g_object_ref (hp_state_dict_get_tensor (named, i)));
  return out;
}

/**
 * hp_module_get_param_init:
 * @self: a [class@Hp.Module]
 *
 * Gets the initialisers of the module's parameters.
 *
 * Returns: (transfer none) (nullable): the [property@Hp.Module:param-init]
 *
 * Since: 1.0
 */
HpParamInit *
hp_module_get_param_init (HpModule *self)
{
  g_return_val_if_fail (HP_IS_MODULE (self), NULL);

  return _hp_module_get_private (self)->param_init;
}

/**
 * hp_module_set_param_init:
 * @self: a [class@Hp.Module]
 * @param_init: (nullable): the initialisers
 *
 * Sets [property@Hp.Module:param-init].
 *
 * Since: 1.0
 */
void
hp_module_set_param_init (HpModule    *self,
                          HpParamInit *param_init)
{
  g_return_if_fail (HP_IS_MODULE (self));
  g_return_if_fail (param_init == NULL || HP_IS_PARAM_INIT (param_init));

  if (g_set_object (&_hp_module_get_private (self)->param_init, param_init))
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_PARAM_INIT]);
}

/**
 * hp_module_get_sharding_config:
 * @self: a [class@Hp.Module]
 *
 * Gets the module's sharding configuration.
 *
 * Returns: (transfer none) (nullable): the [property@Hp.Module:sharding-config]
 *
 * Since: 1.0
 */
HpShardingConfig *
hp_module_get_sharding_config (HpModule *self)
{
  g_return_val_if_fail (HP_IS_MODULE (self), NULL);

  return _hp_module_get_private (self)->sharding_config;
}

/**
 * hp_module_set_sharding_config:
 * @self: a [class@Hp.Module]
 * @sharding_config: (nullable): the sharding configuration
 *
 * Sets [property@Hp.Module:sharding-config]. It takes effect at
 * [method@Hp.Module.parallelize]; changing it afterwards changes nothing.
 *
 * Since: 1.0
 */
void
hp_module_set_sharding_config (HpModule         *self,
                               HpShardingConfig *sharding_config)
{
  g_return_if_fail (HP_IS_MODULE (self));
  g_return_if_fail (sharding_config == NULL || HP_IS_SHARDING_CONFIG (sharding_config));

  if (g_set_object (&_hp_module_get_private (self)->sharding_config, sharding_config))
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SHARDING_CONFIG]);
}

/* Whether every own parameter of @self has an initialiser and can be
 * filled: not a Partial DTensor, which hp_initializer_apply() refuses */
static gboolean
check_own_initializable (HpModule  *self,
                         GError   **error)
{
  HpModulePrivate *priv = _hp_module_get_private (self);

  if (priv->parameters->len == 0)
    return TRUE;

  for (guint i = 0; i < priv->parameters->len; i++)
    {
      HpModuleStateEntry *entry = g_ptr_array_index (priv->parameters, i);
      GPtrArray *placements;
      g_autofree gchar *text = NULL;

      if (!HP_IS_DTENSOR (entry->tensor))
        continue;
      placements = hp_dtensor_get_placements (HP_DTENSOR (entry->tensor));
      if (!_hp_placements_have_partial (placements))
        continue;
      text = hp_placements_to_string (placements);
      g_set_error (error, HP_ERROR, HP_ERROR_PLACEMENT,
                   "%s.%s: cannot initialise a Partial DTensor (placements %s)",
                   _hp_module_type_name (self), entry->name, text);
      return FALSE;
    }

  if (priv->param_init == NULL)
    {
      g_auto(GStrv) names = NULL;
      g_autofree gchar *joined = NULL;

      if (HP_MODULE_GET_CLASS (self)->reset_parameters != NULL)
        return TRUE;
      names = hp_module_get_parameter_names (self);
      joined = g_strjoinv ("', '", names);
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                   "%s has parameters ['%s'] but neither param_init nor "
                   "reset_parameters is available",
                   _hp_module_type_name (self), joined);
      return FALSE;
    }

  for (guint i = 0; i < priv->parameters->len; i++)
    {
      HpModuleStateEntry *entry = g_ptr_array_index (priv->parameters, i);
      g_auto(GStrv) names = NULL;
      g_autofree gchar *joined = NULL;

      if (hp_param_init_get (priv->param_init, entry->name) != NULL)
        continue;
      names = hp_param_init_get_names (priv->param_init);
      joined = g_strjoinv ("', '", names);
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                   "No initializer for parameter '%s' in %s. Available: [%s%s%s]",
                   entry->name, _hp_module_type_name (self),
                   names[0] != NULL ? "'" : "", joined,
                   names[0] != NULL ? "'" : "");
      return FALSE;
    }
  return TRUE;
}

/* The same for the whole tree, children first */
static gboolean
check_initializable (HpModule  *self,
                     GError   **error)
{
  HpModulePrivate *priv = _hp_module_get_private (self);

  for (guint i = 0; i < priv->children->len; i++)
    {
      HpModuleChildEntry *entry = g_ptr_array_index (priv->children, i);

      if (!check_initializable (entry->module, error))
        return FALSE;
    }
  return check_own_initializable (self, error);
}

static gboolean
init_self_parameters (HpModule  *self,
                      guint64    seed,
                      GError   **error)
{
  HpModulePrivate *priv = _hp_module_get_private (self);

  if (priv->parameters->len == 0)
    return TRUE;

  if (priv->param_init == NULL)
    return HP_MODULE_GET_CLASS (self)->reset_parameters (self, seed, error);

  for (guint i = 0; i < priv->parameters->len; i++)
    {
      HpModuleStateEntry *entry = g_ptr_array_index (priv->parameters, i);
      HpInitializer *init = hp_param_init_get (priv->param_init, entry->name);

      if (!hp_initializer_apply (init, entry->tensor,
                                 hp_module_derive_seed (seed, entry->name), error))
        {
          g_prefix_error (error, "%s.%s: ", _hp_module_type_name (self), entry->name);
          return FALSE;
        }
    }
  return TRUE;
}

/**
 * hp_module_init_self_parameters:
 * @self: a [class@Hp.Module]
 * @seed: the seed of the module
 * @error: return location for a [struct@GLib.Error]
 *
 * Gives the module's own parameters (not its children's) their first
 * values: each from its entry in [property@Hp.Module:param-init] when the module
 * has one, otherwise through [vfunc@Hp.Module.reset_parameters]. Parameter
 * `name` of a [class@Hp.ParamInit] draws from the seed
 * `hp_module_derive_seed (seed, name)`. Runs with gradient recording
 * off.
 *
 * Returns: %TRUE, or %FALSE with [HP_ERROR_CONFIG][error@Hp.Error] when a parameter has
 *   no initialiser (`No initializer for parameter 'n' in HpFoo.
 *   Available: [...]`) or nothing initialises the module's parameters
 *   (`HpFoo has parameters [...] but neither param_init nor
 *   reset_parameters is available`), or with [HP_ERROR_PLACEMENT][error@Hp.Error] when a
 *   parameter is a DTensor with a `Partial` placement, which no
 *   initialiser fills (`HpFoo.w: cannot initialise a Partial DTensor
 *   (placements (P(sum)))`); no parameter is changed then
 *
 * Since: 1.0
 */
gboolean
hp_module_init_self_parameters (HpModule  *self,
                                guint64    seed,
                                GError   **error)
{
  gboolean enabled;
  gboolean ok;

  g_return_val_if_fail (HP_IS_MODULE (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!check_own_initializable (self, error))
    return FALSE;

  enabled = hp_grad_mode_is_enabled ();
  hp_grad_mode_set_enabled (FALSE);
  ok = init_self_parameters (self, seed, error);
  hp_grad_mode_set_enabled (enabled);
  return ok;
}

/* Lays a buffer that init_self_buffers computed whole out as the
 * DTensor it replaces was */
static gboolean
keep_buffer_layouts (HpModule   *self,
                     GPtrArray  *before,
                     GError    **error)
{
  HpModulePrivate *priv = _hp_module_get_private (self);

  for (guint i = 0; i < priv->buffers->len; i++)
    {
      HpModuleStateEntry *entry = g_ptr_array_index (priv->buffers, i);
      HpModuleStateEntry *old = find_state (before, entry->name, NULL);
      g_autoptr(HpDTensor) laid_out = NULL;
      HpDTensor *previous;

      if (old == NULL || !HP_IS_DTENSOR (old->tensor) || HP_IS_DTENSOR (entry->tensor))
        continue;
      previous = HP_DTENSOR (old->tensor);
      laid_out = hp_dtensor_distribute (entry->tensor,
                                        hp_dtensor_get_mesh (previous),
                                        hp_dtensor_get_placements (previous),
                                        -1, error);
      if (laid_out == NULL)
        {
          g_prefix_error (error, "%s.%s: ", _hp_module_type_name (self), entry->name);
          return FALSE;
        }
      g_set_object (&entry->tensor, HP_TENSOR (laid_out));
    }
  return TRUE;
}

static GPtrArray *
copy_state_entries (GPtrArray *entries)
{
  GPtrArray *copy = g_ptr_array_new_with_free_func (state_entry_free);

  for (guint i = 0; i < entries->len; i++)
    {
      HpModuleStateEntry *entry = g_ptr_array_index (entries, i);

      store_state (copy, entry->name, entry->tensor, entry->persistent);
    }
  return copy;
}

static gboolean
init_self_buffers (HpModule  *self,
                   GError   **error)
{
  HpModuleClass *klass = HP_MODULE_GET_CLASS (self);
  g_autoptr(GPtrArray) before = NULL;

  if (klass->init_self_buffers == NULL)
    return TRUE;

  before = copy_state_entries (_hp_module_get_private (self)->buffers);
  if (!klass->init_self_buffers (self, error))
    return FALSE;
  return keep_buffer_layouts (self, before, error);
}

static gboolean
init_states (HpModule    *self,
             guint64      seed,
             GHashTable  *done,
             GError     **error)
{
  HpModulePrivate *priv = _hp_module_get_private (self);

  /* a module shared by several parents is initialised once, where it
   * is first met */
  if (!g_hash_table_add (done, self))
    return TRUE;

  for (guint i = 0; i < priv->children->len; i++)
    {
      HpModuleChildEntry *entry = g_ptr_array_index (priv->children, i);

      if (!init_states (entry->module, hp_module_derive_seed (seed, entry->name), done, error))
        return FALSE;
    }

  if (!init_self_parameters (self, seed, error) || !init_self_buffers (self, error))
    return FALSE;

  g_signal_emit (self, signals[SIGNAL_STATES_INITIALIZED], 0);
  return TRUE;
}

/**
 * hp_module_init_states:
 * @self: a [class@Hp.Module]
 * @seed: the seed of the whole tree
 * @error: return location for a [struct@GLib.Error]
 *
 * Initialises the parameters and buffers of the whole tree: for each
 * module, children first (in order, each with the seed
 * `hp_module_derive_seed (seed, child_name)`), then its own parameters
 * ([method@Hp.Module.init_self_parameters]), then its own buffers
 * ([vfunc@Hp.Module.init_self_buffers]). A buffer that was a DTensor and
 * is computed anew as a plain tensor is laid out as before. Runs with
 * gradient recording off, and emits [signal@Hp.Module::states-initialized] on
 * every module.
 *
 * Parameters keep their identity: their values are overwritten in
 * place. The same seed gives the same values whether or not the tree
 * is parallelized.
 *
 * Returns: %TRUE, or %FALSE with @error set. Missing initialisers and
 *   parameters no initialiser can fill are found in the whole tree
 *   before any value is written ([HP_ERROR_CONFIG][error@Hp.Error] and
 *   [HP_ERROR_PLACEMENT][error@Hp.Error], the messages of
 *   [method@Hp.Module.init_self_parameters]); the tree is then as it was. An
 *   error of a [vfunc@Hp.Module.reset_parameters] or
 *   [vfunc@Hp.Module.init_self_buffers] implementation stops the walk where
 *   it happens.
 *
 * Since: 1.0
 */
gboolean
hp_module_init_states (HpModule  *self,
                       guint64    seed,
                       GError   **error)
{
  g_autoptr(GHashTable) done = NULL;
  gboolean enabled;
  gboolean ok;

  g_return_val_if_fail (HP_IS_MODULE (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!check_initializable (self, error))
    return FALSE;

  done = g_hash_table_new (NULL, NULL);
  enabled = hp_grad_mode_is_enabled ();
  hp_grad_mode_set_enabled (FALSE);
  ok = init_states (self, seed, done, error);
  hp_grad_mode_set_enabled (enabled);
  return ok;
}

/**
 * hp_module_get_forward_arg_names:
 * @self: a module
 *
 * The names of the forward arguments, in order: those its class
 * declares ([func@Hp.Module.type_set_forward_arg_names]), or its
 * nearest ancestor, else the single name `input`. A
 * [class@Hp.FunctionModule] may name its own.
 *
 * Returns: (transfer none) (array zero-terminated=1): the names
 *
 * Since: 1.0
 */
const gchar * const *
hp_module_get_forward_arg_names (HpModule *self)
{
  static const gchar * const fallback[] = { "input", NULL };
  HpModulePrivate *priv;
  GStrv names;

  g_return_val_if_fail (HP_IS_MODULE (self), NULL);

  priv = _hp_module_get_private (self);
  if (priv->forward_arg_names != NULL)
    return (const gchar * const *) priv->forward_arg_names;

  names = HP_MODULE_CLASS_PRIVATE (HP_MODULE_GET_CLASS (self))->forward_arg_names;
  return names != NULL ? (const gchar * const *) names : fallback;
}

/**
 * hp_module_register_callable:
 * @self: a module
 * @name: the callable's name, such as `inner_sdpa`
 * @func: (scope notified) (closure user_data) (destroy destroy): the
 *   local function, which gets @self as its first argument
 * @user_data: data for @func
 * @destroy: (nullable): frees @user_data
 *
 * Registers an inner callable of the module: a piece of its forward
 * that [method@Hp.Module.run_callable] runs and that a
 * [class@Hp.LocalMapConfig] can name, so that after
 * [method@Hp.Module.parallelize] it runs on local shards. A callable of
 * that name is replaced.
 *
 * @func gets the module, so it should not hold a reference to it
 * (neither in @user_data nor, in a language binding, as a bound method
 * or a closure): the module holds @func, and such a reference would
 * keep both alive. From Python, the override passes a method of the
 * module as its function.
 *
 * Since: 1.0
 */
void
hp_module_register_callable (HpModule             *self,
                             const gchar          *name,
                             HpModuleCallableFunc  func,
                             gpointer              user_data,
                             GDestroyNotify        destroy)
{
  HpModuleCallable *callable;

  g_return_if_fail (HP_IS_MODULE (self));
  g_return_if_fail (name != NULL && name[0] != '\0' && strchr (name, '.') == NULL);
  g_return_if_fail (func != NULL);

  callable = g_new0 (HpModuleCallable, 1);
  callable->module = self;
  callable->func = func;
  callable->user_data = user_data;
  callable->destroy = destroy;
  g_hash_table_replace (_hp_module_get_private (self)->callables, g_strdup (name), callable);
}

HpModuleCallable *
_hp_module_lookup_callable (HpModule    *self,
                            const gchar *path)
{
  const gchar *leaf;
  HpModule *owner = resolve_owner (self, path, &leaf);

  if (owner == NULL)
    return NULL;
  return g_hash_table_lookup (_hp_module_get_private (owner)->callables, leaf);
}

/**
 * hp_module_has_callable:
 * @self: a [class@Hp.Module]
 * @path: a callable name, or a dotted path such as `attention.inner_sdpa`
 *
 * Whether an inner callable is registered at @path.
 *
 * Returns: whether a callable is registered at @path
 *
 * Since: 1.0
 */
gboolean
hp_module_has_callable (HpModule    *self,
                        const gchar *path)
{
  g_return_val_if_fail (HP_IS_MODULE (self), FALSE);
  g_return_val_if_fail (path != NULL, FALSE);

  return _hp_module_lookup_callable (self, path) != NULL;
}

/**
 * hp_module_callable_is_local_mapped:
 * @self: a [class@Hp.Module]
 * @path: a callable name, or a dotted path
 *
 * Whether the callable at @path runs on local shards.
 *
 * Returns: whether [method@Hp.Module.parallelize] wrapped the callable at
 *   @path in a [class@Hp.LocalMap]
 *
 * Since: 1.0
 */
gboolean
hp_module_callable_is_local_mapped (HpModule    *self,
                                    const gchar *path)
{
  HpModuleCallable *callable;

  g_return_val_if_fail (HP_IS_MODULE (self), FALSE);
  g_return_val_if_fail (path != NULL, FALSE);

  callable = _hp_module_lookup_callable (self, path);
  return callable != NULL && callable->mapped != NULL;
}

/* Takes what a forward function or a callable returned with transfer
 * full, and the error it set: the outputs, or NULL with its error, or
 * with one naming the function (a binding's function may return None
 * without an error). An error set next to outputs is dropped. */
static GPtrArray *take_outputs (GPtrArray    *returned,
                                GError       *local_error,
                                GError      **error,
                                const gchar  *who_format,
                                ...) G_GNUC_PRINTF (4, 5);

static GPtrArray *
take_outputs (GPtrArray    *returned,
              GError       *local_error,
              GError      **error,
              const gchar  *who_format,
              ...)
{
  if (returned == NULL)
    {
      if (local_error == NULL)
        {
          g_autofree gchar *who = NULL;
          va_list args;

          va_start (args, who_format);
          who = g_strdup_vprintf (who_format, args);
          va_end (args);
          g_set_error (&local_error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                       "%s failed without saying why", who);
        }
      g_propagate_error (error, local_error);
      return NULL;
    }
  g_clear_error (&local_error);
  return _hp_object_array_take (returned);
}

/**
 * hp_module_run_callable:
 * @self: a [class@Hp.Module]
 * @path: a callable name, or a dotted path such as `attention.inner_sdpa`
 * @args: (element-type HpTensor): the arguments; entries may be %NULL
 * @error: return location for a [struct@GLib.Error]
 *
 * Runs the inner callable registered at @path: directly, or, when
 * [method@Hp.Module.parallelize] wrapped it, through its [class@Hp.LocalMap] on the
 * local shards of DTensor arguments.
 *
 * Returns: (transfer container) (element-type HpTensor): the outputs, or
 *   %NULL with @error set ([HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] for an unknown
 *   @path)
 *
 * Since: 1.0
 */
GPtrArray *
hp_module_run_callable (HpModule     *self,
                const gchar  *path,
                GPtrArray    *args,
                GError      **error)
{
  HpModuleCallable *callable;
  GPtrArray *returned;
  GError *local_error = NULL;

  g_return_val_if_fail (HP_IS_MODULE (self), NULL);
  g_return_val_if_fail (path != NULL, NULL);
  g_return_val_if_fail (args != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  callable = _hp_module_lookup_callable (self, path);
  if (callable == NULL)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "%s has no callable '%s'", _hp_module_type_name (self), path);
      return NULL;
    }
  if (callable->mapped != NULL)
    return hp_local_map_call (callable->mapped, args, error);

  returned = callable->func (callable->module, args, callable->user_data, &local_error);
  return take_outputs (returned, local_error, error, "%s: callable '%s'",
                       _hp_module_type_name (self), path);
}

/* Makes the hp_module_call() that is emitting forward-pre fail with
 * @error (transfer full) before it computes anything; the first
 * failure wins */
void
_hp_module_fail_forward (HpModule *self,
                         GError   *error)
{
  HpModulePrivate *priv = _hp_module_get_private (self);

  if (priv->forward_pre_error == NULL)
    priv->forward_pre_error = error;
  else
    g_error_free (error);
}

/**
 * hp_module_call:
 * @self: a [class@Hp.Module]
 * @args: (element-type HpTensor): the arguments, in the order of
 *   [method@Hp.Module.get_forward_arg_names]; entries may be %NULL
 * @error: return location for a [struct@GLib.Error]
 *
 * Runs the module: emits [signal@Hp.Module::forward-pre]; once the module is
 * parallelized with a sharding configuration, converts each named
 * argument as `in_src_shardings` and `in_dst_shardings` say (a plain
 * tensor becomes a DTensor with its `in_src` placements, or else its
 * `in_dst` ones; a DTensor must have its `in_src` placements; then it is
 * redistributed to `in_dst`); calls [vfunc@Hp.Module.forward]; converts the
 * outputs by index with `out_src_shardings` and `out_dst_shardings` in
 * the same way; emits [signal@Hp.Module::forward-post].
 *
 * The computation itself is the [vfunc@Hp.Module.forward] virtual
 * function; its outputs come back in an array that owns them.
 *
 * Returns: (transfer container) (element-type HpTensor): the outputs, or
 *   %NULL with @error set ([HP_ERROR_PLACEMENT][error@Hp.Error] when a DTensor does not
 *   have the placements its `src` sharding expects:
 *   `HpFoo.input: input DTensor has placements (S(0)), but
 *   in_src_shardings expects (R).`; [HP_ERROR_MPI][error@Hp.Error] when
 *   the all-gather of a [method@Hp.Module.fully_shard] unit's parameters
 *   fails, before anything is computed)
 *
 * Since: 1.0
 */
GPtrArray *
hp_module_call (HpModule     *self,
                   GPtrArray    *args,
                   GError      **error)
{
  HpModulePrivate *priv;
  gboolean sharded;
  g_autoptr(GPtrArray) inputs = NULL;
  g_autoptr(GPtrArray) outputs = NULL;
  GPtrArray *returned;
  GPtrArray *result;
  GError *local_error = NULL;

  g_return_val_if_fail (HP_IS_MODULE (self), NULL);
  g_return_val_if_fail (args != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  priv = _hp_module_get_private (self);
  g_signal_emit (self, signals[SIGNAL_FORWARD_PRE], 0, args);
  if (priv->forward_pre_error != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&priv->forward_pre_error));
      return NULL;
    }

  sharded = priv->mesh != NULL && priv->in_src != NULL;
  inputs = sharded ? _hp_module_shard_inputs (self, args, error) : g_ptr_array_ref (args);
  if (inputs == NULL)
    return NULL;

  returned = HP_MODULE_GET_CLASS (self)->forward (self, inputs, &local_error);
  outputs = take_outputs (returned, local_error, error, "%s.forward", _hp_module_type_name (self));
  if (outputs == NULL)
    return NULL;

  result = sharded ? _hp_module_shard_outputs (self, outputs, error) : g_ptr_array_ref (outputs);
  if (result == NULL)
    return NULL;

  g_signal_emit (self, signals[SIGNAL_FORWARD_POST], 0, args, result);
  return result;
}

/**
 * hp_module_call1:
 * @self: a [class@Hp.Module]
 * @input: the one argument
 * @error: return location for a [struct@GLib.Error]
 *
 * [method@Hp.Module.call] for a module with one tensor in and one out.
 *
 * Returns: (transfer full): the first output, or %NULL with @error set
 *   ([HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] when there is no tensor output)
 *
 * Since: 1.0
 */
HpTensor *
hp_module_call1 (HpModule     *self,
                    HpTensor     *input,
                    GError      **error)
{
  g_autoptr(GPtrArray) args = NULL;
  g_autoptr(GPtrArray) outputs = NULL;
  HpTensor *first;

  g_return_val_if_fail (HP_IS_MODULE (self), NULL);
  g_return_val_if_fail (HP_IS_TENSOR (input), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  args = g_ptr_array_new ();
  g_ptr_array_add (args, input);
  outputs = hp_module_call (self, args, error);
  if (outputs == NULL)
    return NULL;
  first = outputs->len > 0 ? g_ptr_array_index (outputs, 0) : NULL;
  if (first == NULL)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "%s.forward returned no tensor", _hp_module_type_name (self));
      return NULL;
    }
  return g_object_ref (first);
}

/* Tells that @self has been parallelized: the mesh is set */
void
_hp_module_emit_parallelized (HpModule *self)
{
  HpModulePrivate *priv = _hp_module_get_private (self);

  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_MESH]);
  g_signal_emit (self, signals[SIGNAL_PARALLELIZED], 0, priv->mesh);
}

/**
 * hp_module_get_mesh:
 * @self: a [class@Hp.Module]
 *
 * Gets the mesh the module was parallelized over.
 *
 * Returns: (transfer none) (nullable): the [property@Hp.Module:mesh]
 *
 * Since: 1.0
 */
HpDeviceMesh *
hp_module_get_mesh (HpModule *self)
{
  g_return_val_if_fail (HP_IS_MODULE (self), NULL);

  return _hp_module_get_private (self)->mesh;
}
