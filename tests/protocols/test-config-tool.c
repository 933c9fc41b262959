/* test-config-tool.c: HpConfigTool in a process of its own, without
 * GObject introspection: load options, what it prints and its exit
 * statuses, several runs in one process
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The commands themselves are tested through both programs that run the
 * tool, hp-config and python3 -m hp_config (tests/tools).
 */

#include <glib/gstdio.h>
#include <stdio.h>
#include <unistd.h>

#include "hp-test-utils.h"

/* low and high: a range whose validate wants low <= high */
#define TEST_TYPE_SPAN_CONFIG (test_span_config_get_type ())
G_DECLARE_FINAL_TYPE (TestSpanConfig, test_span_config, TEST, SPAN_CONFIG, HpConfig)

struct _TestSpanConfig
{
  HpConfig parent_instance;

  gint low;
  gint high;
};

G_DEFINE_FINAL_TYPE (TestSpanConfig, test_span_config, HP_TYPE_CONFIG)

static const HpConfigField span_fields[] = {
  HP_CONFIG_FIELD_INT (TestSpanConfig, low, "low", "Lowest value", 0, 100, 1),
  HP_CONFIG_FIELD_INT (TestSpanConfig, high, "high", "Highest value", 0, 100, 10),
};

static gboolean
test_span_config_validate (HpConfig  *config,
                           GError   **error)
{
  TestSpanConfig *self = TEST_SPAN_CONFIG (config);

  if (!HP_CONFIG_CLASS (test_span_config_parent_class)->validate (config, error))
    return FALSE;
  if (self->low > self->high)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG, "low %d is above high %d", self->low, self->high);
      return FALSE;
    }
  return TRUE;
}

static void
test_span_config_class_init (TestSpanConfigClass *klass)
{
  HP_CONFIG_CLASS (klass)->validate = test_span_config_validate;
  hp_config_class_install_fields (HP_CONFIG_CLASS (klass), span_fields, G_N_ELEMENTS (span_fields));
}

static void
test_span_config_init (TestSpanConfig *self)
{
}

/* What a run printed and gave */
typedef struct
{
  gint status;
  gchar *out;
  gchar *err;
} Run;

static void
run_clear (Run *run)
{
  g_clear_pointer (&run->out, g_free);
  g_clear_pointer (&run->err, g_free);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Run, run_clear)

static gchar *
read_back (gint fd)
{
  g_autoptr(GString) text = g_string_new (NULL);
  gchar buffer[4096];
  gssize n;

  g_assert_cmpint (lseek (fd, 0, SEEK_SET), ==, 0);
  while ((n = read (fd, buffer, sizeof buffer)) > 0)
    g_string_append_len (text, buffer, n);
  g_assert_cmpint (n, ==, 0);
  close (fd);
  return g_string_free (g_steal_pointer (&text), FALSE);
}

/* Runs @tool on @args with the standard output and error going to
 * files, and reads them back */
static void
run_tool (HpConfigTool        *tool,
          const gchar * const *args,
          Run                 *run)
{
  g_autoptr(GError) error = NULL;
  g_autofree gchar *out_path = NULL;
  g_autofree gchar *err_path = NULL;
  gint out_fd = g_file_open_tmp ("test-config-tool-XXXXXX", &out_path, &error);
  gint err_fd = g_file_open_tmp ("test-config-tool-XXXXXX", &err_path, &error);
  gint saved_out = dup (STDOUT_FILENO);
  gint saved_err = dup (STDERR_FILENO);

  g_assert_no_error (error);
  fflush (stdout);
  fflush (stderr);
  g_assert_cmpint (dup2 (out_fd, STDOUT_FILENO), ==, STDOUT_FILENO);
  g_assert_cmpint (dup2 (err_fd, STDERR_FILENO), ==, STDERR_FILENO);
  run->status = hp_config_tool_run (tool, args);
  fflush (stdout);
  fflush (stderr);
  dup2 (saved_out, STDOUT_FILENO);
  dup2 (saved_err, STDERR_FILENO);
  close (saved_out);
  close (saved_err);
  run->out = read_back (out_fd);
  run->err = read_back (err_fd);
  g_unlink (out_path);
  g_unlink (err_path);
}

/* The values each call of the load function got, joined by commas */
typedef struct
{
  GPtrArray *calls;
  gboolean fail_usage;
  gboolean fail;
  gboolean destroyed;
} Loads;

static gboolean
record_load (HpConfigTool        *tool,
             const gchar * const *values,
             gpointer             user_data,
             GError             **error)
{
  Loads *loads = user_data;

  g_assert_true (HP_IS_CONFIG_TOOL (tool));
  g_ptr_array_add (loads->calls, g_strjoinv (",", (gchar **) values));
  if (loads->fail_usage)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--load: not like that");
      return FALSE;
    }
  if (loads->fail)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_NOT_SUPPORTED, "--load %s: cannot load it", values[0]);
      return FALSE;
    }
  return TRUE;
}

static void
loads_destroyed (gpointer data)
{
  ((Loads *) data)->destroyed = TRUE;
}

static HpConfigTool *
new_tool (Loads *loads)
{
  HpConfigTool *tool = hp_config_tool_new ();

  loads->calls = g_ptr_array_new_with_free_func (g_free);
  hp_config_tool_add_load_option (tool, "load", 'l', "Load MODULE", "MODULE", record_load, loads,
                                  loads_destroyed);
  return tool;
}

static void
test_load_options (void)
{
  Loads loads = { 0 };
  g_autoptr(HpConfigTool) tool = new_tool (&loads);
  g_auto(Run) run = { 0 };
  g_auto(Run) listed = { 0 };

  g_type_ensure (TEST_TYPE_SPAN_CONFIG);
  /* before and after the command, long and short, in order */
  run_tool (tool, (const gchar *[]) { "--load", "a", "types", "-l", "b", "--load=c", NULL }, &run);
  g_assert_cmpint (run.status, ==, 0);
  g_assert_cmpstr (run.err, ==, "");
  g_assert_cmpuint (loads.calls->len, ==, 1);
  g_assert_cmpstr (g_ptr_array_index (loads.calls, 0), ==, "a,b,c");
  /* the types the process has registered, and no other */
  g_assert_cmpstr (run.out, ==, "TestSpanConfig\n");

  /* not given: called with none; each run has its own values */
  run_tool (tool, (const gchar *[]) { "types", NULL }, &listed);
  g_assert_cmpint (listed.status, ==, 0);
  g_assert_cmpstr (listed.out, ==, run.out);
  g_assert_cmpuint (loads.calls->len, ==, 2);
  g_assert_cmpstr (g_ptr_array_index (loads.calls, 1), ==, "");
  run_clear (&run);

  /* nothing is loaded for the help, the version or a usage error */
  run_tool (tool, (const gchar *[]) { "--load", "a", "--help", NULL }, &run);
  g_assert_cmpint (run.status, ==, 0);
  g_assert_nonnull (strstr (run.out, "-l, --load=MODULE"));
  run_clear (&run);
  run_tool (tool, (const gchar *[]) { "--version", NULL }, &run);
  g_assert_true (g_str_has_prefix (run.out, "hp-config "));
  run_clear (&run);
  run_tool (tool, (const gchar *[]) { "-l", "a", "show", NULL }, &run);
  g_assert_cmpint (run.status, ==, 2);
  run_clear (&run);
  run_tool (tool, (const gchar *[]) { "help", "new", NULL }, &run);
  g_assert_nonnull (strstr (run.out, "--load=MODULE"));
  g_assert_cmpuint (loads.calls->len, ==, 2);
  run_clear (&run);

  /* an error of the load function is the command's */
  loads.fail = TRUE;
  run_tool (tool, (const gchar *[]) { "types", "--load", "x", NULL }, &run);
  g_assert_cmpint (run.status, ==, 1);
  g_assert_cmpstr (run.out, ==, "");
  g_assert_cmpstr (run.err, ==, "hp-config types: --load x: cannot load it\n");
  run_clear (&run);
  run_tool (tool, (const gchar *[]) { "diff", "a.json", "b.json", "--load", "x", NULL }, &run);
  g_assert_cmpint (run.status, ==, 2);
  run_clear (&run);
  /* in G_OPTION_ERROR, a usage error */
  loads.fail_usage = TRUE;
  run_tool (tool, (const gchar *[]) { "types", NULL }, &run);
  g_assert_cmpint (run.status, ==, 2);
  g_assert_cmpstr (run.err, ==, "hp-config types: --load: not like that (see hp-config types --help)\n");

  g_clear_object (&tool);
  g_assert_true (loads.destroyed);
  g_ptr_array_unref (loads.calls);
}

static void
test_help (void)
{
  g_autoptr(HpConfigTool) tool = hp_config_tool_new ();
  g_auto(Run) plain = { 0 };
  g_auto(Run) described = { 0 };
  g_auto(Run) command = { 0 };
  g_auto(Run) via_help = { 0 };

  g_assert_null (hp_config_tool_get_description (tool));
  run_tool (tool, (const gchar *[]) { "--help", NULL }, &plain);
  g_assert_cmpint (plain.status, ==, 0);
  g_assert_true (g_str_has_prefix (plain.out, "Usage:\n  hp-config [OPTION…] COMMAND [ARGUMENT…]\n"));
  g_assert_nonnull (strstr (plain.out, "  validate  Check configuration files\n"));
  g_assert_nonnull (strstr (plain.out, "are its fields.\n\nExit status: "));

  hp_config_tool_set_description (tool, "The types come from nowhere.");
  g_assert_cmpstr (hp_config_tool_get_description (tool), ==, "The types come from nowhere.");
  run_tool (tool, (const gchar *[]) { "-h", NULL }, &described);
  g_assert_nonnull (strstr (described.out, "are its fields.\n\nThe types come from nowhere.\n\nExit status: "));

  run_tool (tool, (const gchar *[]) { "set", "--help", NULL }, &command);
  run_tool (tool, (const gchar *[]) { "help", "set", NULL }, &via_help);
  g_assert_cmpint (command.status, ==, 0);
  g_assert_true (g_str_has_prefix (command.out, "Usage:\n  hp-config set [OPTION…] FILE PATH=VALUE…\n"));
  g_assert_cmpstr (via_help.out, ==, command.out);
}

/* Commands on files, several runs in one process; the program name is
 * the tool's while it runs only */
static void
test_commands (void)
{
  g_autoptr(HpConfigTool) tool = hp_config_tool_new ();
  g_autoptr(GError) error = NULL;
  g_autofree gchar *dir = g_dir_make_tmp ("test-config-tool-XXXXXX", &error);
  g_autofree gchar *span = g_build_filename (dir, "span.json", NULL);
  g_autofree gchar *other = g_build_filename (dir, "other.json", NULL);
  g_autofree gchar *before = NULL;
  g_autofree gchar *after = NULL;
  g_autofree gchar *expected = NULL;
  g_auto(Run) run = { 0 };

  g_assert_no_error (error);
  g_set_prgname ("test-config-tool");
  g_type_ensure (TEST_TYPE_SPAN_CONFIG);

  run_tool (tool, (const gchar *[]) { "new", "TestSpanConfig", "--set", "low=5", "-o", span, NULL }, &run);
  g_assert_cmpint (run.status, ==, 0);
  g_assert_cmpstr (run.out, ==, "");
  g_assert_cmpstr (g_get_prgname (), ==, "test-config-tool");
  run_clear (&run);

  /* the --set of a run is not the next run's */
  run_tool (tool, (const gchar *[]) { "new", "TestSpanConfig", "-o", other, NULL }, &run);
  run_clear (&run);
  run_tool (tool, (const gchar *[]) { "get", span, "low", "high", NULL }, &run);
  g_assert_cmpstr (run.out, ==, "5\n10\n");
  run_clear (&run);
  run_tool (tool, (const gchar *[]) { "get", other, "low", NULL }, &run);
  g_assert_cmpstr (run.out, ==, "1\n");
  run_clear (&run);

  run_tool (tool, (const gchar *[]) { "show", "TestSpanConfig", NULL }, &run);
  g_assert_cmpstr (run.out, ==,
                   "TestSpanConfig\n"
                   "  low (int) = 1, range [0, 100]\n"
                   "      Lowest value\n"
                   "  high (int) = 10, range [0, 100]\n"
                   "      Highest value\n");
  run_clear (&run);

  /* set checks each field; validate how they agree */
  g_assert_true (g_file_get_contents (span, &before, NULL, NULL));
  run_tool (tool, (const gchar *[]) { "set", span, "high=4", "low=101", NULL }, &run);
  g_assert_cmpint (run.status, ==, 1);
  expected = g_strdup_printf ("hp-config set: %s: low: value 101 out of range [0, 100]\n", span);
  g_assert_cmpstr (run.err, ==, expected);
  g_assert_true (g_file_get_contents (span, &after, NULL, NULL));
  g_assert_cmpstr (after, ==, before);
  g_clear_pointer (&expected, g_free);
  run_clear (&run);

  run_tool (tool, (const gchar *[]) { "set", span, "high=4", NULL }, &run);
  g_assert_cmpint (run.status, ==, 0);
  run_clear (&run);
  run_tool (tool, (const gchar *[]) { "validate", other, span, NULL }, &run);
  g_assert_cmpint (run.status, ==, 1);
  expected = g_strdup_printf ("%s: valid TestSpanConfig\n", other);
  g_assert_cmpstr (run.out, ==, expected);
  g_clear_pointer (&expected, g_free);
  expected = g_strdup_printf ("hp-config validate: %s: low 5 is above high 4\n", span);
  g_assert_cmpstr (run.err, ==, expected);
  g_clear_pointer (&expected, g_free);
  run_clear (&run);

  run_tool (tool, (const gchar *[]) { "diff", other, span, NULL }, &run);
  g_assert_cmpint (run.status, ==, 1);
  g_assert_cmpstr (run.out, ==, "low: 1 -> 5\nhigh: 10 -> 4\n");
  run_clear (&run);

  run_tool (tool, (const gchar *[]) { "frob", NULL }, &run);
  g_assert_cmpint (run.status, ==, 2);
  g_assert_cmpstr (run.err, ==, "hp-config: unknown command 'frob' (see hp-config --help)\n");
  g_assert_cmpstr (g_get_prgname (), ==, "test-config-tool");

  g_unlink (span);
  g_unlink (other);
  g_rmdir (dir);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/config-tool/load-options", test_load_options);
  g_test_add_func ("/config-tool/help", test_help);
  g_test_add_func ("/config-tool/commands", test_commands);

  return g_test_run ();
}
