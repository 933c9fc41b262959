/* hp-attention-private.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "hp-attention-private.h"
#include "hp-dtensor-private.h"
#include "hp-error.h"
#include "hp-module-private.h"

gboolean
_hp_attention_check_config (gpointer   module,
                            HpConfig  *config,
                            GType      type,
                            GError   **error)
{
  if (config != NULL && G_TYPE_CHECK_INSTANCE_TYPE (config, type))
    return TRUE;
  g_set_error (error, HP_ERROR, HP_ERROR_CONFIG, "%s needs a %s, not %s",
               _hp_module_type_name (module), g_type_name (type),
               config != NULL ? G_OBJECT_TYPE_NAME (config) : "no configuration");
  return FALSE;
}

gboolean
_hp_attention_check_ready (gpointer   module,
                           gboolean   initialized,
                           GError   **error)
{
  if (initialized)
    return TRUE;
  g_set_error (error, HP_ERROR, HP_ERROR_STATE,
               "%s is not initialized: build it with hp_config_build() "
               "or call g_initable_init() on it", _hp_module_type_name (module));
  return FALSE;
}

gboolean
_hp_attention_check_args (gpointer    module,
                          GPtrArray  *args,
                          guint       n,
                          GError    **error)
{
  const gchar * const *names = hp_module_get_forward_arg_names (HP_MODULE (module));
  g_autofree gchar *listed = NULL;
  guint given = 0;

  for (guint i = 0; i < args->len; i++)
    given += g_ptr_array_index (args, i) != NULL;
  if (args->len == n && given == n)
    return TRUE;

  listed = g_strjoinv (", ", (GStrv) names);
  g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
               "%s: forward takes the %u tensors (%s), got %u of %u arguments",
               _hp_module_type_name (module), n, listed, given, args->len);
  return FALSE;
}

HpTensor *
_hp_attention_replicate_like (HpTensor  *plain,
                              HpTensor  *like,
                              GError   **error)
{
  HpDeviceMesh *mesh = hp_dtensor_get_mesh (HP_DTENSOR (like));
  g_autoptr(GPtrArray) replicated = _hp_placements_replicated (hp_device_mesh_get_ndim (mesh));
  guint ndim;
  const gint64 *shape = hp_tensor_get_shape (plain, &ndim);

  return HP_TENSOR (hp_dtensor_new_from_local (plain, mesh, replicated, shape, ndim,
                                               FALSE, error));
}
