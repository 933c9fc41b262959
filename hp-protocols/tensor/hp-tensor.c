/* hp-tensor.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <math.h>
#include <string.h>

#include "hp-tensor-enum-types.h"
#include "hp-tensor-private.h"

/**
 * HpTensor:
 *
 * A dense, contiguous, row-major tensor on the CPU with reverse-mode
 * automatic differentiation.
 *
 * A tensor has a dtype ([enum@Hp.DType]), a shape of up to [const@Hp.TENSOR_MAX_NDIM]
 * dims and a reference-counted buffer. Tensors never change after they are
 * made: every op returns a new tensor, and [method@Hp.Tensor.get_bytes] hands out
 * the buffer itself, without a copy.
 *
 * A floating point tensor with [property@Hp.Tensor:requires-grad] set is a leaf of
 * the autograd graph. While grad mode is on ([func@Hp.grad_mode_is_enabled]),
 * every op with such an input records how to compute the gradient of its
 * inputs; [method@Hp.Tensor.backward] then walks the graph in reverse and adds
 * the gradients into the leaves' [property@Hp.Tensor:grad].
 *
 * Since: 1.0
 */

typedef struct
{
  HpDType dtype;
  guint ndim;
  gint64 shape[HP_TENSOR_MAX_NDIM];
  gint64 numel;
  /* NULL only in a tensor made by g_object_new() that nobody has read
   * yet: it stands for the zero scalar. */
  GBytes *bytes;
  /* set for subclass instances that hold their data elsewhere */
  gboolean storageless;

  gboolean requires_grad;
  HpTensor *grad;
  HpAutogradNode *grad_fn;
  guint output_nr;
} HpTensorPrivate;

G_DEFINE_TYPE_WITH_PRIVATE (HpTensor, hp_tensor, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_DTYPE,
  PROP_NDIM,
  PROP_NUMEL,
  PROP_REQUIRES_GRAD,
  PROP_GRAD,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static const guint8 zero_scalar[8];

static GBytes *
hp_tensor_ensure_bytes (HpTensor *self)
{
  HpTensorPrivate *priv = hp_tensor_get_instance_private (self);

  if (priv->bytes == NULL && !priv->storageless)
    priv->bytes = g_bytes_new_static (zero_scalar, hp_dtype_get_size (priv->dtype));

  return priv->bytes;
}

static void
hp_tensor_finalize (GObject *object)
{
  HpTensor *self = HP_TENSOR (object);
  HpTensorPrivate *priv = hp_tensor_get_instance_private (self);

  g_clear_pointer (&priv->bytes, g_bytes_unref);
  g_clear_object (&priv->grad);
  g_clear_pointer (&priv->grad_fn, _hp_autograd_node_unref);

  G_OBJECT_CLASS (hp_tensor_parent_class)->finalize (object);
}

static void
hp_tensor_get_property (GObject    *object,
                        guint       prop_id,
                        GValue     *value,
                        GParamSpec *pspec)
{
  HpTensor *self = HP_TENSOR (object);
  HpTensorPrivate *priv = hp_tensor_get_instance_private (self);

  switch (prop_id)
    {
    case PROP_DTYPE:
      g_value_set_enum (value, priv->dtype);
      break;

    case PROP_NDIM:
      g_value_set_uint (value, priv->ndim);
      break;

    case PROP_NUMEL:
      g_value_set_int64 (value, priv->numel);
      break;

    case PROP_REQUIRES_GRAD:
      g_value_set_boolean (value, priv->requires_grad);
      break;

    case PROP_GRAD:
      g_value_set_object (value, priv->grad);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
hp_tensor_set_property (GObject      *object,
                        guint         prop_id,
                        const GValue *value,
                        GParamSpec   *pspec)
{
  HpTensor *self = HP_TENSOR (object);
  HpTensorPrivate *priv = hp_tensor_get_instance_private (self);

  switch (prop_id)
    {
    case PROP_DTYPE:
      priv->dtype = g_value_get_enum (value);
      break;

    case PROP_REQUIRES_GRAD:
      hp_tensor_set_requires_grad (self, g_value_get_boolean (value));
      break;

    case PROP_GRAD:
      hp_tensor_set_grad (self, g_value_get_object (value));
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static gchar    *hp_tensor_real_to_string     (HpTensor *self);
static HpTensor *hp_tensor_real_detach        (HpTensor *self);
static HpTensor *hp_tensor_real_new_ones_like (HpTensor *self);

static void
hp_tensor_class_init (HpTensorClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = hp_tensor_finalize;
  object_class->get_property = hp_tensor_get_property;
  object_class->set_property = hp_tensor_set_property;

  klass->to_string = hp_tensor_real_to_string;
  klass->detach = hp_tensor_real_detach;
  klass->new_ones_like = hp_tensor_real_new_ones_like;

  /**
   * HpTensor:dtype:
   *
   * The element type.
   *
   * Since: 1.0
   */
  properties[PROP_DTYPE] =
    g_param_spec_enum ("dtype", NULL, NULL,
                       HP_TYPE_DTYPE,
                       HP_DTYPE_FLOAT32,
                       (G_PARAM_READWRITE |
                        G_PARAM_CONSTRUCT_ONLY |
                        G_PARAM_STATIC_STRINGS));

  /**
   * HpTensor:ndim:
   *
   * The number of dimensions; 0 for a scalar.
   *
   * Since: 1.0
   */
  properties[PROP_NDIM] =
    g_param_spec_uint ("ndim", NULL, NULL,
                       0, HP_TENSOR_MAX_NDIM, 0,
                       (G_PARAM_READABLE |
                        G_PARAM_STATIC_STRINGS));

  /**
   * HpTensor:numel:
   *
   * The number of elements.
   *
   * Since: 1.0
   */
  properties[PROP_NUMEL] =
    g_param_spec_int64 ("numel", NULL, NULL,
                        0, G_MAXINT64, 1,
                        (G_PARAM_READABLE |
                         G_PARAM_STATIC_STRINGS));

  /**
   * HpTensor:requires-grad:
   *
   * Whether gradients are computed for this tensor. Only a leaf (a tensor
   * that no recorded op produced) of a floating point dtype can change it.
   *
   * Since: 1.0
   */
  properties[PROP_REQUIRES_GRAD] =
    g_param_spec_boolean ("requires-grad", NULL, NULL,
                          FALSE,
                          (G_PARAM_READWRITE |
                           G_PARAM_EXPLICIT_NOTIFY |
                           G_PARAM_STATIC_STRINGS));

  /**
   * HpTensor:grad:
   *
   * The gradient accumulated by [method@Hp.Tensor.backward] into this leaf, or
   * %NULL.
   *
   * Since: 1.0
   */
  properties[PROP_GRAD] =
    g_param_spec_object ("grad", NULL, NULL,
                         HP_TYPE_TENSOR,
                         (G_PARAM_READWRITE |
                          G_PARAM_EXPLICIT_NOTIFY |
                          G_PARAM_STATIC_STRINGS));

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
hp_tensor_init (HpTensor *self)
{
  HpTensorPrivate *priv = hp_tensor_get_instance_private (self);

  priv->dtype = HP_DTYPE_FLOAT32;
  priv->ndim = 0;
  priv->numel = 1;
}

static gsize
hp_tensor_nbytes (HpDType dtype,
                  gint64  numel)
{
  return (gsize) numel * hp_dtype_get_size (dtype);
}

HpTensor *
_hp_tensor_new_with_bytes (HpDType       dtype,
                           const gint64 *shape,
                           guint         ndim,
                           GBytes       *bytes)
{
  HpTensor *self;
  HpTensorPrivate *priv;

  g_return_val_if_fail (ndim <= HP_TENSOR_MAX_NDIM, NULL);
  g_return_val_if_fail (ndim == 0 || shape != NULL, NULL);
  g_return_val_if_fail (bytes != NULL, NULL);

  self = g_object_new (HP_TYPE_TENSOR, "dtype", dtype, NULL);
  priv = hp_tensor_get_instance_private (self);
  priv->ndim = ndim;
  if (ndim > 0)
    memcpy (priv->shape, shape, ndim * sizeof (gint64));
  priv->numel = _hp_shape_numel (shape, ndim);
  priv->bytes = g_bytes_ref (bytes);

  g_return_val_if_fail (g_bytes_get_size (bytes) == hp_tensor_nbytes (dtype, priv->numel), self);

  return self;
}

HpTensor *
_hp_tensor_new_meta (GType         type,
                     HpDType       dtype,
                     const gint64 *shape,
                     guint         ndim)
{
  HpTensor *self;
  HpTensorPrivate *priv;

  g_return_val_if_fail (g_type_is_a (type, HP_TYPE_TENSOR), NULL);
  g_return_val_if_fail (ndim <= HP_TENSOR_MAX_NDIM, NULL);

  self = g_object_new (type, "dtype", dtype, NULL);
  priv = hp_tensor_get_instance_private (self);
  priv->ndim = ndim;
  if (ndim > 0)
    memcpy (priv->shape, shape, ndim * sizeof (gint64));
  priv->numel = _hp_shape_numel (shape, ndim);
  priv->storageless = TRUE;

  return self;
}

gboolean
_hp_tensor_has_storage (HpTensor *self)
{
  HpTensorPrivate *priv = hp_tensor_get_instance_private (self);

  return !priv->storageless;
}

/* A tensor of @dtype holding @values, rounded (or truncated) to it */
HpTensor *
_hp_tensor_new_from_doubles (HpDType        dtype,
                             const gdouble *values,
                             const gint64  *shape,
                             guint          ndim)
{
  HpTensor *self = _hp_tensor_new_uninit (dtype, shape, ndim);
  HpTensorPrivate *priv = hp_tensor_get_instance_private (self);
  gpointer data = _hp_tensor_data (self);

  for (gint64 i = 0; i < priv->numel; i++)
    _hp_store_f64 (data, dtype, i, values[i]);
  return self;
}

HpTensor *
_hp_tensor_new_uninit (HpDType       dtype,
                       const gint64 *shape,
                       guint         ndim)
{
  g_autoptr(GBytes) bytes = _hp_storage_new (hp_tensor_nbytes (dtype, _hp_shape_numel (shape, ndim)));

  return _hp_tensor_new_with_bytes (dtype, shape, ndim, bytes);
}

gpointer
_hp_tensor_data (HpTensor *self)
{
  g_return_val_if_fail (_hp_tensor_has_storage (self), NULL);

  return (gpointer) g_bytes_get_data (hp_tensor_ensure_bytes (self), NULL);
}

HpAutogradNode *
_hp_tensor_get_grad_fn (HpTensor *self,
                        guint    *output_nr)
{
  HpTensorPrivate *priv = hp_tensor_get_instance_private (self);

  if (output_nr != NULL)
    *output_nr = priv->output_nr;
  return priv->grad_fn;
}

void
_hp_tensor_set_grad_fn (HpTensor       *self,
                        HpAutogradNode *node,
                        guint           output_nr)
{
  HpTensorPrivate *priv = hp_tensor_get_instance_private (self);

  g_clear_pointer (&priv->grad_fn, _hp_autograd_node_unref);
  priv->grad_fn = node != NULL ? _hp_autograd_node_ref (node) : NULL;
  priv->output_nr = output_nr;
  priv->requires_grad = node != NULL;
}

static HpTensor *
hp_tensor_new_filled (HpDType       dtype,
                      const gint64 *shape,
                      guint         ndim,
                      gdouble       value)
{
  HpTensor *self = _hp_tensor_new_uninit (dtype, shape, ndim);
  HpTensorPrivate *priv = hp_tensor_get_instance_private (self);
  gpointer data = _hp_tensor_data (self);

  if (value == 0.0)
    memset (data, 0, hp_tensor_nbytes (dtype, priv->numel));
  else
    for (gint64 i = 0; i < priv->numel; i++)
      _hp_store_f64 (data, dtype, i, value);

  return self;
}

HpTensor *
_hp_tensor_new_zeros_like (HpTensor *like)
{
  HpTensorPrivate *priv = hp_tensor_get_instance_private (like);

  return hp_tensor_new_filled (priv->dtype, priv->shape, priv->ndim, 0.0);
}

#define RETURN_IF_BAD_SHAPE(shape, ndim) \
  G_STMT_START { \
    g_return_val_if_fail ((ndim) <= HP_TENSOR_MAX_NDIM, NULL); \
    g_return_val_if_fail ((ndim) == 0 || (shape) != NULL, NULL); \
    for (guint _i = 0; _i < (ndim); _i++) \
      g_return_val_if_fail ((shape)[_i] >= 0, NULL); \
  } G_STMT_END

/**
 * hp_tensor_new_zeros:
 * @dtype: the element type
 * @shape: (array length=ndim) (nullable): the size of each dim
 * @ndim: the number of dims, at most [const@Hp.TENSOR_MAX_NDIM]
 *
 * Creates a tensor filled with zeros.
 *
 * Returns: (transfer full): a new tensor
 *
 * Since: 1.0
 */
HpTensor *
hp_tensor_new_zeros (HpDType       dtype,
                     const gint64 *shape,
                     guint         ndim)
{
  RETURN_IF_BAD_SHAPE (shape, ndim);
  return hp_tensor_new_filled (dtype, shape, ndim, 0.0);
}

/**
 * hp_tensor_new_ones:
 * @dtype: the element type
 * @shape: (array length=ndim) (nullable): the size of each dim
 * @ndim: the number of dims, at most [const@Hp.TENSOR_MAX_NDIM]
 *
 * Creates a tensor filled with ones.
 *
 * Returns: (transfer full): a new tensor
 *
 * Since: 1.0
 */
HpTensor *
hp_tensor_new_ones (HpDType       dtype,
                    const gint64 *shape,
                    guint         ndim)
{
  RETURN_IF_BAD_SHAPE (shape, ndim);
  return hp_tensor_new_filled (dtype, shape, ndim, 1.0);
}

/**
 * hp_tensor_new_full:
 * @dtype: the element type
 * @shape: (array length=ndim) (nullable): the size of each dim
 * @ndim: the number of dims, at most [const@Hp.TENSOR_MAX_NDIM]
 * @value: the value of every element (truncated toward zero for
 *   [HP_DTYPE_INT64][enum@Hp.DType])
 *
 * Creates a tensor with every element set to @value.
 *
 * Returns: (transfer full): a new tensor
 *
 * Since: 1.0
 */
HpTensor *
hp_tensor_new_full (HpDType       dtype,
                    const gint64 *shape,
                    guint         ndim,
                    gdouble       value)
{
  RETURN_IF_BAD_SHAPE (shape, ndim);
  return hp_tensor_new_filled (dtype, shape, ndim, value);
}

/**
 * hp_tensor_new_arange:
 * @dtype: the element type
 * @n: the number of elements, at least 0
 *
 * Creates the 1-d tensor `[0, 1, ..., n - 1]`.
 *
 * Returns: (transfer full): a new tensor
 *
 * Since: 1.0
 */
HpTensor *
hp_tensor_new_arange (HpDType dtype,
                      gint64  n)
{
  HpTensor *self;
  gpointer data;

  g_return_val_if_fail (n >= 0, NULL);

  self = _hp_tensor_new_uninit (dtype, &n, 1);
  data = _hp_tensor_data (self);
  for (gint64 i = 0; i < n; i++)
    {
      if (dtype == HP_DTYPE_INT64)
        ((gint64 *) data)[i] = i;
      else
        _hp_store_f64 (data, dtype, i, (gdouble) i);
    }

  return self;
}

static gboolean
hp_tensor_check_data_size (gsize          n_data,
                           const gint64  *shape,
                           guint          ndim,
                           GError       **error)
{
  gint64 numel;

  if (!_hp_shape_check (shape, ndim, error))
    return FALSE;

  numel = _hp_shape_numel (shape, ndim);
  if ((gint64) n_data != numel)
    {
      g_autofree gchar *shape_str = _hp_shape_to_string (shape, ndim);

      g_set_error (error, HP_ERROR, HP_ERROR_SHAPE,
                   "%" G_GSIZE_FORMAT " values given for shape %s, which has %"
                   G_GINT64_FORMAT " elements", n_data, shape_str, numel);
      return FALSE;
    }

  return TRUE;
}

/**
 * hp_tensor_new_from_data:
 * @dtype: the element type
 * @data: (array length=n_data): the elements in row-major order
 * @n_data: the number of elements in @data
 * @shape: (array length=ndim) (nullable): the size of each dim
 * @ndim: the number of dims
 * @error: return location for a [struct@GLib.Error]
 *
 * Creates a tensor from values given as doubles, converted to @dtype.
 * For 64-bit integers beyond 2^53 use [ctor@Hp.Tensor.new_from_int64_data].
 *
 * Returns: (transfer full): a new tensor, or %NULL with [HP_ERROR_SHAPE][error@Hp.Error]
 *   if @n_data does not match the shape
 *
 * Since: 1.0
 */
HpTensor *
hp_tensor_new_from_data (HpDType         dtype,
                         const gdouble  *data,
                         gsize           n_data,
                         const gint64   *shape,
                         guint           ndim,
                         GError        **error)
{
  g_return_val_if_fail (data != NULL || n_data == 0, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!hp_tensor_check_data_size (n_data, shape, ndim, error))
    return NULL;

  return _hp_tensor_new_from_doubles (dtype, data, shape, ndim);
}

/**
 * hp_tensor_new_from_int64_data:
 * @data: (array length=n_data): the elements in row-major order
 * @n_data: the number of elements in @data
 * @shape: (array length=ndim) (nullable): the size of each dim
 * @ndim: the number of dims
 * @error: return location for a [struct@GLib.Error]
 *
 * Creates an [HP_DTYPE_INT64][enum@Hp.DType] tensor, such as token ids or class targets.
 *
 * Returns: (transfer full): a new tensor, or %NULL with [HP_ERROR_SHAPE][error@Hp.Error]
 *   if @n_data does not match the shape
 *
 * Since: 1.0
 */
HpTensor *
hp_tensor_new_from_int64_data (const gint64  *data,
                               gsize          n_data,
                               const gint64  *shape,
                               guint          ndim,
                               GError       **error)
{
  HpTensor *self;

  g_return_val_if_fail (data != NULL || n_data == 0, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!hp_tensor_check_data_size (n_data, shape, ndim, error))
    return NULL;

  self = _hp_tensor_new_uninit (HP_DTYPE_INT64, shape, ndim);
  if (n_data > 0)
    memcpy (_hp_tensor_data (self), data, n_data * sizeof (gint64));

  return self;
}

/**
 * hp_tensor_new_from_bytes:
 * @bytes: the elements in row-major order, in the host's byte order
 * @dtype: the element type
 * @shape: (array length=ndim) (nullable): the size of each dim
 * @ndim: the number of dims
 * @error: return location for a [struct@GLib.Error]
 *
 * Creates a tensor over @bytes without copying them when the data is
 * aligned for @dtype (it always is for buffers from malloc or numpy);
 * otherwise the data is copied once into aligned storage. The tensor keeps
 * a reference to @bytes, which must not change afterwards.
 *
 * Returns: (transfer full): a new tensor, or %NULL with [HP_ERROR_SHAPE][error@Hp.Error]
 *   if the size of @bytes is not the number of elements times the element
 *   size
 *
 * Since: 1.0
 */
HpTensor *
hp_tensor_new_from_bytes (GBytes        *bytes,
                          HpDType        dtype,
                          const gint64  *shape,
                          guint          ndim,
                          GError       **error)
{
  gsize elem_size = hp_dtype_get_size (dtype);
  gsize size = 0;
  gconstpointer data;
  gint64 numel;

  g_return_val_if_fail (bytes != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!_hp_shape_check (shape, ndim, error))
    return NULL;

  numel = _hp_shape_numel (shape, ndim);
  data = g_bytes_get_data (bytes, &size);
  if (size != hp_tensor_nbytes (dtype, numel))
    {
      g_autofree gchar *shape_str = _hp_shape_to_string (shape, ndim);

      g_set_error (error, HP_ERROR, HP_ERROR_SHAPE,
                   "%" G_GSIZE_FORMAT " bytes given for a %s tensor of shape %s, "
                   "which needs %" G_GSIZE_FORMAT " bytes",
                   size, hp_dtype_to_string (dtype), shape_str,
                   hp_tensor_nbytes (dtype, numel));
      return NULL;
    }

  if (size > 0 && ((guintptr) data) % elem_size != 0)
    {
      HpTensor *self = _hp_tensor_new_uninit (dtype, shape, ndim);

      memcpy (_hp_tensor_data (self), data, size);
      return self;
    }

  return _hp_tensor_new_with_bytes (dtype, shape, ndim, bytes);
}

/**
 * hp_tensor_get_shape:
 * @self: a [class@Hp.Tensor]
 * @ndim: (out) (optional): return location for the number of dims
 *
 * Gets the size of each dim.
 *
 * Returns: (array length=ndim) (transfer none): the shape, owned by @self
 *
 * Since: 1.0
 */
const gint64 *
hp_tensor_get_shape (HpTensor *self,
                     guint    *ndim)
{
  HpTensorPrivate *priv;

  g_return_val_if_fail (HP_IS_TENSOR (self), NULL);

  priv = hp_tensor_get_instance_private (self);
  if (ndim != NULL)
    *ndim = priv->ndim;
  return priv->shape;
}

/**
 * hp_tensor_get_ndim:
 * @self: a [class@Hp.Tensor]
 *
 * Gets the number of dims.
 *
 * Returns: the number of dims; 0 for a scalar
 *
 * Since: 1.0
 */
guint
hp_tensor_get_ndim (HpTensor *self)
{
  HpTensorPrivate *priv;

  g_return_val_if_fail (HP_IS_TENSOR (self), 0);

  priv = hp_tensor_get_instance_private (self);
  return priv->ndim;
}

/**
 * hp_tensor_get_numel:
 * @self: a [class@Hp.Tensor]
 *
 * Gets the number of elements, the product of the shape.
 *
 * Returns: the number of elements
 *
 * Since: 1.0
 */
gint64
hp_tensor_get_numel (HpTensor *self)
{
  HpTensorPrivate *priv;

  g_return_val_if_fail (HP_IS_TENSOR (self), 0);

  priv = hp_tensor_get_instance_private (self);
  return priv->numel;
}

/**
 * hp_tensor_get_dtype:
 * @self: a [class@Hp.Tensor]
 *
 * Gets the element type.
 *
 * Returns: the dtype
 *
 * Since: 1.0
 */
HpDType
hp_tensor_get_dtype (HpTensor *self)
{
  HpTensorPrivate *priv;

  g_return_val_if_fail (HP_IS_TENSOR (self), HP_DTYPE_FLOAT32);

  priv = hp_tensor_get_instance_private (self);
  return priv->dtype;
}

/**
 * hp_tensor_get_bytes:
 * @self: a [class@Hp.Tensor]
 *
 * Gets the buffer of the tensor: its elements in row-major order, in the
 * host's byte order. No copy is made; the bytes must not be changed.
 * A distributed tensor has no bytes of its own: read its local tensor
 * or its full tensor.
 *
 * Returns: (transfer full): the buffer
 *
 * Since: 1.0
 */
GBytes *
hp_tensor_get_bytes (HpTensor *self)
{
  g_return_val_if_fail (HP_IS_TENSOR (self), NULL);
  g_return_val_if_fail (_hp_tensor_has_storage (self), NULL);

  return g_bytes_ref (hp_tensor_ensure_bytes (self));
}

/**
 * hp_tensor_to_float64_array:
 * @self: a [class@Hp.Tensor]
 * @n_data: (out): return location for the number of elements
 *
 * Copies the elements, converted to doubles, into a new array. Handy
 * where no array library is at hand (JavaScript, Vala, tests).
 *
 * Returns: (array length=n_data) (transfer full): the elements in
 *   row-major order
 *
 * Since: 1.0
 */
gdouble *
hp_tensor_to_float64_array (HpTensor *self,
                            gsize    *n_data)
{
  HpTensorPrivate *priv;
  gconstpointer data;
  gdouble *out;

  g_return_val_if_fail (HP_IS_TENSOR (self), NULL);
  g_return_val_if_fail (n_data != NULL, NULL);
  g_return_val_if_fail (_hp_tensor_has_storage (self), NULL);

  priv = hp_tensor_get_instance_private (self);
  data = _hp_tensor_data (self);
  out = g_new (gdouble, MAX (priv->numel, 1));
  for (gint64 i = 0; i < priv->numel; i++)
    out[i] = _hp_load_f64 (data, priv->dtype, i);

  *n_data = priv->numel;
  return out;
}

/**
 * hp_tensor_item:
 * @self: a [class@Hp.Tensor]
 * @error: return location for a [struct@GLib.Error]
 *
 * Gets the value of a one-element tensor, such as a loss.
 *
 * Returns: the value; 0 with [HP_ERROR_SHAPE][error@Hp.Error] set if @self does not have
 *   exactly one element
 *
 * Since: 1.0
 */
gdouble
hp_tensor_item (HpTensor  *self,
                GError   **error)
{
  HpTensorPrivate *priv;

  g_return_val_if_fail (HP_IS_TENSOR (self), 0.0);
  g_return_val_if_fail (error == NULL || *error == NULL, 0.0);

  priv = hp_tensor_get_instance_private (self);
  if (priv->storageless)
    {
      g_set_error_literal (error, HP_ERROR, HP_ERROR_STATE,
                           "item() reads this rank's data; take the full tensor "
                           "of a distributed tensor first");
      return 0.0;
    }
  if (priv->numel != 1)
    {
      g_autofree gchar *shape_str = _hp_shape_to_string (priv->shape, priv->ndim);

      g_set_error (error, HP_ERROR, HP_ERROR_SHAPE,
                   "item() needs a tensor with one element, not shape %s",
                   shape_str);
      return 0.0;
    }

  return _hp_load_f64 (_hp_tensor_data (self), priv->dtype, 0);
}

/* Prints at most this many elements per dim before eliding the middle */
#define EDGE_ITEMS 3
#define SUMMARIZE_THRESHOLD 1000

static void
append_element (GString    *out,
                gconstpointer data,
                HpDType     dtype,
                gint64      index)
{
  if (dtype == HP_DTYPE_INT64)
    g_string_append_printf (out, "%" G_GINT64_FORMAT, ((const gint64 *) data)[index]);
  else
    {
      gdouble v = _hp_load_f64 (data, dtype, index);

      if (isfinite (v) && v == nearbyint (v) && fabs (v) < 1e16)
        g_string_append_printf (out, "%.0f.", v);
      else
        g_string_append_printf (out, "%.6g", v);
    }
}

static void
append_dims (GString            *out,
             gconstpointer       data,
             HpDType             dtype,
             const gint64       *shape,
             const gint64       *strides,
             guint               ndim,
             guint               dim,
             gint64              offset,
             gboolean            summarize)
{
  gint64 size = shape[dim];

  g_string_append_c (out, '[');
  for (gint64 i = 0; i < size; i++)
    {
      if (summarize && size > 2 * EDGE_ITEMS && i == EDGE_ITEMS)
        {
          g_string_append (out, "...");
          i = size - EDGE_ITEMS - 1;
          if (dim + 1 < ndim)
            {
              g_string_append (out, ",\n");
              for (guint k = 0; k <= dim + 7; k++)
                g_string_append_c (out, ' ');
            }
          else
            g_string_append (out, ", ");
          continue;
        }

      if (dim + 1 == ndim)
        append_element (out, data, dtype, offset + i);
      else
        append_dims (out, data, dtype, shape, strides, ndim, dim + 1,
                     offset + i * strides[dim], summarize);

      if (i + 1 < size)
        {
          if (dim + 1 < ndim)
            {
              g_string_append_c (out, ',');
              for (guint k = dim + 1; k < ndim; k++)
                g_string_append_c (out, '\n');
              for (guint k = 0; k <= dim + 7; k++)
                g_string_append_c (out, ' ');
            }
          else
            g_string_append (out, ", ");
        }
    }
  g_string_append_c (out, ']');
}

static gchar *
hp_tensor_real_to_string (HpTensor *self)
{
  HpTensorPrivate *priv;
  GString *out;
  gint64 strides[HP_TENSOR_MAX_NDIM];
  gconstpointer data;

  priv = hp_tensor_get_instance_private (self);
  data = _hp_tensor_data (self);
  out = g_string_new ("tensor(");

  if (priv->ndim == 0)
    append_element (out, data, priv->dtype, 0);
  else
    {
      _hp_shape_strides (priv->shape, priv->ndim, strides);
      append_dims (out, data, priv->dtype, priv->shape, strides, priv->ndim, 0, 0,
                   priv->numel > SUMMARIZE_THRESHOLD);
    }

  if (priv->numel == 0)
    {
      g_autofree gchar *shape_str = _hp_shape_to_string (priv->shape, priv->ndim);
      g_string_append_printf (out, ", size=%s", shape_str);
    }
  g_string_append_printf (out, ", dtype=%s", hp_dtype_to_string (priv->dtype));
  if (priv->grad_fn != NULL)
    g_string_append_printf (out, ", grad_fn=<%s>", _hp_autograd_node_get_name (priv->grad_fn));
  else if (priv->requires_grad)
    g_string_append (out, ", requires_grad=True");
  g_string_append_c (out, ')');

  return g_string_free (out, FALSE);
}

/**
 * hp_tensor_to_string:
 * @self: a [class@Hp.Tensor]
 *
 * Formats the tensor for people, in the style of `torch.Tensor.__repr__`:
 * `tensor([[1., 2.], [3., 4.]], dtype=float32)`. Tensors of more than a
 * thousand elements show the first and last three entries of each dim.
 *
 * A distributed tensor describes itself, its mesh and its placements
 * instead (no communication).
 *
 * Returns: (transfer full): the text
 *
 * Since: 1.0
 */
gchar *
hp_tensor_to_string (HpTensor *self)
{
  HpTensorToStringFunc to_string;

  g_return_val_if_fail (HP_IS_TENSOR (self), NULL);

  to_string = HP_TENSOR_GET_CLASS (self)->to_string;
  return to_string (self);
}

/**
 * hp_tensor_allclose:
 * @self: a [class@Hp.Tensor]
 * @other: the tensor to compare with
 * @rtol: relative tolerance
 * @atol: absolute tolerance
 *
 * Compares two tensors element by element: each pair must satisfy
 * `|self - other| <= atol + rtol * |other|`, like `numpy.allclose`
 * without broadcasting. NaN equals nothing; equal infinities are close.
 * Tensors of different shapes are not close; dtypes may differ.
 *
 * Returns: %TRUE if the tensors have the same shape and all elements are
 *   close
 *
 * Since: 1.0
 */
gboolean
hp_tensor_allclose (HpTensor *self,
                    HpTensor *other,
                    gdouble   rtol,
                    gdouble   atol)
{
  HpTensorPrivate *a;
  HpTensorPrivate *b;
  gconstpointer a_data;
  gconstpointer b_data;

  g_return_val_if_fail (HP_IS_TENSOR (self), FALSE);
  g_return_val_if_fail (HP_IS_TENSOR (other), FALSE);
  g_return_val_if_fail (_hp_tensor_has_storage (self), FALSE);
  g_return_val_if_fail (_hp_tensor_has_storage (other), FALSE);

  a = hp_tensor_get_instance_private (self);
  b = hp_tensor_get_instance_private (other);
  if (!_hp_shape_equal (a->shape, a->ndim, b->shape, b->ndim))
    return FALSE;

  a_data = _hp_tensor_data (self);
  b_data = _hp_tensor_data (other);
  for (gint64 i = 0; i < a->numel; i++)
    {
      gdouble x = _hp_load_f64 (a_data, a->dtype, i);
      gdouble y = _hp_load_f64 (b_data, b->dtype, i);

      if (x == y)
        continue;
      if (!(fabs (x - y) <= atol + rtol * fabs (y)))
        return FALSE;
    }

  return TRUE;
}

/**
 * hp_tensor_get_requires_grad:
 * @self: a [class@Hp.Tensor]
 *
 * Tells whether gradients flow to this tensor: it is a leaf with
 * [property@Hp.Tensor:requires-grad] set, or a recorded op produced it.
 *
 * Returns: %TRUE if gradients are computed for @self
 *
 * Since: 1.0
 */
gboolean
hp_tensor_get_requires_grad (HpTensor *self)
{
  HpTensorPrivate *priv;

  g_return_val_if_fail (HP_IS_TENSOR (self), FALSE);

  priv = hp_tensor_get_instance_private (self);
  return priv->requires_grad;
}

/**
 * hp_tensor_set_requires_grad:
 * @self: a leaf [class@Hp.Tensor] of a floating point dtype
 * @requires_grad: whether to compute gradients for @self
 *
 * Marks a leaf tensor, such as a parameter, as needing a gradient. A
 * tensor produced by a recorded op cannot change it (use
 * [method@Hp.Tensor.detach] to get a tensor outside the graph).
 *
 * Since: 1.0
 */
void
hp_tensor_set_requires_grad (HpTensor *self,
                             gboolean  requires_grad)
{
  HpTensorPrivate *priv;

  g_return_if_fail (HP_IS_TENSOR (self));

  priv = hp_tensor_get_instance_private (self);
  g_return_if_fail (priv->grad_fn == NULL);
  g_return_if_fail (!requires_grad || hp_dtype_is_floating (priv->dtype));

  requires_grad = !!requires_grad;
  if (priv->requires_grad == requires_grad)
    return;

  priv->requires_grad = requires_grad;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_REQUIRES_GRAD]);
}

/**
 * hp_tensor_is_leaf:
 * @self: a [class@Hp.Tensor]
 *
 * Tells whether @self is a leaf of the autograd graph, that is no
 * recorded op produced it. Only leaves accumulate [property@Hp.Tensor:grad].
 *
 * Returns: %TRUE for a leaf
 *
 * Since: 1.0
 */
gboolean
hp_tensor_is_leaf (HpTensor *self)
{
  HpTensorPrivate *priv;

  g_return_val_if_fail (HP_IS_TENSOR (self), FALSE);

  priv = hp_tensor_get_instance_private (self);
  return priv->grad_fn == NULL;
}

/**
 * hp_tensor_get_grad:
 * @self: a [class@Hp.Tensor]
 *
 * Gets the gradient accumulated into this leaf by [method@Hp.Tensor.backward].
 *
 * Returns: (transfer none) (nullable): the gradient, or %NULL if none has
 *   been computed since the last [method@Hp.Tensor.zero_grad]
 *
 * Since: 1.0
 */
HpTensor *
hp_tensor_get_grad (HpTensor *self)
{
  HpTensorPrivate *priv;

  g_return_val_if_fail (HP_IS_TENSOR (self), NULL);

  priv = hp_tensor_get_instance_private (self);
  return priv->grad;
}

/**
 * hp_tensor_set_grad:
 * @self: a [class@Hp.Tensor]
 * @grad: (nullable): the new gradient, of the same shape and dtype, or
 *   %NULL
 *
 * Replaces the gradient of @self, as an optimiser or a gradient clipper
 * does.
 *
 * Since: 1.0
 */
void
hp_tensor_set_grad (HpTensor *self,
                    HpTensor *grad)
{
  HpTensorPrivate *priv;

  g_return_if_fail (HP_IS_TENSOR (self));
  g_return_if_fail (grad == NULL || HP_IS_TENSOR (grad));

  priv = hp_tensor_get_instance_private (self);
  if (grad != NULL)
    {
      HpTensorPrivate *gpriv = hp_tensor_get_instance_private (grad);

      g_return_if_fail (_hp_shape_equal (gpriv->shape, gpriv->ndim, priv->shape, priv->ndim));
      g_return_if_fail (gpriv->dtype == priv->dtype);
    }

  if (g_set_object (&priv->grad, grad))
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_GRAD]);
}

/**
 * hp_tensor_zero_grad:
 * @self: a [class@Hp.Tensor]
 *
 * Drops the accumulated gradient, so that the next backward pass starts
 * from nothing (the `set_to_none` behaviour of PyTorch).
 *
 * Since: 1.0
 */
void
hp_tensor_zero_grad (HpTensor *self)
{
  g_return_if_fail (HP_IS_TENSOR (self));

  hp_tensor_set_grad (self, NULL);
}

static HpTensor *
hp_tensor_real_detach (HpTensor *self)
{
  HpTensorPrivate *priv;

  priv = hp_tensor_get_instance_private (self);
  return _hp_tensor_new_with_bytes (priv->dtype, priv->shape, priv->ndim,
                                    hp_tensor_ensure_bytes (self));
}

static HpTensor *
hp_tensor_real_new_ones_like (HpTensor *self)
{
  HpTensorPrivate *priv = hp_tensor_get_instance_private (self);

  return hp_tensor_new_filled (priv->dtype, priv->shape, priv->ndim, 1.0);
}

HpTensor *
_hp_tensor_new_ones_like (HpTensor *self)
{
  HpTensorNewOnesLikeFunc new_ones_like = HP_TENSOR_GET_CLASS (self)->new_ones_like;

  return new_ones_like (self);
}

/**
 * hp_tensor_detach:
 * @self: a [class@Hp.Tensor]
 *
 * Makes a tensor that shares the data of @self but has no gradient
 * history and does not require gradients. A distributed tensor gives a
 * distributed tensor over the same local data.
 *
 * Returns: (transfer full): a new leaf tensor over the same buffer
 *
 * Since: 1.0
 */
HpTensor *
hp_tensor_detach (HpTensor *self)
{
  HpTensorDetachFunc detach;

  g_return_val_if_fail (HP_IS_TENSOR (self), NULL);

  detach = HP_TENSOR_GET_CLASS (self)->detach;
  return detach (self);
}

/**
 * hp_tensor_backward:
 * @self: the tensor to differentiate, usually a scalar loss
 * @grad: (nullable): the gradient of the final result with respect to
 *   @self, of the same shape and dtype; %NULL means ones and needs @self
 *   to have one element
 * @error: return location for a [struct@GLib.Error]
 *
 * Computes the gradient of @self with respect to every leaf that requires
 * gradients and adds it to the leaf's [property@Hp.Tensor:grad]. Gradients
 * accumulate over calls until [method@Hp.Tensor.zero_grad]. The graph is freed
 * afterwards: a second backward through the same ops is an error.
 *
 * On error no gradient changes.
 *
 * Returns: %TRUE on success; %FALSE with [HP_ERROR_STATE][error@Hp.Error] if @self does not
 *   require gradients or the graph was freed, [HP_ERROR_SHAPE][error@Hp.Error] if @grad
 *   does not fit
 *
 * Since: 1.0
 */
gboolean
hp_tensor_backward (HpTensor  *self,
                    HpTensor  *grad,
                    GError   **error)
{
  g_return_val_if_fail (HP_IS_TENSOR (self), FALSE);
  g_return_val_if_fail (grad == NULL || HP_IS_TENSOR (grad), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  return _hp_autograd_run_backward (self, grad, error);
}

/* Frees an entry of an object array that may hold NULL */
void
_hp_object_unref_nullable (gpointer object)
{
  if (object != NULL)
    g_object_unref (object);
}

/* Takes an array returned with transfer full, as a callback returns it:
 * its elements' references move into a new array that drops them when
 * freed, whether or not the given array had a free function (arrays
 * made by language bindings have none) */
GPtrArray *
_hp_object_array_take (GPtrArray *array)
{
  gsize n = 0;
  gpointer *items = g_ptr_array_steal (array, &n);
  GPtrArray *out = g_ptr_array_new_full (n, _hp_object_unref_nullable);

  for (gsize j = 0; j < n; j++)
    g_ptr_array_add (out, items[j]);
  g_free (items);
  g_ptr_array_unref (array);
  return out;
}

/* A new array holding new references to the objects of @array, NULL
 * entries kept, that drops them when freed */
GPtrArray *
_hp_object_array_copy (GPtrArray *array)
{
  GPtrArray *out = g_ptr_array_new_full (array->len, _hp_object_unref_nullable);

  for (guint i = 0; i < array->len; i++)
    {
      gpointer object = g_ptr_array_index (array, i);

      g_ptr_array_add (out, object != NULL ? g_object_ref (object) : NULL);
    }
  return out;
}
