/* hp-named-placement.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "hp-error-private.h"
#include "hp-error.h"
#include "hp-name-map-private.h"
#include "hp-named-placement-private.h"
#include "hp-replicate.h"

/**
 * HpNamedPlacement:
 *
 * Placements keyed by mesh axis name, such as `tp:S(0), dp:R`: how a
 * tensor is laid out over the mesh dims of those names, independently
 * of the order of the dims in a particular mesh.
 *
 * A named placement is an ordered map: axes keep the order in which they
 * were first set, and setting an axis again replaces its placement in
 * place. [func@Hp.resolve_placements] turns it into one [class@Hp.Placement] per dim
 * of a mesh, in the mesh's order, with [class@Hp.Replicate] for the axes it does
 * not name.
 *
 * The string form, read by [ctor@Hp.NamedPlacement.new_from_string] and
 * written by [method@Hp.NamedPlacement.to_string], is a comma-separated list
 * of `axis:placement` entries, for example `tp:S(0), dp:R`.
 *
 * The map emits [signal@Hp.NamedPlacement::changed] whenever an axis is added or
 * its placement changes. Objects that keep a named placement (a
 * [class@Hp.LocalMap], for instance) keep a copy, so later changes do not reach
 * them.
 *
 * Since: 1.0
 */

struct _HpNamedPlacement
{
  GObject parent_instance;

  HpNameMap axes;  /* axis -> HpPlacement */
};

G_DEFINE_FINAL_TYPE (HpNamedPlacement, hp_named_placement, G_TYPE_OBJECT)

enum {
  CHANGED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

static void
hp_named_placement_finalize (GObject *object)
{
  HpNamedPlacement *self = HP_NAMED_PLACEMENT (object);

  _hp_name_map_clear (&self->axes);

  G_OBJECT_CLASS (hp_named_placement_parent_class)->finalize (object);
}

static void
hp_named_placement_class_init (HpNamedPlacementClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = hp_named_placement_finalize;

  /**
   * HpNamedPlacement::changed:
   * @self: the named placement
   *
   * Emitted after an axis was added or its placement replaced by a
   * different one.
   *
   * Since: 1.0
   */
  signals[CHANGED] =
    g_signal_new ("changed",
                  G_TYPE_FROM_CLASS (klass),
                  G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 0);
}

static void
hp_named_placement_init (HpNamedPlacement *self)
{
  _hp_name_map_init (&self->axes);
}

/**
 * hp_named_placement_new:
 *
 * Creates an empty named placement: every mesh dim resolves to
 * [class@Hp.Replicate].
 *
 * Returns: (transfer full): a new [class@Hp.NamedPlacement]
 *
 * Since: 1.0
 */
HpNamedPlacement *
hp_named_placement_new (void)
{
  return g_object_new (HP_TYPE_NAMED_PLACEMENT, NULL);
}

/**
 * hp_named_placement_set:
 * @self: a [class@Hp.NamedPlacement]
 * @axis: a mesh dim name, not empty
 * @placement: the placement of the tensor across that mesh dim
 *
 * Sets the placement of @axis. A new axis goes after the existing ones;
 * an existing axis keeps its position and gets @placement instead of
 * its old placement. Names are case-sensitive. Emits
 * [signal@Hp.NamedPlacement::changed] unless @axis already had an equal
 * placement.
 *
 * Since: 1.0
 */
void
hp_named_placement_set (HpNamedPlacement *self,
                        const gchar      *axis,
                        HpPlacement      *placement)
{
  g_return_if_fail (HP_IS_NAMED_PLACEMENT (self));
  g_return_if_fail (axis != NULL && *axis != '\0');
  g_return_if_fail (HP_IS_PLACEMENT (placement));

  if (_hp_name_map_set (&self->axes, axis, placement, (GEqualFunc) hp_placement_equal))
    g_signal_emit (self, signals[CHANGED], 0);
}

/**
 * hp_named_placement_set_axis:
 * @self: a [class@Hp.NamedPlacement]
 * @axis: a standard mesh axis
 * @placement: the placement of the tensor across that mesh dim
 *
 * Sets the placement of the axis named by [func@Hp.MeshAxisName.to_string]
 * of @axis, as [method@Hp.NamedPlacement.set] does.
 *
 * Since: 1.0
 */
void
hp_named_placement_set_axis (HpNamedPlacement *self,
                             HpMeshAxisName    axis,
                             HpPlacement      *placement)
{
  const gchar *name;

  g_return_if_fail (HP_IS_NAMED_PLACEMENT (self));
  g_return_if_fail (HP_IS_PLACEMENT (placement));

  name = hp_mesh_axis_name_to_string (axis);
  g_return_if_fail (name != NULL);

  hp_named_placement_set (self, name, placement);
}

/**
 * hp_named_placement_get:
 * @self: a [class@Hp.NamedPlacement]
 * @axis: a mesh dim name
 *
 * Gets the placement of @axis.
 *
 * Returns: (transfer none) (nullable): the placement, or %NULL if @self
 *   does not name @axis
 *
 * Since: 1.0
 */
HpPlacement *
hp_named_placement_get (HpNamedPlacement *self,
                        const gchar      *axis)
{
  g_return_val_if_fail (HP_IS_NAMED_PLACEMENT (self), NULL);
  g_return_val_if_fail (axis != NULL, NULL);

  return _hp_name_map_lookup (&self->axes, axis);
}

/**
 * hp_named_placement_get_axes:
 * @self: a [class@Hp.NamedPlacement]
 *
 * Gets the axis names, in the order they were first set.
 *
 * Returns: (transfer full) (array zero-terminated=1): a new
 *   %NULL-terminated array of the names; empty for an empty map
 *
 * Since: 1.0
 */
GStrv
hp_named_placement_get_axes (HpNamedPlacement *self)
{
  g_return_val_if_fail (HP_IS_NAMED_PLACEMENT (self), NULL);

  return _hp_name_map_dup_names (&self->axes);
}

/**
 * hp_named_placement_get_n_axes:
 * @self: a [class@Hp.NamedPlacement]
 *
 * Gets the number of axes @self names.
 *
 * Returns: the number of axes
 *
 * Since: 1.0
 */
guint
hp_named_placement_get_n_axes (HpNamedPlacement *self)
{
  g_return_val_if_fail (HP_IS_NAMED_PLACEMENT (self), 0);

  return self->axes.names->len;
}

static const HpNameMapSyntax syntax = {
  "named placement", ':', "axis:placement", "axis",
  (HpNameMapParseFunc) hp_placement_new_from_string,
};

/**
 * hp_named_placement_new_from_string:
 * @text: a list of `axis:placement` entries such as "tp:S(0),dp:R"
 * @error: return location for a [struct@GLib.Error]
 *
 * Parses a named placement as written by [method@Hp.NamedPlacement.to_string]:
 * entries separated by commas, each an axis name, a colon and a
 * placement in any form [ctor@Hp.Placement.new_from_string] reads. Axis names
 * are made of letters, digits, `_`, `-` and `.`; whitespace around
 * entries, names and placements is allowed. A blank @text gives an empty
 * map. The axes keep the order of @text.
 *
 * Returns: (transfer full): a new [class@Hp.NamedPlacement], or %NULL with
 *   [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error], naming the entry, for an empty entry, an
 *   entry without a colon, an empty or invalid axis name, an axis given
 *   twice or a placement that does not parse
 *
 * Since: 1.0
 */
HpNamedPlacement *
hp_named_placement_new_from_string (const gchar  *text,
                                    GError      **error)
{
  g_autoptr(HpNamedPlacement) self = NULL;
  g_autofree gchar *copy = NULL;
  gchar *start;
  gint depth = 0;
  guint n_entries = 0;

  g_return_val_if_fail (text != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!_hp_error_check_utf8 (text, "cannot parse named placement", HP_ERROR_INVALID_ARGUMENT, error))
    return NULL;

  self = hp_named_placement_new ();
  copy = g_strstrip (g_strdup (text));
  if (*copy == '\0')
    return g_steal_pointer (&self);

  /* cut at the commas outside parentheses; the end closes the last entry */
  start = copy;
  for (gchar *p = copy;; p++)
    {
      if (*p == '(')
        depth++;
      else if (*p == ')')
        depth--;
      else if (*p == '\0' || (*p == ',' && depth == 0))
        {
          gboolean last = *p == '\0';
          gchar *entry;

          *p = '\0';
          entry = g_strstrip (start);
          if (*entry == '\0')
            {
              g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                           "cannot parse named placement '%s': entry %u is empty",
                           text, n_entries);
              return NULL;
            }
          if (!_hp_name_map_parse_entry (&self->axes, &syntax, text, entry, error))
            return NULL;
          n_entries++;
          if (last)
            break;
          start = p + 1;
        }
    }

  return g_steal_pointer (&self);
}

/**
 * hp_named_placement_to_string:
 * @self: a [class@Hp.NamedPlacement]
 *
 * Formats @self as `tp:S(0), dp:R`: the entries in order, each axis
 * with the short form of its placement. An empty map gives an empty
 * string. [ctor@Hp.NamedPlacement.new_from_string] reads the result back
 * when the axis names are made of the characters it accepts.
 *
 * Returns: (transfer full): the string
 *
 * Since: 1.0
 */
gchar *
hp_named_placement_to_string (HpNamedPlacement *self)
{
  GString *out;

  g_return_val_if_fail (HP_IS_NAMED_PLACEMENT (self), NULL);

  out = g_string_new (NULL);
  for (guint i = 0; i < self->axes.names->len; i++)
    {
      g_autofree gchar *placement = hp_placement_to_string (g_ptr_array_index (self->axes.values, i));

      g_string_append_printf (out, "%s%s:%s", i > 0 ? ", " : "",
                              (const gchar *) g_ptr_array_index (self->axes.names, i), placement);
    }
  return g_string_free (out, FALSE);
}

/**
 * hp_named_placement_equal:
 * @self: a [class@Hp.NamedPlacement]
 * @other: another [class@Hp.NamedPlacement]
 *
 * Tells whether two named placements map the same axes to equal
 * placements (see [method@Hp.Placement.equal]). The order of the axes does not
 * matter, as it does not for [func@Hp.resolve_placements].
 *
 * Returns: %TRUE if @self and @other are equal
 *
 * Since: 1.0
 */
gboolean
hp_named_placement_equal (HpNamedPlacement *self,
                          HpNamedPlacement *other)
{
  g_return_val_if_fail (HP_IS_NAMED_PLACEMENT (self), FALSE);
  g_return_val_if_fail (HP_IS_NAMED_PLACEMENT (other), FALSE);

  return _hp_name_map_equal (&self->axes, &other->axes, (GEqualFunc) hp_placement_equal);
}

gboolean
_hp_named_placement_equal0 (HpNamedPlacement *a,
                            HpNamedPlacement *b)
{
  if (a == NULL || b == NULL)
    return a == b;
  return a == b || hp_named_placement_equal (a, b);
}

gboolean
_hp_named_placement_lists_equal (GPtrArray *a,
                                 GPtrArray *b)
{
  if (a == NULL || b == NULL)
    return a == b;
  if (a->len != b->len)
    return FALSE;

  for (guint i = 0; i < a->len; i++)
    if (!_hp_named_placement_equal0 (g_ptr_array_index (a, i), g_ptr_array_index (b, i)))
      return FALSE;
  return TRUE;
}

/**
 * hp_named_placement_copy:
 * @self: a [class@Hp.NamedPlacement]
 *
 * Copies @self: the same axes in the same order, sharing the (immutable)
 * placements. Later changes to either map do not affect the other.
 *
 * Returns: (transfer full): a new [class@Hp.NamedPlacement]
 *
 * Since: 1.0
 */
HpNamedPlacement *
hp_named_placement_copy (HpNamedPlacement *self)
{
  HpNamedPlacement *copy;

  g_return_val_if_fail (HP_IS_NAMED_PLACEMENT (self), NULL);

  copy = hp_named_placement_new ();
  _hp_name_map_copy (&copy->axes, &self->axes);
  return copy;
}

/**
 * hp_resolve_placements:
 * @named: (nullable): the named placement; %NULL is the empty map
 * @mesh_dim_names: (array zero-terminated=1) (nullable): the names of
 *   the mesh dims in mesh order, as [method@Hp.DeviceMesh.get_dim_names] gives
 *   them; %NULL for none
 * @error: return location for a [struct@GLib.Error]
 *
 * Orders a named placement by the dims of a mesh: one placement per
 * mesh dim, in mesh order, the one @named gives for that dim's name or
 * [class@Hp.Replicate] where it names none. Every axis of @named must be a dim
 * of the mesh. Names are compared case-sensitively. An empty @named and
 * no mesh dims give an empty array.
 *
 * The array is annotated `(transfer container)` although the caller
 * owns the placements too: its free function is [method@GObject.Object.unref], so
 * freeing the array is all a caller does (see
 * [func@Hp.placements_new_from_string]).
 *
 * Returns: (transfer container) (element-type HpPlacement): a new array
 *   of placements that unrefs them when freed, or %NULL with
 *   [HP_ERROR_PLACEMENT][error@Hp.Error] (`NamedPlacement has axes not in mesh: {ep, pp}`,
 *   every such axis in the order of @named) when @named has axes that
 *   are not mesh dims
 *
 * Since: 1.0
 */
GPtrArray *
hp_resolve_placements (HpNamedPlacement     *named,
                       const gchar * const  *mesh_dim_names,
                       GError              **error)
{
  static const gchar * const no_names[] = { NULL };
  g_autoptr(GPtrArray) out = NULL;
  GString *missing = NULL;
  guint n_dims;

  g_return_val_if_fail (named == NULL || HP_IS_NAMED_PLACEMENT (named), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (mesh_dim_names == NULL)
    mesh_dim_names = no_names;
  n_dims = g_strv_length ((GStrv) mesh_dim_names);

  for (guint i = 0; named != NULL && i < named->axes.names->len; i++)
    {
      const gchar *axis = g_ptr_array_index (named->axes.names, i);

      if (g_strv_contains (mesh_dim_names, axis))
        continue;
      if (missing == NULL)
        missing = g_string_new (NULL);
      else
        g_string_append (missing, ", ");
      g_string_append (missing, axis);
    }

  if (missing != NULL)
    {
      g_autofree gchar *dims = g_strjoinv (", ", (GStrv) mesh_dim_names);

      g_set_error (error, HP_ERROR, HP_ERROR_PLACEMENT,
                   "NamedPlacement has axes not in mesh: {%s} (mesh dims: {%s})",
                   missing->str, dims);
      g_string_free (missing, TRUE);
      return NULL;
    }

  out = g_ptr_array_new_full (n_dims, g_object_unref);
  for (guint d = 0; d < n_dims; d++)
    {
      HpPlacement *p = named != NULL ? hp_named_placement_get (named, mesh_dim_names[d]) : NULL;

      g_ptr_array_add (out, p != NULL ? g_object_ref (p) : hp_replicate_new ());
    }
  return g_steal_pointer (&out);
}
