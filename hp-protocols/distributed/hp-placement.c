/* hp-placement.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "hp-error-private.h"
#include "hp-error.h"
#include "hp-partial.h"
#include "hp-placement-private.h"
#include "hp-placement.h"
#include "hp-replicate.h"
#include "hp-shard.h"

/**
 * HpPlacement:
 *
 * How a tensor is laid out across one dim of a device mesh.
 *
 * A distributed tensor has one placement per mesh dim, applied from mesh
 * dim 0 to the last. There are three kinds, the only subclasses:
 *
 * - [class@Hp.Shard] (`S(dim)`): tensor dim `dim` is split into chunks, one per
 *   rank of the mesh dim;
 * - [class@Hp.Replicate] (`R`): every rank holds the whole tensor;
 * - [class@Hp.Partial] (`P(op)`): every rank holds a partial value of the whole
 *   shape, and the tensor is their reduction with a [enum@Hp.ReduceOp].
 *
 * Placements are immutable: their properties are construct-only, so one
 * placement can be shared freely between tensors, arrays and threads.
 * Compare them with [method@Hp.Placement.equal], not by pointer.
 *
 * [method@Hp.Placement.to_string] gives the short forms `S(0)`, `S(-1)`, `R` and
 * `P(sum)`; [ctor@Hp.Placement.new_from_string] reads those and the long
 * forms `Shard(0)`, `Shard(dim=0)`, `Replicate()` and
 * `Partial(reduce_op=max)`. [func@Hp.placements_to_string] and
 * [func@Hp.placements_new_from_string] do the same for a whole list, written
 * `(S(0), R)`.
 *
 * Since: 1.0
 */

G_DEFINE_ABSTRACT_TYPE (HpPlacement, hp_placement, G_TYPE_OBJECT)

#define PLACEMENT_HINT "expected S(dim), R or P(op)"

static void
hp_placement_class_init (HpPlacementClass *klass)
{
}

static void
hp_placement_init (HpPlacement *self)
{
}

static HpPlacement *
placement_syntax_error (const gchar  *text,
                        GError      **error)
{
  g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
               "cannot parse placement '%s': " PLACEMENT_HINT, text);
  return NULL;
}

/* For "key = value" in @args (already stripped) gives the stripped value
 * when the key is @key, NULL for another key; @args itself when it names
 * no key. Writes into @args. */
static gchar *
strip_keyword (gchar       *args,
               const gchar *key)
{
  gchar *equals = strchr (args, '=');

  if (equals == NULL)
    return args;

  *equals = '\0';
  if (!g_str_equal (g_strstrip (args), key))
    return NULL;

  return g_strstrip (equals + 1);
}

/* Reads an optional '-' and decimal digits, nothing else. Sets
 * @out_of_range when the number does not fit in a gint. */
static gboolean
parse_dim (const gchar *digits,
           gint        *dim,
           gboolean    *out_of_range)
{
  gboolean negative = FALSE;
  gint64 magnitude = 0;
  const gchar *p = digits;

  *out_of_range = FALSE;

  if (*p == '-')
    {
      negative = TRUE;
      p++;
    }

  if (*p == '\0')
    return FALSE;

  for (; *p != '\0'; p++)
    {
      if (!g_ascii_isdigit (*p))
        return FALSE;

      /* stop growing once past any gint, so the sum cannot overflow */
      if (magnitude <= (gint64) G_MAXINT + 1)
        magnitude = magnitude * 10 + (*p - '0');
    }

  if (negative)
    magnitude = -magnitude;

  if (magnitude < G_MININT || magnitude > G_MAXINT)
    {
      *out_of_range = TRUE;
      return FALSE;
    }

  *dim = (gint) magnitude;
  return TRUE;
}

static HpPlacement *
parse_shard (const gchar  *text,
             gchar        *args,
             GError      **error)
{
  gchar *value = NULL;
  gboolean out_of_range;
  gint dim;

  if (args != NULL)
    {
      value = strip_keyword (args, "dim");
      if (value == NULL)
        return placement_syntax_error (text, error);
    }

  if (value == NULL || *value == '\0')
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "cannot parse placement '%s': a shard needs a dim, as in S(0)",
                   text);
      return NULL;
    }

  if (!parse_dim (value, &dim, &out_of_range))
    {
      if (out_of_range)
        g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                     "cannot parse placement '%s': shard dim %s is out of range [%d, %d]",
                     text, value, G_MININT, G_MAXINT);
      else
        g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                     "cannot parse placement '%s': shard dim '%s' is not an integer",
                     text, value);
      return NULL;
    }

  return hp_shard_new (dim);
}

static HpPlacement *
parse_partial (const gchar  *text,
               gchar        *args,
               GError      **error)
{
  g_autoptr(GError) local_error = NULL;
  HpReduceOp op = HP_REDUCE_OP_SUM;
  gchar *value;

  if (args == NULL || *args == '\0')
    return hp_partial_new (op);

  value = strip_keyword (args, "reduce_op");
  if (value == NULL)
    return placement_syntax_error (text, error);

  if (!hp_reduce_op_from_string (value, &op, &local_error))
    {
      g_propagate_prefixed_error (error, g_steal_pointer (&local_error),
                                  "cannot parse placement '%s': ", text);
      return NULL;
    }

  return hp_partial_new (op);
}

/**
 * hp_placement_new_from_string:
 * @text: a placement such as "S(0)", "R" or "P(sum)"
 * @error: return location for a [struct@GLib.Error]
 *
 * Parses one placement. The accepted forms are a name, optionally
 * followed by arguments in parentheses:
 *
 * - `S` or `Shard` with the dim, bare or as a keyword: `S(0)`, `S(-1)`,
 *   `Shard(0)`, `Shard(dim=0)`;
 * - `R` or `Replicate` with no argument: `R`, `R()`, `Replicate`,
 *   `Replicate()`;
 * - `P` or `Partial` with an optional reduce op (see
 *   [func@Hp.ReduceOp.from_string]), bare or as a keyword; it defaults to
 *   sum: `P`, `P()`, `P(sum)`, `Partial(max)`, `Partial(reduce_op=max)`.
 *
 * Names are case-sensitive. Whitespace is allowed around the whole text
 * and around the parentheses, the argument and the `=`, as in
 * `S( 1 )`. The dim is kept as written, negative values included.
 *
 * Returns: (transfer full): a new placement, or %NULL with
 *   [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] when @text is not a placement, the dim is
 *   not an integer that fits in a `gint`, or the reduce op is unknown
 *
 * Since: 1.0
 */
HpPlacement *
hp_placement_new_from_string (const gchar  *text,
                              GError      **error)
{
  g_autofree gchar *copy = NULL;
  gchar *name_end;
  gchar *p;
  gchar *args = NULL;

  g_return_val_if_fail (text != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!_hp_error_check_utf8 (text, "cannot parse placement", HP_ERROR_INVALID_ARGUMENT, error))
    return NULL;

  copy = g_strstrip (g_strdup (text));

  name_end = copy;
  while (g_ascii_isalnum (*name_end) || *name_end == '_')
    name_end++;
  if (name_end == copy)
    return placement_syntax_error (text, error);

  p = name_end;
  while (g_ascii_isspace (*p))
    p++;

  if (*p == '(')
    {
      gchar *close;

      args = p + 1;
      close = strchr (args, ')');
      /* one pair of parentheses, closing at the very end */
      if (close == NULL || close[1] != '\0' ||
          memchr (args, '(', close - args) != NULL)
        return placement_syntax_error (text, error);
      *close = '\0';
      g_strstrip (args);
    }
  else if (*p != '\0')
    {
      return placement_syntax_error (text, error);
    }

  *name_end = '\0';

  if (g_str_equal (copy, "S") || g_str_equal (copy, "Shard"))
    return parse_shard (text, args, error);

  if (g_str_equal (copy, "P") || g_str_equal (copy, "Partial"))
    return parse_partial (text, args, error);

  if ((g_str_equal (copy, "R") || g_str_equal (copy, "Replicate")) &&
      (args == NULL || *args == '\0'))
    return hp_replicate_new ();

  return placement_syntax_error (text, error);
}

/**
 * hp_placement_equal:
 * @self: a [class@Hp.Placement]
 * @other: another [class@Hp.Placement]
 *
 * Tells whether two placements are the same: of the same kind, and for
 * shards the same dim as given (`S(-1)` is not equal to `S(1)`), for
 * partials the same reduce op.
 *
 * Returns: %TRUE if @self and @other are equal
 *
 * Since: 1.0
 */
gboolean
hp_placement_equal (HpPlacement *self,
                    HpPlacement *other)
{
  HpPlacementClass *klass;

  g_return_val_if_fail (HP_IS_PLACEMENT (self), FALSE);
  g_return_val_if_fail (HP_IS_PLACEMENT (other), FALSE);

  if (self == other)
    return TRUE;

  if (G_OBJECT_TYPE (self) != G_OBJECT_TYPE (other))
    return FALSE;

  klass = HP_PLACEMENT_GET_CLASS (self);
  g_return_val_if_fail (klass->equal != NULL, FALSE);

  return klass->equal (self, other);
}

/**
 * hp_placement_to_string:
 * @self: a [class@Hp.Placement]
 *
 * Formats @self in the short form that [ctor@Hp.Placement.new_from_string]
 * reads back: `S(0)`, `S(-1)`, `R`, `P(sum)`, `P(avg)`, `P(max)`,
 * `P(min)` or `P(product)`.
 *
 * Returns: (transfer full): the string
 *
 * Since: 1.0
 */
gchar *
hp_placement_to_string (HpPlacement *self)
{
  HpPlacementClass *klass;

  g_return_val_if_fail (HP_IS_PLACEMENT (self), NULL);

  klass = HP_PLACEMENT_GET_CLASS (self);
  g_return_val_if_fail (klass->to_string != NULL, NULL);

  return klass->to_string (self);
}

/**
 * hp_placement_is_shard:
 * @self: a [class@Hp.Placement]
 *
 * Tells whether @self is a [class@Hp.Shard].
 *
 * Returns: %TRUE for a shard placement
 *
 * Since: 1.0
 */
gboolean
hp_placement_is_shard (HpPlacement *self)
{
  g_return_val_if_fail (HP_IS_PLACEMENT (self), FALSE);

  return HP_IS_SHARD (self);
}

/**
 * hp_placement_is_replicate:
 * @self: a [class@Hp.Placement]
 *
 * Tells whether @self is a [class@Hp.Replicate].
 *
 * Returns: %TRUE for a replicate placement
 *
 * Since: 1.0
 */
gboolean
hp_placement_is_replicate (HpPlacement *self)
{
  g_return_val_if_fail (HP_IS_PLACEMENT (self), FALSE);

  return HP_IS_REPLICATE (self);
}

/**
 * hp_placement_is_partial:
 * @self: a [class@Hp.Placement]
 *
 * Tells whether @self is a [class@Hp.Partial].
 *
 * Returns: %TRUE for a partial placement
 *
 * Since: 1.0
 */
gboolean
hp_placement_is_partial (HpPlacement *self)
{
  g_return_val_if_fail (HP_IS_PLACEMENT (self), FALSE);

  return HP_IS_PARTIAL (self);
}

/**
 * hp_placements_to_string:
 * @placements: (element-type HpPlacement): the placements, one per mesh dim
 *
 * Formats a list of placements as `(S(0), R)`, each with
 * [method@Hp.Placement.to_string]; an empty list gives `()`.
 *
 * Returns: (transfer full): the string
 *
 * Since: 1.0
 */
gchar *
hp_placements_to_string (GPtrArray *placements)
{
  GString *out;

  g_return_val_if_fail (placements != NULL, NULL);
  for (guint i = 0; i < placements->len; i++)
    g_return_val_if_fail (HP_IS_PLACEMENT (g_ptr_array_index (placements, i)), NULL);

  out = g_string_new ("(");
  for (guint i = 0; i < placements->len; i++)
    {
      g_autofree gchar *item = hp_placement_to_string (g_ptr_array_index (placements, i));

      if (i > 0)
        g_string_append (out, ", ");
      g_string_append (out, item);
    }
  g_string_append_c (out, ')');

  return g_string_free (out, FALSE);
}

/* The index of the ')' that closes the '(' at @open, or -1 */
static gssize
find_closing_parenthesis (const gchar *text,
                          gsize        open)
{
  guint depth = 0;

  for (gsize i = open; text[i] != '\0'; i++)
    {
      if (text[i] == '(')
        depth++;
      else if (text[i] == ')' && --depth == 0)
        return (gssize) i;
    }

  return -1;
}

/**
 * hp_placements_new_from_string:
 * @text: a list of placements such as "(S(0), R)"
 * @error: return location for a [struct@GLib.Error]
 *
 * Parses a list of placements as written by [func@Hp.placements_to_string]:
 * placements in any form that [ctor@Hp.Placement.new_from_string] accepts,
 * separated by commas, inside parentheses (`(S(0), R)`), brackets
 * (`[S(0), R]`) or nothing (`S(0), R`). A single trailing comma is
 * allowed, as in `(S(0),)`. `()`, `[]` and a blank @text give an empty
 * array.
 *
 * The array is annotated `(transfer container)` although the caller owns
 * the placements too: the array holds one reference to each and drops it
 * when it is freed (its free function is [method@GObject.Object.unref]), so freeing the
 * array is all a caller does. Language bindings read `(transfer full)` on
 * such an array as one reference per element on top of that and unref
 * the elements twice.
 *
 * Returns: (transfer container) (element-type HpPlacement): a new array of
 *   placements that unrefs them when freed, or %NULL with
 *   [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] when the parentheses or brackets do not
 *   match or a placement does not parse; the message of the latter starts
 *   with `placement i: `, where `i` counts from 0 (the mesh dim the
 *   placement is for)
 *
 * Since: 1.0
 */
GPtrArray *
hp_placements_new_from_string (const gchar  *text,
                               GError      **error)
{
  g_autoptr(GPtrArray) placements = NULL;
  g_autoptr(GPtrArray) items = NULL;
  g_autofree gchar *copy = NULL;
  gchar *inner;
  gchar *item_start;
  gsize len;
  gint depth = 0;

  g_return_val_if_fail (text != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!_hp_error_check_utf8 (text, "cannot parse placements", HP_ERROR_INVALID_ARGUMENT, error))
    return NULL;

  copy = g_strstrip (g_strdup (text));
  len = strlen (copy);

  for (gsize i = 0; i < len && depth >= 0; i++)
    {
      if (copy[i] == '(')
        depth++;
      else if (copy[i] == ')')
        depth--;
    }
  if (depth != 0)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "cannot parse placements '%s': unbalanced parentheses",
                   text);
      return NULL;
    }

  inner = copy;
  if (copy[0] == '[')
    {
      if (len < 2 || copy[len - 1] != ']')
        {
          g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                       "cannot parse placements '%s': unbalanced brackets",
                       text);
          return NULL;
        }
      copy[len - 1] = '\0';
      inner = copy + 1;
    }
  else if (copy[0] == '(' && find_closing_parenthesis (copy, 0) == (gssize) len - 1)
    {
      copy[len - 1] = '\0';
      inner = copy + 1;
    }

  /* cut at the commas outside parentheses */
  items = g_ptr_array_new ();
  item_start = inner;
  depth = 0;
  for (gchar *p = inner; *p != '\0'; p++)
    {
      if (*p == '(')
        depth++;
      else if (*p == ')')
        depth--;
      else if (*p == ',' && depth == 0)
        {
          *p = '\0';
          g_ptr_array_add (items, g_strstrip (item_start));
          item_start = p + 1;
        }
    }
  g_ptr_array_add (items, g_strstrip (item_start));

  /* "()" has one blank item, and "(S(0),)" a blank one after the comma;
   * any other blank item stays and fails to parse */
  if (*(const gchar *) g_ptr_array_index (items, items->len - 1) == '\0')
    g_ptr_array_set_size (items, items->len - 1);

  placements = g_ptr_array_new_full (items->len, g_object_unref);
  for (guint i = 0; i < items->len; i++)
    {
      g_autoptr(GError) local_error = NULL;
      HpPlacement *placement;

      placement = hp_placement_new_from_string (g_ptr_array_index (items, i), &local_error);
      if (placement == NULL)
        {
          g_propagate_prefixed_error (error, g_steal_pointer (&local_error),
                                      "placement %u: ", i);
          return NULL;
        }
      g_ptr_array_add (placements, placement);
    }

  return g_steal_pointer (&placements);
}

/* Shared placements (see hp-placement-private.h). Each slot is filled
 * once, by whichever thread gets there first, and keeps its reference
 * for the life of the process. */

/* shard dims from -SHARED_SHARD_DIMS to SHARED_SHARD_DIMS - 1 are kept */
#define SHARED_SHARD_DIMS 16

static HpPlacement *shared_replicate;
static HpPlacement *shared_shards[2 * SHARED_SHARD_DIMS];
static HpPlacement *shared_partials[HP_REDUCE_OP_PRODUCT + 1];

static HpPlacement *
shared_ref (HpPlacement **slot,
            HpPlacement  *(*make) (gint),
            gint          value)
{
  HpPlacement *placement = g_atomic_pointer_get (slot);

  if (G_UNLIKELY (placement == NULL))
    {
      HpPlacement *made = make (value);

      if (g_atomic_pointer_compare_and_exchange (slot, NULL, made))
        placement = made;
      else
        {
          g_object_unref (made);
          placement = g_atomic_pointer_get (slot);
        }
    }

  return g_object_ref (placement);
}

static HpPlacement *
make_replicate (gint unused)
{
  return hp_replicate_new ();
}

static HpPlacement *
make_shard (gint dim)
{
  return hp_shard_new (dim);
}

static HpPlacement *
make_partial (gint reduce_op)
{
  return hp_partial_new ((HpReduceOp) reduce_op);
}

HpPlacement *
_hp_placement_shared_replicate (void)
{
  return shared_ref (&shared_replicate, make_replicate, 0);
}

HpPlacement *
_hp_placement_shared_shard (gint dim)
{
  if (dim < -SHARED_SHARD_DIMS || dim >= SHARED_SHARD_DIMS)
    return hp_shard_new (dim);

  return shared_ref (&shared_shards[dim + SHARED_SHARD_DIMS], make_shard, dim);
}

HpPlacement *
_hp_placement_shared_partial (HpReduceOp reduce_op)
{
  g_return_val_if_fail ((guint) reduce_op <= HP_REDUCE_OP_PRODUCT, NULL);

  return shared_ref (&shared_partials[reduce_op], make_partial, reduce_op);
}
