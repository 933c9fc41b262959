/* hp-module-state.c: the state dict of a module tree, and loading one
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "hp-dtensor-private.h"
#include "hp-dtensor.h"
#include "hp-error.h"
#include "hp-grad-mode.h"
#include "hp-module-private.h"
#include "hp-tensor-private.h"

static void
collect (HpModule    *self,
         const gchar *prefix,
         HpStateDict *out)
{
  HpModulePrivate *priv = _hp_module_get_private (self);

  for (guint i = 0; i < priv->parameters->len; i++)
    {
      HpModuleStateEntry *entry = g_ptr_array_index (priv->parameters, i);
      g_autofree gchar *fqn = g_strconcat (prefix, entry->name, NULL);

      hp_state_dict_insert (out, fqn, entry->tensor);
    }
  for (guint i = 0; i < priv->buffers->len; i++)
    {
      HpModuleStateEntry *entry = g_ptr_array_index (priv->buffers, i);
      g_autofree gchar *fqn = NULL;

      if (!entry->persistent)
        continue;
      fqn = g_strconcat (prefix, entry->name, NULL);
      hp_state_dict_insert (out, fqn, entry->tensor);
    }
  for (guint i = 0; i < priv->children->len; i++)
    {
      HpModuleChildEntry *entry = g_ptr_array_index (priv->children, i);
      g_autofree gchar *child_prefix = g_strconcat (prefix, entry->name, ".", NULL);

      collect (entry->module, child_prefix, out);
    }
}

/**
 * hp_module_state_dict:
 * @self: a [class@Hp.Module]
 *
 * The state of the tree by dotted path, as a checkpoint holds it: for
 * each module its parameters, then its persistent buffers, then its
 * children's, depth first. Unlike [method@Hp.Module.named_parameters], a tensor
 * reachable by several paths (tied weights, a shared module) appears
 * under each of them, as in PyTorch. The tensors are the module's own
 * (DTensors for laid-out states), not copies.
 *
 * Returns: (transfer full): the state dict
 *
 * Since: 1.0
 */
HpStateDict *
hp_module_state_dict (HpModule *self)
{
  HpStateDict *out;

  g_return_val_if_fail (HP_IS_MODULE (self), NULL);

  out = hp_state_dict_new ();
  collect (self, "", out);
  return out;
}

/* Lists @names (a GPtrArray of strings) as 'a', 'b' */
static gchar *
quoted (GPtrArray *names)
{
  GString *text = g_string_new (NULL);

  for (guint i = 0; i < names->len; i++)
    g_string_append_printf (text, "%s'%s'", i > 0 ? ", " : "",
                            (const gchar *) g_ptr_array_index (names, i));
  return g_string_free (text, FALSE);
}

static gboolean
check_keys (HpModule     *self,
            HpStateDict  *targets,
            HpStateDict  *source,
            GError      **error)
{
  g_autoptr(GPtrArray) missing = g_ptr_array_new ();
  g_autoptr(GPtrArray) unexpected = g_ptr_array_new ();
  g_autoptr(GString) message = NULL;

  for (guint i = 0; i < hp_state_dict_get_size (targets); i++)
    if (!hp_state_dict_contains (source, hp_state_dict_get_name (targets, i)))
      g_ptr_array_add (missing, (gpointer) hp_state_dict_get_name (targets, i));
  for (guint i = 0; i < hp_state_dict_get_size (source); i++)
    if (!hp_state_dict_contains (targets, hp_state_dict_get_name (source, i)))
      g_ptr_array_add (unexpected, (gpointer) hp_state_dict_get_name (source, i));
  if (missing->len == 0 && unexpected->len == 0)
    return TRUE;

  message = g_string_new (NULL);
  g_string_printf (message, "Error(s) in loading state_dict for %s:",
                   G_OBJECT_TYPE_NAME (self));
  if (missing->len > 0)
    {
      g_autofree gchar *list = quoted (missing);

      g_string_append_printf (message, " Missing key(s): %s.", list);
    }
  if (unexpected->len > 0)
    {
      g_autofree gchar *list = quoted (unexpected);

      g_string_append_printf (message, " Unexpected key(s): %s.", list);
    }
  g_set_error_literal (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT, message->str);
  return FALSE;
}

/* Whether @source can be loaded into @target: the same global shape,
 * floating point into floating point (or int64 into int64), and a
 * DTensor source only with the target's layout */
static gboolean
check_entry (const gchar  *name,
             HpTensor     *target,
             HpTensor     *source,
             GError      **error)
{
  guint target_ndim;
  guint source_ndim;
  const gint64 *target_shape = hp_tensor_get_shape (target, &target_ndim);
  const gint64 *source_shape = hp_tensor_get_shape (source, &source_ndim);
  gboolean target_int = hp_tensor_get_dtype (target) == HP_DTYPE_INT64;
  gboolean source_int = hp_tensor_get_dtype (source) == HP_DTYPE_INT64;

  if (!_hp_shape_equal (target_shape, target_ndim, source_shape, source_ndim))
    {
      g_autofree gchar *have = _hp_shape_to_string (source_shape, source_ndim);
      g_autofree gchar *want = _hp_shape_to_string (target_shape, target_ndim);

      g_set_error (error, HP_ERROR, HP_ERROR_SHAPE,
                   "size mismatch for %s: the state dict has shape %s, the module %s",
                   name, have, want);
      return FALSE;
    }
  if (target_int != source_int)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "dtype mismatch for %s: cannot load %s into %s", name,
                   hp_dtype_to_string (hp_tensor_get_dtype (source)),
                   hp_dtype_to_string (hp_tensor_get_dtype (target)));
      return FALSE;
    }
  if (HP_IS_DTENSOR (source) &&
      (!HP_IS_DTENSOR (target) ||
       !hp_device_mesh_equal (hp_dtensor_get_mesh (HP_DTENSOR (source)),
                              hp_dtensor_get_mesh (HP_DTENSOR (target))) ||
       !_hp_placements_equal (hp_dtensor_get_placements (HP_DTENSOR (source)),
                              hp_dtensor_get_placements (HP_DTENSOR (target)))))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_PLACEMENT,
                   "cannot load %s: the state dict's DTensor is laid out differently "
                   "from the module's (redistribute it, or load a plain tensor)", name);
      return FALSE;
    }
  return TRUE;
}

/* Copies @values (the target's local shape) into @local, converting the
 * dtype when they differ */
static void
store (HpTensor *local,
       HpTensor *values)
{
  HpDType dtype = hp_tensor_get_dtype (local);
  HpDType from = hp_tensor_get_dtype (values);
  gint64 numel = hp_tensor_get_numel (local);
  gpointer out = _hp_tensor_data (local);
  gconstpointer in = _hp_tensor_data (values);

  if (dtype == from)
    {
      memcpy (out, in, numel * hp_dtype_get_size (dtype));
      return;
    }
  for (gint64 i = 0; i < numel; i++)
    _hp_store_f64 (out, dtype, i, _hp_load_f64 (in, from, i));
}

/* @source's values for the part of @target this rank holds */
static HpTensor *
local_part (HpTensor *target,
            HpTensor *source)
{
  if (HP_IS_DTENSOR (source))
    return g_object_ref (_hp_dtensor_peek_local (HP_DTENSOR (source)));
  if (!HP_IS_DTENSOR (target))
    return g_object_ref (source);
  return _hp_dtensor_local_block (HP_DTENSOR (target), source);
}

/**
 * hp_module_load_state_dict:
 * @self: a [class@Hp.Module]
 * @state_dict: the values, by the paths of [method@Hp.Module.state_dict]
 * @strict: whether every state of the module must be in @state_dict and
 *   nothing else
 * @error: return location for a [struct@GLib.Error]
 *
 * Copies values into the module's parameters and persistent buffers,
 * in place: the tensor objects stay the same (an optimizer holding them
 * keeps working). A plain tensor of the global shape loads into a
 * DTensor state by copying only the block this rank holds — from a
 * memory-mapped checkpoint, only those bytes are read. A DTensor loads
 * into a DTensor of the same mesh and placements. Floating-point values
 * are converted to the state's dtype. No communication.
 *
 * Everything is checked before anything is written: on error the
 * module is as it was.
 *
 * Returns: %TRUE, or %FALSE with [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] (with
 *   @strict, missing and unexpected keys, all listed; an int64 value for
 *   a floating-point state or the reverse), [HP_ERROR_SHAPE][error@Hp.Error] (a shape
 *   that differs) or [HP_ERROR_PLACEMENT][error@Hp.Error] (a DTensor laid out otherwise)
 *
 * Since: 1.0
 */
gboolean
hp_module_load_state_dict (HpModule     *self,
                           HpStateDict  *state_dict,
                           gboolean      strict,
                           GError      **error)
{
  g_autoptr(HpStateDict) targets = NULL;
  gboolean enabled;

  g_return_val_if_fail (HP_IS_MODULE (self), FALSE);
  g_return_val_if_fail (HP_IS_STATE_DICT (state_dict), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  targets = hp_module_state_dict (self);
  if (strict && !check_keys (self, targets, state_dict, error))
    return FALSE;

  for (guint i = 0; i < hp_state_dict_get_size (targets); i++)
    {
      const gchar *name = hp_state_dict_get_name (targets, i);
      HpTensor *source = hp_state_dict_lookup (state_dict, name);

      if (source != NULL &&
          !check_entry (name, hp_state_dict_get_tensor (targets, i), source, error))
        return FALSE;
    }

  enabled = hp_grad_mode_is_enabled ();
  hp_grad_mode_set_enabled (FALSE);
  for (guint i = 0; i < hp_state_dict_get_size (targets); i++)
    {
      HpTensor *target = hp_state_dict_get_tensor (targets, i);
      HpTensor *source = hp_state_dict_lookup (state_dict, hp_state_dict_get_name (targets, i));
      g_autoptr(HpTensor) part = NULL;

      if (source == NULL)
        continue;
      part = local_part (target, source);
      store (HP_IS_DTENSOR (target) ? _hp_dtensor_peek_local (HP_DTENSOR (target)) : target, part);
    }
  hp_grad_mode_set_enabled (enabled);
  return TRUE;
}
