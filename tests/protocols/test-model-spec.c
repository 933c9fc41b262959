/* test-model-spec.c: model specs, their validation, building and
 * functions, the registry, and model configuration converters
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "hp-test-utils.h"

/* A model configuration with one field */

#define TEST_TYPE_MODEL_CONFIG (test_model_config_get_type ())
G_DECLARE_FINAL_TYPE (TestModelConfig, test_model_config, TEST, MODEL_CONFIG, HpBaseModelConfig)

struct _TestModelConfig
{
  HpBaseModelConfig parent_instance;

  gint dim;
};

G_DEFINE_FINAL_TYPE (TestModelConfig, test_model_config, HP_TYPE_BASE_MODEL_CONFIG)

static const HpConfigField model_fields[] = {
  HP_CONFIG_FIELD_INT (TestModelConfig, dim, "dim", NULL, 1, 4096, 8),
};

static void
test_model_config_class_init (TestModelConfigClass *klass)
{
  hp_config_class_install_fields (HP_CONFIG_CLASS (klass), model_fields, G_N_ELEMENTS (model_fields));
}

static void
test_model_config_init (TestModelConfig *self)
{
}

/* A model configuration whose owner is a plain module */

#define TEST_TYPE_MODULE_OWNER_CONFIG (test_module_owner_config_get_type ())
G_DECLARE_FINAL_TYPE (TestModuleOwnerConfig, test_module_owner_config, TEST, MODULE_OWNER_CONFIG,
                      HpBaseModelConfig)

HP_TEST_DEFINE_OWNED_CONFIG (TestModuleOwnerConfig, test_module_owner_config,
                             HpBaseModelConfig, HP_TYPE_BASE_MODEL_CONFIG, HP_TYPE_MODULE)

/* A model configuration whose owner is abstract */

#define TEST_TYPE_ABSTRACT_OWNER_CONFIG (test_abstract_owner_config_get_type ())
G_DECLARE_FINAL_TYPE (TestAbstractOwnerConfig, test_abstract_owner_config, TEST,
                      ABSTRACT_OWNER_CONFIG, HpBaseModelConfig)

HP_TEST_DEFINE_OWNED_CONFIG (TestAbstractOwnerConfig, test_abstract_owner_config,
                             HpBaseModelConfig, HP_TYPE_BASE_MODEL_CONFIG, HP_TYPE_MODEL_CONFIG_CONVERTER)

/* A state dict adapter that renames nothing */

#define TEST_TYPE_ADAPTER (test_adapter_get_type ())
G_DECLARE_FINAL_TYPE (TestAdapter, test_adapter, TEST, ADAPTER, GObject)

static HpStateDict *
test_adapter_same (HpStateDictAdapter  *self,
                   HpStateDict         *sd,
                   GError             **error)
{
  return g_object_ref (sd);
}

static void
test_adapter_iface_init (HpStateDictAdapterInterface *iface)
{
  iface->to_hf = test_adapter_same;
  iface->from_hf = test_adapter_same;
}

HP_TEST_DEFINE_EMPTY_TYPE_WITH_INTERFACE (TestAdapter, test_adapter,
                                          GObject, G_TYPE_OBJECT,
                                          HP_TYPE_STATE_DICT_ADAPTER,
                                          test_adapter_iface_init)

/* Converters: the configuration, one that scales the model's dim, one
 * that implements nothing, one that breaks the contract */

#define TEST_TYPE_CONVERTER_CONFIG (test_converter_config_get_type ())
G_DECLARE_FINAL_TYPE (TestConverterConfig, test_converter_config, TEST, CONVERTER_CONFIG, HpConfig)

#define TEST_TYPE_CONVERTER (test_converter_get_type ())
G_DECLARE_FINAL_TYPE (TestConverter, test_converter, TEST, CONVERTER, HpModelConfigConverter)

#define TEST_TYPE_BARE_CONVERTER (test_bare_converter_get_type ())
G_DECLARE_FINAL_TYPE (TestBareConverter, test_bare_converter, TEST, BARE_CONVERTER,
                      HpModelConfigConverter)

#define TEST_TYPE_BROKEN_CONVERTER (test_broken_converter_get_type ())
G_DECLARE_FINAL_TYPE (TestBrokenConverter, test_broken_converter, TEST, BROKEN_CONVERTER,
                      HpModelConfigConverter)

struct _TestConverterConfig
{
  HpConfig parent_instance;

  gint scale;
};

G_DEFINE_FINAL_TYPE (TestConverterConfig, test_converter_config, HP_TYPE_CONFIG)

static const HpConfigField converter_fields[] = {
  HP_CONFIG_FIELD_INT (TestConverterConfig, scale, "scale", NULL, 0, 16, 2),
};

static void
test_converter_config_class_init (TestConverterConfigClass *klass)
{
  hp_config_class_install_fields (HP_CONFIG_CLASS (klass), converter_fields,
                                  G_N_ELEMENTS (converter_fields));
  hp_config_class_set_owner_type (HP_CONFIG_CLASS (klass), TEST_TYPE_CONVERTER);
}

static void
test_converter_config_init (TestConverterConfig *self)
{
}

struct _TestConverter
{
  HpModelConfigConverter parent_instance;
};

G_DEFINE_FINAL_TYPE (TestConverter, test_converter, HP_TYPE_MODEL_CONFIG_CONVERTER)

static gint
converter_scale (HpModelConfigConverter *self)
{
  return TEST_CONVERTER_CONFIG (hp_configurable_get_config (HP_CONFIGURABLE (self)))->scale;
}

static HpBaseModelConfig *
test_converter_convert (HpModelConfigConverter  *self,
                        HpBaseModelConfig       *model_config,
                        GError                 **error)
{
  gint scale = converter_scale (self);

  if (scale == 0)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG, "TestConverter: scale 0 empties the model");
      return NULL;
    }
  return HP_BASE_MODEL_CONFIG (hp_config_replace (HP_CONFIG (model_config),
                                                  "dim", TEST_MODEL_CONFIG (model_config)->dim * scale,
                                                  NULL));
}

static void
test_converter_class_init (TestConverterClass *klass)
{
  HP_MODEL_CONFIG_CONVERTER_CLASS (klass)->convert = test_converter_convert;
}

static void
test_converter_init (TestConverter *self)
{
}

HP_TEST_DEFINE_EMPTY_TYPE (TestBareConverter, test_bare_converter,
                           HpModelConfigConverter, HP_TYPE_MODEL_CONFIG_CONVERTER)

struct _TestBrokenConverter
{
  HpModelConfigConverter parent_instance;
};

G_DEFINE_FINAL_TYPE (TestBrokenConverter, test_broken_converter, HP_TYPE_MODEL_CONFIG_CONVERTER)

/* scale 1: nothing and no error; otherwise a module configuration */
static HpBaseModelConfig *
test_broken_converter_convert (HpModelConfigConverter  *self,
                               HpBaseModelConfig       *model_config,
                               GError                 **error)
{
  if (converter_scale (self) == 1)
    return NULL;
  return (HpBaseModelConfig *) hp_module_config_new ();
}

static void
test_broken_converter_class_init (TestBrokenConverterClass *klass)
{
  HP_MODEL_CONFIG_CONVERTER_CLASS (klass)->convert = test_broken_converter_convert;
}

static void
test_broken_converter_init (TestBrokenConverter *self)
{
}

/* Counters for notifications, signals, calls and destroy notifies */

typedef struct
{
  guint n_calls;
  guint n_destroyed;
  gboolean fail;
  gboolean fail_silently;
  GType build_type;
  HpModelSpec *spec;
  HpBaseModel *model;
  HpParallelDims *dims;
  GObject *optimizers;
} Calls;

static void
count_destroy (gpointer data)
{
  ((Calls *) data)->n_destroyed++;
}

static HpBaseModel *
build_model (HpModelSpec  *spec,
             gpointer      user_data,
             GError      **error)
{
  Calls *calls = user_data;

  calls->n_calls++;
  calls->spec = spec;
  if (calls->fail)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG, "no model today");
      return NULL;
    }
  if (calls->fail_silently)
    return NULL;
  return g_object_new (calls->build_type, NULL);
}

static gboolean
model_func (HpBaseModel     *model,
            HpParallelDims  *dims,
            gpointer         user_data,
            GError         **error)
{
  Calls *calls = user_data;

  calls->n_calls++;
  calls->model = model;
  calls->dims = dims;
  if (calls->fail)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_MESH, "tp does not fit");
      return FALSE;
    }
  return !calls->fail_silently;
}

static void
post_optimizer_build (GObject     *optimizers,
                      HpBaseModel *model,
                      gpointer     user_data)
{
  Calls *calls = user_data;

  calls->n_calls++;
  calls->optimizers = optimizers;
  calls->model = model;
}

static void
test_properties (void)
{
  g_autoptr(HpModelSpec) spec = hp_model_spec_new ("llama3");
  g_autoptr(HpModelSpec) other = NULL;
  g_autoptr(HpBaseModelConfig) config = g_object_new (HP_TYPE_BASE_MODEL_CONFIG, NULL);
  g_autofree gchar *name = NULL;
  g_autofree gchar *flavor = NULL;
  g_autoptr(HpBaseModelConfig) got_config = NULL;
  GType adapter_type = G_TYPE_INVALID;
  guint n_notify = 0;

  hp_test_count_signal (spec, "notify", &n_notify);

  g_assert_cmpstr (hp_model_spec_get_name (spec), ==, "llama3");
  g_assert_null (hp_model_spec_get_flavor (spec));
  g_assert_null (hp_model_spec_get_model (spec));
  g_assert_true (hp_model_spec_get_state_dict_adapter_type (spec) == G_TYPE_NONE);
  g_assert_false (hp_model_spec_has_build_model_func (spec));
  g_assert_false (hp_model_spec_has_parallelize_func (spec));
  g_assert_false (hp_model_spec_has_pipelining_func (spec));
  g_assert_false (hp_model_spec_has_post_optimizer_build_func (spec));

  hp_model_spec_set_flavor (spec, "debugmodel");
  hp_model_spec_set_flavor (spec, "debugmodel");
  g_assert_cmpstr (hp_model_spec_get_flavor (spec), ==, "debugmodel");
  g_assert_cmpuint (n_notify, ==, 1);
  hp_model_spec_set_model (spec, config);
  hp_model_spec_set_model (spec, config);
  g_assert_true (hp_model_spec_get_model (spec) == config);
  g_assert_cmpuint (n_notify, ==, 2);
  hp_model_spec_set_state_dict_adapter_type (spec, TEST_TYPE_ADAPTER);
  hp_model_spec_set_state_dict_adapter_type (spec, TEST_TYPE_ADAPTER);
  g_assert_true (hp_model_spec_get_state_dict_adapter_type (spec) == TEST_TYPE_ADAPTER);
  g_assert_cmpuint (n_notify, ==, 3);

  g_object_get (spec, "name", &name, "flavor", &flavor, "model", &got_config,
                "state-dict-adapter-type", &adapter_type, NULL);
  g_assert_cmpstr (name, ==, "llama3");
  g_assert_cmpstr (flavor, ==, "debugmodel");
  g_assert_true (got_config == config);
  g_assert_true (adapter_type == TEST_TYPE_ADAPTER);

  /* back to none, through the properties */
  g_object_set (spec, "flavor", NULL, "model", NULL, "state-dict-adapter-type", G_TYPE_NONE, NULL);
  g_assert_null (hp_model_spec_get_flavor (spec));
  g_assert_null (hp_model_spec_get_model (spec));
  g_assert_true (hp_model_spec_get_state_dict_adapter_type (spec) == G_TYPE_NONE);
  g_assert_cmpuint (n_notify, ==, 6);

  other = g_object_new (HP_TYPE_MODEL_SPEC, "name", "qwen3", "flavor", "0.6B", "model", config, NULL);
  g_assert_cmpstr (hp_model_spec_get_name (other), ==, "qwen3");
  g_assert_cmpstr (hp_model_spec_get_flavor (other), ==, "0.6B");
  g_assert_true (hp_model_spec_get_model (other) == config);
}

static void
test_validate (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpModelSpec) spec = hp_model_spec_new ("llama3");
  g_autoptr(HpModelSpec) nameless = g_object_new (HP_TYPE_MODEL_SPEC, NULL);
  g_autoptr(HpModelSpec) empty = g_object_new (HP_TYPE_MODEL_SPEC, "name", "", NULL);
  g_autoptr(HpBaseModelConfig) config = g_object_new (HP_TYPE_BASE_MODEL_CONFIG, NULL);
  Calls calls = { 0 };

  hp_test_assert_error (GINT_TO_POINTER (hp_model_spec_validate (spec, &error)), &error,
                        HP_ERROR_CONFIG, "ModelSpec 'llama3' requires build_model_fn or model config");

  hp_model_spec_set_model (spec, config);
  g_assert_true (hp_model_spec_validate (spec, &error));
  g_assert_no_error (error);

  hp_model_spec_set_build_model_func (spec, build_model, &calls, count_destroy);
  g_assert_true (hp_model_spec_has_build_model_func (spec));
  hp_test_assert_error (GINT_TO_POINTER (hp_model_spec_validate (spec, &error)), &error,
                        HP_ERROR_CONFIG,
                        "ModelSpec 'llama3' must not set both build_model_fn and model config");

  hp_model_spec_set_model (spec, NULL);
  g_assert_true (hp_model_spec_validate (spec, &error));
  g_assert_no_error (error);

  /* clearing the function frees its data */
  hp_model_spec_set_build_model_func (spec, NULL, NULL, NULL);
  g_assert_false (hp_model_spec_has_build_model_func (spec));
  g_assert_cmpuint (calls.n_destroyed, ==, 1);
  hp_test_assert_error (GINT_TO_POINTER (hp_model_spec_validate (spec, &error)), &error,
                        HP_ERROR_CONFIG, "ModelSpec 'llama3' requires build_model_fn or model config");

  hp_model_spec_set_model (nameless, config);
  hp_test_assert_error (GINT_TO_POINTER (hp_model_spec_validate (nameless, &error)), &error,
                        HP_ERROR_CONFIG, "ModelSpec has no name");
  hp_model_spec_set_model (empty, config);
  hp_test_assert_error (GINT_TO_POINTER (hp_model_spec_validate (empty, &error)), &error,
                        HP_ERROR_CONFIG, "ModelSpec has no name");
  g_assert_cmpuint (calls.n_calls, ==, 0);
}

static void
test_build_from_config (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpModelSpec) spec = hp_model_spec_new ("toy");
  g_autoptr(HpModelSpec) wrong = hp_model_spec_new ("wrong");
  g_autoptr(HpBaseModelConfig) config = g_object_new (TEST_TYPE_MODEL_CONFIG, "dim", 16, NULL);
  g_autoptr(HpBaseModelConfig) module_config = g_object_new (TEST_TYPE_MODULE_OWNER_CONFIG, NULL);
  g_autoptr(HpBaseModelConfig) abstract_config = g_object_new (TEST_TYPE_ABSTRACT_OWNER_CONFIG, NULL);
  g_autoptr(HpBaseModel) model = NULL;
  g_autoptr(HpBaseModel) again = NULL;
  HpConfig *model_config;

  hp_model_spec_set_model (spec, config);
  model = hp_model_spec_build_model (spec, &error);
  g_assert_no_error (error);
  g_assert_true (G_OBJECT_TYPE (model) == HP_TYPE_BASE_MODEL);
  model_config = hp_configurable_get_config (HP_CONFIGURABLE (model));
  g_assert_true (TEST_IS_MODEL_CONFIG (model_config));
  g_assert_cmpint (hp_test_get_int (model_config, "dim"), ==, 16);

  /* built as the configuration is now; the model keeps its own copy */
  g_object_set (config, "dim", 32, NULL);
  again = hp_model_spec_build_model (spec, &error);
  g_assert_no_error (error);
  g_assert_true (again != model);
  g_assert_cmpint (hp_test_get_int (hp_configurable_get_config (HP_CONFIGURABLE (again)), "dim"),
                   ==, 32);
  g_assert_cmpint (hp_test_get_int (model_config, "dim"), ==, 16);

  hp_model_spec_set_model (wrong, module_config);
  hp_test_assert_error (hp_model_spec_build_model (wrong, &error), &error, HP_ERROR_CONFIG,
                        "ModelSpec 'wrong': model config TestModuleOwnerConfig builds a HpModule, "
                        "which is not a HpBaseModel");
  /* errors of hp_config_build() name the spec */
  hp_model_spec_set_model (wrong, abstract_config);
  hp_test_assert_error (hp_model_spec_build_model (wrong, &error), &error, HP_ERROR_NOT_SUPPORTED,
                        "ModelSpec 'wrong': TestAbstractOwnerConfig builds HpModelConfigConverter, "
                        "which is abstract");

  /* an invalid spec builds nothing */
  hp_model_spec_set_model (wrong, NULL);
  hp_test_assert_error (hp_model_spec_build_model (wrong, &error), &error, HP_ERROR_CONFIG,
                        "ModelSpec 'wrong' requires build_model_fn or model config");
}

static void
test_build_from_func (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpModelSpec) spec = hp_model_spec_new ("legacy");
  g_autoptr(HpBaseModel) model = NULL;
  Calls calls = { 0 };
  Calls replaced = { 0 };

  calls.build_type = HP_TYPE_BASE_MODEL;
  hp_model_spec_set_build_model_func (spec, build_model, &replaced, count_destroy);
  hp_model_spec_set_build_model_func (spec, build_model, &calls, count_destroy);
  g_assert_cmpuint (replaced.n_destroyed, ==, 1);
  g_assert_cmpuint (calls.n_destroyed, ==, 0);

  model = hp_model_spec_build_model (spec, &error);
  g_assert_no_error (error);
  g_assert_true (HP_IS_BASE_MODEL (model));
  g_assert_cmpuint (calls.n_calls, ==, 1);
  g_assert_true (calls.spec == spec);
  g_assert_cmpuint (replaced.n_calls, ==, 0);

  calls.fail = TRUE;
  hp_test_assert_error (hp_model_spec_build_model (spec, &error), &error, HP_ERROR_CONFIG,
                        "no model today");
  calls.fail = FALSE;
  calls.fail_silently = TRUE;
  hp_test_assert_error (hp_model_spec_build_model (spec, &error), &error, HP_ERROR_STATE,
                        "build_model_fn of ModelSpec 'legacy' returned no model and no error");
  calls.fail_silently = FALSE;
  calls.build_type = HP_TYPE_MODULE;
  hp_test_assert_error (hp_model_spec_build_model (spec, &error), &error, HP_ERROR_STATE,
                        "build_model_fn of ModelSpec 'legacy' returned a HpModule, which is not "
                        "a HpBaseModel");
  g_assert_cmpuint (calls.n_calls, ==, 4);

  /* the data goes with the spec */
  g_clear_object (&spec);
  g_assert_cmpuint (calls.n_destroyed, ==, 1);
}

static void
test_functions (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpModelSpec) spec = hp_model_spec_new ("toy");
  g_autoptr(HpBaseModel) model = g_object_new (HP_TYPE_BASE_MODEL, NULL);
  g_autoptr(HpParallelDims) defaults = hp_parallel_dims_new ();
  g_autoptr(HpParallelDims) dims = NULL;
  g_autoptr(GObject) optimizers = g_object_new (G_TYPE_OBJECT, NULL);
  Calls parallelize = { 0 };
  Calls pipelining = { 0 };
  Calls post = { 0 };

  dims = hp_parallel_dims_resolve (defaults, 1, &error);
  g_assert_no_error (error);

  /* without functions */
  hp_test_assert_error (GINT_TO_POINTER (hp_model_spec_parallelize (spec, model, dims, &error)),
                        &error, HP_ERROR_NOT_SUPPORTED,
                        "ModelSpec 'toy' has no parallelize_fn: the model cannot be parallelized");
  hp_test_assert_error (GINT_TO_POINTER (hp_model_spec_pipeline (spec, model, dims, &error)),
                        &error, HP_ERROR_NOT_SUPPORTED,
                        "ModelSpec 'toy' has no pipelining_fn: the model does not support "
                        "pipeline parallelism");
  hp_model_spec_post_optimizer_build (spec, optimizers, model);

  hp_model_spec_set_parallelize_func (spec, model_func, &parallelize, count_destroy);
  hp_model_spec_set_pipelining_func (spec, model_func, &pipelining, count_destroy);
  hp_model_spec_set_post_optimizer_build_func (spec, post_optimizer_build, &post, count_destroy);
  g_assert_true (hp_model_spec_has_parallelize_func (spec));
  g_assert_true (hp_model_spec_has_pipelining_func (spec));
  g_assert_true (hp_model_spec_has_post_optimizer_build_func (spec));

  g_assert_true (hp_model_spec_parallelize (spec, model, dims, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (parallelize.n_calls, ==, 1);
  g_assert_true (parallelize.model == model);
  g_assert_true (parallelize.dims == dims);
  g_assert_cmpuint (pipelining.n_calls, ==, 0);

  g_assert_true (hp_model_spec_pipeline (spec, model, dims, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (pipelining.n_calls, ==, 1);
  g_assert_true (pipelining.model == model);
  g_assert_true (pipelining.dims == dims);

  hp_model_spec_post_optimizer_build (spec, optimizers, model);
  g_assert_cmpuint (post.n_calls, ==, 1);
  g_assert_true (post.optimizers == optimizers);
  g_assert_true (post.model == model);

  /* failures */
  parallelize.fail = TRUE;
  hp_test_assert_error (GINT_TO_POINTER (hp_model_spec_parallelize (spec, model, dims, &error)),
                        &error, HP_ERROR_MESH, "tp does not fit");
  pipelining.fail_silently = TRUE;
  hp_test_assert_error (GINT_TO_POINTER (hp_model_spec_pipeline (spec, model, dims, &error)),
                        &error, HP_ERROR_STATE,
                        "pipelining_fn of ModelSpec 'toy' failed without an error");
  parallelize.fail = FALSE;
  parallelize.fail_silently = TRUE;
  hp_test_assert_error (GINT_TO_POINTER (hp_model_spec_parallelize (spec, model, dims, &error)),
                        &error, HP_ERROR_STATE,
                        "parallelize_fn of ModelSpec 'toy' failed without an error");
  g_assert_cmpuint (parallelize.n_calls, ==, 3);
  g_assert_cmpuint (pipelining.n_calls, ==, 2);

  /* clearing frees the data, once */
  hp_model_spec_set_pipelining_func (spec, NULL, NULL, NULL);
  g_assert_false (hp_model_spec_has_pipelining_func (spec));
  g_assert_cmpuint (pipelining.n_destroyed, ==, 1);
  g_clear_object (&spec);
  g_assert_cmpuint (parallelize.n_destroyed, ==, 1);
  g_assert_cmpuint (pipelining.n_destroyed, ==, 1);
  g_assert_cmpuint (post.n_destroyed, ==, 1);
}

static void
count_registered (HpModelSpecRegistry *registry,
                  HpModelSpec         *spec,
                  gpointer             data)
{
  GPtrArray *seen = data;

  g_ptr_array_add (seen, spec);
}

static void
assert_names (const gchar *expected)
{
  g_auto(GStrv) names = hp_model_spec_list_names ();
  g_autofree gchar *joined = g_strjoinv (",", names);

  g_assert_cmpstr (joined, ==, expected);
}

static void
test_registry (void)
{
  g_autoptr(GError) error = NULL;
  HpModelSpecRegistry *registry = hp_model_spec_registry_get_default ();
  g_autoptr(GPtrArray) seen = g_ptr_array_new ();
  g_autoptr(HpModelSpec) beta = hp_model_spec_new ("beta");
  g_autoptr(HpModelSpec) alpha = hp_model_spec_new ("alpha");
  g_autoptr(HpModelSpec) other_beta = hp_model_spec_new ("beta");
  g_autoptr(HpModelSpec) invalid = hp_model_spec_new ("invalid");
  g_autoptr(HpModelSpec) found = NULL;
  g_autoptr(HpBaseModelConfig) config = g_object_new (HP_TYPE_BASE_MODEL_CONFIG, NULL);
  gulong handler;

  g_assert_true (HP_IS_MODEL_SPEC_REGISTRY (registry));
  g_assert_true (hp_model_spec_registry_get_default () == registry);
  handler = g_signal_connect (registry, "registered", G_CALLBACK (count_registered), seen);

  assert_names ("");
  hp_test_assert_error (hp_model_spec_lookup ("llama3", &error), &error, HP_ERROR_CONFIG,
                        "Unknown model 'llama3'. Available: []");

  hp_model_spec_set_model (beta, config);
  hp_model_spec_set_model (alpha, config);
  hp_model_spec_set_model (other_beta, config);

  g_assert_true (hp_model_spec_register (beta, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (seen->len, ==, 1);
  g_assert_true (g_ptr_array_index (seen, 0) == beta);
  g_assert_true (hp_model_spec_register (alpha, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (seen->len, ==, 2);
  g_assert_true (g_ptr_array_index (seen, 1) == alpha);
  assert_names ("alpha,beta");

  /* a second spec of the same name, the same spec again, an invalid
   * spec: refused, no signal */
  hp_test_assert_error (GINT_TO_POINTER (hp_model_spec_register (other_beta, &error)), &error,
                        HP_ERROR_CONFIG, "ModelSpec 'beta' is already registered");
  hp_test_assert_error (GINT_TO_POINTER (hp_model_spec_register (alpha, &error)), &error,
                        HP_ERROR_CONFIG, "ModelSpec 'alpha' is already registered");
  hp_test_assert_error (GINT_TO_POINTER (hp_model_spec_register (invalid, &error)), &error,
                        HP_ERROR_CONFIG, "ModelSpec 'invalid' requires build_model_fn or model config");
  g_assert_cmpuint (seen->len, ==, 2);
  assert_names ("alpha,beta");

  /* the entries are still the first specs of their names */
  found = hp_model_spec_lookup ("beta", &error);
  g_assert_no_error (error);
  g_assert_true (found == beta);
  g_clear_object (&found);
  found = hp_model_spec_lookup ("alpha", &error);
  g_assert_no_error (error);
  g_assert_true (found == alpha);
  g_clear_object (&found);
  hp_test_assert_error (hp_model_spec_lookup ("gamma", &error), &error, HP_ERROR_CONFIG,
                        "Unknown model 'gamma'. Available: [alpha, beta]");
  /* names are case-sensitive */
  hp_test_assert_error (hp_model_spec_lookup ("Alpha", &error), &error, HP_ERROR_CONFIG,
                        "Unknown model 'Alpha'. Available: [alpha, beta]");

  /* the registry holds a reference */
  g_clear_object (&alpha);
  found = hp_model_spec_lookup ("alpha", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (hp_model_spec_get_name (found), ==, "alpha");
  g_clear_object (&found);

  g_assert_true (hp_model_spec_unregister ("beta"));
  g_assert_false (hp_model_spec_unregister ("beta"));
  assert_names ("alpha");
  /* the name is free again */
  g_assert_true (hp_model_spec_register (other_beta, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (seen->len, ==, 3);
  g_assert_true (g_ptr_array_index (seen, 2) == other_beta);

  g_assert_true (hp_model_spec_unregister ("alpha"));
  g_assert_true (hp_model_spec_unregister ("beta"));
  assert_names ("");
  g_signal_handler_disconnect (registry, handler);
}

#define N_THREADS 4
#define N_PER_THREAD 25

static void
count_registered_atomic (HpModelSpecRegistry *registry,
                         HpModelSpec         *spec,
                         gpointer             data)
{
  g_atomic_int_inc ((gint *) data);
}

static gpointer
register_many (gpointer data)
{
  guint thread = GPOINTER_TO_UINT (data);
  g_autoptr(HpBaseModelConfig) config = g_object_new (HP_TYPE_BASE_MODEL_CONFIG, NULL);
  guint n_ok = 0;

  for (guint i = 0; i < N_PER_THREAD; i++)
    {
      g_autofree gchar *name = g_strdup_printf ("m%u-%02u", thread, i);
      /* every thread also tries the same shared names */
      g_autofree gchar *shared = g_strdup_printf ("shared-%02u", i);
      g_autoptr(HpModelSpec) spec = hp_model_spec_new (name);
      g_autoptr(HpModelSpec) shared_spec = hp_model_spec_new (shared);
      g_autoptr(HpModelSpec) found = NULL;

      hp_model_spec_set_model (spec, config);
      hp_model_spec_set_model (shared_spec, config);
      if (hp_model_spec_register (spec, NULL))
        n_ok++;
      if (hp_model_spec_register (shared_spec, NULL))
        n_ok++;
      found = hp_model_spec_lookup (name, NULL);
      g_assert_true (found == spec);
    }
  return GUINT_TO_POINTER (n_ok);
}

static void
test_registry_threads (void)
{
  HpModelSpecRegistry *registry = hp_model_spec_registry_get_default ();
  GThread *threads[N_THREADS];
  g_auto(GStrv) names = NULL;
  gint n_signals = 0;
  guint n_ok = 0;
  gulong handler;

  handler = g_signal_connect (registry, "registered", G_CALLBACK (count_registered_atomic),
                              &n_signals);
  for (guint t = 0; t < N_THREADS; t++)
    threads[t] = g_thread_new ("register", register_many, GUINT_TO_POINTER (t));
  for (guint t = 0; t < N_THREADS; t++)
    n_ok += GPOINTER_TO_UINT (g_thread_join (threads[t]));
  g_signal_handler_disconnect (registry, handler);

  /* each own name once, each shared name by exactly one thread */
  g_assert_cmpuint (n_ok, ==, N_THREADS * N_PER_THREAD + N_PER_THREAD);
  g_assert_cmpint (n_signals, ==, (gint) n_ok);
  names = hp_model_spec_list_names ();
  g_assert_cmpuint (g_strv_length (names), ==, n_ok);
  for (guint i = 0; names[i] != NULL; i++)
    {
      if (i > 0)
        g_assert_cmpstr (names[i - 1], <, names[i]);
      g_assert_true (hp_model_spec_unregister (names[i]));
    }
  assert_names ("");
}

static void
test_converter (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpConfig) converter_config = g_object_new (TEST_TYPE_CONVERTER_CONFIG, "scale", 3, NULL);
  g_autoptr(HpConfig) zero_config = g_object_new (TEST_TYPE_CONVERTER_CONFIG, "scale", 0, NULL);
  g_autoptr(HpConfig) one_config = g_object_new (TEST_TYPE_CONVERTER_CONFIG, "scale", 1, NULL);
  g_autoptr(HpBaseModelConfig) model_config = g_object_new (TEST_TYPE_MODEL_CONFIG, "dim", 8, NULL);
  g_autoptr(HpBaseModelConfig) converted = NULL;
  g_autoptr(GObject) built = NULL;
  g_autoptr(GObject) zero = NULL;
  g_autoptr(HpModelConfigConverter) bare = NULL;
  g_autoptr(HpModelConfigConverter) silent = NULL;
  g_autoptr(HpModelConfigConverter) wrong = NULL;
  HpModelConfigConverter *converter;
  g_autofree gchar *before = hp_config_to_json (HP_CONFIG (model_config), FALSE);
  g_autofree gchar *after = NULL;

  g_assert_true (G_TYPE_IS_ABSTRACT (HP_TYPE_MODEL_CONFIG_CONVERTER));
  g_assert_true (g_type_is_a (HP_TYPE_MODEL_CONFIG_CONVERTER, HP_TYPE_CONFIGURABLE));

  /* built from its configuration, as a job would */
  built = hp_config_build (converter_config, &error);
  g_assert_no_error (error);
  g_assert_true (TEST_IS_CONVERTER (built));
  converter = HP_MODEL_CONFIG_CONVERTER (built);

  converted = hp_model_config_converter_convert (converter, model_config, &error);
  g_assert_no_error (error);
  g_assert_true (TEST_IS_MODEL_CONFIG (converted));
  g_assert_true (converted != model_config);
  g_assert_cmpint (hp_test_get_int (converted, "dim"), ==, 24);
  g_assert_cmpint (hp_test_get_int (model_config, "dim"), ==, 8);

  /* the converter's error */
  zero = hp_config_build (zero_config, &error);
  g_assert_no_error (error);
  hp_test_assert_error (hp_model_config_converter_convert (HP_MODEL_CONFIG_CONVERTER (zero),
                                                           model_config, &error),
                        &error, HP_ERROR_CONFIG, "TestConverter: scale 0 empties the model");

  bare = g_object_new (TEST_TYPE_BARE_CONVERTER, "config", converter_config, NULL);
  hp_test_assert_error (hp_model_config_converter_convert (bare, model_config, &error), &error,
                        HP_ERROR_NOT_SUPPORTED, "TestBareConverter does not implement convert");

  silent = g_object_new (TEST_TYPE_BROKEN_CONVERTER, "config", one_config, NULL);
  hp_test_assert_error (hp_model_config_converter_convert (silent, model_config, &error), &error,
                        HP_ERROR_STATE,
                        "TestBrokenConverter.convert returned no model configuration and no error");
  wrong = g_object_new (TEST_TYPE_BROKEN_CONVERTER, "config", converter_config, NULL);
  hp_test_assert_error (hp_model_config_converter_convert (wrong, model_config, &error), &error,
                        HP_ERROR_STATE,
                        "TestBrokenConverter.convert returned a HpModuleConfig, which is not a "
                        "HpBaseModelConfig");
  g_assert_cmpint (hp_test_get_int (model_config, "dim"), ==, 8);
  after = hp_config_to_json (HP_CONFIG (model_config), FALSE);
  g_assert_cmpstr (after, ==, before);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/model-spec/properties", test_properties);
  g_test_add_func ("/model-spec/validate", test_validate);
  g_test_add_func ("/model-spec/build/config", test_build_from_config);
  g_test_add_func ("/model-spec/build/func", test_build_from_func);
  g_test_add_func ("/model-spec/functions", test_functions);
  g_test_add_func ("/model-spec/registry", test_registry);
  g_test_add_func ("/model-spec/registry/threads", test_registry_threads);
  g_test_add_func ("/model-config-converter/convert", test_converter);

  return g_test_run ();
}
