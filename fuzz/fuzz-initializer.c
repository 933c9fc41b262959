/* fuzz-initializer.c: libFuzzer target for the initialiser parsers
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Each input, up to its first NUL, is given to
 * hp_initializer_new_from_string() (`normal(mean=0, std=0.02)`) and to
 * hp_param_init_new_from_string() (`weight=normal(std=0.02); bias=zeros`).
 * Each must either fail with HP_ERROR_INVALID_ARGUMENT or succeed; then
 * the text it writes back must parse to an equal value whose text is
 * the same, and a parsed initialiser must fill a small tensor with
 * values that are not NaN and, for the bounded kinds, within bounds.
 * Anything else (a crash, a sanitizer report, a leak, a GLib warning or
 * critical, another error, a failed round trip) is a bug.
 */

#include <math.h>
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

/* Fills a float64 tensor of 8 values: no value is NaN, and those of the
 * truncated and uniform kinds are within their bounds */
static void
check_apply (const gchar   *text,
             HpInitializer *initializer)
{
  static const gint64 shape[] = { 2, 4 };
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) tensor = hp_tensor_new_zeros (HP_DTYPE_FLOAT64, shape, G_N_ELEMENTS (shape));
  g_autofree gdouble *values = NULL;
  HpInitKind kind = hp_initializer_get_kind (initializer);
  gboolean bounded = kind == HP_INIT_KIND_TRUNC_NORMAL || kind == HP_INIT_KIND_DEPTH_SCALED_NORMAL ||
                     kind == HP_INIT_KIND_UNIFORM;
  gsize n_values;

  if (!hp_initializer_apply (initializer, tensor, 7, &error))
    fuzz_round_trip_failure ("initializer", "an initializer does not fill a float64 tensor", text, error->message);
  values = hp_tensor_to_float64_array (tensor, &n_values);
  for (gsize i = 0; i < n_values; i++)
    {
      if (isnan (values[i]))
        fuzz_round_trip_failure ("initializer", "an initializer fills in NaN", text, NULL);
      if (bounded && (values[i] < hp_initializer_get_a (initializer) ||
                      values[i] > hp_initializer_get_b (initializer)))
        fuzz_round_trip_failure ("initializer", "an initializer fills in a value out of its bounds", text, NULL);
    }
}

static void
check_initializer (const gchar *text)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpInitializer) initializer = hp_initializer_new_from_string (text, &error);
  g_autoptr(HpInitializer) back = NULL;
  g_autofree gchar *written = NULL;
  g_autofree gchar *again = NULL;

  if (initializer == NULL)
    {
      fuzz_check_error (error, HP_ERROR_INVALID_ARGUMENT);
      return;
    }

  written = hp_initializer_to_string (initializer);
  back = hp_initializer_new_from_string (written, &error);
  if (back == NULL)
    fuzz_round_trip_failure ("initializer", "an initializer written does not parse", text, written);
  if (!hp_initializer_equal (back, initializer) || !hp_initializer_equal (initializer, back))
    fuzz_round_trip_failure ("initializer", "an initializer written parses to another", text, written);
  again = hp_initializer_to_string (back);
  if (strcmp (again, written) != 0)
    fuzz_round_trip_failure ("initializer", "an initializer parsed back writes other text", text, written);

  check_apply (text, initializer);
}

static void
check_param_init (const gchar *text)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpParamInit) param_init = hp_param_init_new_from_string (text, &error);
  g_autoptr(HpParamInit) back = NULL;
  g_autoptr(HpParamInit) copy = NULL;
  g_autofree gchar *written = NULL;
  g_autofree gchar *again = NULL;
  g_auto(GStrv) names = NULL;

  if (param_init == NULL)
    {
      fuzz_check_error (error, HP_ERROR_INVALID_ARGUMENT);
      return;
    }

  names = hp_param_init_get_names (param_init);
  if (g_strv_length (names) != hp_param_init_get_n_entries (param_init))
    abort ();
  for (guint i = 0; names[i] != NULL; i++)
    if (hp_param_init_get (param_init, names[i]) == NULL)
      abort ();

  written = hp_param_init_to_string (param_init);
  back = hp_param_init_new_from_string (written, &error);
  if (back == NULL)
    fuzz_round_trip_failure ("initializer", "a param init written does not parse", text, written);
  if (!hp_param_init_equal (back, param_init) || !hp_param_init_equal (param_init, back))
    fuzz_round_trip_failure ("initializer", "a param init written parses to another", text, written);
  again = hp_param_init_to_string (back);
  if (strcmp (again, written) != 0)
    fuzz_round_trip_failure ("initializer", "a param init parsed back writes other text", text, written);

  copy = hp_param_init_copy (param_init);
  if (!hp_param_init_equal (copy, param_init))
    fuzz_round_trip_failure ("initializer", "a copy of a param init is not equal", text, written);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  g_autofree gchar *text = g_strndup ((const gchar *) data, size);

  check_initializer (text);
  check_param_init (text);
  return 0;
}
