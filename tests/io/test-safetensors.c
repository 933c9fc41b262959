/* test-safetensors.c: safetensors files, checkpoints, sharding and the
 * validation of every header field
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <errno.h>
#include <math.h>
#include <string.h>

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "hp-test-utils.h"

/* the rounding functions of the writer */
#include "hp-safetensors-private.h"

#define NAME "model.safetensors"

/* Files */

static gchar *
make_tmp_dir (void)
{
  g_autoptr(GError) error = NULL;
  gchar *dir = g_dir_make_tmp ("hp-safetensors-XXXXXX", &error);

  g_assert_no_error (error);
  return dir;
}

static gint
compare_strv_entries (gconstpointer a,
                      gconstpointer b)
{
  return strcmp (*(const gchar * const *) a, *(const gchar * const *) b);
}

static GStrv
sorted_strv (GStrv names)
{
  qsort (names, g_strv_length (names), sizeof (gchar *), compare_strv_entries);
  return names;
}

static GStrv
list_dir (const gchar *path)
{
  g_autoptr(GDir) dir = g_dir_open (path, 0, NULL);
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
  const gchar *name;
  GStrv names;

  g_assert_nonnull (dir);
  while ((name = g_dir_read_name (dir)) != NULL)
    g_strv_builder_add (builder, name);
  names = g_strv_builder_end (builder);
  return sorted_strv (names);
}

static void
write_bytes (const gchar *path,
             GBytes      *bytes)
{
  g_autoptr(GError) error = NULL;
  gsize size;
  gconstpointer data = g_bytes_get_data (bytes, &size);

  g_file_set_contents (path, data, (gssize) size, &error);
  g_assert_no_error (error);
}

static GBytes *
read_bytes (const gchar *path)
{
  g_autoptr(GError) error = NULL;
  gchar *contents;
  gsize size;

  g_file_get_contents (path, &contents, &size, &error);
  g_assert_no_error (error);
  return g_bytes_new_take (contents, size);
}

/* A file with a header length field of @length, then @rest */
static GBytes *
raw_file (guint64      length,
          const gchar *rest,
          gsize        rest_size)
{
  GByteArray *array = g_byte_array_new ();
  guint64 le = GUINT64_TO_LE (length);

  g_byte_array_append (array, (const guint8 *) &le, 8);
  g_byte_array_append (array, (const guint8 *) rest, (guint) rest_size);
  return g_byte_array_free_to_bytes (array);
}

/* A file with @header and @data_size bytes of data 0, 1, 2, ... */
static GBytes *
header_file (const gchar *header,
             gsize        data_size)
{
  GByteArray *array = g_byte_array_new ();
  guint64 le = GUINT64_TO_LE ((guint64) strlen (header));

  g_byte_array_append (array, (const guint8 *) &le, 8);
  g_byte_array_append (array, (const guint8 *) header, (guint) strlen (header));
  for (gsize i = 0; i < data_size; i++)
    {
      guint8 byte = (guint8) i;

      g_byte_array_append (array, &byte, 1);
    }
  return g_byte_array_free_to_bytes (array);
}

/* A file with @header and the data @data */
static GBytes *
header_file_with_data (const gchar   *header,
                       gconstpointer  data,
                       gsize          data_size)
{
  GByteArray *array = g_byte_array_new ();
  guint64 le = GUINT64_TO_LE ((guint64) strlen (header));

  g_byte_array_append (array, (const guint8 *) &le, 8);
  g_byte_array_append (array, (const guint8 *) header, (guint) strlen (header));
  g_byte_array_append (array, data, (guint) data_size);
  return g_byte_array_free_to_bytes (array);
}

static void
assert_bytes_error (GBytes      *bytes,
                    const gchar *message)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpSafetensorsFile) file = hp_safetensors_file_new_from_bytes (bytes, NAME, &error);
  g_autofree gchar *expected = g_strconcat (NAME ": ", message, NULL);

  g_assert_null (file);
  g_assert_error (error, HP_ERROR, HP_ERROR_FORMAT);
  g_assert_cmpstr (error->message, ==, expected);
}

static void
assert_header_error (const gchar *header,
                     gsize        data_size,
                     const gchar *message)
{
  g_autoptr(GBytes) bytes = header_file (header, data_size);

  assert_bytes_error (bytes, message);
}

static HpSafetensorsFile *
open_header (const gchar *header,
             gsize        data_size)
{
  g_autoptr(GBytes) bytes = header_file (header, data_size);
  g_autoptr(GError) error = NULL;
  HpSafetensorsFile *file = hp_safetensors_file_new_from_bytes (bytes, NAME, &error);

  g_assert_no_error (error);
  return file;
}

/* The header of a file as JSON */
static JsonNode *
parse_file_header (GBytes  *bytes,
                   guint64 *header_length)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  gsize size;
  const guint8 *data = g_bytes_get_data (bytes, &size);

  g_assert_cmpuint (size, >=, 8);
  memcpy (header_length, data, 8);
  *header_length = GUINT64_FROM_LE (*header_length);
  g_assert_cmpuint (*header_length, <=, size - 8);
  json_parser_load_from_data (parser, (const gchar *) data + 8, (gssize) *header_length, &error);
  g_assert_no_error (error);
  return json_node_ref (json_parser_get_root (parser));
}

static void
assert_same_tensor (HpTensor *actual,
                    HpTensor *expected)
{
  g_autoptr(GBytes) a = hp_tensor_get_bytes (actual);
  g_autoptr(GBytes) e = hp_tensor_get_bytes (expected);
  guint a_ndim, e_ndim;
  const gint64 *a_shape = hp_tensor_get_shape (actual, &a_ndim);
  const gint64 *e_shape = hp_tensor_get_shape (expected, &e_ndim);

  g_assert_cmpint (hp_tensor_get_dtype (actual), ==, hp_tensor_get_dtype (expected));
  g_assert_cmpuint (a_ndim, ==, e_ndim);
  for (guint i = 0; i < a_ndim; i++)
    g_assert_cmpint (a_shape[i], ==, e_shape[i]);
  /* bit for bit */
  g_assert_true (g_bytes_equal (a, e));
}

static gboolean
shares_bytes (HpTensor *tensor,
              GBytes   *file)
{
  g_autoptr(GBytes) bytes = hp_tensor_get_bytes (tensor);
  gsize size, file_size;
  const guint8 *data = g_bytes_get_data (bytes, &size);
  const guint8 *start = g_bytes_get_data (file, &file_size);

  return data >= start && data + size <= start + file_size;
}

/* A state dict with every dtype, a 0-d tensor, empty tensors and an
 * odd-sized float32 tensor, in an order that is not the file's */
static HpStateDict *
make_state_dict (void)
{
  HpStateDict *sd = hp_state_dict_new ();
  g_autoptr(HpTensor) w = hp_test_randn (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (3, 5), 1, FALSE);
  g_autoptr(HpTensor) odd = hp_test_tensor (HP_DTYPE_FLOAT32, HP_TEST_DATA (1.5, -2.25, 3e-38),
                                            HP_TEST_SHAPE (3));
  g_autoptr(HpTensor) d = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 2, 2), 2, FALSE);
  g_autoptr(HpTensor) ids = hp_test_tensor_ids ((const gint64[]) { 0, -1, G_MAXINT64, G_MININT64, 42, 7 },
                                               6, HP_TEST_SHAPE (2, 3));
  g_autoptr(HpTensor) scalar = hp_test_tensor (HP_DTYPE_FLOAT32, HP_TEST_DATA (-7.5), NULL, 0);
  g_autoptr(HpTensor) empty = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (0));
  g_autoptr(HpTensor) empty3 = hp_tensor_new_zeros (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 0, 3));
  g_autoptr(HpTensor) step = hp_test_tensor_ids ((const gint64[]) { 12345 }, 1, NULL, 0);

  hp_state_dict_insert (sd, "layers.0.weight", w);
  hp_state_dict_insert (sd, "bias", odd);
  hp_state_dict_insert (sd, "layers.0.double", d);
  hp_state_dict_insert (sd, "tokens", ids);
  hp_state_dict_insert (sd, "scale", scalar);
  hp_state_dict_insert (sd, "empty", empty);
  hp_state_dict_insert (sd, "empty3", empty3);
  hp_state_dict_insert (sd, "step", step);
  return sd;
}

static void
assert_state_dicts_equal (HpStateDict *actual,
                          HpStateDict *expected)
{
  g_auto(GStrv) names = sorted_strv (hp_state_dict_get_names (expected));
  g_auto(GStrv) actual_names = hp_state_dict_get_names (actual);

  /* loaded names are sorted */
  g_assert_cmpstrv (actual_names, names);
  for (guint i = 0; names[i] != NULL; i++)
    assert_same_tensor (hp_state_dict_lookup (actual, names[i]),
                        hp_state_dict_lookup (expected, names[i]));
}

/* Round trips */

static void
test_round_trip (void)
{
  g_autofree gchar *dir = make_tmp_dir ();
  g_autofree gchar *path = g_build_filename (dir, NAME, NULL);
  g_autoptr(HpStateDict) sd = make_state_dict ();
  g_autoptr(HpStateDict) loaded = NULL;
  g_autoptr(HpSafetensorsFile) file = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) names = NULL;
  g_auto(GStrv) files = NULL;
  g_autofree gchar *prop_path = NULL;
  g_autofree gchar *expected = NULL;
  guint n_tensors;
  guint ndim;
  const gint64 *shape;

  g_assert_true (hp_safetensors_save (sd, NULL, path, &error));
  g_assert_no_error (error);
  /* no temporary file is left */
  files = list_dir (dir);
  g_assert_cmpstrv (files, ((const gchar *[]) { NAME, NULL }));

  loaded = hp_safetensors_load (path, &error);
  g_assert_no_error (error);
  assert_state_dicts_equal (loaded, sd);

  file = hp_safetensors_file_new_for_path (path, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (hp_safetensors_file_get_path (file), ==, path);
  g_assert_cmpuint (hp_safetensors_file_get_n_tensors (file), ==, 8);
  g_object_get (file, "path", &prop_path, "n-tensors", &n_tensors, NULL);
  g_assert_cmpstr (prop_path, ==, path);
  g_assert_cmpuint (n_tensors, ==, 8);
  names = hp_safetensors_file_get_names (file);
  g_assert_cmpstrv (names, ((const gchar *[]) { "bias", "empty", "empty3", "layers.0.double",
                                                "layers.0.weight", "scale", "step", "tokens", NULL }));
  g_assert_true (hp_safetensors_file_contains (file, "tokens"));
  g_assert_false (hp_safetensors_file_contains (file, "Tokens"));
  g_assert_cmpuint (g_hash_table_size (hp_safetensors_file_get_metadata (file)), ==, 0);
  g_assert_cmpstr (hp_safetensors_file_get_dtype (file, "tokens", &error), ==, "I64");
  g_assert_cmpstr (hp_safetensors_file_get_dtype (file, "bias", &error), ==, "F32");
  g_assert_cmpstr (hp_safetensors_file_get_dtype (file, "empty3", &error), ==, "F64");
  shape = hp_safetensors_file_get_shape (file, "empty3", &ndim, &error);
  g_assert_cmpuint (ndim, ==, 3);
  g_assert_cmpint (shape[0], ==, 2);
  g_assert_cmpint (shape[1], ==, 0);
  g_assert_cmpint (shape[2], ==, 3);
  shape = hp_safetensors_file_get_shape (file, "scale", &ndim, &error);
  g_assert_nonnull (shape);
  g_assert_cmpuint (ndim, ==, 0);
  g_assert_no_error (error);

  expected = g_strdup_printf ("%s: no tensor 'nope'", path);
  hp_test_assert_error ((gpointer) hp_safetensors_file_get_dtype (file, "nope", &error), &error,
                        HP_ERROR_INVALID_ARGUMENT, expected);
  g_assert_null (hp_safetensors_file_get_shape (file, "nope", &ndim, &error));
  g_assert_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT);
  g_assert_cmpstr (error->message, ==, expected);
  g_clear_error (&error);
  hp_test_assert_error (hp_safetensors_file_get_tensor (file, "nope", &error), &error,
                        HP_ERROR_INVALID_ARGUMENT, expected);

  /* saving again over the file replaces it */
  hp_state_dict_remove (sd, "tokens");
  g_assert_true (hp_safetensors_save (sd, NULL, path, &error));
  g_assert_no_error (error);
  g_clear_object (&loaded);
  loaded = hp_safetensors_load (path, &error);
  g_assert_no_error (error);
  assert_state_dicts_equal (loaded, sd);
  /* while the first mapping is still intact */
  g_assert_cmpuint (hp_safetensors_file_get_n_tensors (file), ==, 8);

  hp_test_remove_tree (dir);
}

static void
test_empty_state_dict (void)
{
  g_autofree gchar *dir = make_tmp_dir ();
  g_autofree gchar *path = g_build_filename (dir, "empty.safetensors", NULL);
  g_autoptr(HpStateDict) sd = hp_state_dict_new ();
  g_autoptr(HpStateDict) loaded = NULL;
  g_autoptr(GBytes) bytes = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_true (hp_safetensors_save (sd, NULL, path, &error));
  g_assert_no_error (error);
  bytes = read_bytes (path);
  /* "{}" padded to 8 bytes */
  g_assert_cmpmem (g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes),
                   "\x08\0\0\0\0\0\0\0{}      ", 16);
  loaded = hp_safetensors_load (path, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (hp_state_dict_get_size (loaded), ==, 0);
  hp_test_remove_tree (dir);
}

/* The exact bytes the reference writer produces for a small dict */
static void
test_layout (void)
{
  g_autofree gchar *dir = make_tmp_dir ();
  g_autofree gchar *path = g_build_filename (dir, NAME, NULL);
  g_autoptr(HpStateDict) sd = hp_state_dict_new ();
  g_autoptr(HpTensor) b = hp_test_tensor (HP_DTYPE_FLOAT32, HP_TEST_DATA (1.0, 2.0), HP_TEST_SHAPE (2));
  g_autoptr(HpTensor) a = hp_test_tensor_ids ((const gint64[]) { 7 }, 1, HP_TEST_SHAPE (1));
  g_autoptr(HpTensor) c = hp_test_tensor (HP_DTYPE_FLOAT32, HP_TEST_DATA (-1.0), HP_TEST_SHAPE (1, 1));
  g_autoptr(GHashTable) metadata = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GBytes) bytes = NULL;
  g_autoptr(GError) error = NULL;
  const gchar *header =
    "{\"__metadata__\":{\"format\":\"pt\",\"k\":\"v\"},"
    "\"a\":{\"dtype\":\"I64\",\"shape\":[1],\"data_offsets\":[0,8]},"
    "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,16]},"
    "\"c\":{\"dtype\":\"F32\",\"shape\":[1,1],\"data_offsets\":[16,20]}}";
  gsize header_len = strlen (header);
  gsize padded = (header_len + 7) / 8 * 8;
  g_autoptr(GByteArray) expected = g_byte_array_new ();
  guint64 le = GUINT64_TO_LE ((guint64) padded);
  const guint8 data[] = {
    7, 0, 0, 0, 0, 0, 0, 0,          /* a = 7 */
    0x00, 0x00, 0x80, 0x3f,          /* b = 1.0f */
    0x00, 0x00, 0x00, 0x40,          /*     2.0f */
    0x00, 0x00, 0x80, 0xbf,          /* c = -1.0f */
  };

  g_hash_table_insert (metadata, "k", "v");
  g_hash_table_insert (metadata, "format", "pt");
  /* insertion order c, b, a: the file is ordered by element size, then name */
  hp_state_dict_insert (sd, "c", c);
  hp_state_dict_insert (sd, "b", b);
  hp_state_dict_insert (sd, "a", a);
  g_assert_true (hp_safetensors_save (sd, metadata, path, &error));
  g_assert_no_error (error);

  g_byte_array_append (expected, (const guint8 *) &le, 8);
  g_byte_array_append (expected, (const guint8 *) header, (guint) header_len);
  for (gsize i = header_len; i < padded; i++)
    g_byte_array_append (expected, (const guint8 *) " ", 1);
  g_byte_array_append (expected, data, sizeof data);

  bytes = read_bytes (path);
  g_assert_cmpmem (g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes),
                   expected->data, expected->len);
  hp_test_remove_tree (dir);
}

/* Every tensor of a written file starts aligned to its element size and
 * the data has no gaps */
static void
test_alignment (void)
{
  g_autofree gchar *dir = make_tmp_dir ();
  g_autofree gchar *path = g_build_filename (dir, NAME, NULL);
  g_autoptr(HpStateDict) sd = make_state_dict ();
  g_autoptr(GBytes) bytes = NULL;
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(HpSafetensorsFile) file = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GList) members = NULL;
  guint64 header_length;
  gint64 expected_begin = 0;

  g_assert_true (hp_safetensors_save (sd, NULL, path, &error));
  bytes = read_bytes (path);
  root = parse_file_header (bytes, &header_length);
  g_assert_cmpuint ((8 + header_length) % 8, ==, 0);

  /* in file order (json-glib keeps the order of the members) */
  members = json_object_get_members (json_node_get_object (root));
  g_assert_cmpuint (g_list_length (members), ==, 8);
  {
    const gchar *order[] = { "empty3", "layers.0.double", "step", "tokens",
                             "bias", "empty", "layers.0.weight", "scale" };
    guint i = 0;

    for (GList *l = members; l != NULL; l = l->next, i++)
      {
        JsonObject *entry = json_object_get_object_member (json_node_get_object (root), l->data);
        JsonArray *offsets = json_object_get_array_member (entry, "data_offsets");
        gint64 begin = json_array_get_int_element (offsets, 0);
        gint64 size = g_str_equal (json_object_get_string_member (entry, "dtype"), "F32") ? 4 : 8;

        g_assert_cmpstr (l->data, ==, order[i]);
        g_assert_cmpint (begin, ==, expected_begin);
        g_assert_cmpint (begin % size, ==, 0);
        expected_begin = json_array_get_int_element (offsets, 1);
      }
  }
  g_assert_cmpuint (8 + header_length + (guint64) expected_begin, ==, g_bytes_get_size (bytes));

  /* so every tensor loads without a copy */
  file = hp_safetensors_file_new_from_bytes (bytes, NULL, &error);
  g_assert_no_error (error);
  for (guint i = 0; i < hp_state_dict_get_size (sd); i++)
    {
      g_autoptr(HpTensor) t = hp_safetensors_file_get_tensor (file, hp_state_dict_get_name (sd, i), &error);

      g_assert_no_error (error);
      if (hp_tensor_get_numel (t) > 0)
        g_assert_true (shares_bytes (t, bytes));
    }
  hp_test_remove_tree (dir);
}

/* A tensor whose data is not aligned for its dtype still loads, copied */
static void
test_unaligned (void)
{
  const gchar *header =
    "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
    "\"b\":{\"dtype\":\"F64\",\"shape\":[2],\"data_offsets\":[4,20]}}";
  guint8 data[20];
  gdouble values[2] = { 0.25, -3.5 };
  gfloat one = 1.0f;
  g_autoptr(GBytes) bytes = NULL;
  g_autoptr(HpSafetensorsFile) file = NULL;
  g_autoptr(HpTensor) b = NULL;
  g_autoptr(HpTensor) a = NULL;
  g_autoptr(GError) error = NULL;

  memcpy (data, &one, 4);
  memcpy (data + 4, values, 16);
  bytes = header_file_with_data (header, data, sizeof data);
  file = hp_safetensors_file_new_from_bytes (bytes, NULL, &error);
  g_assert_no_error (error);
  a = hp_safetensors_file_get_tensor (file, "a", &error);
  b = hp_safetensors_file_get_tensor (file, "b", &error);
  g_assert_no_error (error);
  hp_test_assert_values (a, HP_TEST_DATA (1.0), HP_TEST_SHAPE (1), 0, 0);
  hp_test_assert_values (b, HP_TEST_DATA (0.25, -3.5), HP_TEST_SHAPE (2), 0, 0);
}

static void
test_metadata (void)
{
  g_autofree gchar *dir = make_tmp_dir ();
  g_autofree gchar *path = g_build_filename (dir, NAME, NULL);
  g_autoptr(HpStateDict) sd = make_state_dict ();
  g_autoptr(GHashTable) metadata = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(HpSafetensorsFile) file = NULL;
  g_autoptr(HpSafetensorsCheckpoint) checkpoint = NULL;
  g_autoptr(GError) error = NULL;
  GHashTable *read;

  g_hash_table_insert (metadata, "format", "pt");
  g_hash_table_insert (metadata, "note", "ünïcödé \"quoted\" \\ and\nnewline");
  g_hash_table_insert (metadata, "", "empty key");
  g_assert_true (hp_safetensors_save (sd, metadata, path, &error));
  g_assert_no_error (error);

  file = hp_safetensors_file_new_for_path (path, &error);
  g_assert_no_error (error);
  read = hp_safetensors_file_get_metadata (file);
  g_assert_cmpuint (g_hash_table_size (read), ==, 3);
  g_assert_cmpstr (g_hash_table_lookup (read, "format"), ==, "pt");
  g_assert_cmpstr (g_hash_table_lookup (read, "note"), ==, "ünïcödé \"quoted\" \\ and\nnewline");
  g_assert_cmpstr (g_hash_table_lookup (read, ""), ==, "empty key");

  checkpoint = hp_safetensors_checkpoint_new_for_path (path, &error);
  g_assert_no_error (error);
  read = hp_safetensors_checkpoint_get_metadata (checkpoint);
  g_assert_cmpuint (g_hash_table_size (read), ==, 3);
  g_assert_cmpstr (g_hash_table_lookup (read, "format"), ==, "pt");
  hp_test_remove_tree (dir);
}

/* Half precision */

typedef struct
{
  guint16 bits;
  guint32 expected;   /* float32 bits */
} HalfCase;

static const HalfCase f16_cases[] = {
  { 0x0000, 0x00000000 },  /* +0 */
  { 0x8000, 0x80000000 },  /* -0 */
  { 0x3c00, 0x3f800000 },  /* 1 */
  { 0xc000, 0xc0000000 },  /* -2 */
  { 0x3555, 0x3eaaa000 },  /* 0.333251953125 */
  { 0x7bff, 0x477fe000 },  /* 65504, the largest */
  { 0x0400, 0x38800000 },  /* 2^-14, the smallest normal */
  { 0x03ff, 0x387fc000 },  /* the largest subnormal, 1023 * 2^-24 */
  { 0x0001, 0x33800000 },  /* 2^-24, the smallest subnormal */
  { 0x8001, 0xb3800000 },  /* -2^-24 */
  { 0x0200, 0x38000000 },  /* 2^-15 */
  { 0x7c00, 0x7f800000 },  /* +inf */
  { 0xfc00, 0xff800000 },  /* -inf */
  { 0x7e00, 0x7fc00000 },  /* quiet NaN */
  { 0x7c01, 0x7f802000 },  /* signalling NaN, payload kept */
  { 0xfe00, 0xffc00000 },  /* negative NaN */
};

static const HalfCase bf16_cases[] = {
  { 0x0000, 0x00000000 },  /* +0 */
  { 0x8000, 0x80000000 },  /* -0 */
  { 0x3f80, 0x3f800000 },  /* 1 */
  { 0xc000, 0xc0000000 },  /* -2 */
  { 0x4049, 0x40490000 },  /* 3.140625 */
  { 0x7f7f, 0x7f7f0000 },  /* the largest */
  { 0x0080, 0x00800000 },  /* the smallest normal */
  { 0x0001, 0x00010000 },  /* the smallest subnormal */
  { 0x7f80, 0x7f800000 },  /* +inf */
  { 0xff80, 0xff800000 },  /* -inf */
  { 0x7fc0, 0x7fc00000 },  /* NaN */
};

static GBytes *
half_file (const gchar    *dtype,
           const HalfCase *cases,
           gsize           n)
{
  g_autofree gchar *header = g_strdup_printf (
      "{\"x\":{\"dtype\":\"%s\",\"shape\":[%" G_GSIZE_FORMAT "],\"data_offsets\":[0,%" G_GSIZE_FORMAT "]}}",
      dtype, n, 2 * n);
  g_autofree guint8 *data = g_new (guint8, 2 * n);

  for (gsize i = 0; i < n; i++)
    {
      data[2 * i] = cases[i].bits & 0xff;
      data[2 * i + 1] = cases[i].bits >> 8;
    }
  return header_file_with_data (header, data, 2 * n);
}

static void
check_half (const gchar    *dtype,
            const HalfCase *cases,
            gsize           n)
{
  g_autoptr(GBytes) bytes = half_file (dtype, cases, n);
  g_autoptr(GError) error = NULL;
  g_autoptr(HpSafetensorsFile) file = hp_safetensors_file_new_from_bytes (bytes, NULL, &error);
  g_autoptr(HpTensor) t = NULL;
  g_autoptr(HpTensor) slice = NULL;
  g_autoptr(GBytes) data = NULL;
  g_autoptr(GBytes) slice_data = NULL;
  const guint32 *bits;
  const guint32 *slice_bits;

  g_assert_no_error (error);
  g_assert_cmpstr (hp_safetensors_file_get_dtype (file, "x", &error), ==, dtype);
  t = hp_safetensors_file_get_tensor (file, "x", &error);
  g_assert_no_error (error);
  g_assert_cmpint (hp_tensor_get_dtype (t), ==, HP_DTYPE_FLOAT32);
  hp_test_assert_shape (t, (const gint64[]) { (gint64) n }, 1);
  data = hp_tensor_get_bytes (t);
  bits = g_bytes_get_data (data, NULL);
  for (gsize i = 0; i < n; i++)
    if (bits[i] != cases[i].expected)
      g_test_fail_printf ("%s %04x gave the float32 bits %08x, not %08x",
                          dtype, cases[i].bits, bits[i], cases[i].expected);

  /* the values read as floats */
  slice = hp_safetensors_file_get_tensor_slice (file, "x", (const gint64[]) { 2 }, 1,
                                                (const gint64[]) { 3 }, 1, &error);
  g_assert_no_error (error);
  slice_data = hp_tensor_get_bytes (slice);
  slice_bits = g_bytes_get_data (slice_data, NULL);
  for (gsize i = 0; i < 3; i++)
    g_assert_cmphex (slice_bits[i], ==, cases[2 + i].expected);
}

static void
test_half_precision (void)
{
  gfloat value;

  check_half ("F16", f16_cases, G_N_ELEMENTS (f16_cases));
  check_half ("BF16", bf16_cases, G_N_ELEMENTS (bf16_cases));

  /* the bit patterns above are the values they claim */
  memcpy (&value, &(guint32) { 0x3eaaa000 }, 4);
  g_assert_cmpfloat (value, ==, 0.333251953125f);
  memcpy (&value, &(guint32) { 0x387fc000 }, 4);
  g_assert_cmpfloat (value, ==, ldexpf (1023.0f, -24));
  memcpy (&value, &(guint32) { 0x33800000 }, 4);
  g_assert_cmpfloat (value, ==, ldexpf (1.0f, -24));
  memcpy (&value, &(guint32) { 0x477fe000 }, 4);
  g_assert_cmpfloat (value, ==, 65504.0f);
  memcpy (&value, &(guint32) { 0x7fc00000 }, 4);
  g_assert_true (isnan (value));
  memcpy (&value, &(guint32) { 0x7f802000 }, 4);
  g_assert_true (isnan (value));
}

/* Every one of the 65536 F16 values, against the definition */
static void
test_f16_all_values (void)
{
  g_autoptr(GByteArray) data = g_byte_array_new ();
  g_autoptr(GBytes) bytes = NULL;
  g_autoptr(HpSafetensorsFile) file = NULL;
  g_autoptr(HpTensor) t = NULL;
  g_autoptr(GBytes) loaded = NULL;
  g_autoptr(GError) error = NULL;
  const gchar *header = "{\"x\":{\"dtype\":\"F16\",\"shape\":[65536],\"data_offsets\":[0,131072]}}";
  const gfloat *values;

  for (guint i = 0; i < 65536; i++)
    {
      guint8 le[2] = { i & 0xff, i >> 8 };

      g_byte_array_append (data, le, 2);
    }
  bytes = header_file_with_data (header, data->data, data->len);
  file = hp_safetensors_file_new_from_bytes (bytes, NULL, &error);
  g_assert_no_error (error);
  t = hp_safetensors_file_get_tensor (file, "x", &error);
  g_assert_no_error (error);
  loaded = hp_tensor_get_bytes (t);
  values = g_bytes_get_data (loaded, NULL);

  for (guint i = 0; i < 65536; i++)
    {
      gint sign = (i >> 15) ? -1 : 1;
      gint exponent = (i >> 10) & 0x1f;
      gint mantissa = i & 0x3ff;
      gdouble expected;

      if (exponent == 0x1f)
        {
          if (mantissa == 0)
            g_assert_true (isinf (values[i]) && (values[i] < 0) == (sign < 0));
          else
            g_assert_true (isnan (values[i]));
          continue;
        }
      if (exponent == 0)
        expected = sign * ldexp (mantissa, -24);
      else
        expected = sign * ldexp (1024 + mantissa, exponent - 25);
      if ((gdouble) values[i] != expected || (signbit (values[i]) != 0) != (sign < 0))
        g_test_fail_printf ("F16 %04x gave %.10g, not %.10g", i, values[i], expected);
    }
}

/* Rounding to half precision */

typedef struct
{
  guint32 value;      /* float32 bits */
  guint16 expected;
} RoundCase;

static const RoundCase to_f16_cases[] = {
  { 0x00000000, 0x0000 },  /* +0 */
  { 0x80000000, 0x8000 },  /* -0 */
  { 0x3f800000, 0x3c00 },  /* 1 */
  { 0xc0000000, 0xc000 },  /* -2 */
  { 0x3dcccccd, 0x2e66 },  /* 0.1 */
  { 0x3f801000, 0x3c00 },  /* 1 + 2^-11, a tie: down to even */
  { 0x3f803000, 0x3c02 },  /* 1 + 3 * 2^-11, a tie: up to even */
  { 0xbf803000, 0xbc02 },  /* its negative */
  { 0x3f800fff, 0x3c00 },  /* just below a tie */
  { 0x3f801001, 0x3c01 },  /* just above a tie */
  { 0x3ffff000, 0x4000 },  /* 2 - 2^-11, a tie: up into the next binade */
  { 0x3fffffff, 0x4000 },  /* just below 2 */
  { 0x477fe000, 0x7bff },  /* 65504, the largest finite */
  { 0x477fefff, 0x7bff },  /* just below 65520 */
  { 0x477ff000, 0x7c00 },  /* 65520, a tie: up to even, infinity */
  { 0xc77ff000, 0xfc00 },  /* -65520 */
  { 0x47800000, 0x7c00 },  /* 65536 */
  { 0x7f7fffff, 0x7c00 },  /* the largest float */
  { 0xff7fffff, 0xfc00 },
  { 0x7f800000, 0x7c00 },  /* +inf */
  { 0xff800000, 0xfc00 },  /* -inf */
  { 0x7fc00000, 0x7e00 },  /* NaN */
  { 0xffc00000, 0xfe00 },  /* negative NaN */
  { 0x7f800001, 0x7e00 },  /* signalling NaN, its payload below binary16's: quiet */
  { 0x7fa02000, 0x7f01 },  /* its payload's top bits kept */
  { 0x38800000, 0x0400 },  /* 2^-14, the smallest normal */
  { 0x387fc000, 0x03ff },  /* 1023 * 2^-24, the largest subnormal */
  { 0x387fe000, 0x0400 },  /* 1023.5 * 2^-24, a tie: up into the normals */
  { 0x387fdfff, 0x03ff },
  { 0x38000000, 0x0200 },  /* 2^-15 */
  { 0x33800000, 0x0001 },  /* 2^-24, the smallest subnormal */
  { 0xb3800000, 0x8001 },
  { 0x33c00000, 0x0002 },  /* 1.5 * 2^-24, a tie: up to even */
  { 0x34200000, 0x0002 },  /* 2.5 * 2^-24, a tie: down to even */
  { 0x34300000, 0x0003 },  /* 2.75 * 2^-24 */
  { 0x33000000, 0x0000 },  /* 2^-25, a tie: down to even 0 */
  { 0xb3000000, 0x8000 },  /* -2^-25: -0 */
  { 0x33000001, 0x0001 },  /* just above 2^-25 */
  { 0x32ffffff, 0x0000 },
  { 0x00000001, 0x0000 },  /* the smallest float32 subnormal */
  { 0x80000001, 0x8000 },
};

static const RoundCase to_bf16_cases[] = {
  { 0x00000000, 0x0000 },  /* +0 */
  { 0x80000000, 0x8000 },  /* -0 */
  { 0x3f800000, 0x3f80 },  /* 1 */
  { 0x3dcccccd, 0x3dcd },  /* 0.1 */
  { 0x40490fdb, 0x4049 },  /* pi */
  { 0x3f808000, 0x3f80 },  /* 1 + 2^-8, a tie: down to even */
  { 0x3f818000, 0x3f82 },  /* 1 + 3 * 2^-8, a tie: up to even */
  { 0xbf818000, 0xbf82 },
  { 0x3f807fff, 0x3f80 },  /* just below a tie */
  { 0x3f808001, 0x3f81 },  /* just above a tie */
  { 0x3fff8000, 0x4000 },  /* 2 - 2^-8, a tie: up into the next binade */
  { 0x7f7f0000, 0x7f7f },  /* the largest finite */
  { 0x7f7f7fff, 0x7f7f },
  { 0x7f7f8000, 0x7f80 },  /* a tie: up to even, infinity */
  { 0x7f7fffff, 0x7f80 },  /* the largest float */
  { 0xff7f8000, 0xff80 },
  { 0x7f800000, 0x7f80 },  /* +inf */
  { 0xff800000, 0xff80 },  /* -inf */
  { 0x7fc00000, 0x7fc0 },  /* NaN */
  { 0xffc00000, 0x7fc0 },  /* every NaN is torch's 0x7fc0 */
  { 0x7f800001, 0x7fc0 },  /* would round to infinity */
  { 0x7fffffff, 0x7fc0 },  /* would carry into the sign */
  { 0x00800000, 0x0080 },  /* the smallest normal */
  { 0x007fffff, 0x0080 },  /* the largest subnormal: up into the normals */
  { 0x00010000, 0x0001 },  /* the smallest bfloat16 subnormal */
  { 0x00008000, 0x0000 },  /* a tie: down to even 0 */
  { 0x00018000, 0x0002 },  /* a tie: up to even */
  { 0x80008000, 0x8000 },
  { 0x00000001, 0x0000 },
};

static gfloat
float_of_bits (guint32 bits)
{
  gfloat value;

  memcpy (&value, &bits, sizeof value);
  return value;
}

static void
test_round_to_half (void)
{
  for (gsize i = 0; i < G_N_ELEMENTS (to_f16_cases); i++)
    {
      guint16 got = _hp_float_to_float16 (float_of_bits (to_f16_cases[i].value));

      if (got != to_f16_cases[i].expected)
        g_test_fail_printf ("float32 %08x gave F16 %04x, not %04x",
                            to_f16_cases[i].value, got, to_f16_cases[i].expected);
    }
  for (gsize i = 0; i < G_N_ELEMENTS (to_bf16_cases); i++)
    {
      guint16 got = _hp_float_to_bfloat16 (float_of_bits (to_bf16_cases[i].value));

      if (got != to_bf16_cases[i].expected)
        g_test_fail_printf ("float32 %08x gave BF16 %04x, not %04x",
                            to_bf16_cases[i].value, got, to_bf16_cases[i].expected);
    }
}

/* Every F16 value rounds to itself, and every float32 between two
 * neighbours rounds to the nearer one, the even one at their midpoint */
static void
test_round_to_f16_all_values (void)
{
  /* below the largest finite, whose midpoint with infinity is a case
   * of test_round_to_half() */
  for (guint32 bits = 0; bits < 0x7bff; bits++)
    {
      gdouble low = _hp_float16_to_float ((guint16) bits);
      gdouble high = _hp_float16_to_float ((guint16) (bits + 1));
      gfloat mid = (gfloat) ((low + high) / 2);
      guint16 even = (bits & 1) == 0 ? (guint16) bits : (guint16) (bits + 1);

      g_assert_cmphex (_hp_float_to_float16 ((gfloat) low), ==, bits);
      g_assert_cmphex (_hp_float_to_float16 (-(gfloat) low), ==, bits | 0x8000);
      /* the midpoint is a float32: binary16 has 13 bits fewer */
      g_assert_cmpfloat ((gdouble) mid, ==, (low + high) / 2);
      g_assert_cmphex (_hp_float_to_float16 (mid), ==, even);
      g_assert_cmphex (_hp_float_to_float16 (nextafterf (mid, 0.0f)), ==, bits);
      g_assert_cmphex (_hp_float_to_float16 (nextafterf (mid, G_MAXFLOAT)), ==, bits + 1);
    }
}

/* The values of a tensor as float64 */
static gdouble *
tensor_values (HpTensor *tensor)
{
  gsize n;

  return hp_tensor_to_float64_array (tensor, &n);
}

/* The value @value of a floating tensor comes back from a file of @dtype
 * as */
static gdouble
stored_value (gdouble            value,
              HpTensor          *tensor,
              HpSafetensorsDType dtype)
{
  gfloat as_float = (gfloat) value;

  switch (dtype)
    {
    case HP_SAFETENSORS_DTYPE_BF16:
      return _hp_bfloat16_to_float (_hp_float_to_bfloat16 (as_float));
    case HP_SAFETENSORS_DTYPE_F16:
      return _hp_float16_to_float (_hp_float_to_float16 (as_float));
    case HP_SAFETENSORS_DTYPE_F32:
      return as_float;
    case HP_SAFETENSORS_DTYPE_F64:
      return value;
    case HP_SAFETENSORS_DTYPE_AS_IS:
    default:
      return hp_tensor_get_dtype (tensor) == HP_DTYPE_FLOAT32 ? as_float : value;
    }
}

/* @loaded has the tensors of @saved as a file of @dtype holds them, to
 * the bit */
static void
assert_stored (HpStateDict        *loaded,
               HpStateDict        *saved,
               HpSafetensorsDType  dtype)
{
  for (guint i = 0; i < hp_state_dict_get_size (saved); i++)
    {
      HpTensor *original = hp_state_dict_get_tensor (saved, i);
      HpTensor *back = hp_state_dict_lookup (loaded, hp_state_dict_get_name (saved, i));
      HpDType have = hp_tensor_get_dtype (original);
      HpDType want = have;
      g_autofree gdouble *values = tensor_values (original);
      g_autofree gdouble *back_values = tensor_values (back);
      guint ndim;
      const gint64 *shape = hp_tensor_get_shape (original, &ndim);

      g_assert_nonnull (back);
      if (have == HP_DTYPE_INT64)
        {
          assert_same_tensor (back, original);
          continue;
        }
      if (dtype == HP_SAFETENSORS_DTYPE_F64)
        want = HP_DTYPE_FLOAT64;
      else if (dtype != HP_SAFETENSORS_DTYPE_AS_IS)
        want = HP_DTYPE_FLOAT32;
      g_assert_cmpint (hp_tensor_get_dtype (back), ==, want);
      hp_test_assert_shape (back, shape, ndim);
      for (gint64 k = 0; k < hp_tensor_get_numel (original); k++)
        {
          gdouble expected = stored_value (values[k], original, dtype);

          if (memcmp (&back_values[k], &expected, sizeof expected) != 0)
            g_test_fail_printf ("%s[%" G_GINT64_FORMAT "]: %.17g came back as %.17g, not %.17g",
                                hp_state_dict_get_name (saved, i), k, values[k], back_values[k],
                                expected);
        }
    }
}

/* Every dtype to save in: the header's dtypes (integers as they are),
 * the layout by the element sizes in the file, and the values loaded
 * back, from a single file and from shards */
static void
test_save_dtype (void)
{
  static const struct
  {
    HpSafetensorsDType dtype;
    const gchar *f32;       /* what float32 and float64 tensors are written as */
    const gchar *f64;
  } cases[] = {
    { HP_SAFETENSORS_DTYPE_AS_IS, "F32", "F64" },
    { HP_SAFETENSORS_DTYPE_BF16, "BF16", "BF16" },
    { HP_SAFETENSORS_DTYPE_F16, "F16", "F16" },
    { HP_SAFETENSORS_DTYPE_F32, "F32", "F32" },
    { HP_SAFETENSORS_DTYPE_F64, "F64", "F64" },
  };
  g_autofree gchar *dir = make_tmp_dir ();
  g_autofree gchar *path = g_build_filename (dir, NAME, NULL);
  g_autoptr(HpStateDict) sd = make_state_dict ();
  g_autoptr(GError) error = NULL;

  for (gsize c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      g_autoptr(GBytes) bytes = NULL;
      g_autoptr(JsonNode) root = NULL;
      g_autoptr(HpStateDict) loaded = NULL;
      g_autoptr(HpStateDict) from_shards = NULL;
      g_autofree gchar *shards_name = g_strdup_printf ("shards-%" G_GSIZE_FORMAT, c);
      g_autofree gchar *shards = g_build_filename (dir, shards_name, NULL);
      g_autofree gchar *index = g_build_filename (shards, "model.safetensors.index.json", NULL);
      g_autoptr(JsonParser) parser = json_parser_new ();
      JsonObject *header;
      guint64 header_length;
      gint64 end = 0;
      gsize last_size = 8;
      gint64 total = 0;
      g_autoptr(GList) members = NULL;

      g_assert_true (hp_safetensors_save_with_dtype (sd, NULL, path, cases[c].dtype, &error));
      g_assert_no_error (error);
      bytes = read_bytes (path);
      root = parse_file_header (bytes, &header_length);
      header = json_node_get_object (root);
      /* JSON objects keep their order: the file's */
      members = json_object_get_members (header);
      for (GList *l = members; l != NULL; l = l->next)
        {
          JsonObject *entry = json_object_get_object_member (header, l->data);
          HpTensor *tensor = hp_state_dict_lookup (sd, l->data);
          HpDType have = hp_tensor_get_dtype (tensor);
          const gchar *expected = have == HP_DTYPE_INT64 ? "I64"
                                  : have == HP_DTYPE_FLOAT64 ? cases[c].f64 : cases[c].f32;
          const gchar *written = json_object_get_string_member (entry, "dtype");
          JsonArray *offsets = json_object_get_array_member (entry, "data_offsets");
          gsize size = g_str_equal (written, "I64") || g_str_equal (written, "F64") ? 8
                       : g_str_equal (written, "F32") ? 4 : 2;

          g_assert_cmpstr (written, ==, expected);
          g_assert_cmpint (json_array_get_int_element (offsets, 0), ==, end);
          end = json_array_get_int_element (offsets, 1);
          g_assert_cmpint (end - json_array_get_int_element (offsets, 0), ==,
                           hp_tensor_get_numel (tensor) * (gint64) size);
          g_assert_cmpuint (size, <=, last_size);
          g_assert_cmpint (json_array_get_int_element (offsets, 0) % (gint64) size, ==, 0);
          last_size = size;
          total += hp_tensor_get_numel (tensor) * (gint64) size;
        }
      g_assert_cmpuint (g_bytes_get_size (bytes), ==, 8 + header_length + (guint64) end);

      loaded = hp_safetensors_load (path, &error);
      g_assert_no_error (error);
      assert_stored (loaded, sd, cases[c].dtype);

      /* in shards: the sizes are those in the files */
      g_assert_true (hp_safetensors_save_sharded_with_dtype (sd, NULL, shards, 64, cases[c].dtype,
                                                             &error));
      g_assert_no_error (error);
      from_shards = hp_safetensors_load (shards, &error);
      g_assert_no_error (error);
      assert_stored (from_shards, sd, cases[c].dtype);
      json_parser_load_from_file (parser, index, &error);
      g_assert_no_error (error);
      g_assert_cmpint (json_object_get_int_member (
                         json_object_get_object_member (json_node_get_object (json_parser_get_root (parser)),
                                                        "metadata"), "total_size"), ==, total);
    }
  hp_test_remove_tree (dir);
}

/* A float64 is rounded to float32 first, as torch does: just above a
 * tie of half precision, it rounds to the tie, then to even */
static void
test_save_dtype_from_float64 (void)
{
  g_autofree gchar *dir = make_tmp_dir ();
  g_autofree gchar *path = g_build_filename (dir, NAME, NULL);
  g_autoptr(HpStateDict) sd = hp_state_dict_new ();
  g_autoptr(HpTensor) t = hp_test_tensor (HP_DTYPE_FLOAT64,
                                          HP_TEST_DATA (1 + ldexp (1, -11) + ldexp (1, -40),
                                                        1 + ldexp (1, -8) + ldexp (1, -40),
                                                        1 + ldexp (1, -11) + ldexp (1, -20)),
                                          HP_TEST_SHAPE (3));
  g_autoptr(GError) error = NULL;
  static const struct
  {
    HpSafetensorsDType dtype;
    guint16 bits[3];
  } cases[] = {
    /* one rounding would give 0x3c01 for the first; the third is above
     * the tie as a float32 too */
    { HP_SAFETENSORS_DTYPE_F16, { 0x3c00, 0x3c04, 0x3c01 } },
    /* and 0x3f81 for the second */
    { HP_SAFETENSORS_DTYPE_BF16, { 0x3f80, 0x3f80, 0x3f80 } },
  };

  hp_state_dict_insert (sd, "x", t);
  for (gsize c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      g_autoptr(GBytes) bytes = NULL;
      g_autoptr(JsonNode) root = NULL;
      guint64 header_length;
      const guint8 *data;

      g_assert_true (hp_safetensors_save_with_dtype (sd, NULL, path, cases[c].dtype, &error));
      g_assert_no_error (error);
      bytes = read_bytes (path);
      root = parse_file_header (bytes, &header_length);
      data = (const guint8 *) g_bytes_get_data (bytes, NULL) + 8 + header_length;
      for (guint i = 0; i < 3; i++)
        g_assert_cmphex (data[2 * i] | (data[2 * i + 1] << 8), ==, cases[c].bits[i]);
    }
  hp_test_remove_tree (dir);
}

static void
test_dtype_names (void)
{
  static const struct
  {
    const gchar *name;
    HpSafetensorsDType dtype;
  } names[] = {
    { "as-is", HP_SAFETENSORS_DTYPE_AS_IS },
    { "bf16", HP_SAFETENSORS_DTYPE_BF16 },
    { "f16", HP_SAFETENSORS_DTYPE_F16 },
    { "f32", HP_SAFETENSORS_DTYPE_F32 },
    { "f64", HP_SAFETENSORS_DTYPE_F64 },
  };
  g_autoptr(GError) error = NULL;
  HpSafetensorsDType dtype = HP_SAFETENSORS_DTYPE_F64;

  for (gsize i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_assert_true (hp_safetensors_dtype_from_string (names[i].name, &dtype, &error));
      g_assert_no_error (error);
      g_assert_cmpint (dtype, ==, names[i].dtype);
    }

  dtype = HP_SAFETENSORS_DTYPE_F16;
  g_assert_false (hp_safetensors_dtype_from_string ("bfloat16", &dtype, &error));
  g_assert_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT);
  g_assert_cmpstr (error->message, ==,
                   "unknown safetensors dtype 'bfloat16' (expected one of as-is, bf16, f16, f32, f64)");
  g_clear_error (&error);
  hp_test_assert_error (GINT_TO_POINTER (hp_safetensors_dtype_from_string ("", &dtype, &error)),
                        &error, HP_ERROR_INVALID_ARGUMENT, "unknown safetensors dtype ''");
  hp_test_assert_error (GINT_TO_POINTER (hp_safetensors_dtype_from_string ("BF16", &dtype, &error)),
                        &error, HP_ERROR_INVALID_ARGUMENT, "unknown safetensors dtype 'BF16'");
  hp_test_assert_error (GINT_TO_POINTER (hp_safetensors_dtype_from_string ("bf\xff", &dtype, &error)),
                        &error, HP_ERROR_INVALID_ARGUMENT, "UTF-8");
  /* left as it was */
  g_assert_cmpint (dtype, ==, HP_SAFETENSORS_DTYPE_F16);
}

/* Slices */

static void
check_slice (HpSafetensorsFile *file,
             HpTensor          *full,
             const gchar       *name,
             const gint64      *offsets,
             const gint64      *lengths,
             guint              ndim,
             gboolean           shared,
             GBytes            *contents)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) block = hp_safetensors_file_get_tensor_slice (file, name, offsets, ndim,
                                                                    lengths, ndim, &error);
  gsize n;
  g_autofree gdouble *expected = hp_test_region_values (full, offsets, lengths, &n);

  g_assert_no_error (error);
  g_assert_cmpint (hp_tensor_get_dtype (block), ==, hp_tensor_get_dtype (full));
  hp_test_assert_values (block, expected, n, lengths, ndim, 0, 0);
  if (contents != NULL && n > 0)
    g_assert_true (shares_bytes (block, contents) == shared);
}

static void
test_slices (void)
{
  g_autofree gchar *dir = make_tmp_dir ();
  g_autofree gchar *path = g_build_filename (dir, NAME, NULL);
  g_autoptr(HpStateDict) sd = hp_state_dict_new ();
  g_autoptr(HpTensor) f = NULL;
  g_autoptr(HpTensor) d = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (5, 3), 4, FALSE);
  g_autoptr(HpTensor) ids = hp_tensor_new_arange (HP_DTYPE_INT64, 12);
  g_autoptr(HpTensor) scalar = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (2.5), NULL, 0);
  g_autoptr(HpSafetensorsFile) file = NULL;
  g_autoptr(GBytes) contents = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) ar = hp_tensor_new_arange (HP_DTYPE_FLOAT32, 120);

  f = hp_tensor_reshape (ar, HP_TEST_SHAPE (4, 5, 6), &error);
  g_assert_no_error (error);
  hp_state_dict_insert (sd, "f", f);
  hp_state_dict_insert (sd, "d", d);
  hp_state_dict_insert (sd, "ids", ids);
  hp_state_dict_insert (sd, "scalar", scalar);
  g_assert_true (hp_safetensors_save (sd, NULL, path, &error));
  contents = read_bytes (path);
  file = hp_safetensors_file_new_from_bytes (contents, NULL, &error);
  g_assert_no_error (error);

  /* contiguous blocks share the file */
  check_slice (file, f, "f", (const gint64[]) { 0, 0, 0 }, (const gint64[]) { 4, 5, 6 }, 3, TRUE, contents);
  check_slice (file, f, "f", (const gint64[]) { 1, 0, 0 }, (const gint64[]) { 2, 5, 6 }, 3, TRUE, contents);
  check_slice (file, f, "f", (const gint64[]) { 2, 1, 0 }, (const gint64[]) { 1, 3, 6 }, 3, TRUE, contents);
  check_slice (file, f, "f", (const gint64[]) { 3, 4, 2 }, (const gint64[]) { 1, 1, 3 }, 3, TRUE, contents);
  /* the others are copied */
  check_slice (file, f, "f", (const gint64[]) { 0, 1, 2 }, (const gint64[]) { 4, 3, 3 }, 3, FALSE, contents);
  check_slice (file, f, "f", (const gint64[]) { 1, 0, 0 }, (const gint64[]) { 2, 5, 1 }, 3, FALSE, contents);
  check_slice (file, f, "f", (const gint64[]) { 1, 2, 0 }, (const gint64[]) { 2, 1, 6 }, 3, FALSE, contents);
  check_slice (file, f, "f", (const gint64[]) { 3, 4, 5 }, (const gint64[]) { 1, 1, 1 }, 3, TRUE, contents);
  /* empty blocks */
  check_slice (file, f, "f", (const gint64[]) { 4, 0, 0 }, (const gint64[]) { 0, 5, 6 }, 3, FALSE, contents);
  check_slice (file, f, "f", (const gint64[]) { 1, 2, 6 }, (const gint64[]) { 2, 2, 0 }, 3, FALSE, contents);
  check_slice (file, d, "d", (const gint64[]) { 1, 1 }, (const gint64[]) { 3, 2 }, 2, FALSE, contents);
  check_slice (file, d, "d", (const gint64[]) { 4, 0 }, (const gint64[]) { 1, 3 }, 2, TRUE, contents);
  check_slice (file, ids, "ids", (const gint64[]) { 5 }, (const gint64[]) { 7 }, 1, TRUE, contents);
  check_slice (file, scalar, "scalar", NULL, NULL, 0, TRUE, contents);

  hp_test_assert_error (hp_safetensors_file_get_tensor_slice (file, "f", (const gint64[]) { 0, 0 }, 2,
                                                              (const gint64[]) { 1, 1 }, 2, &error),
                        &error, HP_ERROR_SHAPE,
                        "<bytes>: tensor 'f' has 3 dims, but 2 offsets and 2 lengths were given");
  hp_test_assert_error (hp_safetensors_file_get_tensor_slice (file, "f", (const gint64[]) { 0, 0, 0 }, 3,
                                                              (const gint64[]) { 1, 1 }, 2, &error),
                        &error, HP_ERROR_SHAPE,
                        "<bytes>: tensor 'f' has 3 dims, but 3 offsets and 2 lengths were given");
  hp_test_assert_error (hp_safetensors_file_get_tensor_slice (file, "f", (const gint64[]) { 0, 3, 0 }, 3,
                                                              (const gint64[]) { 1, 3, 6 }, 3, &error),
                        &error, HP_ERROR_SHAPE,
                        "<bytes>: tensor 'f': the block at offset 3 of length 3 in dim 1 is outside "
                        "the shape [4, 5, 6]");
  hp_test_assert_error (hp_safetensors_file_get_tensor_slice (file, "f", (const gint64[]) { -1, 0, 0 }, 3,
                                                              (const gint64[]) { 1, 1, 1 }, 3, &error),
                        &error, HP_ERROR_SHAPE,
                        "<bytes>: tensor 'f': the block at offset -1 of length 1 in dim 0 is outside "
                        "the shape [4, 5, 6]");
  hp_test_assert_error (hp_safetensors_file_get_tensor_slice (file, "f", (const gint64[]) { 0, 0, 0 }, 3,
                                                              (const gint64[]) { 1, 1, -1 }, 3, &error),
                        &error, HP_ERROR_SHAPE,
                        "<bytes>: tensor 'f': the block at offset 0 of length -1 in dim 2 is outside "
                        "the shape [4, 5, 6]");
  hp_test_assert_error (hp_safetensors_file_get_tensor_slice (file, "f", (const gint64[]) { G_MAXINT64, 0, 0 }, 3,
                                                              (const gint64[]) { G_MAXINT64, 1, 1 }, 3, &error),
                        &error, HP_ERROR_SHAPE, "in dim 0 is outside the shape [4, 5, 6]");
  hp_test_assert_error (hp_safetensors_file_get_tensor_slice (file, "g", NULL, 0, NULL, 0, &error),
                        &error, HP_ERROR_INVALID_ARGUMENT, "<bytes>: no tensor 'g'");
  hp_test_remove_tree (dir);
}

/* Sharded checkpoints */

static HpStateDict *
make_sharded_state_dict (void)
{
  HpStateDict *sd = hp_state_dict_new ();
  /* 40, 24, 200, 16 and 8 bytes */
  g_autoptr(HpTensor) a = hp_test_randn (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (2, 5), 1, FALSE);
  g_autoptr(HpTensor) b = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (3), 2, FALSE);
  g_autoptr(HpTensor) big = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (5, 5), 3, FALSE);
  g_autoptr(HpTensor) c = hp_tensor_new_arange (HP_DTYPE_INT64, 2);
  g_autoptr(HpTensor) e = hp_test_tensor (HP_DTYPE_FLOAT32, HP_TEST_DATA (1, 2), HP_TEST_SHAPE (2));

  hp_state_dict_insert (sd, "tok_embeddings.weight", a);
  hp_state_dict_insert (sd, "layers.0.bias", b);
  hp_state_dict_insert (sd, "layers.0.weight", big);
  hp_state_dict_insert (sd, "layers.1.ids", c);
  hp_state_dict_insert (sd, "output.weight", e);
  return sd;
}

static void
test_sharded (void)
{
  g_autofree gchar *root = make_tmp_dir ();
  g_autofree gchar *dir = g_build_filename (root, "ckpt", "nested", NULL);
  g_autofree gchar *index_path = g_build_filename (dir, "model.safetensors.index.json", NULL);
  g_autoptr(HpStateDict) sd = make_sharded_state_dict ();
  g_autoptr(HpStateDict) loaded = NULL;
  g_autoptr(HpStateDict) loaded_index = NULL;
  g_autoptr(HpSafetensorsCheckpoint) checkpoint = NULL;
  g_autoptr(GHashTable) metadata = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(HpTensor) slice = NULL;
  g_auto(GStrv) files = NULL;
  g_auto(GStrv) names = NULL;
  JsonObject *index;
  JsonObject *weight_map;
  guint n_files;

  g_hash_table_insert (metadata, "format", "pt");
  /* [tok 40, bias 24] [weight 200] [ids 16, output 8] */
  g_assert_true (hp_safetensors_save_sharded (sd, metadata, dir, 64, &error));
  g_assert_no_error (error);

  files = list_dir (dir);
  g_assert_cmpstrv (files, ((const gchar *[]) { "model-00001-of-00003.safetensors",
                                                "model-00002-of-00003.safetensors",
                                                "model-00003-of-00003.safetensors",
                                                "model.safetensors.index.json", NULL }));

  /* the index, as Hugging Face writes it */
  json_parser_load_from_file (parser, index_path, &error);
  g_assert_no_error (error);
  index = json_node_get_object (json_parser_get_root (parser));
  g_assert_cmpint (json_object_get_int_member (json_object_get_object_member (index, "metadata"),
                                               "total_size"), ==, 288);
  g_assert_cmpstr (json_object_get_string_member (json_object_get_object_member (index, "metadata"),
                                                  "format"), ==, "pt");
  weight_map = json_object_get_object_member (index, "weight_map");
  g_assert_cmpuint (json_object_get_size (weight_map), ==, 5);
  g_assert_cmpstr (json_object_get_string_member (weight_map, "tok_embeddings.weight"), ==,
                   "model-00001-of-00003.safetensors");
  g_assert_cmpstr (json_object_get_string_member (weight_map, "layers.0.bias"), ==,
                   "model-00001-of-00003.safetensors");
  g_assert_cmpstr (json_object_get_string_member (weight_map, "layers.0.weight"), ==,
                   "model-00002-of-00003.safetensors");
  g_assert_cmpstr (json_object_get_string_member (weight_map, "layers.1.ids"), ==,
                   "model-00003-of-00003.safetensors");
  g_assert_cmpstr (json_object_get_string_member (weight_map, "output.weight"), ==,
                   "model-00003-of-00003.safetensors");

  /* loads from the directory and from the index */
  loaded = hp_safetensors_load (dir, &error);
  g_assert_no_error (error);
  assert_state_dicts_equal (loaded, sd);
  loaded_index = hp_safetensors_load (index_path, &error);
  g_assert_no_error (error);
  assert_state_dicts_equal (loaded_index, sd);

  checkpoint = hp_safetensors_checkpoint_new_for_path (dir, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (hp_safetensors_checkpoint_get_path (checkpoint), ==, dir);
  g_assert_cmpuint (hp_safetensors_checkpoint_get_n_files (checkpoint), ==, 3);
  g_assert_cmpuint (hp_safetensors_checkpoint_get_n_tensors (checkpoint), ==, 5);
  g_object_get (checkpoint, "n-files", &n_files, NULL);
  g_assert_cmpuint (n_files, ==, 3);
  names = hp_safetensors_checkpoint_get_names (checkpoint);
  g_assert_cmpstrv (names, ((const gchar *[]) { "layers.0.bias", "layers.0.weight", "layers.1.ids",
                                                "output.weight", "tok_embeddings.weight", NULL }));
  g_assert_true (hp_safetensors_checkpoint_contains (checkpoint, "layers.1.ids"));
  g_assert_false (hp_safetensors_checkpoint_contains (checkpoint, "layers.1"));
  g_assert_true (hp_safetensors_checkpoint_lookup_file (checkpoint, "layers.0.weight", &error) ==
                 hp_safetensors_checkpoint_get_file (checkpoint, 1));
  g_assert_no_error (error);
  g_assert_cmpuint (hp_safetensors_file_get_n_tensors (hp_safetensors_checkpoint_get_file (checkpoint, 0)), ==, 2);
  /* the metadata: the index's strings, and each shard's __metadata__ */
  g_assert_cmpuint (g_hash_table_size (hp_safetensors_checkpoint_get_metadata (checkpoint)), ==, 1);
  g_assert_cmpstr (g_hash_table_lookup (hp_safetensors_checkpoint_get_metadata (checkpoint), "format"), ==, "pt");
  g_assert_cmpstr (g_hash_table_lookup (hp_safetensors_file_get_metadata (
                     hp_safetensors_checkpoint_get_file (checkpoint, 2)), "format"), ==, "pt");

  slice = hp_safetensors_checkpoint_get_tensor_slice (checkpoint, "layers.0.weight",
                                                      (const gint64[]) { 1, 2 }, 2,
                                                      (const gint64[]) { 3, 2 }, 2, &error);
  g_assert_no_error (error);
  {
    gsize n;
    g_autofree gdouble *expected = hp_test_region_values (hp_state_dict_lookup (sd, "layers.0.weight"),
                                                          (const gint64[]) { 1, 2 },
                                                          (const gint64[]) { 3, 2 }, &n);

    hp_test_assert_values (slice, expected, n, HP_TEST_SHAPE (3, 2), 0, 0);
  }
  {
    g_autofree gchar *expected = g_strdup_printf ("%s: no tensor 'x'", dir);

    hp_test_assert_error (hp_safetensors_checkpoint_get_tensor (checkpoint, "x", &error), &error,
                          HP_ERROR_INVALID_ARGUMENT, expected);
    hp_test_assert_error (hp_safetensors_checkpoint_get_tensor_slice (checkpoint, "x", NULL, 0, NULL, 0, &error),
                          &error, HP_ERROR_INVALID_ARGUMENT, expected);
    hp_test_assert_error (hp_safetensors_checkpoint_lookup_file (checkpoint, "x", &error), &error,
                          HP_ERROR_INVALID_ARGUMENT, expected);
  }

  hp_test_remove_tree (root);
}

static void
test_sharded_sizes (void)
{
  g_autofree gchar *dir = make_tmp_dir ();
  g_autoptr(HpStateDict) sd = make_sharded_state_dict ();
  g_autoptr(HpStateDict) empty = hp_state_dict_new ();
  g_autoptr(HpStateDict) loaded = NULL;
  g_autoptr(HpSafetensorsCheckpoint) checkpoint = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree gchar *one = g_build_filename (dir, "one", NULL);
  g_autofree gchar *each = g_build_filename (dir, "each", NULL);
  g_autofree gchar *none = g_build_filename (dir, "none", NULL);

  /* everything fits in one shard */
  g_assert_true (hp_safetensors_save_sharded (sd, NULL, one, 288, &error));
  checkpoint = hp_safetensors_checkpoint_new_for_path (one, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (hp_safetensors_checkpoint_get_n_files (checkpoint), ==, 1);
  g_assert_cmpuint (g_hash_table_size (hp_safetensors_checkpoint_get_metadata (checkpoint)), ==, 0);
  g_clear_object (&checkpoint);

  /* every tensor larger than the maximum: one shard each */
  g_assert_true (hp_safetensors_save_sharded (sd, NULL, each, 1, &error));
  checkpoint = hp_safetensors_checkpoint_new_for_path (each, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (hp_safetensors_checkpoint_get_n_files (checkpoint), ==, 5);
  g_assert_true (g_file_test (each, G_FILE_TEST_IS_DIR));
  loaded = hp_safetensors_checkpoint_to_state_dict (checkpoint, &error);
  g_assert_no_error (error);
  assert_state_dicts_equal (loaded, sd);
  g_clear_object (&checkpoint);
  g_clear_object (&loaded);

  /* an empty dict: one empty shard */
  g_assert_true (hp_safetensors_save_sharded (empty, NULL, none, 100, &error));
  {
    g_autofree gchar *shard = g_build_filename (none, "model-00001-of-00001.safetensors", NULL);

    g_assert_true (g_file_test (shard, G_FILE_TEST_IS_REGULAR));
  }
  loaded = hp_safetensors_load (none, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (hp_state_dict_get_size (loaded), ==, 0);

  hp_test_remove_tree (dir);
}

static void
test_checkpoint_paths (void)
{
  g_autofree gchar *dir = make_tmp_dir ();
  g_autofree gchar *single = g_build_filename (dir, "model.safetensors", NULL);
  g_autofree gchar *other = g_build_filename (dir, "other.safetensors", NULL);
  g_autoptr(HpStateDict) sd = make_state_dict ();
  g_autoptr(HpStateDict) loaded = NULL;
  g_autoptr(HpSafetensorsCheckpoint) checkpoint = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree gchar *message = NULL;
  g_autofree gchar *empty_dir = g_build_filename (dir, "empty", NULL);

  /* a directory with model.safetensors */
  g_assert_true (hp_safetensors_save (sd, NULL, single, &error));
  checkpoint = hp_safetensors_checkpoint_new_for_path (dir, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (hp_safetensors_checkpoint_get_n_files (checkpoint), ==, 1);
  g_assert_cmpuint (hp_safetensors_checkpoint_get_n_tensors (checkpoint), ==, 8);
  loaded = hp_safetensors_checkpoint_to_state_dict (checkpoint, &error);
  g_assert_no_error (error);
  assert_state_dicts_equal (loaded, sd);
  g_clear_object (&loaded);

  /* a file of any name */
  g_assert_true (hp_safetensors_save (sd, NULL, other, &error));
  loaded = hp_safetensors_load (other, &error);
  g_assert_no_error (error);
  assert_state_dicts_equal (loaded, sd);

  /* a directory without a checkpoint */
  g_mkdir (empty_dir, 0700);
  message = g_strdup_printf ("%s: the directory has neither model.safetensors.index.json nor "
                             "model.safetensors", empty_dir);
  hp_test_assert_error (hp_safetensors_load (empty_dir, &error), &error, HP_ERROR_IO, message);
  g_free (message);
  /* a directory is not a file */
  message = g_strdup_printf ("%s: is a directory, not a safetensors file", dir);
  hp_test_assert_error (hp_safetensors_file_new_for_path (dir, &error), &error, HP_ERROR_IO, message);
  g_free (message);
  /* missing files */
  message = g_build_filename (dir, "missing.safetensors", NULL);
  hp_test_assert_error (hp_safetensors_file_new_for_path (message, &error), &error, HP_ERROR_IO,
                        "No such file or directory");
  hp_test_assert_error (hp_safetensors_load (message, &error), &error, HP_ERROR_IO,
                        "No such file or directory");
  g_free (message);
  message = g_build_filename (dir, "missing.index.json", NULL);
  hp_test_assert_error (hp_safetensors_load (message, &error), &error, HP_ERROR_IO,
                        "No such file or directory");

  hp_test_remove_tree (dir);
}

/* Index errors */

/* Writes @json as the index in @dir and checks the error of opening it;
 * a @message starting with ": " follows the path of the index */
static void
assert_index_error (const gchar *dir,
                    const gchar *json,
                    gint         code,
                    const gchar *message)
{
  g_autofree gchar *path = g_build_filename (dir, "model.safetensors.index.json", NULL);
  g_autofree gchar *expected = g_str_has_prefix (message, ": ") ? g_strconcat (path, message, NULL)
                                                                 : g_strdup (message);
  g_autoptr(GError) error = NULL;

  g_file_set_contents (path, json, -1, &error);
  g_assert_no_error (error);
  hp_test_assert_error (hp_safetensors_checkpoint_new_for_path (dir, &error), &error, code, expected);
  hp_test_assert_error (hp_safetensors_load (path, &error), &error, code, expected);
}

static void
test_index_errors (void)
{
  g_autofree gchar *dir = make_tmp_dir ();
  g_autoptr(HpStateDict) sd = make_sharded_state_dict ();
  g_autoptr(GError) error = NULL;
  g_autofree gchar *shard1 = NULL;
  g_autofree gchar *message = NULL;

  g_assert_true (hp_safetensors_save_sharded (sd, NULL, dir, 64, &error));
  g_assert_no_error (error);
  shard1 = g_build_filename (dir, "model-00001-of-00003.safetensors", NULL);

  assert_index_error (dir, "{\"weight_map\": ", HP_ERROR_FORMAT,
                      ": the index is not valid JSON: unexpected end at byte 15");
  assert_index_error (dir, "[]", HP_ERROR_FORMAT, ": the index is not a JSON object");
  assert_index_error (dir, "{\"weight_map\": {}, \"extra\": 1}", HP_ERROR_FORMAT,
                      ": the index has an unknown field 'extra'");
  assert_index_error (dir, "{\"metadata\": {}}", HP_ERROR_FORMAT,
                      ": the index has no field 'weight_map'");
  assert_index_error (dir, "{\"weight_map\": []}", HP_ERROR_FORMAT,
                      ": weight_map is not a JSON object");
  assert_index_error (dir, "{\"metadata\": 3, \"weight_map\": {}}", HP_ERROR_FORMAT,
                      ": metadata is not a JSON object");
  assert_index_error (dir, "{\"weight_map\": {\"a\": 1}}", HP_ERROR_FORMAT,
                      ": weight_map 'a' is not a string");
  assert_index_error (dir, "{\"weight_map\": {\"a\": \"../model-00001-of-00003.safetensors\"}}",
                      HP_ERROR_FORMAT,
                      ": weight_map 'a': '../model-00001-of-00003.safetensors' is not a file name "
                      "in the directory of the index");
  assert_index_error (dir, "{\"weight_map\": {\"a\": \"\"}}", HP_ERROR_FORMAT,
                      ": weight_map 'a': '' is not a file name in the directory of the index");
  assert_index_error (dir, "{\"weight_map\": {\"a\": \"..\"}}", HP_ERROR_FORMAT,
                      ": weight_map 'a': '..' is not a file name in the directory of the index");
  assert_index_error (dir, "{\"weight_map\": {\"layers.0.bias\": \"model-00002-of-00003.safetensors\"}}",
                      HP_ERROR_FORMAT,
                      ": weight_map maps tensor 'layers.0.bias' to model-00002-of-00003.safetensors, "
                      "which does not hold it");
  assert_index_error (dir, "{\"weight_map\": {\"layers.0.bias\": \"model-00001-of-00003.safetensors\"}}",
                      HP_ERROR_FORMAT,
                      ": model-00001-of-00003.safetensors holds tensor 'tok_embeddings.weight', "
                      "which weight_map does not map to it");
  assert_index_error (dir, "{\"weight_map\": {\"a\": \"missing.safetensors\"}}", HP_ERROR_IO,
                      "No such file or directory");
  assert_index_error (dir, "{\"weight_map\": {\"a\": \"missing.safetensors\"}, \"weight_map\": {}}",
                      HP_ERROR_FORMAT,
                      ": the index is not valid JSON: member 'weight_map' appears twice in one object");

  /* a broken shard is reported with its own path */
  g_file_set_contents (shard1, "short", -1, &error);
  g_assert_no_error (error);
  message = g_strdup_printf ("%s: the file has 5 bytes, too few for the 8-byte header length", shard1);
  assert_index_error (dir, "{\"weight_map\": {\"a\": \"model-00001-of-00003.safetensors\"}}",
                      HP_ERROR_FORMAT, message);

  hp_test_remove_tree (dir);
}

/* Write errors */

static void
test_save_errors (void)
{
  g_autofree gchar *dir = make_tmp_dir ();
  g_autofree gchar *path = g_build_filename (dir, NAME, NULL);
  g_autofree gchar *missing = g_build_filename (dir, "no", "such", NAME, NULL);
  g_autofree gchar *message = NULL;
  g_autoptr(HpStateDict) sd = make_state_dict ();
  g_autoptr(HpStateDict) bad = hp_state_dict_new ();
  g_autoptr(HpStateDict) distributed = hp_state_dict_new ();
  g_autoptr(HpTensor) t = hp_tensor_new_ones (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (2));
  g_autoptr(GHashTable) metadata = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(HpDeviceMesh) mesh = NULL;
  g_autoptr(GPtrArray) placements = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(HpDTensor) dt = NULL;
  g_autoptr(GBytes) before = NULL;
  g_autoptr(GBytes) after = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree gchar *file_path = g_build_filename (dir, "file", NULL);
  g_autofree gchar *under_file = g_build_filename (file_path, "ckpt", NULL);

  message = g_strdup_printf ("%s: cannot write: No such file or directory", missing);
  g_assert_false (hp_safetensors_save (sd, NULL, missing, &error));
  g_assert_error (error, HP_ERROR, HP_ERROR_IO);
  g_assert_cmpstr (error->message, ==, message);
  g_clear_error (&error);

  /* a failed save leaves the old file as it was */
  g_assert_true (hp_safetensors_save (sd, NULL, path, &error));
  before = read_bytes (path);

  hp_state_dict_insert (bad, "__metadata__", t);
  g_free (message);
  message = g_strdup_printf ("%s: the name '__metadata__' is reserved for the metadata, not a tensor", path);
  g_assert_false (hp_safetensors_save (bad, NULL, path, &error));
  g_assert_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT);
  g_assert_cmpstr (error->message, ==, message);
  g_clear_error (&error);

  mesh = hp_device_mesh_new ((const gint[]) { 1 }, 1, NULL, &error);
  g_assert_no_error (error);
  g_ptr_array_add (placements, hp_replicate_new ());
  dt = hp_dtensor_distribute (t, mesh, placements, 0, &error);
  g_assert_no_error (error);
  hp_state_dict_insert (distributed, "w", t);
  hp_state_dict_insert (distributed, "dw", HP_TENSOR (dt));
  g_free (message);
  message = g_strdup_printf ("%s: tensor 'dw' is a DTensor; save its full tensor "
                             "(hp_dtensor_full_tensor()) or its local tensor", path);
  g_assert_false (hp_safetensors_save (distributed, NULL, path, &error));
  g_assert_error (error, HP_ERROR, HP_ERROR_NOT_SUPPORTED);
  g_assert_cmpstr (error->message, ==, message);
  g_clear_error (&error);
  /* the same checks in another dtype */
  hp_test_assert_error (GINT_TO_POINTER (hp_safetensors_save_with_dtype (distributed, NULL, path,
                                                                         HP_SAFETENSORS_DTYPE_BF16,
                                                                         &error)),
                        &error, HP_ERROR_NOT_SUPPORTED, message);
  hp_test_assert_error (GINT_TO_POINTER (hp_safetensors_save_with_dtype (sd, NULL, missing,
                                                                         HP_SAFETENSORS_DTYPE_F16,
                                                                         &error)),
                        &error, HP_ERROR_IO, "cannot write: No such file or directory");

  after = read_bytes (path);
  g_assert_true (g_bytes_equal (before, after));

  /* sharded */
  g_free (message);
  message = g_strdup_printf ("%s: the largest shard size must be at least 1 byte, not 0", dir);
  g_assert_false (hp_safetensors_save_sharded (sd, NULL, dir, 0, &error));
  g_assert_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT);
  g_assert_cmpstr (error->message, ==, message);
  g_clear_error (&error);

  g_hash_table_insert (metadata, "total_size", "12");
  g_free (message);
  message = g_strdup_printf ("%s: the metadata key 'total_size' is reserved for the index", dir);
  g_assert_false (hp_safetensors_save_sharded (sd, metadata, dir, 100, &error));
  g_assert_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT);
  g_assert_cmpstr (error->message, ==, message);
  g_clear_error (&error);

  g_assert_false (hp_safetensors_save_sharded (distributed, NULL, dir, 100, &error));
  g_assert_error (error, HP_ERROR, HP_ERROR_NOT_SUPPORTED);
  g_clear_error (&error);
  hp_test_assert_error (GINT_TO_POINTER (hp_safetensors_save_sharded_with_dtype (
                          distributed, NULL, dir, 100, HP_SAFETENSORS_DTYPE_BF16, &error)),
                        &error, HP_ERROR_NOT_SUPPORTED, "is a DTensor");
  hp_test_assert_error (GINT_TO_POINTER (hp_safetensors_save_sharded_with_dtype (
                          sd, NULL, dir, 0, HP_SAFETENSORS_DTYPE_F16, &error)),
                        &error, HP_ERROR_INVALID_ARGUMENT, "at least 1 byte, not 0");

  /* a directory that cannot be made */
  g_file_set_contents (file_path, "x", -1, &error);
  g_assert_no_error (error);
  g_free (message);
  message = g_strdup_printf ("%s: cannot create the directory: Not a directory", under_file);
  g_assert_false (hp_safetensors_save_sharded (sd, NULL, under_file, 100, &error));
  g_assert_error (error, HP_ERROR, HP_ERROR_IO);
  g_assert_cmpstr (error->message, ==, message);
  g_clear_error (&error);

  /* nothing but the files written on purpose */
  {
    g_auto(GStrv) files = list_dir (dir);

    g_assert_cmpstrv (files, ((const gchar *[]) { "file", NAME, NULL }));
  }
  hp_test_remove_tree (dir);
}

/* A sharded save that fails on its last shard leaves the checkpoint
 * already in the directory as it was: no shard and not the index is
 * replaced, and no file is left behind */
static void
test_save_sharded_keeps_old (void)
{
  g_autofree gchar *dir = make_tmp_dir ();
  g_autofree gchar *shard3 = g_build_filename (dir, "model-00003-of-00003.safetensors", NULL);
  g_autofree gchar *message = g_strdup_printf ("%s: cannot write: %s", shard3, g_strerror (EISDIR));
  g_autoptr(HpStateDict) sd = make_sharded_state_dict ();
  g_autoptr(HpStateDict) doubled = hp_state_dict_new ();
  g_autoptr(GPtrArray) before = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) files = NULL;
  g_auto(GStrv) files_after = NULL;

  g_assert_true (hp_safetensors_save_sharded (sd, NULL, dir, 64, &error));
  g_assert_no_error (error);
  for (guint i = 0; i < hp_state_dict_get_size (sd); i++)
    {
      HpTensor *t = hp_state_dict_get_tensor (sd, i);
      g_autoptr(HpTensor) twice = hp_tensor_add (t, t, &error);

      g_assert_no_error (error);
      hp_state_dict_insert (doubled, hp_state_dict_get_name (sd, i), twice);
    }

  /* something that cannot be replaced where the new last shard goes */
  g_assert_cmpint (g_unlink (shard3), ==, 0);
  g_assert_cmpint (g_mkdir (shard3, 0700), ==, 0);
  files = list_dir (dir);
  for (guint i = 0; files[i] != NULL; i++)
    {
      g_autofree gchar *path = g_build_filename (dir, files[i], NULL);

      g_ptr_array_add (before, g_file_test (path, G_FILE_TEST_IS_DIR) ? NULL : read_bytes (path));
    }

  hp_test_assert_error (GINT_TO_POINTER (hp_safetensors_save_sharded (doubled, NULL, dir, 64, &error)),
                        &error, HP_ERROR_IO, message);

  files_after = list_dir (dir);
  g_assert_cmpstrv (files_after, files);
  for (guint i = 0; files[i] != NULL; i++)
    {
      g_autofree gchar *path = g_build_filename (dir, files[i], NULL);
      g_autoptr(GBytes) now = NULL;

      if (g_ptr_array_index (before, i) == NULL)
        continue;
      now = read_bytes (path);
      g_assert_true (g_bytes_equal (now, g_ptr_array_index (before, i)));
    }
  /* the state dicts are as they were too */
  g_assert_cmpuint (hp_state_dict_get_size (doubled), ==, hp_state_dict_get_size (sd));

  /* once the way is clear, the new checkpoint replaces the old one */
  g_assert_cmpint (g_rmdir (shard3), ==, 0);
  g_assert_true (hp_safetensors_save_sharded (doubled, NULL, dir, 64, &error));
  g_assert_no_error (error);
  {
    g_autoptr(HpStateDict) loaded = hp_safetensors_load (dir, &error);

    g_assert_no_error (error);
    assert_state_dicts_equal (loaded, doubled);
  }
  hp_test_remove_tree (dir);
}

/* Header validation, one field broken at a time */

static void
test_header_length_errors (void)
{
  g_autoptr(GBytes) b = NULL;

  b = g_bytes_new ("\x02\0\0\0\0", 5);
  assert_bytes_error (b, "the file has 5 bytes, too few for the 8-byte header length");
  g_clear_pointer (&b, g_bytes_unref);
  b = g_bytes_new ("", 0);
  assert_bytes_error (b, "the file has 0 bytes, too few for the 8-byte header length");
  g_clear_pointer (&b, g_bytes_unref);

  b = raw_file (0, "{}", 2);
  assert_bytes_error (b, "header length 0 is less than 2");
  g_clear_pointer (&b, g_bytes_unref);
  b = raw_file (1, "{}", 2);
  assert_bytes_error (b, "header length 1 is less than 2");
  g_clear_pointer (&b, g_bytes_unref);
  b = raw_file (100000001, "{}", 2);
  assert_bytes_error (b, "header length 100000001 is more than the limit of 100000000 bytes");
  g_clear_pointer (&b, g_bytes_unref);
  b = raw_file (G_MAXUINT64, "{}", 2);
  assert_bytes_error (b, "header length 18446744073709551615 is more than the limit of 100000000 bytes");
  g_clear_pointer (&b, g_bytes_unref);
  /* truncated: the header is longer than what follows */
  b = raw_file (40, "{\"a\":{\"dtype\":\"F32\"", 19);
  assert_bytes_error (b, "header length 40 is more than the 19 bytes after it");
  g_clear_pointer (&b, g_bytes_unref);
  b = raw_file (3, "{}", 2);
  assert_bytes_error (b, "header length 3 is more than the 2 bytes after it");
  g_clear_pointer (&b, g_bytes_unref);

  /* the smallest valid file, and a header padded with spaces */
  {
    g_autoptr(GError) error = NULL;
    g_autoptr(HpSafetensorsFile) f = NULL;

    b = raw_file (2, "{}", 2);
    f = hp_safetensors_file_new_from_bytes (b, NULL, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (hp_safetensors_file_get_n_tensors (f), ==, 0);
    g_assert_null (hp_safetensors_file_get_path (f));
    g_clear_object (&f);
    g_clear_pointer (&b, g_bytes_unref);
    b = raw_file (8, " {}\t\r\n  ", 8);
    f = hp_safetensors_file_new_from_bytes (b, NULL, &error);
    g_assert_no_error (error);
  }
}

static void
test_json_errors (void)
{
  g_autoptr(GBytes) b = NULL;
  GString *deep = g_string_new ("{\"a\":");

  b = raw_file (4, "{\"\xff\"", 4);
  assert_bytes_error (b, "header is not valid UTF-8 at byte 2");
  g_clear_pointer (&b, g_bytes_unref);
  b = raw_file (4, "{}\0 ", 4);
  assert_bytes_error (b, "header is not valid UTF-8 at byte 2");
  g_clear_pointer (&b, g_bytes_unref);

  assert_header_error ("  ", 0, "header is not valid JSON: no value at byte 2");
  assert_header_error ("{\"a\":", 0, "header is not valid JSON: unexpected end at byte 5");
  assert_header_error ("{\"a\" 1}", 0, "header is not valid JSON: unexpected character '1' at byte 5");
  assert_header_error ("{} {}", 0, "header is not valid JSON: data after the JSON value at byte 3");
  assert_header_error ("{}x", 0, "header is not valid JSON: data after the JSON value at byte 2");
  assert_header_error ("/* c */ {}", 0, "header is not valid JSON: unexpected character '/' at byte 0");
  assert_header_error ("{'a': 1}", 0, "header is not valid JSON: unexpected character ''' at byte 1");
  assert_header_error ("{a: 1}", 0, "header is not valid JSON: unexpected character 'a' at byte 1");
  assert_header_error ("{\"a\": [0x10]}", 0, "header is not valid JSON: unexpected character 'x' at byte 8");
  assert_header_error ("{\"a\": [01]}", 0, "header is not valid JSON: number with a leading zero at byte 7");
  assert_header_error ("{\"a\": [1.]}", 0, "header is not valid JSON: bad number at byte 7");
  assert_header_error ("{\"a\": [.5]}", 0, "header is not valid JSON: unexpected character '.' at byte 7");
  assert_header_error ("{\"a\": [-]}", 0, "header is not valid JSON: bad number at byte 7");
  assert_header_error ("{\"a\": [1e]}", 0, "header is not valid JSON: bad number at byte 7");
  assert_header_error ("{\"a\": [1,]}", 0, "header is not valid JSON: unexpected character ']' at byte 9");
  assert_header_error ("{\"a\": 1,}", 0, "header is not valid JSON: unexpected character '}' at byte 8");
  assert_header_error ("{\"a\": tru}", 0, "header is not valid JSON: unexpected character 't' at byte 6");
  assert_header_error ("{\"a\": nulls}", 0, "header is not valid JSON: unexpected character 's' at byte 10");
  assert_header_error ("{\"a\": [1}", 0, "header is not valid JSON: unexpected character '}' at byte 8");
  assert_header_error ("{\"a\": \"x}", 0, "header is not valid JSON: unterminated string at byte 6");
  assert_header_error ("{\"a\": \"\t\"}", 0, "header is not valid JSON: control character 0x09 in a string at byte 7");
  assert_header_error ("{\"a\": \"\\x\"}", 0, "header is not valid JSON: bad escape in a string at byte 7");
  assert_header_error ("{\"a\": \"\\u12g4\"}", 0, "header is not valid JSON: bad \\u escape in a string at byte 7");
  assert_header_error ("{\"a\\u0000b\": 1}", 0, "header is not valid JSON: \\u0000 in a string at byte 3");
  assert_header_error ("{\"a\": \"\\ud800\"}", 0, "header is not valid JSON: unpaired surrogate \\ud800 in a string at byte 7");
  assert_header_error ("{\"a\": \"\\udc00\"}", 0, "header is not valid JSON: unpaired surrogate \\udc00 in a string at byte 7");
  assert_header_error ("{\"a\": \"\\ud800\\u0041\"}", 0, "header is not valid JSON: unpaired surrogate \\ud800 in a string at byte 7");
  /* integers that json-glib would silently wrap */
  assert_header_error ("{\"w\":{\"dtype\":\"F32\",\"shape\":[18446744073709551617],\"data_offsets\":[0,4]}}", 4,
                       "header is not valid JSON: integer out of the 64-bit range at byte 29");
  assert_header_error ("{\"a\": [9223372036854775808]}", 0,
                       "header is not valid JSON: integer out of the 64-bit range at byte 7");
  assert_header_error ("{\"a\": [-9223372036854775809]}", 0,
                       "header is not valid JSON: integer out of the 64-bit range at byte 7");
  assert_header_error ("{\"w\":{\"dtype\":\"F32\",\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4,
                       "header is not valid JSON: member 'dtype' appears twice in one object");
  assert_header_error ("{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                       "\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4,
                       "header is not valid JSON: member 'w' appears twice in one object");

  /* nesting: 64 levels are fine, 65 are not */
  for (guint i = 1; i < 64; i++)
    g_string_append_c (deep, '[');
  for (guint i = 1; i < 64; i++)
    g_string_append_c (deep, ']');
  g_string_append_c (deep, '}');
  assert_header_error (deep->str, 0, "tensor 'a' is not a JSON object");
  g_string_assign (deep, "{\"a\":");
  for (guint i = 1; i < 65; i++)
    g_string_append_c (deep, '[');
  assert_header_error (deep->str, 0, "header is not valid JSON: nested deeper than 64 levels at byte 68");
  /* far deeper than a stack would take, with a header length at the limit */
  g_string_truncate (deep, 0);
  g_string_append_c (deep, '{');
  g_string_append (deep, "\"a\":");
  while (deep->len < 1000000)
    g_string_append_c (deep, '[');
  assert_header_error (deep->str, 0, "header is not valid JSON: nested deeper than 64 levels at byte 68");
  g_string_free (deep, TRUE);

  /* valid JSON that is not an object */
  assert_header_error ("[]", 0, "header is not a JSON object");
  assert_header_error ("\"{}\"", 0, "header is not a JSON object");
  assert_header_error ("null", 0, "header is not a JSON object");
  assert_header_error ("12", 0, "header is not a JSON object");
}

static void
test_field_errors (void)
{
  /* each tensor field broken in turn */
  assert_header_error ("{\"w\":1}", 0, "tensor 'w' is not a JSON object");
  assert_header_error ("{\"w\":[\"F32\",[1],[0,4]]}", 4, "tensor 'w' is not a JSON object");
  assert_header_error ("{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4],\"extra\":0}}", 4,
                       "tensor 'w' has an unknown field 'extra'");
  assert_header_error ("{\"w\":{\"shape\":[1],\"data_offsets\":[0,4]}}", 4, "tensor 'w' has no field 'dtype'");
  assert_header_error ("{\"w\":{\"dtype\":\"F32\",\"data_offsets\":[0,4]}}", 4, "tensor 'w' has no field 'shape'");
  assert_header_error ("{\"w\":{\"dtype\":\"F32\",\"shape\":[1]}}", 4, "tensor 'w' has no field 'data_offsets'");
  assert_header_error ("{\"w\":{}}", 0, "tensor 'w' has no field 'dtype'");

  assert_header_error ("{\"w\":{\"dtype\":32,\"shape\":[1],\"data_offsets\":[0,4]}}", 4,
                       "tensor 'w': dtype is not a string");
  assert_header_error ("{\"w\":{\"dtype\":null,\"shape\":[1],\"data_offsets\":[0,4]}}", 4,
                       "tensor 'w': dtype is not a string");
  assert_header_error ("{\"w\":{\"dtype\":\"F31\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4,
                       "tensor 'w': dtype 'F31' is not a safetensors dtype");
  assert_header_error ("{\"w\":{\"dtype\":\"f32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4,
                       "tensor 'w': dtype 'f32' is not a safetensors dtype");

  assert_header_error ("{\"w\":{\"dtype\":\"F32\",\"shape\":1,\"data_offsets\":[0,4]}}", 4,
                       "tensor 'w': shape is not an array");
  assert_header_error ("{\"w\":{\"dtype\":\"F32\",\"shape\":{},\"data_offsets\":[0,4]}}", 4,
                       "tensor 'w': shape is not an array");
  assert_header_error ("{\"w\":{\"dtype\":\"F32\",\"shape\":[1,-1],\"data_offsets\":[0,4]}}", 4,
                       "tensor 'w': shape[1] is not a non-negative integer");
  assert_header_error ("{\"w\":{\"dtype\":\"F32\",\"shape\":[1.0],\"data_offsets\":[0,4]}}", 4,
                       "tensor 'w': shape[0] is not a non-negative integer");
  assert_header_error ("{\"w\":{\"dtype\":\"F32\",\"shape\":[\"1\"],\"data_offsets\":[0,4]}}", 4,
                       "tensor 'w': shape[0] is not a non-negative integer");
  assert_header_error ("{\"w\":{\"dtype\":\"F32\",\"shape\":[[1]],\"data_offsets\":[0,4]}}", 4,
                       "tensor 'w': shape[0] is not a non-negative integer");
  assert_header_error ("{\"w\":{\"dtype\":\"F32\",\"shape\":[true],\"data_offsets\":[0,4]}}", 4,
                       "tensor 'w': shape[0] is not a non-negative integer");

  assert_header_error ("{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":4}}", 4,
                       "tensor 'w': data_offsets is not an array of two integers");
  assert_header_error ("{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4]}}", 4,
                       "tensor 'w': data_offsets is not an array of two integers");
  assert_header_error ("{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4,8]}}", 4,
                       "tensor 'w': data_offsets is not an array of two integers");
  assert_header_error ("{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[-4,0]}}", 4,
                       "tensor 'w': data_offsets[0] is not a non-negative integer");
  assert_header_error ("{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4e0]}}", 4,
                       "tensor 'w': data_offsets[1] is not a non-negative integer");
  assert_header_error ("{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,null]}}", 4,
                       "tensor 'w': data_offsets[1] is not a non-negative integer");
  assert_header_error ("{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,4]}}", 8,
                       "tensor 'w': data_offsets [8, 4] begin after they end");
  assert_header_error ("{\"w\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,12]}}", 8,
                       "tensor 'w': data_offsets [0, 12] end past the 8-byte data buffer");
  assert_header_error ("{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,9223372036854775807]}}", 4,
                       "tensor 'w': data_offsets [0, 9223372036854775807] end past the 4-byte data buffer");
  assert_header_error ("{\"w\":{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[0,12]}}", 12,
                       "tensor 'w': data_offsets [0, 12] hold 12 bytes but dtype F32 and shape [2, 2] need 16");
  assert_header_error ("{\"w\":{\"dtype\":\"BF16\",\"shape\":[3],\"data_offsets\":[0,4]}}", 4,
                       "tensor 'w': data_offsets [0, 4] hold 4 bytes but dtype BF16 and shape [3] need 6");
  assert_header_error ("{\"w\":{\"dtype\":\"F64\",\"shape\":[],\"data_offsets\":[0,4]}}", 4,
                       "tensor 'w': data_offsets [0, 4] hold 4 bytes but dtype F64 and shape [] need 8");
  assert_header_error ("{\"w\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,4]}}", 4,
                       "tensor 'w': data_offsets [0, 4] hold 4 bytes but dtype F32 and shape [0] need 0");
  assert_header_error ("{\"w\":{\"dtype\":\"F64\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,8]}}", 8,
                       "tensor 'w': data_offsets [0, 8] hold 8 bytes but dtype F64 and shape "
                       "[4294967296, 4294967296] need more than 2^64");
  assert_header_error ("{\"w\":{\"dtype\":\"U8\",\"shape\":[9223372036854775807,3],\"data_offsets\":[0,8]}}", 8,
                       "tensor 'w': data_offsets [0, 8] hold 8 bytes but dtype U8 and shape "
                       "[9223372036854775807, 3] need more than 2^64");

  /* metadata */
  assert_header_error ("{\"__metadata__\":[]}", 0, "__metadata__ is not a JSON object");
  assert_header_error ("{\"__metadata__\":\"x\"}", 0, "__metadata__ is not a JSON object");
  assert_header_error ("{\"__metadata__\":{\"a\":\"b\",\"n\":1}}", 0, "__metadata__ 'n' is not a string");
  assert_header_error ("{\"__metadata__\":{\"a\":{}}}", 0, "__metadata__ 'a' is not a string");
  assert_header_error ("{\"__metadata__\":{\"a\":null}}", 0, "__metadata__ 'a' is not a string");
}

static void
test_coverage_errors (void)
{
  g_autoptr(HpSafetensorsFile) ok = NULL;
  g_autoptr(GError) error = NULL;

  /* overlapping ranges */
  assert_header_error ("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                       "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}", 12,
                       "tensor 'b': data_offsets [4, 12] overlap those of tensor 'a', [0, 8]");
  assert_header_error ("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                       "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8,
                       "tensor 'b': data_offsets [0, 8] overlap those of tensor 'a', [0, 8]");
  assert_header_error ("{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]},"
                       "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 16,
                       "tensor 'b': data_offsets [4, 8] overlap those of tensor 'a', [0, 16]");
  assert_header_error ("{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]},"
                       "\"e\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[8,8]}}", 16,
                       "tensor 'e': data_offsets [8, 8] overlap those of tensor 'a', [0, 16]");
  /* holes and trailing bytes */
  assert_header_error ("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                       "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]}}", 12,
                       "bytes [4, 8) of the 12-byte data buffer belong to no tensor");
  assert_header_error ("{\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8,
                       "bytes [0, 4) of the 8-byte data buffer belong to no tensor");
  assert_header_error ("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 6,
                       "bytes [4, 6) of the 6-byte data buffer belong to no tensor");
  assert_header_error ("{}", 1, "bytes [0, 1) of the 1-byte data buffer belong to no tensor");

  /* empty tensors may sit anywhere in the buffer, also between others
   * and at its end; and the order in the header does not count */
  ok = open_header ("{\"z\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]},"
                    "\"e1\":{\"dtype\":\"F64\",\"shape\":[0,5],\"data_offsets\":[4,4]},"
                    "\"e2\":{\"dtype\":\"I64\",\"shape\":[0],\"data_offsets\":[8,8]},"
                    "\"e3\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0]},"
                    "\"a\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[0,4]}}", 8);
  g_assert_cmpuint (hp_safetensors_file_get_n_tensors (ok), ==, 5);
  {
    g_autoptr(HpTensor) e1 = hp_safetensors_file_get_tensor (ok, "e1", &error);

    g_assert_no_error (error);
    hp_test_assert_shape (e1, HP_TEST_SHAPE (0, 5));
  }
}

/* Dtypes that validate but do not load, and shapes a tensor cannot have */
static void
test_unsupported (void)
{
  g_autoptr(HpSafetensorsFile) file = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(HpStateDict) sd = NULL;
  const gchar *dtypes[] = { "BOOL", "U8", "I8", "F8_E5M2", "F8_E4M3", "I16", "U16", "I32", "U32", "U64" };
  const gsize sizes[] = { 1, 1, 1, 1, 1, 2, 2, 4, 4, 8 };

  for (guint i = 0; i < G_N_ELEMENTS (dtypes); i++)
    {
      g_autofree gchar *header = g_strdup_printf (
          "{\"t\":{\"dtype\":\"%s\",\"shape\":[2],\"data_offsets\":[0,%" G_GSIZE_FORMAT "]}}",
          dtypes[i], 2 * sizes[i]);
      g_autofree gchar *message = g_strdup_printf (
          NAME ": tensor 't' has dtype %s, which does not load (F32, F64, I64, BF16 and F16 do)",
          dtypes[i]);

      g_clear_object (&file);
      file = open_header (header, 2 * sizes[i]);
      g_assert_cmpstr (hp_safetensors_file_get_dtype (file, "t", &error), ==, dtypes[i]);
      hp_test_assert_error (hp_safetensors_file_get_tensor (file, "t", &error), &error,
                            HP_ERROR_NOT_SUPPORTED, message);
      hp_test_assert_error (hp_safetensors_file_get_tensor_slice (file, "t", (const gint64[]) { 0 }, 1,
                                                                  (const gint64[]) { 1 }, 1, &error),
                            &error, HP_ERROR_NOT_SUPPORTED, message);
    }

  /* 17 dims */
  g_clear_object (&file);
  file = open_header ("{\"t\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1],"
                      "\"data_offsets\":[0,4]}}", 4);
  hp_test_assert_error (hp_safetensors_file_get_tensor (file, "t", &error), &error, HP_ERROR_SHAPE,
                        NAME ": tensor 't': a tensor has at most 16 dims, not 17");

  /* an empty tensor may have huge dims after its 0 */
  g_clear_object (&file);
  file = open_header ("{\"t\":{\"dtype\":\"F32\",\"shape\":[0,4611686018427387904,4611686018427387904],"
                      "\"data_offsets\":[0,0]}}", 0);
  {
    g_autoptr(HpTensor) t = hp_safetensors_file_get_tensor (file, "t", &error);
    g_autoptr(HpTensor) block = NULL;

    g_assert_no_error (error);
    hp_test_assert_shape (t, HP_TEST_SHAPE (0, 4611686018427387904, 4611686018427387904));
    block = hp_safetensors_file_get_tensor_slice (file, "t", (const gint64[]) { 0, 5, 6 }, 3,
                                                  (const gint64[]) { 0, 2, 3 }, 3, &error);
    g_assert_no_error (error);
    hp_test_assert_shape (block, HP_TEST_SHAPE (0, 2, 3));
  }
  /* but not before it */
  g_clear_object (&file);
  file = open_header ("{\"t\":{\"dtype\":\"F32\",\"shape\":[4611686018427387904,4611686018427387904,0],"
                      "\"data_offsets\":[0,0]}}", 0);
  hp_test_assert_error (hp_safetensors_file_get_tensor (file, "t", &error), &error, HP_ERROR_SHAPE,
                        NAME ": tensor 't': shape [4611686018427387904, 4611686018427387904, 0] has too many elements");

  /* loading a whole checkpoint stops at the first tensor that fails */
  {
    g_autofree gchar *dir = make_tmp_dir ();
    g_autofree gchar *path = g_build_filename (dir, NAME, NULL);
    g_autoptr(GBytes) bytes = header_file ("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                                           "\"b\":{\"dtype\":\"I32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8);
    g_autofree gchar *message = NULL;

    g_autoptr(HpSafetensorsCheckpoint) checkpoint = NULL;
    g_autoptr(HpTensor) a = NULL;

    write_bytes (path, bytes);
    message = g_strdup_printf ("%s: tensor 'b' has dtype I32, which does not load", path);
    sd = hp_safetensors_load (dir, &error);
    hp_test_assert_error (sd, &error, HP_ERROR_NOT_SUPPORTED, message);
    checkpoint = hp_safetensors_checkpoint_new_for_path (dir, &error);
    g_assert_no_error (error);
    hp_test_assert_error (hp_safetensors_checkpoint_to_state_dict (checkpoint, &error), &error,
                          HP_ERROR_NOT_SUPPORTED, message);
    /* the checkpoint still reads what it can */
    a = hp_safetensors_checkpoint_get_tensor (checkpoint, "a", &error);
    g_assert_no_error (error);
    hp_test_assert_shape (a, HP_TEST_SHAPE (1));
    g_clear_object (&checkpoint);
    hp_test_remove_tree (dir);
  }
}

/* A truncated file on disk, and a file named in messages by its path */
static void
test_truncated_file (void)
{
  g_autofree gchar *dir = make_tmp_dir ();
  g_autofree gchar *path = g_build_filename (dir, NAME, NULL);
  g_autoptr(HpStateDict) sd = make_state_dict ();
  g_autoptr(GBytes) whole = NULL;
  g_autoptr(GError) error = NULL;
  gsize size;
  guint64 header_length;
  g_autoptr(JsonNode) root = NULL;

  g_assert_true (hp_safetensors_save (sd, NULL, path, &error));
  whole = read_bytes (path);
  size = g_bytes_get_size (whole);
  root = parse_file_header (whole, &header_length);

  /* cut in the data, in the header, in the length */
  for (gsize cut = 0; cut < size; cut += (cut < 16 || cut > size - 16) ? 1 : 7)
    {
      g_autoptr(GBytes) part = g_bytes_new_from_bytes (whole, 0, cut);
      g_autoptr(HpSafetensorsFile) file = NULL;

      write_bytes (path, part);
      file = hp_safetensors_file_new_for_path (path, &error);
      g_assert_null (file);
      g_assert_error (error, HP_ERROR, HP_ERROR_FORMAT);
      g_assert_true (g_str_has_prefix (error->message, path));
      if (cut >= 8 + header_length)
        g_assert_nonnull (strstr (error->message, "data buffer"));
      g_clear_error (&error);
    }
  hp_test_remove_tree (dir);
}

/* Random damage to a valid file never crashes and gives a file or a
 * format error; whatever opens, loads */
static void
test_damaged_files (void)
{
  g_autofree gchar *dir = make_tmp_dir ();
  g_autofree gchar *path = g_build_filename (dir, NAME, NULL);
  g_autoptr(HpStateDict) sd = make_state_dict ();
  g_autoptr(GBytes) whole = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GRand) rand = g_rand_new_with_seed (20240611);
  guint64 header_length;
  g_autoptr(JsonNode) root = NULL;
  const guint8 *data;
  gsize size;
  guint opened = 0;

  g_assert_true (hp_safetensors_save (sd, NULL, path, &error));
  whole = read_bytes (path);
  data = g_bytes_get_data (whole, &size);
  root = parse_file_header (whole, &header_length);

  for (guint round = 0; round < 400; round++)
    {
      g_autofree guint8 *copy = g_memdup2 (data, size);
      g_autoptr(GBytes) damaged = NULL;
      g_autoptr(HpSafetensorsFile) file = NULL;
      guint n_changes = 1 + g_rand_int_range (rand, 0, 4);

      for (guint c = 0; c < n_changes; c++)
        {
          /* mostly in the header, where the structure is */
          gsize at = g_rand_int_range (rand, 0, (gint32) MIN (size, 8 + header_length));

          copy[at] = (guint8) g_rand_int_range (rand, 0, 256);
        }
      damaged = g_bytes_new (copy, size);
      file = hp_safetensors_file_new_from_bytes (damaged, NULL, &error);
      if (file == NULL)
        {
          g_assert_error (error, HP_ERROR, HP_ERROR_FORMAT);
          g_clear_error (&error);
          continue;
        }
      opened++;
      {
        g_auto(GStrv) names = hp_safetensors_file_get_names (file);

        for (guint i = 0; names[i] != NULL; i++)
          {
            g_autoptr(HpTensor) t = hp_safetensors_file_get_tensor (file, names[i], &error);

            if (t == NULL)
              g_clear_error (&error);
          }
      }
    }
  /* some damage leaves a valid file (a changed value, a renamed tensor) */
  g_assert_cmpuint (opened, >, 0);
  hp_test_remove_tree (dir);
}

int
main (int   argc,
      char *argv[])
{
  hp_test_init (&argc, &argv);

  g_test_add_func ("/safetensors/round-trip", test_round_trip);
  g_test_add_func ("/safetensors/empty-state-dict", test_empty_state_dict);
  g_test_add_func ("/safetensors/layout", test_layout);
  g_test_add_func ("/safetensors/alignment", test_alignment);
  g_test_add_func ("/safetensors/unaligned", test_unaligned);
  g_test_add_func ("/safetensors/metadata", test_metadata);
  g_test_add_func ("/safetensors/half-precision", test_half_precision);
  g_test_add_func ("/safetensors/f16-all-values", test_f16_all_values);
  g_test_add_func ("/safetensors/round-to-half", test_round_to_half);
  g_test_add_func ("/safetensors/round-to-f16-all-values", test_round_to_f16_all_values);
  g_test_add_func ("/safetensors/save-dtype", test_save_dtype);
  g_test_add_func ("/safetensors/save-dtype-from-float64", test_save_dtype_from_float64);
  g_test_add_func ("/safetensors/dtype-names", test_dtype_names);
  g_test_add_func ("/safetensors/slices", test_slices);
  g_test_add_func ("/safetensors/sharded", test_sharded);
  g_test_add_func ("/safetensors/sharded-sizes", test_sharded_sizes);
  g_test_add_func ("/safetensors/checkpoint-paths", test_checkpoint_paths);
  g_test_add_func ("/safetensors/index-errors", test_index_errors);
  g_test_add_func ("/safetensors/save-errors", test_save_errors);
  g_test_add_func ("/safetensors/save-sharded-keeps-old", test_save_sharded_keeps_old);
  g_test_add_func ("/safetensors/errors/header-length", test_header_length_errors);
  g_test_add_func ("/safetensors/errors/json", test_json_errors);
  g_test_add_func ("/safetensors/errors/fields", test_field_errors);
  g_test_add_func ("/safetensors/errors/coverage", test_coverage_errors);
  g_test_add_func ("/safetensors/errors/unsupported", test_unsupported);
  g_test_add_func ("/safetensors/errors/truncated", test_truncated_file);
  g_test_add_func ("/safetensors/errors/damaged", test_damaged_files);

  return g_test_run ();
}
