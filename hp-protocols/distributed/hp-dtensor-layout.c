/* hp-dtensor-layout.c: which part of a tensor a rank holds
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "hp-dtensor-private.h"
#include "hp-error.h"

/* The piece @index of @size split into @n pieces like torch.chunk: pieces
 * of ceil(size / n), the last ones shorter or empty. */
void
_hp_chunk (gint64  size,
           gint    n,
           gint    index,
           gint64 *offset,
           gint64 *length)
{
  gint64 piece = (size + n - 1) / n;
  gint64 start = MIN (piece * index, size);
  gint64 end = MIN (start + piece, size);

  *offset = start;
  *length = end - start;
}

/* The size of tensor dim @tensor_dim as mesh dim @mesh_dim sees it: the
 * global size cut down by the earlier mesh dims that shard the same
 * tensor dim (nested sharding), for the rank at @coordinate. @offset gets
 * where that piece starts in the global tensor. */
gint64
_hp_layout_level_size (const gint64 *shape,
                       GPtrArray    *placements,
                       HpDeviceMesh *mesh,
                       const gint   *coordinate,
                       guint         mesh_dim,
                       guint         tensor_dim,
                       gint64       *offset)
{
  const gint *mesh_shape = hp_device_mesh_get_shape (mesh, NULL);
  gint64 size = shape[tensor_dim];
  gint64 start = 0;

  for (guint e = 0; e < mesh_dim; e++)
    {
      HpPlacement *p = g_ptr_array_index (placements, e);
      gint64 piece_offset, piece_length;

      if (!hp_placement_is_shard (p) || (guint) hp_shard_get_dim (HP_SHARD (p)) != tensor_dim)
        continue;

      _hp_chunk (size, mesh_shape[e], coordinate[e], &piece_offset, &piece_length);
      start += piece_offset;
      size = piece_length;
    }

  if (offset != NULL)
    *offset = start;
  return size;
}

/* The block of the global tensor held by the rank at @coordinate */
void
_hp_layout_local_region (const gint64 *shape,
                         guint         ndim,
                         GPtrArray    *placements,
                         HpDeviceMesh *mesh,
                         const gint   *coordinate,
                         gint64       *offsets,
                         gint64       *lengths)
{
  guint mesh_ndim = hp_device_mesh_get_ndim (mesh);

  for (guint k = 0; k < ndim; k++)
    lengths[k] = _hp_layout_level_size (shape, placements, mesh, coordinate,
                                        mesh_ndim, k, &offsets[k]);
}

/* Checks @placements against @mesh and a tensor of @tensor_ndim dims and
 * returns them with shard dims made non-negative. */
GPtrArray *
_hp_placements_normalize (const gchar  *op,
                          GPtrArray    *placements,
                          HpDeviceMesh *mesh,
                          guint         tensor_ndim,
                          GError      **error)
{
  guint mesh_ndim = hp_device_mesh_get_ndim (mesh);
  g_autoptr(GPtrArray) out = NULL;

  if (placements->len != mesh_ndim)
    {
      g_autofree gchar *text = hp_placements_to_string (placements);

      g_set_error (error, HP_ERROR, HP_ERROR_PLACEMENT,
                   "%s: %u placements %s given for a mesh of %u dims",
                   op, placements->len, text, mesh_ndim);
      return NULL;
    }

  out = g_ptr_array_new_full (mesh_ndim, g_object_unref);
  for (guint i = 0; i < mesh_ndim; i++)
    {
      HpPlacement *p = g_ptr_array_index (placements, i);

      g_return_val_if_fail (HP_IS_PLACEMENT (p), NULL);

      if (hp_placement_is_shard (p))
        {
          gint dim = hp_shard_get_dim (HP_SHARD (p));
          gint n = (gint) tensor_ndim;

          if (dim < -n || dim >= n)
            {
              g_autofree gchar *text = hp_placements_to_string (placements);

              g_set_error (error, HP_ERROR, HP_ERROR_PLACEMENT,
                           "%s: placement S(%d) of %s is out of range for a "
                           "tensor of %u dims", op, dim, text, tensor_ndim);
              return NULL;
            }
          if (dim < 0)
            {
              g_ptr_array_add (out, _hp_placement_shared_shard (dim + n));
              continue;
            }
        }
      g_ptr_array_add (out, g_object_ref (p));
    }

  return g_steal_pointer (&out);
}

/* The placements of a gradient: Partial becomes Replicate */
GPtrArray *
_hp_placements_for_grad (GPtrArray *placements)
{
  GPtrArray *out = g_ptr_array_new_full (placements->len, g_object_unref);

  for (guint i = 0; i < placements->len; i++)
    {
      HpPlacement *p = g_ptr_array_index (placements, i);

      g_ptr_array_add (out, hp_placement_is_partial (p) ? _hp_placement_shared_replicate ()
                                                        : g_object_ref (p));
    }
  return out;
}

static gpointer
ref_placement (gconstpointer placement,
               gpointer      user_data)
{
  return g_object_ref ((gpointer) placement);
}

/* A copy of @placements that owns its entries, to change them */
GPtrArray *
_hp_placements_copy (GPtrArray *placements)
{
  GPtrArray *out = g_ptr_array_copy (placements, ref_placement, NULL);

  g_ptr_array_set_free_func (out, g_object_unref);
  return out;
}

GPtrArray *
_hp_placements_replicated (guint n)
{
  GPtrArray *out = g_ptr_array_new_full (n, g_object_unref);

  for (guint i = 0; i < n; i++)
    g_ptr_array_add (out, _hp_placement_shared_replicate ());
  return out;
}

gboolean
_hp_placements_equal (GPtrArray *a,
                      GPtrArray *b)
{
  if (a->len != b->len)
    return FALSE;
  for (guint i = 0; i < a->len; i++)
    if (!hp_placement_equal (g_ptr_array_index (a, i), g_ptr_array_index (b, i)))
      return FALSE;
  return TRUE;
}

gboolean
_hp_placements_have_partial (GPtrArray *placements)
{
  for (guint i = 0; i < placements->len; i++)
    if (hp_placement_is_partial (g_ptr_array_index (placements, i)))
      return TRUE;
  return FALSE;
}

/* A copy of the block [offsets, offsets + lengths) of @self */
HpTensor *
_hp_tensor_copy_region (HpTensor     *self,
                        const gint64 *offsets,
                        const gint64 *lengths)
{
  guint ndim;
  const gint64 *shape = hp_tensor_get_shape (self, &ndim);
  HpDType dtype = hp_tensor_get_dtype (self);
  gsize elem = hp_dtype_get_size (dtype);
  gint64 strides[HP_TENSOR_MAX_NDIM];
  gint64 index[HP_TENSOR_MAX_NDIM] = { 0 };
  HpTensor *out = _hp_tensor_new_uninit (dtype, lengths, ndim);
  const guint8 *in = _hp_tensor_data (self);
  guint8 *dst = _hp_tensor_data (out);
  gint64 rows, run;

  if (ndim == 0)
    {
      memcpy (dst, in, elem);
      return out;
    }
  if (hp_tensor_get_numel (out) == 0)
    return out;

  /* whole rows of the last dim at a time */
  _hp_shape_strides (shape, ndim, strides);
  run = lengths[ndim - 1];
  rows = hp_tensor_get_numel (out) / run;
  for (gint64 r = 0; r < rows; r++)
    {
      gint64 src = offsets[ndim - 1];

      for (guint k = 0; k + 1 < ndim; k++)
        src += (offsets[k] + index[k]) * strides[k];
      memcpy (dst + elem * r * run, in + elem * src, elem * run);

      for (guint k = ndim - 1; k-- > 0;)
        {
          if (++index[k] < lengths[k])
            break;
          index[k] = 0;
        }
    }

  return out;
}

/* The block of @whole, a plain tensor of @layout's global shape, that
 * this rank holds under @layout's placements (copied): for loading whole
 * values into a DTensor without communication. Only that block of
 * @whole is read, so a memory-mapped @whole is never read whole. */
HpTensor *
_hp_dtensor_local_block (HpDTensor *layout,
                         HpTensor  *whole)
{
  guint ndim;
  const gint64 *shape = hp_tensor_get_shape (HP_TENSOR (layout), &ndim);
  HpDeviceMesh *mesh = hp_dtensor_get_mesh (layout);
  gint64 offsets[HP_TENSOR_MAX_NDIM];
  gint64 lengths[HP_TENSOR_MAX_NDIM];

  _hp_layout_local_region (shape, ndim, hp_dtensor_get_placements (layout), mesh,
                           hp_device_mesh_get_coordinate (mesh, NULL), offsets, lengths);
  return _hp_tensor_copy_region (whole, offsets, lengths);
}
