/* hp-partial.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "hp-enum-private.h"

#include "hp-distributed-enum-types.h"
#include "hp-error-private.h"
#include "hp-error.h"
#include "hp-partial.h"

/**
 * HpPartial:
 *
 * The placement where every rank of a mesh dim holds a partial value of
 * the tensor's full shape; the tensor itself is the reduction
 * ([property@Hp.Partial:reduce-op]) of these values over the mesh dim.
 *
 * Partial placements come out of operations (a matmul over a sharded
 * contraction dim, a sum over a sharded dim) or are given when a tensor
 * is made from local values; redistributing to a partial placement is
 * not supported.
 *
 * Two partial placements are equal when their reduce ops are. Like every
 * [class@Hp.Placement], a partial placement never changes after construction.
 * Its string form is `P(op)` with the op's name from
 * [func@Hp.ReduceOp.to_string], for example `P(sum)`.
 *
 * Since: 1.0
 */

struct _HpPartial
{
  HpPlacement parent_instance;

  HpReduceOp reduce_op;
};

G_DEFINE_FINAL_TYPE (HpPartial, hp_partial, HP_TYPE_PLACEMENT)

enum {
  PROP_0,
  PROP_REDUCE_OP,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static gboolean
hp_partial_equal (HpPlacement *placement,
                  HpPlacement *other)
{
  return HP_PARTIAL (placement)->reduce_op == HP_PARTIAL (other)->reduce_op;
}

static gchar *
hp_partial_to_string (HpPlacement *placement)
{
  return g_strdup_printf ("P(%s)", hp_reduce_op_to_string (HP_PARTIAL (placement)->reduce_op));
}

static void
hp_partial_get_property (GObject    *object,
                         guint       prop_id,
                         GValue     *value,
                         GParamSpec *pspec)
{
  HpPartial *self = HP_PARTIAL (object);

  switch (prop_id)
    {
    case PROP_REDUCE_OP:
      g_value_set_enum (value, self->reduce_op);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
hp_partial_set_property (GObject      *object,
                         guint         prop_id,
                         const GValue *value,
                         GParamSpec   *pspec)
{
  HpPartial *self = HP_PARTIAL (object);

  switch (prop_id)
    {
    case PROP_REDUCE_OP:
      self->reduce_op = g_value_get_enum (value);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
hp_partial_class_init (HpPartialClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  HpPlacementClass *placement_class = HP_PLACEMENT_CLASS (klass);

  object_class->get_property = hp_partial_get_property;
  object_class->set_property = hp_partial_set_property;

  placement_class->equal = hp_partial_equal;
  placement_class->to_string = hp_partial_to_string;

  /**
   * HpPartial:reduce-op:
   *
   * How the partial values of the ranks combine into the tensor.
   *
   * Since: 1.0
   */
  properties[PROP_REDUCE_OP] =
    g_param_spec_enum ("reduce-op", NULL, NULL,
                       HP_TYPE_REDUCE_OP,
                       HP_REDUCE_OP_SUM,
                       (G_PARAM_READWRITE |
                        G_PARAM_CONSTRUCT_ONLY |
                        G_PARAM_STATIC_STRINGS));

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
hp_partial_init (HpPartial *self)
{
}

/**
 * hp_partial_new:
 * @reduce_op: how the partial values combine
 *
 * Creates a placement whose ranks hold partial values that combine with
 * @reduce_op.
 *
 * Returns: (transfer full): a new [class@Hp.Partial]
 *
 * Since: 1.0
 */
HpPlacement *
hp_partial_new (HpReduceOp reduce_op)
{
  g_return_val_if_fail ((guint) reduce_op <= HP_REDUCE_OP_PRODUCT, NULL);

  return g_object_new (HP_TYPE_PARTIAL, "reduce-op", reduce_op, NULL);
}

/**
 * hp_partial_get_reduce_op:
 * @self: a [class@Hp.Partial]
 *
 * Gets how the partial values of @self combine.
 *
 * Returns: the reduce op
 *
 * Since: 1.0
 */
HpReduceOp
hp_partial_get_reduce_op (HpPartial *self)
{
  g_return_val_if_fail (HP_IS_PARTIAL (self), HP_REDUCE_OP_SUM);

  return self->reduce_op;
}

/**
 * hp_reduce_op_to_string:
 * @op: a [enum@Hp.ReduceOp]
 *
 * Gets the name of @op: "sum", "avg", "max", "min" or "product".
 *
 * Returns: (transfer none): the name
 *
 * Since: 1.0
 */
const gchar *
hp_reduce_op_to_string (HpReduceOp op)
{
  const gchar *nick = _hp_enum_to_nick (HP_TYPE_REDUCE_OP, op);

  g_return_val_if_fail (nick != NULL, "invalid");

  return nick;
}

/**
 * hp_reduce_op_from_string:
 * @name: a reduce op name such as "sum"
 * @op: (out): return location for the reduce op
 * @error: return location for a [struct@GLib.Error]
 *
 * Parses a reduce op name as written by [func@Hp.ReduceOp.to_string]. Names
 * are case-sensitive.
 *
 * Returns: %TRUE on success; %FALSE with [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] for an
 *   unknown name, in which case @op is left unchanged
 *
 * Since: 1.0
 */
gboolean
hp_reduce_op_from_string (const gchar  *name,
                          HpReduceOp   *op,
                          GError      **error)
{
  gint value;

  g_return_val_if_fail (name != NULL, FALSE);
  g_return_val_if_fail (op != NULL, FALSE);

  if (!_hp_error_check_utf8 (name, "reduce op", HP_ERROR_INVALID_ARGUMENT, error))
    return FALSE;

  if (!_hp_enum_from_nick (HP_TYPE_REDUCE_OP, name, &value))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "unknown reduce op '%s' (expected sum, avg, max, min or product)",
                   name);
      return FALSE;
    }

  *op = value;
  return TRUE;
}
