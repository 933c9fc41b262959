/* hp-state-dict.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "hp-state-dict.h"

/**
 * HpStateDict:
 *
 * An ordered map from names to tensors: the state dict of a model, as
 * state-dict adapters convert and safetensors files store it.
 *
 * Names keep the order in which they were first inserted. Inserting a
 * name that is already there replaces its tensor in place, at the same
 * position. The dict holds references to its tensors, not copies.
 *
 * Since: 1.0
 */

struct _HpStateDict
{
  GObject parent_instance;

  GPtrArray *names;    /* gchar *, in insertion order */
  GPtrArray *tensors;  /* HpTensor *, one per name */
  GHashTable *index;   /* name (owned by names) -> position + 1 */
};

G_DEFINE_FINAL_TYPE (HpStateDict, hp_state_dict, G_TYPE_OBJECT)

static void
hp_state_dict_finalize (GObject *object)
{
  HpStateDict *self = HP_STATE_DICT (object);

  g_clear_pointer (&self->index, g_hash_table_unref);
  g_clear_pointer (&self->names, g_ptr_array_unref);
  g_clear_pointer (&self->tensors, g_ptr_array_unref);

  G_OBJECT_CLASS (hp_state_dict_parent_class)->finalize (object);
}

static void
hp_state_dict_class_init (HpStateDictClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = hp_state_dict_finalize;
}

static void
hp_state_dict_init (HpStateDict *self)
{
  self->names = g_ptr_array_new_with_free_func (g_free);
  self->tensors = g_ptr_array_new_with_free_func (g_object_unref);
  self->index = g_hash_table_new (g_str_hash, g_str_equal);
}

/**
 * hp_state_dict_new:
 *
 * Creates an empty state dict.
 *
 * Returns: (transfer full): a new [class@Hp.StateDict]
 *
 * Since: 1.0
 */
HpStateDict *
hp_state_dict_new (void)
{
  return g_object_new (HP_TYPE_STATE_DICT, NULL);
}

static gboolean
find_name (HpStateDict *self,
           const gchar *name,
           guint       *position)
{
  guint stored = GPOINTER_TO_UINT (g_hash_table_lookup (self->index, name));

  if (stored == 0)
    return FALSE;
  *position = stored - 1;
  return TRUE;
}

/**
 * hp_state_dict_insert:
 * @self: a [class@Hp.StateDict]
 * @name: the name of the tensor, such as `layers.0.attention.wq.weight`
 * @tensor: the tensor
 *
 * Maps @name to @tensor. A new name goes after the existing ones; an
 * existing name keeps its position and gets @tensor instead of its old
 * tensor.
 *
 * Since: 1.0
 */
void
hp_state_dict_insert (HpStateDict *self,
                      const gchar *name,
                      HpTensor    *tensor)
{
  guint position;

  g_return_if_fail (HP_IS_STATE_DICT (self));
  g_return_if_fail (name != NULL);
  g_return_if_fail (HP_IS_TENSOR (tensor));

  if (find_name (self, name, &position))
    {
      HpTensor *old = g_ptr_array_index (self->tensors, position);

      g_ptr_array_index (self->tensors, position) = g_object_ref (tensor);
      g_object_unref (old);
      return;
    }

  g_ptr_array_add (self->names, g_strdup (name));
  g_ptr_array_add (self->tensors, g_object_ref (tensor));
  g_hash_table_insert (self->index, g_ptr_array_index (self->names, self->names->len - 1),
                       GUINT_TO_POINTER (self->names->len));
}

/**
 * hp_state_dict_lookup:
 * @self: a [class@Hp.StateDict]
 * @name: a name
 *
 * Gets the tensor of @name.
 *
 * Returns: (transfer none) (nullable): the tensor, or %NULL if @self has
 *   no entry @name
 *
 * Since: 1.0
 */
HpTensor *
hp_state_dict_lookup (HpStateDict *self,
                      const gchar *name)
{
  guint position;

  g_return_val_if_fail (HP_IS_STATE_DICT (self), NULL);
  g_return_val_if_fail (name != NULL, NULL);

  if (!find_name (self, name, &position))
    return NULL;
  return g_ptr_array_index (self->tensors, position);
}

/**
 * hp_state_dict_contains:
 * @self: a [class@Hp.StateDict]
 * @name: a name
 *
 * Tells whether @self has an entry @name.
 *
 * Returns: %TRUE if @name is in @self
 *
 * Since: 1.0
 */
gboolean
hp_state_dict_contains (HpStateDict *self,
                        const gchar *name)
{
  g_return_val_if_fail (HP_IS_STATE_DICT (self), FALSE);
  g_return_val_if_fail (name != NULL, FALSE);

  return g_hash_table_contains (self->index, name);
}

/**
 * hp_state_dict_remove:
 * @self: a [class@Hp.StateDict]
 * @name: a name
 *
 * Removes the entry @name; the entries after it move up one position.
 *
 * Returns: %TRUE if there was an entry @name
 *
 * Since: 1.0
 */
gboolean
hp_state_dict_remove (HpStateDict *self,
                      const gchar *name)
{
  guint position;

  g_return_val_if_fail (HP_IS_STATE_DICT (self), FALSE);
  g_return_val_if_fail (name != NULL, FALSE);

  if (!find_name (self, name, &position))
    return FALSE;

  g_hash_table_remove (self->index, name);
  g_ptr_array_remove_index (self->names, position);
  g_ptr_array_remove_index (self->tensors, position);
  for (guint i = position; i < self->names->len; i++)
    g_hash_table_insert (self->index, g_ptr_array_index (self->names, i), GUINT_TO_POINTER (i + 1));
  return TRUE;
}

/**
 * hp_state_dict_get_size:
 * @self: a [class@Hp.StateDict]
 *
 * Gets the number of entries.
 *
 * Returns: the number of entries
 *
 * Since: 1.0
 */
guint
hp_state_dict_get_size (HpStateDict *self)
{
  g_return_val_if_fail (HP_IS_STATE_DICT (self), 0);

  return self->names->len;
}

/**
 * hp_state_dict_get_names:
 * @self: a [class@Hp.StateDict]
 *
 * Gets the names, in order.
 *
 * Returns: (transfer full) (array zero-terminated=1): a new
 *   %NULL-terminated array of the names; empty for an empty dict
 *
 * Since: 1.0
 */
GStrv
hp_state_dict_get_names (HpStateDict *self)
{
  GStrv out;

  g_return_val_if_fail (HP_IS_STATE_DICT (self), NULL);

  out = g_new0 (gchar *, self->names->len + 1);
  for (guint i = 0; i < self->names->len; i++)
    out[i] = g_strdup (g_ptr_array_index (self->names, i));
  return out;
}

/**
 * hp_state_dict_get_name:
 * @self: a [class@Hp.StateDict]
 * @index: a position, less than [method@Hp.StateDict.get_size]
 *
 * Gets the name of the entry at @index.
 *
 * Returns: (transfer none): the name, owned by @self
 *
 * Since: 1.0
 */
const gchar *
hp_state_dict_get_name (HpStateDict *self,
                        guint        index)
{
  g_return_val_if_fail (HP_IS_STATE_DICT (self), NULL);
  g_return_val_if_fail (index < self->names->len, NULL);

  return g_ptr_array_index (self->names, index);
}

/**
 * hp_state_dict_get_tensor:
 * @self: a [class@Hp.StateDict]
 * @index: a position, less than [method@Hp.StateDict.get_size]
 *
 * Gets the tensor of the entry at @index.
 *
 * Returns: (transfer none): the tensor
 *
 * Since: 1.0
 */
HpTensor *
hp_state_dict_get_tensor (HpStateDict *self,
                          guint        index)
{
  g_return_val_if_fail (HP_IS_STATE_DICT (self), NULL);
  g_return_val_if_fail (index < self->names->len, NULL);

  return g_ptr_array_index (self->tensors, index);
}
