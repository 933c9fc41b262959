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

/* Asserts that @result is NULL and @error has @code and contains
 * @message_part; frees the error. */
void      hp_test_assert_error  (gpointer        result,
                                 GError        **error,
                                 gint            code,
                                 const gchar    *message_part);

#define HP_TEST_SHAPE(...) ((const gint64[]) { __VA_ARGS__ }), \
  (sizeof ((const gint64[]) { __VA_ARGS__ }) / sizeof (gint64))
#define HP_TEST_DATA(...) ((const gdouble[]) { __VA_ARGS__ }), \
  (sizeof ((const gdouble[]) { __VA_ARGS__ }) / sizeof (gdouble))

G_END_DECLS
