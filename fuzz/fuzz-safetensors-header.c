/* fuzz-safetensors-header.c: libFuzzer target for the safetensors
 * header parser and tensor loading
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Each input is a whole safetensors file, read in memory through
 * hp_safetensors_file_new_from_bytes(). An input must either open, and
 * then every tensor loads or fails with a GError, or fail with
 * HP_ERROR_FORMAT; anything else (a crash, a sanitizer report, another
 * error) is a bug.
 */

#include <stdint.h>
#include <stdlib.h>

#include <hp-protocols/hp-protocols.h>

int LLVMFuzzerTestOneInput (const uint8_t *data,
                            size_t         size);

static void
load_tensor (HpSafetensorsFile *file,
             const gchar       *name)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) tensor = NULL;
  g_autoptr(HpTensor) block = NULL;
  gint64 offsets[HP_TENSOR_MAX_NDIM];
  gint64 lengths[HP_TENSOR_MAX_NDIM];
  const gint64 *shape;
  guint ndim;

  if (hp_safetensors_file_get_dtype (file, name, &error) == NULL)
    abort ();
  shape = hp_safetensors_file_get_shape (file, name, &ndim, &error);
  if (shape == NULL)
    abort ();

  tensor = hp_safetensors_file_get_tensor (file, name, &error);
  if (tensor == NULL)
    {
      /* a dtype that does not load, or a shape a tensor cannot have */
      if (error->code != HP_ERROR_NOT_SUPPORTED && error->code != HP_ERROR_SHAPE)
        abort ();
      return;
    }

  /* the second half of every dim */
  for (guint d = 0; d < ndim; d++)
    {
      offsets[d] = shape[d] / 2;
      lengths[d] = shape[d] - offsets[d];
    }
  block = hp_safetensors_file_get_tensor_slice (file, name, offsets, ndim, lengths, ndim, &error);
  if (block == NULL)
    abort ();
}

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  g_autoptr(GBytes) bytes = g_bytes_new_static (data, size);
  g_autoptr(GError) error = NULL;
  g_autoptr(HpSafetensorsFile) file = NULL;
  g_auto(GStrv) names = NULL;
  GHashTableIter iter;
  gpointer key, value;

  file = hp_safetensors_file_new_from_bytes (bytes, "fuzz", &error);
  if (file == NULL)
    {
      if (!g_error_matches (error, HP_ERROR, HP_ERROR_FORMAT))
        abort ();
      return 0;
    }

  g_hash_table_iter_init (&iter, hp_safetensors_file_get_metadata (file));
  while (g_hash_table_iter_next (&iter, &key, &value))
    if (!g_utf8_validate (key, -1, NULL) || !g_utf8_validate (value, -1, NULL))
      abort ();

  names = hp_safetensors_file_get_names (file);
  if (g_strv_length (names) != hp_safetensors_file_get_n_tensors (file))
    abort ();
  for (guint i = 0; names[i] != NULL; i++)
    load_tensor (file, names[i]);
  return 0;
}
