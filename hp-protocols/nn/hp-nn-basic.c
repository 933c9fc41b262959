/* hp-nn-basic.c: helpers of the basic layers
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "hp-error.h"
#include "hp-nn-basic-private.h"

/* A layer computes in float32 or float64; a config asking for int64
 * names itself and the field */
gboolean
_hp_nn_check_dtype (HpConfig  *config,
                    HpDType    dtype,
                    GError   **error)
{
  if (hp_dtype_is_floating (dtype))
    return TRUE;
  g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
               "%s.dtype: %s is not a floating-point type (float32 or float64)",
               G_OBJECT_TYPE_NAME (config), hp_dtype_to_string (dtype));
  return FALSE;
}

/* The one tensor argument of a forward that takes one */
HpTensor *
_hp_nn_single_arg (HpModule   *module,
                   GPtrArray  *args,
                   GError    **error)
{
  const gchar * const *names = hp_module_get_forward_arg_names (module);

  if (args->len != 1 || g_ptr_array_index (args, 0) == NULL)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "%s.forward takes one tensor '%s', got %u argument%s%s",
                   G_OBJECT_TYPE_NAME (module), names[0], args->len,
                   args->len == 1 ? "" : "s",
                   args->len == 1 ? " that is NULL" : "");
      return NULL;
    }
  return g_ptr_array_index (args, 0);
}

/* The outputs array of a forward with one output; NULL stays NULL */
GPtrArray *
_hp_nn_single_output (HpTensor *output)
{
  GPtrArray *outputs;

  if (output == NULL)
    return NULL;
  outputs = g_ptr_array_new_with_free_func (g_object_unref);
  g_ptr_array_add (outputs, output);
  return outputs;
}
