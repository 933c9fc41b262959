/* hp-random.c: counter-based random tensors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Element i (row-major index in the full tensor) of a random tensor made
 * with seed s is a pure function of (i, s): the Philox4x32-10 block cipher
 * of Salmon et al., "Parallel random numbers: as easy as 1, 2, 3" (SC'11),
 * encrypts the counter (i mod 2^32, i div 2^32, 0, 0) under the key
 * (s mod 2^32, s div 2^32). The four 32-bit words out of it make two
 * 53-bit uniforms u1, u2 in [0, 1):
 *
 *   uniform(low, high):  low + (high - low) * u1 (in two halves when
 *                        high - low overflows)
 *   randn:               sqrt(-2 log(1 - u1)) * cos(2 pi u2)   (Box-Muller)
 *
 * The value is computed in double precision and then rounded to the dtype.
 * So any slice of a random tensor can be made on its own, and a sharded
 * parameter initialised on N ranks equals the same slice of the tensor
 * initialised on one rank with the same seed.
 */

#include "config.h"

#include <math.h>

#include "hp-tensor-private.h"

#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u

static inline void
philox4x32_10 (guint64  counter,
               guint64  seed,
               guint32  out[4])
{
  guint32 c0 = (guint32) counter, c1 = (guint32) (counter >> 32), c2 = 0, c3 = 0;
  guint32 k0 = (guint32) seed, k1 = (guint32) (seed >> 32);

  for (int round = 0; round < 10; round++)
    {
      guint64 p0 = (guint64) PHILOX_M0 * c0;
      guint64 p1 = (guint64) PHILOX_M1 * c2;
      guint32 n0 = (guint32) (p1 >> 32) ^ c1 ^ k0;
      guint32 n2 = (guint32) (p0 >> 32) ^ c3 ^ k1;

      c1 = (guint32) p1;
      c3 = (guint32) p0;
      c0 = n0;
      c2 = n2;
      k0 += PHILOX_W0;
      k1 += PHILOX_W1;
    }

  out[0] = c0;
  out[1] = c1;
  out[2] = c2;
  out[3] = c3;
}

static inline gdouble
to_unit (guint32 hi,
         guint32 lo)
{
  guint64 bits = (((guint64) hi << 32) | lo) >> 11;

  return (gdouble) bits * (1.0 / 9007199254740992.0);
}

gdouble
_hp_random_uniform (guint64 counter,
                    guint64 seed)
{
  guint32 words[4];

  philox4x32_10 (counter, seed, words);
  return to_unit (words[0], words[1]);
}

typedef enum { RANDOM_UNIFORM, RANDOM_NORMAL } RandomKind;

static gdouble
random_value (RandomKind kind,
              guint64    index,
              guint64    seed,
              gdouble    low,
              gdouble    high)
{
  guint32 words[4];
  gdouble u1, u2;

  philox4x32_10 (index, seed, words);
  u1 = to_unit (words[0], words[1]);
  if (kind == RANDOM_UNIFORM)
    {
      gdouble width = high - low;
      gdouble half;

      if (isfinite (width))
        return low + width * u1;
      /* a range wider than the largest double: two steps of half of it */
      half = (high / 2 - low / 2) * u1;
      return low + half + half;
    }

  u2 = to_unit (words[2], words[3]);
  return sqrt (-2.0 * log1p (-u1)) * cos (2.0 * G_PI * u2);
}

static HpTensor *
random_slice (RandomKind     kind,
              HpDType        dtype,
              const gint64  *global_shape,
              guint          ndim,
              const gint64  *offsets,
              guint          n_offsets,
              const gint64  *shape,
              guint          n_shape,
              gdouble        low,
              gdouble        high,
              guint64        seed,
              GError       **error)
{
  gint64 global_strides[HP_TENSOR_MAX_NDIM];
  gint64 index[HP_TENSOR_MAX_NDIM] = { 0 };
  HpTensor *out;
  gpointer data;
  gint64 numel;

  if (!hp_dtype_is_floating (dtype))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "random tensors must be float32 or float64, not %s",
                   hp_dtype_to_string (dtype));
      return NULL;
    }
  if (!_hp_shape_check (global_shape, ndim, error) ||
      !_hp_shape_check (shape, n_shape, error))
    return NULL;
  if (n_offsets != ndim || n_shape != ndim)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_SHAPE,
                   "random slice: %u offsets and %u sizes given for %u dims",
                   n_offsets, n_shape, ndim);
      return NULL;
    }
  for (guint d = 0; d < ndim; d++)
    if (offsets[d] < 0 || offsets[d] + shape[d] > global_shape[d])
      {
        g_autofree gchar *g = _hp_shape_to_string (global_shape, ndim);

        g_set_error (error, HP_ERROR, HP_ERROR_SHAPE,
                     "random slice: dim %u range [%" G_GINT64_FORMAT ", %"
                     G_GINT64_FORMAT ") is outside the shape %s",
                     d, offsets[d], offsets[d] + shape[d], g);
        return NULL;
      }

  _hp_shape_strides (global_shape, ndim, global_strides);
  numel = _hp_shape_numel (shape, ndim);
  out = _hp_tensor_new_uninit (dtype, shape, ndim);
  data = _hp_tensor_data (out);

  for (gint64 i = 0; i < numel; i++)
    {
      gint64 global = 0;

      for (guint d = 0; d < ndim; d++)
        global += (offsets[d] + index[d]) * global_strides[d];

      _hp_store_f64 (data, dtype, i, random_value (kind, (guint64) global, seed, low, high));

      for (guint d = ndim; d-- > 0;)
        {
          if (++index[d] < shape[d])
            break;
          index[d] = 0;
        }
    }

  return out;
}

/**
 * hp_tensor_new_randn:
 * @dtype: [HP_DTYPE_FLOAT32][enum@Hp.DType] or [HP_DTYPE_FLOAT64][enum@Hp.DType]
 * @shape: (array length=ndim) (nullable): the size of each dim
 * @ndim: the number of dims
 * @seed: the seed
 *
 * Creates a tensor of standard normal samples. Element i is a function of
 * i and @seed only (Philox4x32-10 and Box-Muller), so the same seed gives
 * the same tensor on every machine, and [ctor@Hp.Tensor.new_randn_slice] gives
 * any part of it.
 *
 * Returns: (transfer full): a new tensor
 *
 * Since: 1.0
 */
HpTensor *
hp_tensor_new_randn (HpDType       dtype,
                     const gint64 *shape,
                     guint         ndim,
                     guint64       seed)
{
  gint64 zeros[HP_TENSOR_MAX_NDIM] = { 0 };

  g_return_val_if_fail (hp_dtype_is_floating (dtype), NULL);
  g_return_val_if_fail (_hp_shape_check (shape, ndim, NULL), NULL);

  return random_slice (RANDOM_NORMAL, dtype, shape, ndim, zeros, ndim, shape, ndim,
                       0.0, 1.0, seed, NULL);
}

/**
 * hp_tensor_new_uniform:
 * @dtype: [HP_DTYPE_FLOAT32][enum@Hp.DType] or [HP_DTYPE_FLOAT64][enum@Hp.DType]
 * @shape: (array length=ndim) (nullable): the size of each dim
 * @ndim: the number of dims
 * @low: the lower bound (included)
 * @high: the upper bound (excluded)
 * @seed: the seed
 *
 * Creates a tensor of samples uniform in [@low, @high), from the same
 * counter-based generator as [ctor@Hp.Tensor.new_randn].
 *
 * Returns: (transfer full): a new tensor
 *
 * Since: 1.0
 */
HpTensor *
hp_tensor_new_uniform (HpDType       dtype,
                       const gint64 *shape,
                       guint         ndim,
                       gdouble       low,
                       gdouble       high,
                       guint64       seed)
{
  gint64 zeros[HP_TENSOR_MAX_NDIM] = { 0 };

  g_return_val_if_fail (hp_dtype_is_floating (dtype), NULL);
  g_return_val_if_fail (_hp_shape_check (shape, ndim, NULL), NULL);

  return random_slice (RANDOM_UNIFORM, dtype, shape, ndim, zeros, ndim, shape, ndim,
                       low, high, seed, NULL);
}

/**
 * hp_tensor_new_randn_slice:
 * @dtype: [HP_DTYPE_FLOAT32][enum@Hp.DType] or [HP_DTYPE_FLOAT64][enum@Hp.DType]
 * @global_shape: (array length=ndim): the shape of the whole random tensor
 * @ndim: the number of dims
 * @offsets: (array length=n_offsets): where the slice starts in each dim
 * @n_offsets: the number of offsets, equal to @ndim
 * @shape: (array length=n_shape): the size of the slice in each dim
 * @n_shape: the number of sizes, equal to @ndim
 * @seed: the seed
 * @error: return location for a [struct@GLib.Error]
 *
 * Creates the slice `[offsets, offsets + shape)` of
 * `hp_tensor_new_randn (dtype, global_shape, ndim, seed)` without making
 * the rest of it. Distributed initialisation relies on this.
 *
 * Returns: (transfer full): a new tensor of shape @shape, or %NULL with
 *   [HP_ERROR_SHAPE][error@Hp.Error] if the slice is not inside @global_shape
 *
 * Since: 1.0
 */
HpTensor *
hp_tensor_new_randn_slice (HpDType        dtype,
                           const gint64  *global_shape,
                           guint          ndim,
                           const gint64  *offsets,
                           guint          n_offsets,
                           const gint64  *shape,
                           guint          n_shape,
                           guint64        seed,
                           GError       **error)
{
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return random_slice (RANDOM_NORMAL, dtype, global_shape, ndim, offsets, n_offsets,
                       shape, n_shape, 0.0, 1.0, seed, error);
}

/**
 * hp_tensor_new_uniform_slice:
 * @dtype: [HP_DTYPE_FLOAT32][enum@Hp.DType] or [HP_DTYPE_FLOAT64][enum@Hp.DType]
 * @global_shape: (array length=ndim): the shape of the whole random tensor
 * @ndim: the number of dims
 * @offsets: (array length=n_offsets): where the slice starts in each dim
 * @n_offsets: the number of offsets, equal to @ndim
 * @shape: (array length=n_shape): the size of the slice in each dim
 * @n_shape: the number of sizes, equal to @ndim
 * @low: the lower bound (included)
 * @high: the upper bound (excluded)
 * @seed: the seed
 * @error: return location for a [struct@GLib.Error]
 *
 * Creates the slice `[offsets, offsets + shape)` of
 * `hp_tensor_new_uniform (dtype, global_shape, ndim, low, high, seed)`
 * without making the rest of it.
 *
 * Returns: (transfer full): a new tensor of shape @shape, or %NULL with
 *   [HP_ERROR_SHAPE][error@Hp.Error] if the slice is not inside @global_shape
 *
 * Since: 1.0
 */
HpTensor *
hp_tensor_new_uniform_slice (HpDType        dtype,
                             const gint64  *global_shape,
                             guint          ndim,
                             const gint64  *offsets,
                             guint          n_offsets,
                             const gint64  *shape,
                             guint          n_shape,
                             gdouble        low,
                             gdouble        high,
                             guint64        seed,
                             GError       **error)
{
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return random_slice (RANDOM_UNIFORM, dtype, global_shape, ndim, offsets, n_offsets,
                       shape, n_shape, low, high, seed, error);
}
