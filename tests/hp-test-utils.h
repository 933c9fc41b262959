/* hp-test-utils.h: helpers shared by the C test suites
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <hp-protocols/hp-protocols.h>

G_BEGIN_DECLS

/* A function of tensors under test: returns a new tensor or NULL with
 * @error set. */
typedef HpTensor *(*HpTestFunc) (HpTensor **inputs,
                                 gpointer   user_data,
                                 GError   **error);

/* g_test_init() for the suites that also run under mpirun: on ranks other
 * than 0 the TAP output goes to /dev/null, so that meson reads one
 * stream; a failure on any rank still fails the run through its exit
 * status. Does not start MPI. */
void      hp_test_init         (int            *argc,
                                char         ***argv);
/* hp_test_init(), then hp_init(): for the suites that need MPI */
void      hp_test_init_world   (int            *argc,
                                char         ***argv);

/* The decoder of @config laid out by @dims, parallelized over @tp_mesh
 * (NULL: not), its parameters and buffers from seed 7; aborts the test
 * on error */
HpModule *hp_test_decoder_build (HpDecoderConfig *config,
                                 HpParallelDims  *dims,
                                 HpDeviceMesh    *tp_mesh);
/* Token ids [rows, 6] of a vocabulary of 11, rows [first, first +
 * rows) of the batch of @step, and their targets, from a fixed formula */
void      hp_test_token_batch   (gint             step,
                                 gint             first,
                                 gint             rows,
                                 HpTensor       **ids,
                                 HpTensor       **targets);

/* Removes @path: a file, or a directory with everything in it */
void      hp_test_remove_tree  (const gchar    *path);

/* Makes a tensor from doubles; aborts the test on error. */
HpTensor *hp_test_tensor       (HpDType         dtype,
                                const gdouble  *data,
                                gsize           n_data,
                                const gint64   *shape,
                                guint           ndim);
HpTensor *hp_test_tensor_ids   (const gint64   *ids,
                                gsize           n_ids,
                                const gint64   *shape,
                                guint           ndim);
HpTensor *hp_test_randn        (HpDType         dtype,
                                const gint64   *shape,
                                guint           ndim,
                                guint64         seed,
                                gboolean        requires_grad);

/* Asserts shape and values (|a - e| <= atol + rtol * |e|), printing both
 * tensors on failure. */
void      hp_test_assert_values (HpTensor       *tensor,
                                 const gdouble  *expected,
                                 gsize           n_expected,
                                 const gint64   *shape,
                                 guint           ndim,
                                 gdouble         rtol,
                                 gdouble         atol);
void      hp_test_assert_close  (HpTensor       *tensor,
                                 HpTensor       *expected,
                                 gdouble         rtol,
                                 gdouble         atol);
void      hp_test_assert_shape  (HpTensor       *tensor,
                                 const gint64   *shape,
                                 guint           ndim);
/* Asserts the same shape and the same values to the bit */
void      hp_test_assert_identical (HpTensor    *tensor,
                                    HpTensor    *expected);

/* Checks the gradients of @func with respect to every input that
 * requires grad against central finite differences: float64 inputs,
 * step 1e-6, |analytic - numeric| <= 1e-6 * |numeric| + 1e-8. The output
 * is contracted with fixed random weights so every output element
 * counts. */
void      hp_test_gradcheck     (const gchar    *name,
                                 HpTestFunc      func,
                                 gpointer        user_data,
                                 HpTensor      **inputs,
                                 guint           n_inputs);

/* torch.chunk, written out independently of the library: piece @index of
 * @size split into @n pieces of ceil(size / n), the last ones shorter or
 * empty */
void      hp_test_chunk         (gint64          size,
                                 gint            n,
                                 gint            index,
                                 gint64         *offset,
                                 gint64         *length);

/* The values of @t in the block [offsets, offsets + lengths), as doubles
 * in row-major order (free with g_free) */
gdouble  *hp_test_region_values (HpTensor       *t,
                                 const gint64   *offsets,
                                 const gint64   *lengths,
                                 gsize          *n_out);

/* Configuration paths: the text at @path is @expected; setting @path
 * to @value succeeds */
void      hp_test_assert_path   (HpConfig       *config,
                                 const gchar    *path,
                                 const gchar    *expected);
void      hp_test_set_path      (HpConfig       *config,
                                 const gchar    *path,
                                 const gchar    *value);

/* Asserts that @result is NULL and @error has @code and contains
 * @message_part; frees the error. */
void      hp_test_assert_error  (gpointer        result,
                                 GError        **error,
                                 gint            code,
                                 const gchar    *message_part);

/* Meshes and placements; abort the test on error. hp_test_tp_mesh() is
 * the 1-d mesh of every rank with the dim name "tp". */
HpDeviceMesh     *hp_test_mesh          (const gint          *shape,
                                         guint                ndim,
                                         const gchar * const *names);
HpDeviceMesh     *hp_test_tp_mesh       (void);
GPtrArray        *hp_test_placements    (const gchar * const *texts,
                                         guint                n);
HpNamedPlacement *hp_test_named         (const gchar         *text);

/* Rank disagreement (test-collectives-*): a tensor of @shape holding
 * 0, 1, 2, ...; a DTensor of this rank's own @local, made without asking
 * the others; @dt redistributed to @to, expected to fail on more than
 * one rank: returns the error after asserting @dt unchanged, or NULL on
 * one rank after asserting the redistribution succeeded; how a mismatch
 * message names every rank but 0 ("rank 1" or "ranks 1-7") */
HpTensor         *hp_test_counting      (HpDType              dtype,
                                         const gint64        *shape,
                                         guint                ndim);
HpDTensor        *hp_test_local_dtensor (HpTensor            *local,
                                         HpDeviceMesh        *mesh,
                                         const gchar         *placements);
GError           *hp_test_redistribute_expecting_error (HpDTensor   *dt,
                                                        const gchar *to);
gchar            *hp_test_other_ranks   (void);

/* Asserts that @tensor is a DTensor with the placements @expected, as
 * hp_placements_to_string() writes them ("(S(0), R)") */
void              hp_test_assert_placements (HpTensor        *tensor,
                                             const gchar     *expected);
/* The whole tensor of the DTensor @tensor */
HpTensor         *hp_test_full_tensor   (HpTensor            *tensor);

/* The outputs of a forward or local function that has one: an array
 * holding @out, or NULL for a NULL @out (its error set) */
GPtrArray        *hp_test_one_output    (HpTensor            *out);

/* The free function of arrays of objects that hold NULL entries */
void              hp_test_unref_nullable (gpointer            object);

/* Counts the emissions of @signal on @instance in *@counter */
gulong            hp_test_count_signal  (gpointer             instance,
                                         const gchar         *signal,
                                         guint               *counter);

/* Property values of an object, as g_object_get() gives them; an object
 * value is borrowed (the object keeps its reference) */
gint              hp_test_get_int       (gpointer             object,
                                         const gchar         *name);
guint             hp_test_get_uint      (gpointer             object,
                                         const gchar         *name);
gdouble           hp_test_get_double    (gpointer             object,
                                         const gchar         *name);
gboolean          hp_test_get_boolean   (gpointer             object,
                                         const gchar         *name);
gpointer          hp_test_get_object    (gpointer             object,
                                         const gchar         *name);

/* Small classes of the tests: the macros write the whole of a final
 * type that has no instance data: its struct, the type, and empty class
 * and instance inits, or a class init naming the owner of a
 * configuration type. */
#define HP_TEST_DEFINE_EMPTY_TYPE(TypeName, type_name, ParentName, PARENT_TYPE) \
  struct _##TypeName { ParentName parent_instance; };                      \
  G_DEFINE_FINAL_TYPE (TypeName, type_name, PARENT_TYPE)                   \
  static void type_name##_class_init (TypeName##Class *klass) { }          \
  static void type_name##_init (TypeName *self) { }

#define HP_TEST_DEFINE_EMPTY_TYPE_WITH_INTERFACE(TypeName, type_name, ParentName, PARENT_TYPE, \
                                                 IFACE_TYPE, iface_init)                     \
  struct _##TypeName { ParentName parent_instance; };                                         \
  G_DEFINE_FINAL_TYPE_WITH_CODE (TypeName, type_name, PARENT_TYPE,                            \
                                 G_IMPLEMENT_INTERFACE (IFACE_TYPE, iface_init))              \
  static void type_name##_class_init (TypeName##Class *klass) { }                             \
  static void type_name##_init (TypeName *self) { }

#define HP_TEST_DEFINE_OWNED_CONFIG(TypeName, type_name, ParentName, PARENT_TYPE, OWNER_TYPE) \
  struct _##TypeName { ParentName parent_instance; };                                        \
  G_DEFINE_FINAL_TYPE (TypeName, type_name, PARENT_TYPE)                                     \
  static void type_name##_class_init (TypeName##Class *klass)                                \
  {                                                                                          \
    hp_config_class_set_owner_type (HP_CONFIG_CLASS (klass), OWNER_TYPE);                    \
  }                                                                                          \
  static void type_name##_init (TypeName *self) { }

#define HP_TEST_SHAPE(...) ((const gint64[]) { __VA_ARGS__ }), \
  (sizeof ((const gint64[]) { __VA_ARGS__ }) / sizeof (gint64))
#define HP_TEST_DATA(...) ((const gdouble[]) { __VA_ARGS__ }), \
  (sizeof ((const gdouble[]) { __VA_ARGS__ }) / sizeof (gdouble))

G_END_DECLS
