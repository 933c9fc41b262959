/* hp-shard.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "hp-shard.h"

/**
 * HpShard:
 *
 * The placement that splits one tensor dim across a mesh dim.
 *
 * Rank `r` of a mesh dim with `n` ranks holds chunk `r` of the tensor
 * dim [property@Hp.Shard:dim], cut like `torch.chunk`: chunks of `ceil(N / n)`
 * elements, so trailing ranks may hold fewer elements or none.
 *
 * The dim is kept exactly as given, negative values included: `S(-1)`
 * stands for the last dim of whatever tensor it is applied to, and every
 * function that takes a tensor normalises it with that tensor's number of
 * dims. [method@Hp.Placement.equal] compares the raw value, so `S(-1)` and
 * `S(1)` are different placements even for a tensor with two dims.
 *
 * Like every [class@Hp.Placement], a shard never changes after construction.
 * Its string form is `S(dim)`, for example `S(0)` or `S(-1)`.
 *
 * Since: 1.0
 */

struct _HpShard
{
  HpPlacement parent_instance;

  gint dim;
};

G_DEFINE_FINAL_TYPE (HpShard, hp_shard, HP_TYPE_PLACEMENT)

enum {
  PROP_0,
  PROP_DIM,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static gboolean
hp_shard_equal (HpPlacement *placement,
                HpPlacement *other)
{
  return HP_SHARD (placement)->dim == HP_SHARD (other)->dim;
}

static gchar *
hp_shard_to_string (HpPlacement *placement)
{
  return g_strdup_printf ("S(%d)", HP_SHARD (placement)->dim);
}

static void
hp_shard_get_property (GObject    *object,
                       guint       prop_id,
                       GValue     *value,
                       GParamSpec *pspec)
{
  HpShard *self = HP_SHARD (object);

  switch (prop_id)
    {
    case PROP_DIM:
      g_value_set_int (value, self->dim);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
hp_shard_set_property (GObject      *object,
                       guint         prop_id,
                       const GValue *value,
                       GParamSpec   *pspec)
{
  HpShard *self = HP_SHARD (object);

  switch (prop_id)
    {
    case PROP_DIM:
      self->dim = g_value_get_int (value);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
hp_shard_class_init (HpShardClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  HpPlacementClass *placement_class = HP_PLACEMENT_CLASS (klass);

  object_class->get_property = hp_shard_get_property;
  object_class->set_property = hp_shard_set_property;

  placement_class->equal = hp_shard_equal;
  placement_class->to_string = hp_shard_to_string;

  /**
   * HpShard:dim:
   *
   * The tensor dim that is split. A negative value counts from the last
   * dim (-1 is the last) and is kept as given; it is resolved against
   * the number of dims of the tensor the placement is used with.
   *
   * Since: 1.0
   */
  properties[PROP_DIM] =
    g_param_spec_int ("dim", NULL, NULL,
                      G_MININT, G_MAXINT, 0,
                      (G_PARAM_READWRITE |
                       G_PARAM_CONSTRUCT_ONLY |
                       G_PARAM_STATIC_STRINGS));

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
hp_shard_init (HpShard *self)
{
}

/**
 * hp_shard_new:
 * @dim: the tensor dim to split; negative values count from the last dim
 *
 * Creates a placement that splits tensor dim @dim across a mesh dim.
 * Any value is accepted here; whether it fits a tensor is checked when
 * the placement is used with one.
 *
 * Returns: (transfer full): a new [class@Hp.Shard]
 *
 * Since: 1.0
 */
HpPlacement *
hp_shard_new (gint dim)
{
  return g_object_new (HP_TYPE_SHARD, "dim", dim, NULL);
}

/**
 * hp_shard_get_dim:
 * @self: a [class@Hp.Shard]
 *
 * Gets the tensor dim that @self splits, exactly as it was given
 * (negative values are not normalised).
 *
 * Returns: the dim
 *
 * Since: 1.0
 */
gint
hp_shard_get_dim (HpShard *self)
{
  g_return_val_if_fail (HP_IS_SHARD (self), 0);

  return self->dim;
}
