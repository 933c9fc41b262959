/* test-state-dict-adapter.c: the state dict adapter interface, its
 * wrappers and default file functions, with adapters defined here
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <glib/gstdio.h>

#include "hp-test-toys.h"
#include "hp-test-utils.h"

/* Model name <-> Hugging Face name, as a Llama checkpoint has them */
static const gchar * const renames[][2] = {
  { "tok_embeddings.weight", "model.embed_tokens.weight" },
  { "norm.weight", "model.norm.weight" },
  { "output.weight", "lm_head.weight" },
};

/* Copies @sd with each name mapped from column @from to column @to of
 * renames, sharing the tensors */
static HpStateDict *
rename_keys (GObject      *adapter,
             HpStateDict  *sd,
             guint         from,
             guint         to,
             GError      **error)
{
  g_autoptr(HpStateDict) out = hp_state_dict_new ();

  for (guint i = 0; i < hp_state_dict_get_size (sd); i++)
    {
      const gchar *name = hp_state_dict_get_name (sd, i);
      const gchar *renamed = NULL;

      for (guint r = 0; r < G_N_ELEMENTS (renames); r++)
        if (g_str_equal (renames[r][from], name))
          renamed = renames[r][to];
      if (renamed == NULL)
        {
          g_set_error (error, HP_ERROR, HP_ERROR_CONFIG, "%s: no name for '%s'",
                       G_OBJECT_TYPE_NAME (adapter), name);
          return NULL;
        }
      hp_state_dict_insert (out, renamed, hp_state_dict_get_tensor (sd, i));
    }
  return g_steal_pointer (&out);
}

/* Renames keys and leaves the file functions to the interface */

#define TEST_TYPE_RENAME_ADAPTER (test_rename_adapter_get_type ())
G_DECLARE_FINAL_TYPE (TestRenameAdapter, test_rename_adapter, TEST, RENAME_ADAPTER, GObject)

static HpStateDict *
test_rename_adapter_to_hf (HpStateDictAdapter  *self,
                           HpStateDict         *sd,
                           GError             **error)
{
  return rename_keys (G_OBJECT (self), sd, 0, 1, error);
}

static HpStateDict *
test_rename_adapter_from_hf (HpStateDictAdapter  *self,
                             HpStateDict         *hf_sd,
                             GError             **error)
{
  return rename_keys (G_OBJECT (self), hf_sd, 1, 0, error);
}

static void
test_rename_adapter_iface_init (HpStateDictAdapterInterface *iface)
{
  iface->to_hf = test_rename_adapter_to_hf;
  iface->from_hf = test_rename_adapter_from_hf;
}

HP_TEST_DEFINE_EMPTY_TYPE_WITH_INTERFACE (TestRenameAdapter, test_rename_adapter,
                                          GObject, G_TYPE_OBJECT,
                                          HP_TYPE_STATE_DICT_ADAPTER,
                                          test_rename_adapter_iface_init)

/* Implements nothing and clears the file functions */

#define TEST_TYPE_BARE_ADAPTER (test_bare_adapter_get_type ())
G_DECLARE_FINAL_TYPE (TestBareAdapter, test_bare_adapter, TEST, BARE_ADAPTER, GObject)

static void
test_bare_adapter_iface_init (HpStateDictAdapterInterface *iface)
{
  iface->load_hf_state_dict = NULL;
  iface->save_hf_state_dict = NULL;
}

HP_TEST_DEFINE_EMPTY_TYPE_WITH_INTERFACE (TestBareAdapter, test_bare_adapter,
                                          GObject, G_TYPE_OBJECT,
                                          HP_TYPE_STATE_DICT_ADAPTER,
                                          test_bare_adapter_iface_init)

/* Keeps "checkpoints" in memory, by path, and records its arguments */

#define TEST_TYPE_MEMORY_ADAPTER (test_memory_adapter_get_type ())
G_DECLARE_FINAL_TYPE (TestMemoryAdapter, test_memory_adapter, TEST, MEMORY_ADAPTER, GObject)

struct _TestMemoryAdapter
{
  GObject parent_instance;

  GHashTable *files;  /* path -> HpStateDict */
  HpBaseModelConfig *last_config;
  HpDType last_dtype;
  guint n_loads;
  guint n_saves;
};

static HpStateDict *
test_memory_adapter_load (HpStateDictAdapter  *adapter,
                          const gchar         *path,
                          HpBaseModelConfig   *model_config,
                          HpDType              dtype,
                          GError             **error)
{
  TestMemoryAdapter *self = TEST_MEMORY_ADAPTER (adapter);
  HpStateDict *sd = g_hash_table_lookup (self->files, path);

  self->n_loads++;
  self->last_config = model_config;
  self->last_dtype = dtype;
  if (sd == NULL)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_IO, "no checkpoint at '%s'", path);
      return NULL;
    }
  return g_object_ref (sd);
}

static gboolean
test_memory_adapter_save (HpStateDictAdapter  *adapter,
                          HpStateDict         *sd,
                          HpBaseModelConfig   *model_config,
                          const gchar         *path,
                          GError             **error)
{
  TestMemoryAdapter *self = TEST_MEMORY_ADAPTER (adapter);

  self->n_saves++;
  self->last_config = model_config;
  g_hash_table_replace (self->files, g_strdup (path), g_object_ref (sd));
  return TRUE;
}

static void
test_memory_adapter_iface_init (HpStateDictAdapterInterface *iface)
{
  iface->to_hf = test_rename_adapter_to_hf;
  iface->from_hf = test_rename_adapter_from_hf;
  iface->load_hf_state_dict = test_memory_adapter_load;
  iface->save_hf_state_dict = test_memory_adapter_save;
}

G_DEFINE_FINAL_TYPE_WITH_CODE (TestMemoryAdapter, test_memory_adapter, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (HP_TYPE_STATE_DICT_ADAPTER,
                                                      test_memory_adapter_iface_init))

static void
test_memory_adapter_finalize (GObject *object)
{
  TestMemoryAdapter *self = TEST_MEMORY_ADAPTER (object);

  g_hash_table_unref (self->files);

  G_OBJECT_CLASS (test_memory_adapter_parent_class)->finalize (object);
}

static void
test_memory_adapter_class_init (TestMemoryAdapterClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = test_memory_adapter_finalize;
}

static void
test_memory_adapter_init (TestMemoryAdapter *self)
{
  self->files = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_object_unref);
  self->last_dtype = HP_DTYPE_INT64;
}

/* Breaks the contract: results without errors, objects of the wrong
 * type */

#define TEST_TYPE_BROKEN_ADAPTER (test_broken_adapter_get_type ())
G_DECLARE_FINAL_TYPE (TestBrokenAdapter, test_broken_adapter, TEST, BROKEN_ADAPTER, GObject)

static HpStateDict *
test_broken_adapter_to_hf (HpStateDictAdapter  *self,
                           HpStateDict         *sd,
                           GError             **error)
{
  return NULL;
}

static HpStateDict *
test_broken_adapter_from_hf (HpStateDictAdapter  *self,
                             HpStateDict         *hf_sd,
                             GError             **error)
{
  return (HpStateDict *) hp_named_placement_new ();
}

static HpStateDict *
test_broken_adapter_load (HpStateDictAdapter  *self,
                          const gchar         *path,
                          HpBaseModelConfig   *model_config,
                          HpDType              dtype,
                          GError             **error)
{
  return NULL;
}

static gboolean
test_broken_adapter_save (HpStateDictAdapter  *self,
                          HpStateDict         *sd,
                          HpBaseModelConfig   *model_config,
                          const gchar         *path,
                          GError             **error)
{
  return FALSE;
}

static void
test_broken_adapter_iface_init (HpStateDictAdapterInterface *iface)
{
  iface->to_hf = test_broken_adapter_to_hf;
  iface->from_hf = test_broken_adapter_from_hf;
  iface->load_hf_state_dict = test_broken_adapter_load;
  iface->save_hf_state_dict = test_broken_adapter_save;
}

HP_TEST_DEFINE_EMPTY_TYPE_WITH_INTERFACE (TestBrokenAdapter, test_broken_adapter,
                                          GObject, G_TYPE_OBJECT,
                                          HP_TYPE_STATE_DICT_ADAPTER,
                                          test_broken_adapter_iface_init)

/* A model state dict: tok_embeddings.weight [3, 2], norm.weight [2],
 * output.weight [3, 2] */
static HpStateDict *
model_state_dict (void)
{
  HpStateDict *sd = hp_state_dict_new ();
  g_autoptr(HpTensor) emb = hp_test_tensor (HP_DTYPE_FLOAT32, HP_TEST_DATA (1, 2, 3, 4, 5, 6),
                                            HP_TEST_SHAPE (3, 2));
  g_autoptr(HpTensor) norm = hp_test_tensor (HP_DTYPE_FLOAT32, HP_TEST_DATA (1, 1),
                                             HP_TEST_SHAPE (2));
  g_autoptr(HpTensor) out = hp_test_tensor (HP_DTYPE_FLOAT32, HP_TEST_DATA (6, 5, 4, 3, 2, 1),
                                            HP_TEST_SHAPE (3, 2));

  hp_state_dict_insert (sd, "tok_embeddings.weight", emb);
  hp_state_dict_insert (sd, "norm.weight", norm);
  hp_state_dict_insert (sd, "output.weight", out);
  return sd;
}

static void
assert_names (HpStateDict *sd,
              const gchar *expected)
{
  g_auto(GStrv) names = hp_state_dict_get_names (sd);
  g_autofree gchar *joined = g_strjoinv (",", names);

  g_assert_cmpstr (joined, ==, expected);
}

static void
test_rename (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpStateDictAdapter) adapter = g_object_new (TEST_TYPE_RENAME_ADAPTER, NULL);
  g_autoptr(HpStateDict) sd = model_state_dict ();
  g_autoptr(HpStateDict) hf = NULL;
  g_autoptr(HpStateDict) back = NULL;
  g_autoptr(HpStateDict) odd = hp_state_dict_new ();
  g_autofree gchar *sd_before = NULL;
  g_autofree gchar *hf_before = NULL;
  g_autofree gchar *sd_after = NULL;
  g_autofree gchar *hf_after = NULL;

  g_assert_true (HP_IS_STATE_DICT_ADAPTER (adapter));
  g_assert_true (g_type_is_a (TEST_TYPE_RENAME_ADAPTER, HP_TYPE_STATE_DICT_ADAPTER));

  hf = hp_state_dict_adapter_to_hf (adapter, sd, &error);
  g_assert_no_error (error);
  assert_names (hf, "model.embed_tokens.weight,model.norm.weight,lm_head.weight");
  g_assert_true (hp_state_dict_lookup (hf, "model.embed_tokens.weight") ==
                 hp_state_dict_lookup (sd, "tok_embeddings.weight"));
  g_assert_true (hp_state_dict_lookup (hf, "lm_head.weight") ==
                 hp_state_dict_lookup (sd, "output.weight"));
  /* the input is left as it was */
  assert_names (sd, "tok_embeddings.weight,norm.weight,output.weight");

  back = hp_state_dict_adapter_from_hf (adapter, hf, &error);
  g_assert_no_error (error);
  assert_names (back, "tok_embeddings.weight,norm.weight,output.weight");
  hp_test_assert_values (hp_state_dict_lookup (back, "output.weight"),
                         HP_TEST_DATA (6, 5, 4, 3, 2, 1), HP_TEST_SHAPE (3, 2), 0, 0);
  assert_names (hf, "model.embed_tokens.weight,model.norm.weight,lm_head.weight");

  /* the implementation's errors come through, the dicts given as they
   * were; an empty dict converts to an empty dict */
  sd_before = hp_test_state_dict_snapshot (sd);
  hf_before = hp_test_state_dict_snapshot (hf);
  hp_test_assert_error (hp_state_dict_adapter_from_hf (adapter, sd, &error), &error,
                        HP_ERROR_CONFIG, "TestRenameAdapter: no name for 'tok_embeddings.weight'");
  hp_test_assert_error (hp_state_dict_adapter_to_hf (adapter, hf, &error), &error,
                        HP_ERROR_CONFIG, "TestRenameAdapter: no name for 'model.embed_tokens.weight'");
  sd_after = hp_test_state_dict_snapshot (sd);
  hf_after = hp_test_state_dict_snapshot (hf);
  g_assert_cmpstr (sd_after, ==, sd_before);
  g_assert_cmpstr (hf_after, ==, hf_before);
  g_clear_object (&back);
  back = hp_state_dict_adapter_to_hf (adapter, odd, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (hp_state_dict_get_size (back), ==, 0);
}

static void
test_default_files (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpStateDictAdapter) adapter = g_object_new (TEST_TYPE_RENAME_ADAPTER, NULL);
  g_autoptr(HpStateDict) sd = model_state_dict ();
  g_autoptr(HpBaseModelConfig) config = g_object_new (HP_TYPE_BASE_MODEL_CONFIG, NULL);
  g_autofree gchar *dir = g_dir_make_tmp ("hp-adapter-XXXXXX", &error);
  g_autofree gchar *in = NULL;
  g_autofree gchar *out = NULL;
  g_autofree gchar *in_message = NULL;
  g_autofree gchar *out_message = NULL;
  g_autofree gchar *sd_before = hp_test_state_dict_snapshot (sd);
  g_autofree gchar *sd_after = NULL;

  g_assert_no_error (error);
  in = g_build_filename (dir, "llama", NULL);
  out = g_build_filename (dir, "out", NULL);
  in_message = g_strdup_printf ("TestRenameAdapter cannot load the Hugging Face checkpoint '%s': "
                                "reading safetensors files is not available yet (it comes with "
                                "checkpoint support)", in);
  out_message = g_strdup_printf ("TestRenameAdapter cannot save the Hugging Face checkpoint '%s': "
                                 "writing safetensors files is not available yet (it comes with "
                                 "checkpoint support)", out);

  hp_test_assert_error (hp_state_dict_adapter_load_hf_state_dict (adapter, in, config,
                                                                  HP_DTYPE_FLOAT32, &error),
                        &error, HP_ERROR_NOT_SUPPORTED, in_message);
  hp_test_assert_error (GINT_TO_POINTER (hp_state_dict_adapter_save_hf_state_dict (adapter, sd, NULL,
                                                                                   out, &error)),
                        &error, HP_ERROR_NOT_SUPPORTED, out_message);

  /* nothing written, the state dict as it was */
  g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (in, G_FILE_TEST_EXISTS));
  g_assert_cmpint (g_rmdir (dir), ==, 0);
  sd_after = hp_test_state_dict_snapshot (sd);
  g_assert_cmpstr (sd_after, ==, sd_before);
}

static void
test_unimplemented (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpStateDictAdapter) adapter = g_object_new (TEST_TYPE_BARE_ADAPTER, NULL);
  g_autoptr(HpStateDict) sd = model_state_dict ();

  hp_test_assert_error (hp_state_dict_adapter_to_hf (adapter, sd, &error), &error,
                        HP_ERROR_NOT_SUPPORTED, "TestBareAdapter does not implement to_hf");
  hp_test_assert_error (hp_state_dict_adapter_from_hf (adapter, sd, &error), &error,
                        HP_ERROR_NOT_SUPPORTED, "TestBareAdapter does not implement from_hf");
  /* file functions cleared by the implementation fall back to the
   * defaults */
  hp_test_assert_error (hp_state_dict_adapter_load_hf_state_dict (adapter, "ckpt", NULL,
                                                                  HP_DTYPE_FLOAT64, &error),
                        &error, HP_ERROR_NOT_SUPPORTED,
                        "TestBareAdapter cannot load the Hugging Face checkpoint 'ckpt'");
  hp_test_assert_error (GINT_TO_POINTER (hp_state_dict_adapter_save_hf_state_dict (adapter, sd, NULL,
                                                                                   "ckpt", &error)),
                        &error, HP_ERROR_NOT_SUPPORTED,
                        "TestBareAdapter cannot save the Hugging Face checkpoint 'ckpt'");
  assert_names (sd, "tok_embeddings.weight,norm.weight,output.weight");
}

static void
test_own_files (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TestMemoryAdapter) memory = g_object_new (TEST_TYPE_MEMORY_ADAPTER, NULL);
  HpStateDictAdapter *adapter = HP_STATE_DICT_ADAPTER (memory);
  g_autoptr(HpStateDict) sd = model_state_dict ();
  g_autoptr(HpStateDict) hf = NULL;
  g_autoptr(HpStateDict) loaded = NULL;
  g_autoptr(HpStateDict) back = NULL;
  g_autoptr(HpBaseModelConfig) config = g_object_new (HP_TYPE_BASE_MODEL_CONFIG, NULL);
  gboolean ok;

  /* save = to_hf + write; load = read + from_hf */
  hf = hp_state_dict_adapter_to_hf (adapter, sd, &error);
  g_assert_no_error (error);
  ok = hp_state_dict_adapter_save_hf_state_dict (adapter, hf, config, "/ckpt/a", &error);
  g_assert_no_error (error);
  g_assert_true (ok);
  g_assert_cmpuint (memory->n_saves, ==, 1);
  g_assert_true (memory->last_config == config);

  loaded = hp_state_dict_adapter_load_hf_state_dict (adapter, "/ckpt/a", NULL, HP_DTYPE_FLOAT64,
                                                     &error);
  g_assert_no_error (error);
  g_assert_cmpuint (memory->n_loads, ==, 1);
  g_assert_null (memory->last_config);
  g_assert_cmpint (memory->last_dtype, ==, HP_DTYPE_FLOAT64);
  assert_names (loaded, "model.embed_tokens.weight,model.norm.weight,lm_head.weight");
  back = hp_state_dict_adapter_from_hf (adapter, loaded, &error);
  g_assert_no_error (error);
  assert_names (back, "tok_embeddings.weight,norm.weight,output.weight");
  hp_test_assert_values (hp_state_dict_lookup (back, "tok_embeddings.weight"),
                         HP_TEST_DATA (1, 2, 3, 4, 5, 6), HP_TEST_SHAPE (3, 2), 0, 0);

  /* the implementation's own error; the checkpoints kept as they were */
  hp_test_assert_error (hp_state_dict_adapter_load_hf_state_dict (adapter, "/ckpt/b", config,
                                                                  HP_DTYPE_FLOAT32, &error),
                        &error, HP_ERROR_IO, "no checkpoint at '/ckpt/b'");
  g_assert_cmpuint (g_hash_table_size (memory->files), ==, 1);
  g_assert_cmpuint (memory->n_saves, ==, 1);
  g_assert_cmpuint (memory->n_loads, ==, 2);
  g_assert_true (memory->last_config == config);
  g_assert_cmpint (memory->last_dtype, ==, HP_DTYPE_FLOAT32);
}

static void
test_broken (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpStateDictAdapter) adapter = g_object_new (TEST_TYPE_BROKEN_ADAPTER, NULL);
  g_autoptr(HpStateDict) sd = model_state_dict ();
  g_autofree gchar *before = hp_test_state_dict_snapshot (sd);
  g_autofree gchar *after = NULL;

  hp_test_assert_error (hp_state_dict_adapter_to_hf (adapter, sd, &error), &error,
                        HP_ERROR_STATE, "TestBrokenAdapter.to_hf returned no state dict and no error");
  hp_test_assert_error (hp_state_dict_adapter_from_hf (adapter, sd, &error), &error,
                        HP_ERROR_STATE,
                        "TestBrokenAdapter.from_hf returned a HpNamedPlacement, which is not a HpStateDict");
  hp_test_assert_error (hp_state_dict_adapter_load_hf_state_dict (adapter, "ckpt", NULL,
                                                                  HP_DTYPE_FLOAT32, &error),
                        &error, HP_ERROR_STATE,
                        "TestBrokenAdapter.load_hf_state_dict returned no state dict and no error");
  hp_test_assert_error (GINT_TO_POINTER (hp_state_dict_adapter_save_hf_state_dict (adapter, sd, NULL,
                                                                                   "ckpt", &error)),
                        &error, HP_ERROR_STATE,
                        "TestBrokenAdapter.save_hf_state_dict failed without an error");
  after = hp_test_state_dict_snapshot (sd);
  g_assert_cmpstr (after, ==, before);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/state-dict-adapter/rename", test_rename);
  g_test_add_func ("/state-dict-adapter/default-files", test_default_files);
  g_test_add_func ("/state-dict-adapter/unimplemented", test_unimplemented);
  g_test_add_func ("/state-dict-adapter/own-files", test_own_files);
  g_test_add_func ("/state-dict-adapter/broken", test_broken);

  return g_test_run ();
}
