/* fuzz-placement.c: libFuzzer target for the placement string parsers
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Each input, up to its first NUL, is given to every parser of
 * placement text: hp_placement_new_from_string() (`S(0)`),
 * hp_placements_new_from_string() (`(S(0), R)`),
 * hp_named_placement_new_from_string() (`tp:S(0), dp:R`),
 * hp_reduce_op_from_string() (`sum`) and hp_mesh_axis_name_from_string()
 * (`tp`). Each must either fail with HP_ERROR_INVALID_ARGUMENT, leaving
 * its out argument as it was, or succeed; then the text it writes back
 * must parse to an equal value whose text is the same. A named
 * placement must also resolve over a mesh of its own axes, and over a
 * fixed mesh either resolve or fail with HP_ERROR_PLACEMENT. Anything
 * else (a crash, a sanitizer report, a leak, a GLib warning or
 * critical, another error, a failed round trip) is a bug.
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <hp-protocols/hp-protocols.h>

#include "fuzz-common.h"

int LLVMFuzzerInitialize (int    *argc,
                          char ***argv);
int LLVMFuzzerTestOneInput (const uint8_t *data,
                            size_t         size);

int
LLVMFuzzerInitialize (int    *argc,
                      char ***argv)
{
  fuzz_make_warnings_fatal ();
  return 0;
}

static void
check_placement (const gchar *text)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpPlacement) placement = hp_placement_new_from_string (text, &error);
  g_autoptr(HpPlacement) back = NULL;
  g_autofree gchar *written = NULL;
  g_autofree gchar *again = NULL;

  if (placement == NULL)
    {
      fuzz_check_error (error, HP_ERROR_INVALID_ARGUMENT);
      return;
    }
  if (hp_placement_is_shard (placement) + hp_placement_is_replicate (placement) +
      hp_placement_is_partial (placement) != 1)
    abort ();

  written = hp_placement_to_string (placement);
  back = hp_placement_new_from_string (written, &error);
  if (back == NULL)
    fuzz_round_trip_failure ("placement", "a placement written does not parse", text, written);
  if (!hp_placement_equal (back, placement) || !hp_placement_equal (placement, back))
    fuzz_round_trip_failure ("placement", "a placement written parses to another", text, written);
  again = hp_placement_to_string (back);
  if (strcmp (again, written) != 0)
    fuzz_round_trip_failure ("placement", "a placement parsed back writes other text", text, written);
}

static gboolean
placement_lists_equal (GPtrArray *a,
                       GPtrArray *b)
{
  if (a->len != b->len)
    return FALSE;
  for (guint i = 0; i < a->len; i++)
    if (!hp_placement_equal (g_ptr_array_index (a, i), g_ptr_array_index (b, i)))
      return FALSE;
  return TRUE;
}

static void
check_placements (const gchar *text)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) placements = hp_placements_new_from_string (text, &error);
  g_autoptr(GPtrArray) back = NULL;
  g_autofree gchar *written = NULL;
  g_autofree gchar *again = NULL;

  if (placements == NULL)
    {
      fuzz_check_error (error, HP_ERROR_INVALID_ARGUMENT);
      return;
    }

  written = hp_placements_to_string (placements);
  back = hp_placements_new_from_string (written, &error);
  if (back == NULL)
    fuzz_round_trip_failure ("placement", "a placement list written does not parse", text, written);
  if (!placement_lists_equal (back, placements))
    fuzz_round_trip_failure ("placement", "a placement list written parses to another", text, written);
  again = hp_placements_to_string (back);
  if (strcmp (again, written) != 0)
    fuzz_round_trip_failure ("placement", "a placement list parsed back writes other text", text, written);
}

/* @named resolves over a mesh whose dims are its own axes, in reverse
 * order, to the placement of each axis; over the mesh (dp, tp) it
 * resolves or fails with HP_ERROR_PLACEMENT */
static void
check_resolve (const gchar      *text,
               HpNamedPlacement *named)
{
  static const gchar * const fixed_mesh[] = { "dp", "tp", NULL };
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) axes = hp_named_placement_get_axes (named);
  g_autoptr(GPtrArray) resolved = NULL;
  g_autoptr(GPtrArray) on_fixed = NULL;
  guint n_axes = g_strv_length (axes);

  if (n_axes != hp_named_placement_get_n_axes (named))
    abort ();
  for (guint i = 0; i < n_axes / 2; i++)
    {
      gchar *swap = axes[i];

      axes[i] = axes[n_axes - 1 - i];
      axes[n_axes - 1 - i] = swap;
    }

  resolved = hp_resolve_placements (named, (const gchar * const *) axes, &error);
  if (resolved == NULL || resolved->len != n_axes)
    fuzz_round_trip_failure ("placement", "a named placement does not resolve over its own axes", text, NULL);
  for (guint i = 0; i < n_axes; i++)
    if (!hp_placement_equal (g_ptr_array_index (resolved, i), hp_named_placement_get (named, axes[i])))
      fuzz_round_trip_failure ("placement", "a named placement resolves to other placements", text, NULL);

  on_fixed = hp_resolve_placements (named, fixed_mesh, &error);
  if (on_fixed == NULL)
    {
      if (!g_error_matches (error, HP_ERROR, HP_ERROR_PLACEMENT))
        abort ();
    }
  else if (on_fixed->len != G_N_ELEMENTS (fixed_mesh) - 1)
    {
      abort ();
    }
}

static void
check_named_placement (const gchar *text)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpNamedPlacement) named = hp_named_placement_new_from_string (text, &error);
  g_autoptr(HpNamedPlacement) back = NULL;
  g_autoptr(HpNamedPlacement) copy = NULL;
  g_autofree gchar *written = NULL;
  g_autofree gchar *again = NULL;

  if (named == NULL)
    {
      fuzz_check_error (error, HP_ERROR_INVALID_ARGUMENT);
      return;
    }

  written = hp_named_placement_to_string (named);
  back = hp_named_placement_new_from_string (written, &error);
  if (back == NULL)
    fuzz_round_trip_failure ("placement", "a named placement written does not parse", text, written);
  if (!hp_named_placement_equal (back, named) || !hp_named_placement_equal (named, back))
    fuzz_round_trip_failure ("placement", "a named placement written parses to another", text, written);
  again = hp_named_placement_to_string (back);
  if (strcmp (again, written) != 0)
    fuzz_round_trip_failure ("placement", "a named placement parsed back writes other text", text, written);

  copy = hp_named_placement_copy (named);
  if (!hp_named_placement_equal (copy, named))
    fuzz_round_trip_failure ("placement", "a copy of a named placement is not equal", text, written);

  check_resolve (text, named);
}

static void
check_reduce_op (const gchar *text)
{
  g_autoptr(GError) error = NULL;
  HpReduceOp op = (HpReduceOp) 77;
  HpReduceOp back = (HpReduceOp) 77;
  const gchar *written;

  if (!hp_reduce_op_from_string (text, &op, &error))
    {
      fuzz_check_error (error, HP_ERROR_INVALID_ARGUMENT);
      if (op != (HpReduceOp) 77)
        abort ();
      return;
    }

  written = hp_reduce_op_to_string (op);
  if (!hp_reduce_op_from_string (written, &back, &error) || back != op)
    fuzz_round_trip_failure ("placement", "a reduce op written does not parse to the same", text, written);
}

static void
check_mesh_axis_name (const gchar *text)
{
  g_autoptr(GError) error = NULL;
  HpMeshAxisName axis = (HpMeshAxisName) 77;
  HpMeshAxisName back = (HpMeshAxisName) 77;
  const gchar *written;

  if (!hp_mesh_axis_name_from_string (text, &axis, &error))
    {
      fuzz_check_error (error, HP_ERROR_INVALID_ARGUMENT);
      if (axis != (HpMeshAxisName) 77)
        abort ();
      return;
    }

  written = hp_mesh_axis_name_to_string (axis);
  if (written == NULL || !hp_mesh_axis_name_from_string (written, &back, &error) || back != axis)
    fuzz_round_trip_failure ("placement", "a mesh axis name written does not parse to the same", text, written);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  g_autofree gchar *text = g_strndup ((const gchar *) data, size);

  check_placement (text);
  check_placements (text);
  check_named_placement (text);
  check_reduce_op (text);
  check_mesh_axis_name (text);
  return 0;
}
