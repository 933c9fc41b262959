/* hp-feed-forward.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "hp-config-field.h"
#include "hp-error.h"
#include "hp-feed-forward.h"
#include "hp-nn-basic-private.h"
#include "hp-tensor-enum-types.h"
#include "hp-tensor-ops.h"
#include "hp-tensor-private.h"

/**
 * HpFeedForwardConfig:
 *
 * The configuration of a [class@Hp.FeedForward]: the model dim, the
 * hidden dim, the element type, and the configurations of the three
 * linear layers `w1` (dim to hidden-dim), `w2` (hidden-dim to dim) and
 * `w3` (dim to hidden-dim).
 *
 * The three layer configurations are nested fields, so that JSON, the
 * traversal of [method@Hp.Config.traverse] and dotted paths such as
 * `w2.param-init` reach them. A layer field that is %NULL once a
 * construction or a change is complete (not given to [ctor@GObject.Object.new],
 * or set to %NULL) gets a [class@Hp.LinearConfig] without bias derived
 * from [property@Hp.FeedForwardConfig:dim],
 * [property@Hp.FeedForwardConfig:hidden-dim] and
 * [property@Hp.FeedForwardConfig:dtype] as they are then, before any
 * notification is emitted; the fields therefore never read %NULL.
 * Changing the dims afterwards does not change the layer
 * configurations (they may be shared with copies, see
 * [method@Hp.Config.copy]): to derive them again, set them to %NULL in
 * the same call, for example
 * `hp_config_replace (cfg, "dim", 16, "w1", NULL, "w2", NULL, "w3", NULL, NULL)`.
 * [vfunc@Hp.Config.validate] checks that the layers fit the dims and
 * the dtype.
 *
 * Since: 1.0
 */

/**
 * HpFeedForward:
 *
 * The SwiGLU feed-forward block of Llama,
 * `out = w2 (silu (w1 (x)) * w3 (x))`, as a [class@Hp.Module] built from a
 * [class@Hp.FeedForwardConfig]. Its children are the [class@Hp.Linear] layers `w1`,
 * `w2` and `w3`, built from the configuration's nested fields; it has
 * no parameters of its own; silu and the product are one op, which
 * makes one pass over the hidden activations each way and keeps none of
 * its own for backward. Each layer initialises its own weight
 * (see [class@Hp.Linear]), unless the layer configurations carry a
 * [class@Hp.ParamInit].
 *
 * The forward argument is `input`, of shape [..., dim]; the output has
 * its shape. [func@Hp.set_dense_ffn_sharding] lays the block out for tensor
 * parallelism.
 *
 * Since: 1.0
 */

enum {
  LAYER_W1,
  LAYER_W2,
  LAYER_W3,
  N_LAYERS
};

static const gchar * const layer_names[N_LAYERS] = { "w1", "w2", "w3" };

struct _HpFeedForwardConfig
{
  HpModuleConfig parent_instance;

  gint dim;
  gint hidden_dim;
  HpDType dtype;
  HpLinearConfig *w1;
  HpLinearConfig *w2;
  HpLinearConfig *w3;
};

G_DEFINE_FINAL_TYPE (HpFeedForwardConfig, hp_feed_forward_config, HP_TYPE_MODULE_CONFIG)

struct _HpFeedForward
{
  HpModule parent_instance;
};

G_DEFINE_FINAL_TYPE (HpFeedForward, hp_feed_forward, HP_TYPE_MODULE)

/* HpFeedForwardConfig */

/**
 * HpFeedForwardConfig:dim:
 *
 * The size of the last dim of the input and the output.
 *
 * Since: 1.0
 */
/**
 * HpFeedForwardConfig:hidden-dim:
 *
 * The size of the hidden activations: the output features of `w1`
 * and `w3`, the input features of `w2`.
 *
 * Since: 1.0
 */
/**
 * HpFeedForwardConfig:dtype:
 *
 * The element type of the layers' parameters: float32 or float64.
 * Layer configurations derived from the dims get it; given ones must
 * have it.
 *
 * Since: 1.0
 */
/**
 * HpFeedForwardConfig:w1:
 *
 * The configuration of the gate projection `w1`, from dim to
 * hidden-dim; %NULL derives it from the dims (see
 * [class@Hp.FeedForwardConfig]).
 *
 * Since: 1.0
 */
/**
 * HpFeedForwardConfig:w2:
 *
 * The configuration of the output projection `w2`, from hidden-dim to
 * dim; %NULL derives it from the dims (see [class@Hp.FeedForwardConfig]).
 *
 * Since: 1.0
 */
/**
 * HpFeedForwardConfig:w3:
 *
 * The configuration of the up projection `w3`, from dim to
 * hidden-dim; %NULL derives it from the dims (see
 * [class@Hp.FeedForwardConfig]).
 *
 * Since: 1.0
 */
static const HpConfigField feed_forward_config_fields[] = {
  HP_CONFIG_FIELD_INT (HpFeedForwardConfig, dim, "dim", "Input and output width", 1, G_MAXINT, 1),
  HP_CONFIG_FIELD_INT (HpFeedForwardConfig, hidden_dim, "hidden-dim", "Hidden width of w1 and w3",
                       1, G_MAXINT, 1),
  HP_CONFIG_FIELD_ENUM (HpFeedForwardConfig, dtype, "dtype", "Parameter dtype", hp_dtype_get_type,
                        HP_DTYPE_FLOAT32),
  /* NULL until derived: see the dispatch_properties_changed below */
  HP_CONFIG_FIELD_OBJECT (HpFeedForwardConfig, w1, "w1", NULL, hp_linear_config_get_type, NULL),
  HP_CONFIG_FIELD_OBJECT (HpFeedForwardConfig, w2, "w2", NULL, hp_linear_config_get_type, NULL),
  HP_CONFIG_FIELD_OBJECT (HpFeedForwardConfig, w3, "w3", NULL, hp_linear_config_get_type, NULL),
};

static HpLinearConfig *
get_layer (HpFeedForwardConfig *self,
           gint                 layer)
{
  HpLinearConfig * const layers[N_LAYERS] = { self->w1, self->w2, self->w3 };

  return layers[layer];
}

/* The in and out features layer @layer has in a block of these dims */
static void
layer_features (gint  layer,
                gint  dim,
                gint  hidden_dim,
                gint *in_features,
                gint *out_features)
{
  *in_features = layer == LAYER_W2 ? hidden_dim : dim;
  *out_features = layer == LAYER_W2 ? dim : hidden_dim;
}

static HpLinearConfig *
derive_layer (HpFeedForwardConfig *self,
              gint                 layer)
{
  gint in_features, out_features;

  layer_features (layer, self->dim, self->hidden_dim, &in_features, &out_features);
  return g_object_new (HP_TYPE_LINEAR_CONFIG,
                       "in-features", in_features,
                       "out-features", out_features,
                       "dtype", self->dtype,
                       NULL);
}

static void
hp_feed_forward_config_constructed (GObject *object)
{
  G_OBJECT_CLASS (hp_feed_forward_config_parent_class)->constructed (object);

  /* The layers are NULL now, and the fields given to g_object_new() are
   * set only after this: a change pending at the end of the
   * construction makes dispatch_properties_changed derive the missing
   * layers from the dims as given */
  g_object_notify (object, "w1");
}

/* Runs at the end of each change (one g_object_new() or g_object_set()
 * call, one freeze and thaw of the notifications): a layer the change
 * left NULL is derived from the dims as they are then, before anyone
 * is notified */
static void
hp_feed_forward_config_dispatch_properties_changed (GObject     *object,
                                                    guint        n_pspecs,
                                                    GParamSpec **pspecs)
{
  HpFeedForwardConfig *self = HP_FEED_FORWARD_CONFIG (object);

  for (gint i = 0; i < N_LAYERS; i++)
    if (get_layer (self, i) == NULL)
      {
        g_autoptr(HpLinearConfig) derived = derive_layer (self, i);

        g_object_set (object, layer_names[i], derived, NULL);
      }

  G_OBJECT_CLASS (hp_feed_forward_config_parent_class)->dispatch_properties_changed (object, n_pspecs,
                                                                                     pspecs);
}

/* Layer @layer is valid on its own, else its error, which says more
 * than a mismatch with the block would */
static gboolean
validate_layer (HpFeedForwardConfig  *self,
                gint                  layer,
                GError              **error)
{
  if (hp_config_validate (HP_CONFIG (get_layer (self, layer)), error))
    return TRUE;
  g_prefix_error (error, "HpFeedForwardConfig.%s: ", layer_names[layer]);
  return FALSE;
}

/* Layer @layer fits the dims and the dtype of the block */
static gboolean
check_layer (HpFeedForwardConfig  *self,
             gint                  layer,
             GError              **error)
{
  HpLinearConfig *linear = get_layer (self, layer);
  gint in_features, out_features;

  layer_features (layer, self->dim, self->hidden_dim, &in_features, &out_features);
  if (hp_linear_config_get_in_features (linear) != in_features)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                   "HpFeedForwardConfig.%s: in-features %d does not match %s %d",
                   layer_names[layer], hp_linear_config_get_in_features (linear),
                   layer == LAYER_W2 ? "hidden-dim" : "dim", in_features);
      return FALSE;
    }
  if (hp_linear_config_get_out_features (linear) != out_features)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                   "HpFeedForwardConfig.%s: out-features %d does not match %s %d",
                   layer_names[layer], hp_linear_config_get_out_features (linear),
                   layer == LAYER_W2 ? "dim" : "hidden-dim", out_features);
      return FALSE;
    }
  if (hp_linear_config_get_dtype (linear) != self->dtype)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                   "HpFeedForwardConfig.%s: dtype %s does not match dtype %s",
                   layer_names[layer], hp_dtype_to_string (hp_linear_config_get_dtype (linear)),
                   hp_dtype_to_string (self->dtype));
      return FALSE;
    }
  return TRUE;
}

static gboolean
hp_feed_forward_config_validate (HpConfig  *config,
                                 GError   **error)
{
  HpFeedForwardConfig *self = HP_FEED_FORWARD_CONFIG (config);

  if (!HP_CONFIG_CLASS (hp_feed_forward_config_parent_class)->validate (config, error) ||
      !_hp_nn_check_dtype (config, self->dtype, error))
    return FALSE;
  for (gint i = 0; i < N_LAYERS; i++)
    if (!validate_layer (self, i, error))
      return FALSE;
  for (gint i = 0; i < N_LAYERS; i++)
    if (!check_layer (self, i, error))
      return FALSE;
  return TRUE;
}

static void
hp_feed_forward_config_class_init (HpFeedForwardConfigClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->constructed = hp_feed_forward_config_constructed;
  object_class->dispatch_properties_changed = hp_feed_forward_config_dispatch_properties_changed;
  HP_CONFIG_CLASS (klass)->validate = hp_feed_forward_config_validate;
  hp_config_class_install_fields (HP_CONFIG_CLASS (klass), feed_forward_config_fields,
                                  G_N_ELEMENTS (feed_forward_config_fields));
  hp_config_class_set_owner_type (HP_CONFIG_CLASS (klass), HP_TYPE_FEED_FORWARD);
}

static void
hp_feed_forward_config_init (HpFeedForwardConfig *self)
{
}

/**
 * hp_feed_forward_config_new:
 * @dim: the model dim, at least 1
 * @hidden_dim: the hidden dim, at least 1
 *
 * Creates the configuration of a feed-forward block with float32
 * parameters, whose layers are derived from the dims.
 *
 * Returns: (transfer full): a new [class@Hp.FeedForwardConfig]
 *
 * Since: 1.0
 */
HpFeedForwardConfig *
hp_feed_forward_config_new (gint dim,
                            gint hidden_dim)
{
  g_return_val_if_fail (dim >= 1, NULL);
  g_return_val_if_fail (hidden_dim >= 1, NULL);

  return g_object_new (HP_TYPE_FEED_FORWARD_CONFIG,
                       "dim", dim,
                       "hidden-dim", hidden_dim,
                       NULL);
}

/* HpFeedForward */

static gboolean
hp_feed_forward_setup (HpConfigurable  *configurable,
                       GError         **error)
{
  HpFeedForwardConfig *config = HP_FEED_FORWARD_CONFIG (hp_configurable_get_config (configurable));

  if (!HP_CONFIGURABLE_CLASS (hp_feed_forward_parent_class)->setup (configurable, error))
    return FALSE;

  for (gint i = 0; i < N_LAYERS; i++)
    {
      g_autoptr(GObject) layer = hp_config_build (HP_CONFIG (get_layer (config, i)), error);

      if (layer == NULL)
        {
          g_prefix_error (error, "HpFeedForwardConfig.%s: ", layer_names[i]);
          return FALSE;
        }
      if (!hp_module_add_child (HP_MODULE (configurable), layer_names[i], HP_MODULE (layer), error))
        return FALSE;
    }
  return TRUE;
}

static HpTensor *
run_layer (HpModule     *module,
           gint          layer,
           HpTensor     *input,
           GError      **error)
{
  return hp_module_call1 (hp_module_get_child (module, layer_names[layer]), input, error);
}

static GPtrArray *
hp_feed_forward_forward (HpModule   *module,
                         GPtrArray  *args,
                         GError    **error)
{
  HpTensor *input = _hp_nn_single_arg (module, args, error);
  g_autoptr(HpTensor) gate = NULL;
  g_autoptr(HpTensor) up = NULL;
  g_autoptr(HpTensor) hidden = NULL;

  if (input == NULL ||
      (gate = run_layer (module, LAYER_W1, input, error)) == NULL ||
      (up = run_layer (module, LAYER_W3, input, error)) == NULL ||
      (hidden = _hp_tensor_silu_mul (gate, up, error)) == NULL)
    return NULL;
  return _hp_nn_single_output (run_layer (module, LAYER_W2, hidden, error));
}

static void
hp_feed_forward_class_init (HpFeedForwardClass *klass)
{
  HpModuleClass *module_class = HP_MODULE_CLASS (klass);

  HP_CONFIGURABLE_CLASS (klass)->setup = hp_feed_forward_setup;
  module_class->forward = hp_feed_forward_forward;
  hp_module_type_set_forward_arg_names (G_TYPE_FROM_CLASS (klass),
                                        (const gchar * const[]) { "input", NULL });
}

static void
hp_feed_forward_init (HpFeedForward *self)
{
}

/**
 * hp_feed_forward_new:
 * @config: a [class@Hp.FeedForwardConfig]
 * @error: return location for a [struct@GLib.Error]
 *
 * Builds a feed-forward block from @config, as [method@Hp.Config.build] does.
 *
 * Returns: (transfer full): the new [class@Hp.FeedForward], or %NULL with
 *   [HP_ERROR_CONFIG][error@Hp.Error] when [property@Hp.FeedForwardConfig:dtype] is not a
 *   floating-point type or a layer configuration does not fit the dims
 *   or the dtype, or with the error of building a layer
 *
 * Since: 1.0
 */
HpFeedForward *
hp_feed_forward_new (HpFeedForwardConfig  *config,
                     GError              **error)
{
  g_return_val_if_fail (HP_IS_FEED_FORWARD_CONFIG (config), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return HP_FEED_FORWARD (hp_config_build (HP_CONFIG (config), error));
}

#include "hp-feed-forward-fields.c"
