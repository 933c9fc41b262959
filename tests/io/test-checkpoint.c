/* test-checkpoint.c: step directories with a manifest, put in place in
 * one step, and refused when their files do not belong together
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <glib/gstdio.h>
#include <string.h>

#include "hp-test-utils.h"

typedef struct
{
  gchar *folder;
  HpCheckpointManager *manager;
} Fixture;

static void
fixture_set_up (Fixture       *fixture,
                gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree gchar *tmp = g_dir_make_tmp ("hp-checkpoint-XXXXXX", &error);

  g_assert_no_error (error);
  fixture->folder = g_build_filename (tmp, "checkpoint", NULL);
  fixture->manager = hp_checkpoint_manager_new (fixture->folder);
}

static void
fixture_tear_down (Fixture       *fixture,
                   gconstpointer  data)
{
  g_autofree gchar *tmp = g_path_get_dirname (fixture->folder);

  g_object_unref (fixture->manager);
  hp_test_remove_tree (tmp);
  g_free (fixture->folder);
}

static void
write_file (const gchar *dir,
            const gchar *name,
            const gchar *contents)
{
  g_autoptr(GError) error = NULL;
  g_autofree gchar *path = g_build_filename (dir, name, NULL);

  g_file_set_contents (path, contents, -1, &error);
  g_assert_no_error (error);
}

/* Saves step @step with files a.bin and b.bin holding "@tag a"/"@tag b" */
static void
save_step (Fixture     *fixture,
           gint64       step,
           const gchar *tag)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpCheckpointStep) staged = hp_checkpoint_manager_stage (fixture->manager, step, &error);
  g_autofree gchar *a = g_strdup_printf ("%s a", tag);
  g_autofree gchar *b = g_strdup_printf ("%s b", tag);

  g_assert_no_error (error);
  g_assert_false (hp_checkpoint_step_get_complete (staged));
  write_file (hp_checkpoint_step_get_path (staged), "a.bin", a);
  write_file (hp_checkpoint_step_get_path (staged), "b.bin", b);
  hp_checkpoint_step_set_metadata (staged, "data-position", tag);
  g_assert_true (hp_checkpoint_manager_commit (fixture->manager, staged, &error));
  g_assert_no_error (error);
  g_assert_true (hp_checkpoint_step_get_complete (staged));
}

static gchar *
step_dir (Fixture *fixture,
          gint64   step)
{
  g_autofree gchar *name = g_strdup_printf ("step-%" G_GINT64_FORMAT, step);

  return g_build_filename (fixture->folder, name, NULL);
}

static void
assert_steps (Fixture      *fixture,
              const gint64 *expected,
              guint         n_expected)
{
  guint n = 0;
  g_autofree gint64 *steps = hp_checkpoint_manager_list_steps (fixture->manager, &n);

  g_assert_cmpmem (steps, n * sizeof (gint64), expected, n_expected * sizeof (gint64));
}

static guint
count_entries (const gchar *path)
{
  g_autoptr(GDir) dir = g_dir_open (path, 0, NULL);
  guint n = 0;

  while (dir != NULL && g_dir_read_name (dir) != NULL)
    n++;
  return n;
}

static void
test_save_and_open (Fixture       *fixture,
                    gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpCheckpointStep) latest = NULL;
  g_auto(GStrv) names = NULL;
  g_autofree gchar *a = NULL;
  g_autofree gchar *contents = NULL;
  g_autofree gchar *dir = step_dir (fixture, 7);

  assert_steps (fixture, NULL, 0);
  hp_test_assert_error (hp_checkpoint_manager_open_latest (fixture->manager, &error), &error,
                        HP_ERROR_IO, "no complete checkpoint");
  save_step (fixture, 3, "three");
  save_step (fixture, 7, "seven");
  assert_steps (fixture, (gint64[]) { 3, 7 }, 2);
  /* the two steps and nothing else: no staging directory is left */
  g_assert_cmpuint (count_entries (fixture->folder), ==, 2);

  latest = hp_checkpoint_manager_open_latest (fixture->manager, &error);
  g_assert_no_error (error);
  g_assert_cmpint (hp_checkpoint_step_get_step (latest), ==, 7);
  g_assert_true (hp_checkpoint_step_get_complete (latest));
  g_assert_cmpstr (hp_checkpoint_step_get_path (latest), ==, dir);
  names = hp_checkpoint_step_get_file_names (latest);
  g_assert_cmpstrv (names, ((const gchar *[]) { "a.bin", "b.bin", NULL }));
  g_assert_cmpstr (g_hash_table_lookup (hp_checkpoint_step_get_metadata (latest), "data-position"),
                   ==, "seven");
  a = hp_checkpoint_step_get_file (latest, "a.bin", &error);
  g_assert_no_error (error);
  g_assert_true (g_file_get_contents (a, &contents, NULL, NULL));
  g_assert_cmpstr (contents, ==, "seven a");
  hp_test_assert_error (hp_checkpoint_step_get_file (latest, "c.bin", &error), &error,
                        HP_ERROR_IO, "no file 'c.bin'");

  /* steps are never overwritten */
  hp_test_assert_error (hp_checkpoint_manager_stage (fixture->manager, 7, &error), &error,
                        HP_ERROR_IO, "never overwritten");
  hp_test_assert_error (hp_checkpoint_manager_stage (fixture->manager, -1, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT, "step -1");
}

static void
test_keep (Fixture       *fixture,
           gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpCheckpointStep) crashed = NULL;
  g_autofree gchar *hand_made = step_dir (fixture, 9);

  hp_checkpoint_manager_set_keep (fixture->manager, 2);
  g_assert_cmpuint (hp_checkpoint_manager_get_keep (fixture->manager), ==, 2);
  save_step (fixture, 1, "one");
  save_step (fixture, 2, "two");
  /* a save that never finished, and a directory named like a step
   * without a manifest: neither is a step */
  crashed = hp_checkpoint_manager_stage (fixture->manager, 3, &error);
  g_assert_no_error (error);
  write_file (hp_checkpoint_step_get_path (crashed), "a.bin", "half");
  g_assert_cmpint (g_mkdir (hand_made, 0777), ==, 0);
  assert_steps (fixture, (gint64[]) { 1, 2 }, 2);

  save_step (fixture, 4, "four");
  assert_steps (fixture, (gint64[]) { 2, 4 }, 2);
  /* steps 2 and 4 and the hand-made step-9: the crashed staging is gone */
  g_assert_false (g_file_test (hp_checkpoint_step_get_path (crashed), G_FILE_TEST_EXISTS));
  g_assert_cmpuint (count_entries (fixture->folder), ==, 3);
  {
    g_autoptr(HpCheckpointStep) latest = hp_checkpoint_manager_open_latest (fixture->manager, &error);

    g_assert_no_error (error);
    g_assert_cmpint (hp_checkpoint_step_get_step (latest), ==, 4);
  }
  hp_test_assert_error (hp_checkpoint_step_open (hand_made, &error), &error,
                        HP_ERROR_IO, "is not a complete checkpoint");
  hp_test_assert_error (hp_checkpoint_step_open (hp_checkpoint_step_get_path (crashed), &error),
                        &error, HP_ERROR_IO, "no such directory");
}

static void
test_failed_commit (Fixture       *fixture,
                    gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpCheckpointStep) staged = NULL;
  g_autofree gchar *sub = NULL;
  g_autofree gchar *staging = NULL;
  g_autofree gchar *dir = step_dir (fixture, 5);

  save_step (fixture, 1, "one");
  staged = hp_checkpoint_manager_stage (fixture->manager, 5, &error);
  g_assert_no_error (error);
  staging = g_strdup (hp_checkpoint_step_get_path (staged));
  write_file (staging, "a.bin", "five a");
  sub = g_build_filename (staging, "sub", NULL);
  g_assert_cmpint (g_mkdir (sub, 0777), ==, 0);
  g_assert_false (hp_checkpoint_manager_commit (fixture->manager, staged, &error));
  g_assert_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "regular files"));
  g_clear_error (&error);
  /* still staged, and the folder's steps as they were */
  g_assert_false (hp_checkpoint_step_get_complete (staged));
  g_assert_false (g_file_test (dir, G_FILE_TEST_EXISTS));
  assert_steps (fixture, (gint64[]) { 1 }, 1);

  g_assert_cmpint (g_rmdir (sub), ==, 0);
  hp_checkpoint_manager_discard (fixture->manager, staged);
  g_assert_false (g_file_test (staging, G_FILE_TEST_EXISTS));
  assert_steps (fixture, (gint64[]) { 1 }, 1);
}

static void
replace_file (Fixture     *fixture,
              gint64       step,
              const gchar *name,
              const gchar *contents)
{
  g_autofree gchar *dir = step_dir (fixture, step);

  write_file (dir, name, contents);
}

static void
assert_refused (Fixture     *fixture,
                gint         code,
                const gchar *message_part)
{
  g_autoptr(GError) error = NULL;

  hp_test_assert_error (hp_checkpoint_manager_open_latest (fixture->manager, &error), &error,
                        code, message_part);
}

static void
test_mismatched_files (Fixture       *fixture,
                       gconstpointer  data)
{
  g_autofree gchar *dir = step_dir (fixture, 2);
  g_autofree gchar *b = g_build_filename (dir, "b.bin", NULL);
  g_autofree gchar *message = NULL;

  save_step (fixture, 1, "one");
  save_step (fixture, 2, "two");

  /* a file of step 1 in step 2, hand-mixed: same size, other bytes */
  replace_file (fixture, 2, "b.bin", "one b");
  message = g_strdup_printf ("%s: its SHA-256 differs", b);
  assert_refused (fixture, HP_ERROR_FORMAT, message);
  g_clear_pointer (&message, g_free);
  /* cut short */
  replace_file (fixture, 2, "b.bin", "tw");
  message = g_strdup_printf ("%s: 2 bytes, but", b);
  assert_refused (fixture, HP_ERROR_FORMAT, message);
  g_clear_pointer (&message, g_free);
  /* missing */
  g_assert_cmpint (g_unlink (b), ==, 0);
  message = g_strdup_printf ("%s: missing", b);
  assert_refused (fixture, HP_ERROR_IO, message);
  /* the newest step is refused, not replaced by an older one */
  {
    g_autoptr(GError) error = NULL;
    g_autoptr(HpCheckpointStep) first = hp_checkpoint_manager_open_step (fixture->manager, 1, &error);

    g_assert_no_error (error);
    g_assert_cmpint (hp_checkpoint_step_get_step (first), ==, 1);
  }
}

static void
test_bad_manifests (Fixture       *fixture,
                    gconstpointer  data)
{
  static const struct
  {
    const gchar *manifest;
    const gchar *message;
  } cases[] = {
    { "[]", "not a JSON object" },
    { "{\"format\": \"hp-checkpoint\", \"version\": 1, \"step\": 1, \"files\": [], \"x\": 1}",
      "unknown member 'x'" },
    { "{\"format\": \"other\", \"version\": 1, \"step\": 1, \"files\": []}", "'format'" },
    { "{\"format\": \"hp-checkpoint\", \"version\": 2, \"step\": 1, \"files\": []}", "'version' is not 1" },
    { "{\"format\": \"hp-checkpoint\", \"version\": 1, \"step\": -1, \"files\": []}", "'step'" },
    { "{\"format\": \"hp-checkpoint\", \"version\": 1, \"step\": 1}", "'files' is not an array" },
    { "{\"format\": \"hp-checkpoint\", \"version\": 1, \"step\": 1, \"metadata\": {\"k\": 1}, "
      "\"files\": []}", "metadata 'k' is not a string" },
    { "{\"format\": \"hp-checkpoint\", \"version\": 1, \"step\": 1, \"files\": "
      "[{\"name\": \"../a.bin\", \"size\": 5, \"sha256\": \"" "00000000000000000000000000000000"
      "00000000000000000000000000000000" "\"}]}", "files[0] is not" },
    { "{\"format\": \"hp-checkpoint\", \"version\": 1, \"step\": 1, \"files\": "
      "[{\"name\": \"a.bin\", \"size\": 5, \"sha256\": \"abc\"}]}", "files[0] is not" },
    { "{\"format\": \"hp-checkpoint\", \"version\": 1, \"step\": 1,", "not valid JSON" },
    /* a well-formed manifest of another step under step-1 */
    { "{\"format\": \"hp-checkpoint\", \"version\": 1, \"step\": 2, \"files\": []}",
      "the manifest is of step 2" },
  };

  save_step (fixture, 1, "one");
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      replace_file (fixture, 1, "manifest.json", cases[i].manifest);
      assert_refused (fixture, HP_ERROR_FORMAT, cases[i].message);
    }
}

static void
test_files_listed_twice (Fixture       *fixture,
                         gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree gchar *dir = step_dir (fixture, 1);
  g_autofree gchar *manifest = g_build_filename (dir, "manifest.json", NULL);
  g_autofree gchar *text = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  JsonObject *root;
  JsonArray *files;

  save_step (fixture, 1, "one");
  g_assert_true (json_parser_load_from_file (parser, manifest, &error));
  root = json_node_get_object (json_parser_get_root (parser));
  files = json_object_get_array_member (root, "files");
  json_array_add_element (files, json_node_copy (json_array_get_element (files, 0)));
  json_generator_set_root (generator, json_parser_get_root (parser));
  text = json_generator_to_data (generator, NULL);
  replace_file (fixture, 1, "manifest.json", text);
  assert_refused (fixture, HP_ERROR_FORMAT, "'a.bin' is listed twice");
}

int
main (int    argc,
      char **argv)
{
  hp_test_init (&argc, &argv);
  g_test_add ("/checkpoint/save-and-open", Fixture, NULL,
              fixture_set_up, test_save_and_open, fixture_tear_down);
  g_test_add ("/checkpoint/keep", Fixture, NULL,
              fixture_set_up, test_keep, fixture_tear_down);
  g_test_add ("/checkpoint/failed-commit", Fixture, NULL,
              fixture_set_up, test_failed_commit, fixture_tear_down);
  g_test_add ("/checkpoint/mismatched-files", Fixture, NULL,
              fixture_set_up, test_mismatched_files, fixture_tear_down);
  g_test_add ("/checkpoint/bad-manifests", Fixture, NULL,
              fixture_set_up, test_bad_manifests, fixture_tear_down);
  g_test_add ("/checkpoint/files-listed-twice", Fixture, NULL,
              fixture_set_up, test_files_listed_twice, fixture_tear_down);
  return g_test_run ();
}
