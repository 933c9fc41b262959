/* hp-sequential.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <gio/gio.h>

#include "hp-sequential.h"
#include "hp-tensor-private.h"

/**
 * HpSequential:
 *
 * A [class@Hp.ModuleList] whose forward runs its modules in order, each on the
 * outputs of the one before.
 *
 * Since: 1.0
 */

struct _HpSequential
{
  HpModuleList parent_instance;
};

G_DEFINE_FINAL_TYPE (HpSequential, hp_sequential, HP_TYPE_MODULE_LIST)

static GPtrArray *
hp_sequential_forward (HpModule   *module,
                       GPtrArray  *args,
                       GError    **error)
{
  HpModuleList *list = HP_MODULE_LIST (module);
  g_autoptr(GPtrArray) current = NULL;
  guint n = hp_module_list_get_length (list);

  /* the outputs own their elements, as forward returns them */
  current = _hp_object_array_copy (args);
  for (guint i = 0; i < n; i++)
    {
      GPtrArray *next = hp_module_call (hp_module_list_get (list, i), current, error);

      if (next == NULL)
        return NULL;
      g_ptr_array_unref (current);
      current = next;
    }
  return g_steal_pointer (&current);
}

static void
hp_sequential_class_init (HpSequentialClass *klass)
{
  HpModuleClass *module_class = HP_MODULE_CLASS (klass);

  module_class->forward = hp_sequential_forward;
}

static void
hp_sequential_init (HpSequential *self)
{
}

/**
 * hp_sequential_new:
 *
 * Creates an empty sequential module.
 *
 * Returns: (transfer full): a new empty [class@Hp.Sequential]; its forward
 *   returns its arguments until modules are appended
 *
 * Since: 1.0
 */
HpSequential *
hp_sequential_new (void)
{
  /* cannot fail: a container has nothing of its own to set up */
  return g_initable_new (HP_TYPE_SEQUENTIAL, NULL, NULL, NULL);
}
