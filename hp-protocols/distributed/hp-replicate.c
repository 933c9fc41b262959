/* hp-replicate.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "hp-replicate.h"

/**
 * HpReplicate:
 *
 * The placement where every rank of a mesh dim holds the whole tensor
 * (along that mesh dim).
 *
 * All replicate placements are equal to each other. Like every
 * [class@Hp.Placement], a replicate placement never changes after construction.
 * Its string form is `R`.
 *
 * Since: 1.0
 */

struct _HpReplicate
{
  HpPlacement parent_instance;
};

G_DEFINE_FINAL_TYPE (HpReplicate, hp_replicate, HP_TYPE_PLACEMENT)

static gboolean
hp_replicate_equal (HpPlacement *placement,
                    HpPlacement *other)
{
  return TRUE;
}

static gchar *
hp_replicate_to_string (HpPlacement *placement)
{
  return g_strdup ("R");
}

static void
hp_replicate_class_init (HpReplicateClass *klass)
{
  HpPlacementClass *placement_class = HP_PLACEMENT_CLASS (klass);

  placement_class->equal = hp_replicate_equal;
  placement_class->to_string = hp_replicate_to_string;
}

static void
hp_replicate_init (HpReplicate *self)
{
}

/**
 * hp_replicate_new:
 *
 * Creates a placement that holds the whole tensor on every rank of a
 * mesh dim. Each call returns a new object; all of them are equal under
 * [method@Hp.Placement.equal].
 *
 * Returns: (transfer full): a new [class@Hp.Replicate]
 *
 * Since: 1.0
 */
HpPlacement *
hp_replicate_new (void)
{
  return g_object_new (HP_TYPE_REPLICATE, NULL);
}
