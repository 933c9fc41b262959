/* test-optim.c: optimizers and gradient clipping on one rank
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The expected values are worked out by hand in the comments, follow
 * from closed forms (AdamW with a constant gradient moves every element
 * by lr * g / (|g| + eps) per step), or come from the reference loops
 * below, which write the PyTorch update rules out in the textbook form
 * (bias-corrected moments for AdamW) with gradients computed
 * analytically, independently of the library's arithmetic and autograd.
 */

#include <math.h>
#include <string.h>

#include <gio/gio.h>

#include "hp-test-utils.h"

/* An optimizer that does not implement step */
#define TEST_TYPE_NO_STEP (test_no_step_get_type ())
G_DECLARE_FINAL_TYPE (TestNoStep, test_no_step, TEST, NO_STEP, HpOptimizer)

struct _TestNoStep
{
  HpOptimizer parent_instance;
};

G_DEFINE_FINAL_TYPE (TestNoStep, test_no_step, HP_TYPE_OPTIMIZER)

static void
test_no_step_class_init (TestNoStepClass *klass)
{
}

static void
test_no_step_init (TestNoStep *self)
{
}

static void
count_cb (GObject    *object,
          GParamSpec *pspec,
          gpointer    user_data)
{
  (*(guint *) user_data)++;
}

static GPtrArray *
tensor_list (HpTensor *first,
             ...)
{
  GPtrArray *out = g_ptr_array_new_with_free_func (g_object_unref);
  va_list args;

  va_start (args, first);
  for (HpTensor *t = first; t != NULL; t = va_arg (args, HpTensor *))
    g_ptr_array_add (out, g_object_ref (t));
  va_end (args);
  return out;
}

static HpTensor *
param_new (HpDType        dtype,
           const gdouble *data,
           gsize          n)
{
  HpTensor *t = hp_test_tensor (dtype, data, n, (const gint64[]) { (gint64) n }, 1);

  hp_tensor_set_requires_grad (t, TRUE);
  return t;
}

static HpOptimizer *
optimizer_new (HpOptimizerConfig *config,
               GPtrArray         *params)
{
  g_autoptr(GError) error = NULL;
  HpOptimizer *opt = hp_optimizer_config_build_optimizer (config, params, &error);

  g_assert_no_error (error);
  g_assert_nonnull (opt);
  return opt;
}

static void
step_ok (HpOptimizer *opt)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (hp_optimizer_step (opt, &error));
  g_assert_no_error (error);
}

/* Sets the gradient of @p to the values @g, as a new tensor */
static void
set_grad (HpTensor      *p,
          const gdouble *g)
{
  g_autoptr(HpTensor) grad = hp_test_tensor (hp_tensor_get_dtype (p), g, hp_tensor_get_numel (p),
                                             hp_tensor_get_shape (p, NULL), hp_tensor_get_ndim (p));

  hp_tensor_set_grad (p, grad);
}

/* loss = sum (c * p * p + d * p) through autograd, so that the gradient
 * is 2 c p + d */
static void
quadratic_backward (HpTensor      *p,
                    const gdouble *c,
                    const gdouble *d)
{
  g_autoptr(GError) error = NULL;
  gint64 n = hp_tensor_get_numel (p);
  g_autoptr(HpTensor) ct = hp_test_tensor (hp_tensor_get_dtype (p), c, n, &n, 1);
  g_autoptr(HpTensor) dt = hp_test_tensor (hp_tensor_get_dtype (p), d, n, &n, 1);
  g_autoptr(HpTensor) pp = hp_tensor_mul (p, p, &error);
  g_autoptr(HpTensor) cpp = hp_tensor_mul (ct, pp, &error);
  g_autoptr(HpTensor) dp = hp_tensor_mul (dt, p, &error);
  g_autoptr(HpTensor) sum = hp_tensor_add (cpp, dp, &error);
  g_autoptr(HpTensor) loss = hp_tensor_sum_all (sum, &error);

  g_assert_no_error (error);
  g_assert_true (hp_tensor_backward (loss, NULL, &error));
  g_assert_no_error (error);
}

static void
assert_tensor (HpTensor      *t,
               const gdouble *expected,
               gsize          n,
               gdouble        rtol,
               gdouble        atol)
{
  hp_test_assert_values (t, expected, n, (const gint64[]) { (gint64) n }, 1, rtol, atol);
}

/* torch.optim.SGD, written out */
typedef struct
{
  gdouble lr, wd, momentum, dampening;
  gboolean nesterov;
} SgdHyper;

static void
sgd_reference (const SgdHyper *h,
               gdouble        *p,
               gdouble        *buf,
               gboolean       *has_buf,
               const gdouble  *grad,
               gsize           n)
{
  for (gsize i = 0; i < n; i++)
    {
      gdouble d = grad[i] + h->wd * p[i];

      if (h->momentum != 0)
        {
          buf[i] = *has_buf ? h->momentum * buf[i] + (1 - h->dampening) * d : d;
          d = h->nesterov ? d + h->momentum * buf[i] : buf[i];
        }
      p[i] -= h->lr * d;
    }
  *has_buf = TRUE;
}

/* AdamW in the textbook form: bias-corrected moments */
typedef struct
{
  gdouble lr, wd, beta1, beta2, eps;
} AdamHyper;

static void
adamw_reference (const AdamHyper *h,
                 gint             t,
                 gdouble         *p,
                 gdouble         *m,
                 gdouble         *v,
                 const gdouble   *grad,
                 gsize            n)
{
  for (gsize i = 0; i < n; i++)
    {
      gdouble m_hat, v_hat;

      p[i] *= 1 - h->lr * h->wd;
      m[i] = h->beta1 * m[i] + (1 - h->beta1) * grad[i];
      v[i] = h->beta2 * v[i] + (1 - h->beta2) * grad[i] * grad[i];
      m_hat = m[i] / (1 - pow (h->beta1, t));
      v_hat = v[i] / (1 - pow (h->beta2, t));
      p[i] -= h->lr * m_hat / (sqrt (v_hat) + h->eps);
    }
}

static HpOptimizerConfig *
sgd_config (gdouble  lr,
            gdouble  momentum,
            gdouble  dampening,
            gboolean nesterov,
            gdouble  wd)
{
  return g_object_new (HP_TYPE_SGD_CONFIG, "lr", lr, "momentum", momentum, "dampening", dampening,
                       "nesterov", nesterov, "weight-decay", wd, NULL);
}

static void
test_sgd_plain (void)
{
  g_autoptr(HpOptimizerConfig) config = sgd_config (0.1, 0, 0, FALSE, 0);
  g_autoptr(HpTensor) p = param_new (HP_DTYPE_FLOAT64, HP_TEST_DATA (1, -2, 3));
  g_autoptr(HpTensor) alias = hp_tensor_detach (p);
  g_autoptr(GPtrArray) params = tensor_list (p, NULL);
  g_autoptr(HpOptimizer) opt = optimizer_new (config, params);
  g_autoptr(HpStateDict) state = NULL;
  g_autoptr(GPtrArray) held = NULL;
  guint n_step_notify = 0;

  g_assert_true (HP_IS_SGD (opt));
  g_signal_connect (opt, "notify::step-count", G_CALLBACK (count_cb), &n_step_notify);

  /* loss = sum (p * [0.5, 1, -1]): gradient [0.5, 1, -1];
   * p - 0.1 g = [0.95, -2.1, 3.1] */
  quadratic_backward (p, (const gdouble[]) { 0, 0, 0 }, (const gdouble[]) { 0.5, 1, -1 });
  step_ok (opt);
  assert_tensor (p, HP_TEST_DATA (0.95, -2.1, 3.1), 1e-15, 0);
  /* in place: the parameter object and its buffer */
  assert_tensor (alias, HP_TEST_DATA (0.95, -2.1, 3.1), 1e-15, 0);
  held = hp_optimizer_get_parameters (opt);
  g_assert_true (g_ptr_array_index (held, 0) == p);
  g_assert_true (hp_tensor_get_requires_grad (p));
  g_assert_true (hp_tensor_is_leaf (p));

  g_assert_cmpuint (hp_optimizer_get_step_count (opt), ==, 1);
  g_assert_cmpuint (n_step_notify, ==, 1);

  /* the gradient stays until zero_grad: a second step applies it again */
  step_ok (opt);
  assert_tensor (p, HP_TEST_DATA (0.9, -2.2, 3.2), 1e-15, 0);
  g_assert_cmpuint (hp_optimizer_get_step_count (opt), ==, 2);
  g_assert_cmpuint (n_step_notify, ==, 2);

  /* no momentum, no state */
  state = hp_optimizer_get_state (opt);
  g_assert_cmpuint (hp_state_dict_get_size (state), ==, 0);
}

/* Runs @n_steps steps of SGD from @p0 with the constant gradient @g on
 * a one-element parameter; returns the final value */
static gdouble
sgd_constant (HpOptimizerConfig *config,
              gdouble            p0,
              gdouble            g,
              guint              n_steps)
{
  g_autoptr(HpTensor) p = param_new (HP_DTYPE_FLOAT64, &p0, 1);
  g_autoptr(GPtrArray) params = tensor_list (p, NULL);
  g_autoptr(HpOptimizer) opt = optimizer_new (config, params);
  g_autoptr(GError) error = NULL;
  gdouble value;

  set_grad (p, &g);
  for (guint i = 0; i < n_steps; i++)
    step_ok (opt);
  value = hp_tensor_item (p, &error);
  g_assert_no_error (error);
  return value;
}

static void
test_sgd_hand_computed (void)
{
  g_autoptr(HpOptimizerConfig) momentum = sgd_config (0.1, 0.9, 0, FALSE, 0);
  g_autoptr(HpOptimizerConfig) dampened = sgd_config (0.1, 0.9, 0.5, FALSE, 0);
  g_autoptr(HpOptimizerConfig) nesterov = sgd_config (0.1, 0.9, 0, TRUE, 0);
  g_autoptr(HpOptimizerConfig) decay = sgd_config (0.1, 0, 0, FALSE, 0.1);

  /* momentum 0.9, g = 1: b1 = 1, p1 = -0.1; b2 = 0.9 + 1 = 1.9,
   * p2 = -0.1 - 0.19 = -0.29 */
  g_assert_cmpfloat_with_epsilon (sgd_constant (momentum, 0, 1, 1), -0.1, 1e-15);
  g_assert_cmpfloat_with_epsilon (sgd_constant (momentum, 0, 1, 2), -0.29, 1e-15);
  /* b3 = 0.9 * 1.9 + 1 = 2.71, p3 = -0.29 - 0.271 = -0.561 */
  g_assert_cmpfloat_with_epsilon (sgd_constant (momentum, 0, 1, 3), -0.561, 1e-15);

  /* dampening 0.5: the first step copies g (b1 = 1, p1 = -0.1); then
   * b2 = 0.9 + 0.5 = 1.4, p2 = -0.1 - 0.14 = -0.24 */
  g_assert_cmpfloat_with_epsilon (sgd_constant (dampened, 0, 1, 1), -0.1, 1e-15);
  g_assert_cmpfloat_with_epsilon (sgd_constant (dampened, 0, 1, 2), -0.24, 1e-15);

  /* Nesterov: b1 = 1, step 1 + 0.9 * 1 = 1.9, p1 = -0.19; b2 = 1.9,
   * step 1 + 0.9 * 1.9 = 2.71, p2 = -0.19 - 0.271 = -0.461 */
  g_assert_cmpfloat_with_epsilon (sgd_constant (nesterov, 0, 1, 1), -0.19, 1e-15);
  g_assert_cmpfloat_with_epsilon (sgd_constant (nesterov, 0, 1, 2), -0.461, 1e-15);

  /* weight decay 0.1, g = 0: p1 = 1 - 0.1 * 0.1 * 1 = 0.99,
   * p2 = 0.99 * 0.99 = 0.9801 */
  g_assert_cmpfloat_with_epsilon (sgd_constant (decay, 1, 0, 1), 0.99, 1e-15);
  g_assert_cmpfloat_with_epsilon (sgd_constant (decay, 1, 0, 2), 0.9801, 1e-15);
}

static void
check_sgd_reference (const SgdHyper *h)
{
  const gdouble c[] = { 0.5, 1.5, 0.25, 2.0, 0.75 };
  const gdouble d[] = { -1.0, 0.5, 2.0, -0.25, 1.0 };
  gdouble p_ref[] = { 0.3, -1.2, 2.5, 0.8, -0.6 };
  gdouble buf[5] = { 0 };
  gboolean has_buf = FALSE;
  g_autoptr(HpOptimizerConfig) config = sgd_config (h->lr, h->momentum, h->dampening, h->nesterov, h->wd);
  g_autoptr(HpTensor) p = param_new (HP_DTYPE_FLOAT64, p_ref, 5);
  g_autoptr(GPtrArray) params = tensor_list (p, NULL);
  g_autoptr(HpOptimizer) opt = optimizer_new (config, params);

  for (guint step = 0; step < 6; step++)
    {
      gdouble grad[5];

      for (guint i = 0; i < 5; i++)
        grad[i] = 2 * c[i] * p_ref[i] + d[i];

      hp_optimizer_zero_grad (opt);
      quadratic_backward (p, c, d);
      step_ok (opt);
      sgd_reference (h, p_ref, buf, &has_buf, grad, 5);
      assert_tensor (p, p_ref, 5, 1e-12, 1e-14);
    }

  if (h->momentum != 0)
    {
      g_autoptr(HpStateDict) state = hp_optimizer_get_state (opt);

      g_assert_cmpuint (hp_state_dict_get_size (state), ==, 1);
      g_assert_cmpstr (hp_state_dict_get_name (state, 0), ==, "0.momentum_buffer");
      assert_tensor (hp_state_dict_lookup (state, "0.momentum_buffer"), buf, 5, 1e-12, 1e-14);
    }
}

static void
test_sgd_reference (void)
{
  const SgdHyper cases[] = {
    { 0.05, 0, 0, 0, FALSE },
    { 0.05, 0, 0.9, 0, FALSE },
    { 0.05, 0.01, 0.9, 0.1, FALSE },
    { 0.02, 0.05, 0.8, 0, TRUE },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    check_sgd_reference (&cases[i]);
}

static void
test_sgd_float32 (void)
{
  g_autoptr(HpOptimizerConfig) config = sgd_config (0.1, 0.9, 0, FALSE, 0);
  g_autoptr(HpTensor) p = param_new (HP_DTYPE_FLOAT32, HP_TEST_DATA (0, 1));
  g_autoptr(GPtrArray) params = tensor_list (p, NULL);
  g_autoptr(HpOptimizer) opt = optimizer_new (config, params);
  g_autoptr(HpStateDict) state = NULL;

  set_grad (p, (const gdouble[]) { 1, -1 });
  step_ok (opt);
  step_ok (opt);
  /* as test_sgd_hand_computed: -0.29 and 1.29 */
  g_assert_cmpint (hp_tensor_get_dtype (p), ==, HP_DTYPE_FLOAT32);
  assert_tensor (p, HP_TEST_DATA (-0.29, 1.29), 1e-6, 0);
  state = hp_optimizer_get_state (opt);
  g_assert_cmpint (hp_tensor_get_dtype (hp_state_dict_lookup (state, "0.momentum_buffer")), ==,
                   HP_DTYPE_FLOAT32);
  assert_tensor (hp_state_dict_lookup (state, "0.momentum_buffer"), HP_TEST_DATA (1.9, -1.9), 1e-6, 0);
}

static HpOptimizerConfig *
adamw_config (const AdamHyper *h)
{
  return g_object_new (HP_TYPE_ADAMW_CONFIG, "lr", h->lr, "weight-decay", h->wd,
                       "beta1", h->beta1, "beta2", h->beta2, "eps", h->eps, NULL);
}

static void
test_adamw_closed_form (void)
{
  /* defaults but for lr and weight decay 0: with a constant gradient,
   * m_t = (1 - b1^t) g and v_t = (1 - b2^t) g^2, so every step moves
   * by lr * g / (|g| + eps) */
  const AdamHyper h = { 0.01, 0, 0.9, 0.999, 1e-8 };
  const gdouble g[] = { 0.5, -2, 1e-3, 0 };
  const gdouble p0[] = { 1, 2, -3, 4 };
  g_autoptr(HpOptimizerConfig) config = adamw_config (&h);
  g_autoptr(HpTensor) p = param_new (HP_DTYPE_FLOAT64, p0, 4);
  g_autoptr(GPtrArray) params = tensor_list (p, NULL);
  g_autoptr(HpOptimizer) opt = optimizer_new (config, params);

  set_grad (p, g);
  for (guint t = 1; t <= 5; t++)
    {
      gdouble expected[4];

      step_ok (opt);
      for (guint i = 0; i < 4; i++)
        expected[i] = p0[i] - t * h.lr * g[i] / (fabs (g[i]) + h.eps);
      assert_tensor (p, expected, 4, 1e-12, 1e-15);
    }
}

static void
test_adamw_first_step_decay (void)
{
  /* the defaults (lr 1e-3, weight decay 1e-2): step 1 is
   * p (1 - lr wd) - lr g / (|g| + eps), so for p = 2, g = 4:
   * 1.99998 - 1e-3 / (1 + 2.5e-9) = 1.99998 - 0.0009999999975
   * and for p = -1, g = 0.5:
   * -0.99999 - 1e-3 / (1 + 2e-8) = -0.99999 - 0.00099999998 */
  g_autoptr(HpAdamWConfig) config = hp_adamw_config_new ();
  g_autoptr(HpTensor) p = param_new (HP_DTYPE_FLOAT64, HP_TEST_DATA (2, -1));
  g_autoptr(GPtrArray) params = tensor_list (p, NULL);
  g_autoptr(HpOptimizer) opt = optimizer_new (HP_OPTIMIZER_CONFIG (config), params);

  set_grad (p, (const gdouble[]) { 4, 0.5 });
  step_ok (opt);
  assert_tensor (p, HP_TEST_DATA (1.9989800000025, -1.00098999998), 1e-14, 0);
}

static void
test_adamw_reference (void)
{
  const AdamHyper h = { 0.05, 0.1, 0.8, 0.95, 1e-6 };
  const gdouble c[] = { 0.5, 1.5, 0.25, 2.0 };
  const gdouble d[] = { -1.0, 0.5, 2.0, -0.25 };
  gdouble p_ref[] = { 0.3, -1.2, 2.5, 0.8 };
  gdouble m[4] = { 0 }, v[4] = { 0 };
  g_autoptr(HpOptimizerConfig) config = adamw_config (&h);
  g_autoptr(HpTensor) p = param_new (HP_DTYPE_FLOAT64, p_ref, 4);
  g_autoptr(GPtrArray) params = tensor_list (p, NULL);
  g_autoptr(HpOptimizer) opt = optimizer_new (config, params);
  g_autoptr(HpStateDict) state = NULL;
  g_autoptr(GError) error = NULL;

  for (gint t = 1; t <= 8; t++)
    {
      gdouble grad[4];

      for (guint i = 0; i < 4; i++)
        grad[i] = 2 * c[i] * p_ref[i] + d[i];

      hp_optimizer_zero_grad (opt);
      quadratic_backward (p, c, d);
      step_ok (opt);
      adamw_reference (&h, t, p_ref, m, v, grad, 4);
      assert_tensor (p, p_ref, 4, 1e-12, 1e-14);
    }

  state = hp_optimizer_get_state (opt);
  g_assert_cmpuint (hp_state_dict_get_size (state), ==, 3);
  g_assert_cmpstr (hp_state_dict_get_name (state, 0), ==, "0.step");
  g_assert_cmpstr (hp_state_dict_get_name (state, 1), ==, "0.exp_avg");
  g_assert_cmpstr (hp_state_dict_get_name (state, 2), ==, "0.exp_avg_sq");
  g_assert_cmpfloat (hp_tensor_item (hp_state_dict_lookup (state, "0.step"), &error), ==, 8.0);
  g_assert_no_error (error);
  assert_tensor (hp_state_dict_lookup (state, "0.exp_avg"), m, 4, 1e-12, 1e-15);
  assert_tensor (hp_state_dict_lookup (state, "0.exp_avg_sq"), v, 4, 1e-12, 1e-15);
}

/* The float32 update (a loop of its own, vectorised) against the double
 * reference over 8 steps, on more elements than a vector holds and not
 * a multiple of its width; beta1 on either side of 0.5 takes lerp from
 * either end */
static void
test_adamw_float32 (void)
{
  const AdamHyper hypers[] = {
    { 0.05, 0.1, 0.9, 0.999, 1e-8 },
    { 0.02, 0.3, 0.3, 0.95, 1e-6 },
  };

  for (guint k = 0; k < G_N_ELEMENTS (hypers); k++)
    {
      const AdamHyper *h = &hypers[k];
      gdouble p_ref[37], m[37] = { 0 }, v[37] = { 0 };
      g_autoptr(HpOptimizerConfig) config = adamw_config (h);
      g_autoptr(HpTensor) p = NULL;
      g_autoptr(GPtrArray) params = NULL;
      g_autoptr(HpOptimizer) opt = NULL;

      for (guint i = 0; i < G_N_ELEMENTS (p_ref); i++)
        p_ref[i] = ((gint) i - 18) * 0.125;
      p = param_new (HP_DTYPE_FLOAT32, p_ref, G_N_ELEMENTS (p_ref));
      params = tensor_list (p, NULL);
      opt = optimizer_new (config, params);

      for (gint t = 1; t <= 8; t++)
        {
          gdouble grad[37];

          for (guint i = 0; i < G_N_ELEMENTS (grad); i++)
            grad[i] = ((gint) (i * 7 % 37) - 18 + t) * 0.0625;
          set_grad (p, grad);
          step_ok (opt);
          adamw_reference (h, t, p_ref, m, v, grad, G_N_ELEMENTS (p_ref));
          g_assert_cmpint (hp_tensor_get_dtype (p), ==, HP_DTYPE_FLOAT32);
          assert_tensor (p, p_ref, G_N_ELEMENTS (p_ref), 2e-6, 1e-7);
        }
    }
}

static void
test_skip_without_grad (void)
{
  const AdamHyper h = { 0.01, 0, 0.9, 0.999, 1e-8 };
  g_autoptr(HpOptimizerConfig) config = adamw_config (&h);
  g_autoptr(HpTensor) a = param_new (HP_DTYPE_FLOAT64, HP_TEST_DATA (1, 1));
  g_autoptr(HpTensor) b = param_new (HP_DTYPE_FLOAT64, HP_TEST_DATA (5));
  g_autoptr(HpTensor) frozen = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (7), HP_TEST_SHAPE (1));
  g_autoptr(GPtrArray) params = tensor_list (a, b, frozen, NULL);
  g_autoptr(HpOptimizer) opt = optimizer_new (config, params);
  g_autoptr(HpStateDict) state = NULL;
  g_autoptr(HpStateDict) later = NULL;
  g_autoptr(GError) error = NULL;

  /* only a has a gradient for two steps: b and the frozen tensor (no
   * requires-grad, which is allowed) keep their values and get no
   * state */
  set_grad (a, (const gdouble[]) { 1, -1 });
  step_ok (opt);
  step_ok (opt);
  assert_tensor (a, HP_TEST_DATA (1 - 0.02 / (1 + 1e-8), 1 + 0.02 / (1 + 1e-8)), 1e-12, 0);
  assert_tensor (b, HP_TEST_DATA (5), 0, 0);
  assert_tensor (frozen, HP_TEST_DATA (7), 0, 0);
  state = hp_optimizer_get_state (opt);
  g_assert_cmpuint (hp_state_dict_get_size (state), ==, 3);
  g_assert_false (hp_state_dict_contains (state, "1.step"));

  /* b's first update is its own step 1: a move of lr whatever the
   * optimizer's step count */
  set_grad (b, (const gdouble[]) { 3 });
  step_ok (opt);
  g_assert_cmpuint (hp_optimizer_get_step_count (opt), ==, 3);
  assert_tensor (b, HP_TEST_DATA (5 - 0.01 * 3 / (3 + 1e-8)), 1e-14, 0);
  assert_tensor (frozen, HP_TEST_DATA (7), 0, 0);
  later = hp_optimizer_get_state (opt);
  g_assert_cmpfloat (hp_tensor_item (hp_state_dict_lookup (later, "0.step"), &error), ==, 3.0);
  g_assert_cmpfloat (hp_tensor_item (hp_state_dict_lookup (later, "1.step"), &error), ==, 1.0);
  g_assert_no_error (error);
  g_assert_false (hp_state_dict_contains (later, "2.step"));
  g_assert_cmpuint (hp_state_dict_get_size (later), ==, 6);
  g_assert_cmpstr (hp_state_dict_get_name (later, 3), ==, "1.step");
}

static void
test_zero_grad (void)
{
  g_autoptr(HpOptimizerConfig) config = sgd_config (0.1, 0, 0, FALSE, 0);
  g_autoptr(HpTensor) a = param_new (HP_DTYPE_FLOAT64, HP_TEST_DATA (1, 2));
  g_autoptr(HpTensor) b = param_new (HP_DTYPE_FLOAT64, HP_TEST_DATA (3));
  g_autoptr(GPtrArray) params = tensor_list (a, b, NULL);
  g_autoptr(HpOptimizer) opt = optimizer_new (config, params);

  quadratic_backward (a, (const gdouble[]) { 1, 1 }, (const gdouble[]) { 0, 0 });
  set_grad (b, (const gdouble[]) { 1 });
  g_assert_nonnull (hp_tensor_get_grad (a));
  g_assert_nonnull (hp_tensor_get_grad (b));

  hp_optimizer_zero_grad (opt);
  g_assert_null (hp_tensor_get_grad (a));
  g_assert_null (hp_tensor_get_grad (b));

  /* a step without gradients changes nothing but the count */
  step_ok (opt);
  assert_tensor (a, HP_TEST_DATA (1, 2), 0, 0);
  assert_tensor (b, HP_TEST_DATA (3), 0, 0);
  g_assert_cmpuint (hp_optimizer_get_step_count (opt), ==, 1);
}

static void
test_lr (void)
{
  g_autoptr(HpOptimizerConfig) config = sgd_config (0.5, 0, 0, FALSE, 0);
  g_autoptr(HpTensor) p = param_new (HP_DTYPE_FLOAT64, HP_TEST_DATA (1));
  g_autoptr(GPtrArray) params = tensor_list (p, NULL);
  g_autoptr(HpOptimizer) opt = optimizer_new (config, params);
  guint n_notify = 0;
  gdouble lr = 0;

  g_signal_connect (opt, "notify::lr", G_CALLBACK (count_cb), &n_notify);
  g_assert_cmpfloat (hp_optimizer_get_lr (opt), ==, 0.5);

  set_grad (p, (const gdouble[]) { 1 });
  step_ok (opt);
  assert_tensor (p, HP_TEST_DATA (0.5), 1e-15, 0);

  /* a schedule lowers it: the next step uses the new rate */
  hp_optimizer_set_lr (opt, 0.25);
  g_assert_cmpuint (n_notify, ==, 1);
  hp_optimizer_set_lr (opt, 0.25);
  g_assert_cmpuint (n_notify, ==, 1);
  step_ok (opt);
  assert_tensor (p, HP_TEST_DATA (0.25), 1e-15, 0);

  g_object_set (opt, "lr", 0.125, NULL);
  g_assert_cmpuint (n_notify, ==, 2);
  g_object_get (opt, "lr", &lr, NULL);
  g_assert_cmpfloat (lr, ==, 0.125);
  step_ok (opt);
  assert_tensor (p, HP_TEST_DATA (0.125), 1e-15, 0);

  /* the configurations, the given one and the optimizer's copy, keep
   * the starting rate */
  g_assert_cmpfloat (hp_optimizer_config_get_lr (config), ==, 0.5);
  g_assert_cmpfloat (hp_optimizer_config_get_lr (HP_OPTIMIZER_CONFIG (
                       hp_configurable_get_config (HP_CONFIGURABLE (opt)))), ==, 0.5);
}

static void
test_config (void)
{
  g_autoptr(HpSGDConfig) sgd = hp_sgd_config_new ();
  g_autoptr(HpAdamWConfig) adamw = hp_adamw_config_new ();
  g_autoptr(HpConfig) read = NULL;
  g_autoptr(HpConfig) changed = NULL;
  g_autoptr(GObject) built = NULL;
  g_autoptr(HpOptimizer) empty = NULL;
  g_autoptr(HpTensor) p = param_new (HP_DTYPE_FLOAT64, HP_TEST_DATA (1));
  g_autoptr(HpTensor) q = param_new (HP_DTYPE_FLOAT64, HP_TEST_DATA (2));
  g_autoptr(GPtrArray) first = tensor_list (p, NULL);
  g_autoptr(GPtrArray) second = tensor_list (q, NULL);
  g_autoptr(GPtrArray) held = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree gchar *json = NULL;
  guint n_notify = 0;

  /* defaults of torch.optim.SGD and torch.optim.AdamW */
  g_assert_cmpfloat (hp_optimizer_config_get_lr (HP_OPTIMIZER_CONFIG (sgd)), ==, 1e-3);
  g_assert_cmpfloat (hp_optimizer_config_get_weight_decay (HP_OPTIMIZER_CONFIG (sgd)), ==, 0);
  g_assert_cmpfloat (hp_sgd_config_get_momentum (sgd), ==, 0);
  g_assert_cmpfloat (hp_sgd_config_get_dampening (sgd), ==, 0);
  g_assert_false (hp_sgd_config_get_nesterov (sgd));
  g_assert_cmpfloat (hp_optimizer_config_get_lr (HP_OPTIMIZER_CONFIG (adamw)), ==, 1e-3);
  g_assert_cmpfloat (hp_optimizer_config_get_weight_decay (HP_OPTIMIZER_CONFIG (adamw)), ==, 1e-2);
  g_assert_cmpfloat (hp_adamw_config_get_beta1 (adamw), ==, 0.9);
  g_assert_cmpfloat (hp_adamw_config_get_beta2 (adamw), ==, 0.999);
  g_assert_cmpfloat (hp_adamw_config_get_eps (adamw), ==, 1e-8);

  /* setters notify once per change */
  g_signal_connect (sgd, "notify", G_CALLBACK (count_cb), &n_notify);
  hp_sgd_config_set_momentum (sgd, 0.9);
  hp_sgd_config_set_momentum (sgd, 0.9);
  hp_sgd_config_set_dampening (sgd, 0.25);
  hp_sgd_config_set_nesterov (sgd, TRUE);
  hp_optimizer_config_set_lr (HP_OPTIMIZER_CONFIG (sgd), 0.5);
  hp_optimizer_config_set_weight_decay (HP_OPTIMIZER_CONFIG (sgd), 0.125);
  g_assert_cmpuint (n_notify, ==, 5);
  g_assert_cmpfloat (hp_sgd_config_get_dampening (sgd), ==, 0.25);
  g_assert_true (hp_sgd_config_get_nesterov (sgd));
  hp_adamw_config_set_beta1 (adamw, 0.5);
  hp_adamw_config_set_beta2 (adamw, 0.75);
  hp_adamw_config_set_eps (adamw, 1e-6);
  g_assert_cmpfloat (hp_adamw_config_get_beta1 (adamw), ==, 0.5);
  g_assert_cmpfloat (hp_adamw_config_get_beta2 (adamw), ==, 0.75);
  g_assert_cmpfloat (hp_adamw_config_get_eps (adamw), ==, 1e-6);

  /* strict JSON round trip, weight decay included */
  json = hp_config_to_json (HP_CONFIG (adamw), FALSE);
  g_assert_nonnull (strstr (json, "\"weight-decay\": 0.01"));
  read = hp_config_new_from_json (HP_TYPE_ADAMW_CONFIG, json, &error);
  g_assert_no_error (error);
  g_assert_true (hp_config_equal (read, HP_CONFIG (adamw)));
  hp_test_assert_error (hp_config_new_from_json (HP_TYPE_ADAMW_CONFIG, "{\"beta1\": 1.5}", &error),
                        &error, HP_ERROR_CONFIG, "beta1");

  /* hp_config_build, then parameters added in two calls */
  changed = hp_config_replace (HP_CONFIG (sgd), "nesterov", FALSE, NULL);
  built = hp_config_build (changed, &error);
  g_assert_no_error (error);
  g_assert_true (HP_IS_SGD (built));
  g_assert_cmpfloat (hp_optimizer_get_lr (HP_OPTIMIZER (built)), ==, 0.5);
  g_assert_cmpuint (hp_optimizer_get_n_parameters (HP_OPTIMIZER (built)), ==, 0);
  g_assert_true (hp_optimizer_add_parameters (HP_OPTIMIZER (built), first, &error));
  g_assert_true (hp_optimizer_add_parameters (HP_OPTIMIZER (built), second, &error));
  g_assert_no_error (error);
  held = hp_optimizer_get_parameters (HP_OPTIMIZER (built));
  g_assert_cmpuint (held->len, ==, 2);
  g_assert_true (g_ptr_array_index (held, 0) == p);
  g_assert_true (g_ptr_array_index (held, 1) == q);

  /* no parameters yet */
  empty = hp_optimizer_config_build_optimizer (HP_OPTIMIZER_CONFIG (adamw), NULL, &error);
  g_assert_no_error (error);
  g_assert_true (HP_IS_ADAMW (empty));
  g_assert_cmpuint (hp_optimizer_get_n_parameters (empty), ==, 0);
  step_ok (empty);
}

static void
test_errors (void)
{
  g_autoptr(HpOptimizerConfig) config = sgd_config (0.1, 0, 0, FALSE, 0);
  g_autoptr(HpOptimizerConfig) bad_nesterov = sgd_config (0.1, 0, 0, TRUE, 0);
  g_autoptr(HpOptimizerConfig) bad_dampening = sgd_config (0.1, 0.9, 0.5, TRUE, 0);
  g_autoptr(HpAdamWConfig) bad_beta = hp_adamw_config_new ();
  g_autoptr(HpTensor) p = param_new (HP_DTYPE_FLOAT64, HP_TEST_DATA (1, 2));
  g_autoptr(HpTensor) q = param_new (HP_DTYPE_FLOAT64, HP_TEST_DATA (3));
  g_autoptr(HpTensor) ids = hp_test_tensor_ids ((const gint64[]) { 1, 2 }, 2, HP_TEST_SHAPE (2));
  g_autoptr(HpTensor) history = NULL;
  g_autoptr(GPtrArray) good = tensor_list (p, NULL);
  g_autoptr(GPtrArray) twice = tensor_list (q, q, NULL);
  g_autoptr(GPtrArray) again = tensor_list (q, p, NULL);
  g_autoptr(GPtrArray) with_ids = tensor_list (q, ids, NULL);
  g_autoptr(GPtrArray) with_history = NULL;
  g_autoptr(HpOptimizer) opt = NULL;
  g_autoptr(HpOptimizer) no_step = NULL;
  g_autoptr(GError) error = NULL;

  /* configurations that torch refuses too */
  hp_test_assert_error (hp_optimizer_config_build_optimizer (bad_nesterov, good, &error), &error, HP_ERROR_CONFIG,
                        "HpSGD: Nesterov momentum needs momentum > 0 and dampening 0, "
                        "not momentum 0 and dampening 0");
  hp_test_assert_error (hp_config_build (HP_CONFIG (bad_dampening), &error), &error, HP_ERROR_CONFIG,
                        "not momentum 0.9 and dampening 0.5");
  hp_adamw_config_set_beta2 (bad_beta, 1.0);
  hp_test_assert_error (hp_optimizer_config_build_optimizer (HP_OPTIMIZER_CONFIG (bad_beta), good, &error), &error,
                        HP_ERROR_CONFIG, "HpAdamW: beta1 and beta2 must be below 1, not 0.9 and 1");
  /* the configurations refuse them on their own, before anything is built */
  hp_test_assert_error (GINT_TO_POINTER (hp_config_validate (HP_CONFIG (bad_nesterov), &error)), &error,
                        HP_ERROR_CONFIG, "HpSGD: Nesterov momentum needs momentum > 0");
  hp_test_assert_error (GINT_TO_POINTER (hp_config_validate (HP_CONFIG (bad_beta), &error)), &error,
                        HP_ERROR_CONFIG, "HpAdamW: beta1 and beta2 must be below 1");

  /* an optimizer set up with a configuration of another class */
  {
    g_autoptr(HpModuleConfig) module_config = hp_module_config_new ();
    g_autoptr(GObject) foreign = g_object_new (HP_TYPE_SGD, "config", bad_beta, NULL);
    g_autoptr(GObject) not_optimizer = g_object_new (HP_TYPE_ADAMW, "config", module_config, NULL);

    hp_test_assert_error (GINT_TO_POINTER (g_initable_init (G_INITABLE (foreign), NULL, &error)), &error,
                          HP_ERROR_CONFIG, "HpSGD: the configuration must be an HpSGDConfig, not HpAdamWConfig");
    hp_test_assert_error (GINT_TO_POINTER (g_initable_init (G_INITABLE (not_optimizer), NULL, &error)), &error,
                          HP_ERROR_CONFIG,
                          "HpAdamW: the configuration of an optimizer must be an HpOptimizerConfig, "
                          "not HpModuleConfig");
  }

  opt = optimizer_new (config, good);

  /* bad parameters: nothing is added */
  hp_test_assert_error (GINT_TO_POINTER (hp_optimizer_add_parameters (opt, twice, &error)), &error,
                        HP_ERROR_INVALID_ARGUMENT,
                        "HpSGD: parameter 2 (float64 [1]) is already optimised, as parameter 1");
  hp_test_assert_error (GINT_TO_POINTER (hp_optimizer_add_parameters (opt, again, &error)), &error,
                        HP_ERROR_INVALID_ARGUMENT,
                        "HpSGD: parameter 2 (float64 [2]) is already optimised, as parameter 0");
  hp_test_assert_error (GINT_TO_POINTER (hp_optimizer_add_parameters (opt, with_ids, &error)), &error,
                        HP_ERROR_INVALID_ARGUMENT,
                        "HpSGD: cannot optimise parameter 2 (int64 [2]): only float32 and "
                        "float64 tensors have gradients");
  history = hp_tensor_scale (q, 2.0, &error);
  g_assert_no_error (error);
  with_history = tensor_list (history, NULL);
  hp_test_assert_error (GINT_TO_POINTER (hp_optimizer_add_parameters (opt, with_history, &error)), &error,
                        HP_ERROR_INVALID_ARGUMENT,
                        "HpSGD: cannot optimise parameter 1 (float64 [1]): it has gradient history "
                        "(only leaf tensors can be optimised)");
  g_assert_cmpuint (hp_optimizer_get_n_parameters (opt), ==, 1);

  /* an optimizer class without step */
  no_step = g_object_new (TEST_TYPE_NO_STEP, NULL);
  g_assert_null (hp_configurable_get_config (HP_CONFIGURABLE (no_step)));
  g_assert_cmpfloat (hp_optimizer_get_lr (no_step), ==, 1e-3);
  hp_test_assert_error (GINT_TO_POINTER (hp_optimizer_step (no_step, &error)), &error,
                        HP_ERROR_NOT_SUPPORTED, "TestNoStep does not implement step");
  g_assert_cmpuint (hp_optimizer_get_step_count (no_step), ==, 0);
}

/* The layout checks of the step, on a one-rank mesh */
static void
test_dtensor_errors (void)
{
  const gchar *tp[] = { "tp", NULL };
  const gchar *dp[] = { "dp", NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(HpDeviceMesh) mesh = hp_device_mesh_new ((const gint[]) { 1 }, 1, tp, &error);
  g_autoptr(HpDeviceMesh) other = hp_device_mesh_new ((const gint[]) { 1 }, 1, dp, &error);
  g_autoptr(HpPlacement) s0 = hp_placement_new_from_string ("S(0)", &error);
  g_autoptr(HpPlacement) r = hp_placement_new_from_string ("R", &error);
  g_autoptr(HpPlacement) partial = hp_placement_new_from_string ("P(sum)", &error);
  g_autoptr(GPtrArray) shard = g_ptr_array_new ();
  g_autoptr(GPtrArray) replicate = g_ptr_array_new ();
  g_autoptr(GPtrArray) summed = g_ptr_array_new ();
  g_autoptr(HpTensor) whole = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (1, 2), HP_TEST_SHAPE (2));
  g_autoptr(HpTensor) plain = param_new (HP_DTYPE_FLOAT64, HP_TEST_DATA (1, 2));
  g_autoptr(HpDTensor) param = NULL;
  g_autoptr(HpDTensor) partial_param = NULL;
  g_autoptr(HpDTensor) grad_r = NULL;
  g_autoptr(HpDTensor) grad_p = NULL;
  g_autoptr(HpDTensor) grad_other = NULL;
  g_autoptr(HpDTensor) grad_s0 = NULL;
  g_autoptr(GPtrArray) params = NULL;
  g_autoptr(GPtrArray) partial_params = NULL;
  g_autoptr(HpOptimizerConfig) config = sgd_config (0.5, 0.9, 0, FALSE, 0);
  g_autoptr(HpOptimizer) opt = NULL;
  g_autoptr(HpOptimizer) plain_opt = NULL;
  g_autoptr(HpStateDict) state = NULL;
  g_autoptr(GPtrArray) plain_params = NULL;
  HpTensor *buffer;

  g_assert_no_error (error);
  g_ptr_array_add (shard, s0);
  g_ptr_array_add (replicate, r);
  g_ptr_array_add (summed, partial);

  param = hp_dtensor_distribute (whole, mesh, shard, -1, &error);
  g_assert_no_error (error);
  hp_tensor_set_requires_grad (HP_TENSOR (param), TRUE);
  params = tensor_list (HP_TENSOR (param), NULL);
  opt = optimizer_new (config, params);

  /* a Partial DTensor is no parameter */
  partial_param = hp_dtensor_new_from_local (whole, mesh, summed, NULL, 0, FALSE, &error);
  g_assert_no_error (error);
  partial_params = tensor_list (HP_TENSOR (partial_param), NULL);
  hp_test_assert_error (GINT_TO_POINTER (hp_optimizer_add_parameters (opt, partial_params, &error)), &error,
                        HP_ERROR_PLACEMENT,
                        "HpSGD: cannot optimise parameter 1 (float64 [2]): a DTensor with "
                        "placements (P(sum)) holds partial values still to be reduced");

  /* gradients with the wrong layout: nothing changes */
  grad_p = hp_dtensor_new_from_local (whole, mesh, summed, NULL, 0, FALSE, &error);
  g_assert_no_error (error);
  hp_tensor_set_grad (HP_TENSOR (param), HP_TENSOR (grad_p));
  hp_test_assert_error (GINT_TO_POINTER (hp_optimizer_step (opt, &error)), &error, HP_ERROR_PLACEMENT,
                        "HpSGD: the gradient of parameter 0 has placements (P(sum)), but the "
                        "parameter has (S(0)): reduce the Partial gradient to the parameter's "
                        "placements (hp_dtensor_redistribute()) before the step");

  grad_r = hp_dtensor_new_from_local (whole, mesh, replicate, NULL, 0, FALSE, &error);
  g_assert_no_error (error);
  hp_tensor_set_grad (HP_TENSOR (param), HP_TENSOR (grad_r));
  hp_test_assert_error (GINT_TO_POINTER (hp_optimizer_step (opt, &error)), &error, HP_ERROR_PLACEMENT,
                        "HpSGD: the gradient of parameter 0 has placements (R), but the "
                        "parameter has (S(0))");

  grad_other = hp_dtensor_new_from_local (whole, other, shard, NULL, 0, FALSE, &error);
  g_assert_no_error (error);
  hp_tensor_set_grad (HP_TENSOR (param), HP_TENSOR (grad_other));
  hp_test_assert_error (GINT_TO_POINTER (hp_optimizer_step (opt, &error)), &error, HP_ERROR_MESH,
                        "HpSGD: the gradient of parameter 0 is on DeviceMesh");

  hp_tensor_set_grad (HP_TENSOR (param), whole);
  hp_test_assert_error (GINT_TO_POINTER (hp_optimizer_step (opt, &error)), &error, HP_ERROR_PLACEMENT,
                        "HpSGD: parameter 0 is an HpDTensor but its gradient is a plain HpTensor");

  g_assert_cmpuint (hp_optimizer_get_step_count (opt), ==, 0);
  state = hp_optimizer_get_state (opt);
  g_assert_cmpuint (hp_state_dict_get_size (state), ==, 0);
  g_clear_object (&state);

  /* the right layout works, and the momentum buffer has it too */
  grad_s0 = hp_dtensor_new_from_local (whole, mesh, shard, NULL, 0, FALSE, &error);
  g_assert_no_error (error);
  hp_tensor_set_grad (HP_TENSOR (param), HP_TENSOR (grad_s0));
  step_ok (opt);
  {
    g_autoptr(HpTensor) full = hp_dtensor_full_tensor (param, &error);

    g_assert_no_error (error);
    assert_tensor (full, HP_TEST_DATA (0.5, 1), 1e-15, 0);
  }
  state = hp_optimizer_get_state (opt);
  buffer = hp_state_dict_lookup (state, "0.momentum_buffer");
  g_assert_true (HP_IS_DTENSOR (buffer));
  g_assert_true (hp_dtensor_get_mesh (HP_DTENSOR (buffer)) == mesh);
  g_assert_cmpuint (hp_dtensor_get_placements (HP_DTENSOR (buffer))->len, ==, 1);
  g_assert_true (hp_placement_is_shard (g_ptr_array_index (hp_dtensor_get_placements (HP_DTENSOR (buffer)), 0)));

  /* a plain parameter with a DTensor gradient */
  plain_params = tensor_list (plain, NULL);
  plain_opt = optimizer_new (config, plain_params);
  hp_tensor_set_grad (plain, HP_TENSOR (grad_s0));
  hp_test_assert_error (GINT_TO_POINTER (hp_optimizer_step (plain_opt, &error)), &error, HP_ERROR_PLACEMENT,
                        "HpSGD: parameter 0 is a plain HpTensor but its gradient is an HpDTensor");
  assert_tensor (plain, HP_TEST_DATA (1, 2), 0, 0);

  /* every gradient is checked before any parameter moves: the first
   * parameter, whose gradient is right, keeps its value and gets no
   * state when the second one's is wrong */
  {
    g_autoptr(HpTensor) first = param_new (HP_DTYPE_FLOAT64, HP_TEST_DATA (5, 6));
    g_autoptr(GPtrArray) both = tensor_list (first, HP_TENSOR (param), NULL);
    g_autoptr(HpOptimizerConfig) adamw = g_object_new (HP_TYPE_ADAMW_CONFIG, NULL);
    HpOptimizerConfig *configs[] = { config, adamw };

    set_grad (first, (const gdouble[]) { 1, 1 });
    hp_tensor_set_grad (HP_TENSOR (param), HP_TENSOR (grad_p));
    for (guint i = 0; i < G_N_ELEMENTS (configs); i++)
      {
        g_autoptr(HpOptimizer) mixed = optimizer_new (configs[i], both);
        g_autoptr(HpStateDict) mixed_state = NULL;

        hp_test_assert_error (GINT_TO_POINTER (hp_optimizer_step (mixed, &error)), &error,
                              HP_ERROR_PLACEMENT, "the gradient of parameter 1 has placements (P(sum))");
        assert_tensor (first, HP_TEST_DATA (5, 6), 0, 0);
        assert_tensor (hp_tensor_get_grad (first), HP_TEST_DATA (1, 1), 0, 0);
        g_assert_cmpuint (hp_optimizer_get_step_count (mixed), ==, 0);
        mixed_state = hp_optimizer_get_state (mixed);
        g_assert_cmpuint (hp_state_dict_get_size (mixed_state), ==, 0);
      }
  }
}

/* A copy of the states of @opt (the optimizer's own change in place) */
static HpStateDict *
state_copy (HpOptimizer *opt)
{
  g_autoptr(HpStateDict) state = hp_optimizer_get_state (opt);
  HpStateDict *copy = hp_state_dict_new ();

  for (guint i = 0; i < hp_state_dict_get_size (state); i++)
    {
      HpTensor *t = hp_state_dict_get_tensor (state, i);
      gsize n;
      g_autofree gdouble *values = hp_tensor_to_float64_array (t, &n);
      g_autoptr(HpTensor) same = hp_test_tensor (hp_tensor_get_dtype (t), values, n,
                                                 hp_tensor_get_shape (t, NULL), hp_tensor_get_ndim (t));

      hp_state_dict_insert (copy, hp_state_dict_get_name (state, i), same);
    }
  return copy;
}

static void
assert_state (HpOptimizer *opt,
              HpStateDict *expected)
{
  g_autoptr(HpStateDict) state = hp_optimizer_get_state (opt);

  g_assert_cmpuint (hp_state_dict_get_size (state), ==, hp_state_dict_get_size (expected));
  for (guint i = 0; i < hp_state_dict_get_size (state); i++)
    {
      HpTensor *want = hp_state_dict_lookup (expected, hp_state_dict_get_name (state, i));

      g_assert_nonnull (want);
      hp_test_assert_identical (hp_state_dict_get_tensor (state, i), want);
    }
}

/* @good with the entry @name replaced by (or, with a NULL @tensor,
 * without) @tensor */
static HpStateDict *
state_with (HpStateDict *good,
            const gchar *name,
            HpTensor    *tensor)
{
  HpStateDict *out = hp_state_dict_new ();

  for (guint i = 0; i < hp_state_dict_get_size (good); i++)
    if (!g_str_equal (hp_state_dict_get_name (good, i), name))
      hp_state_dict_insert (out, hp_state_dict_get_name (good, i), hp_state_dict_get_tensor (good, i));
  if (tensor != NULL)
    hp_state_dict_insert (out, name, tensor);
  return out;
}

/* Loading @bad fails with @code and @message, and leaves the states,
 * the step count and the parameters of @opt as they were */
static void
assert_load_fails (HpOptimizer *opt,
                   HpStateDict *bad,
                   gint         code,
                   const gchar *message)
{
  g_autoptr(HpStateDict) before = state_copy (opt);
  guint64 steps = hp_optimizer_get_step_count (opt);
  g_autoptr(GPtrArray) params = hp_optimizer_get_parameters (opt);
  g_autoptr(GPtrArray) values = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GError) error = NULL;

  for (guint i = 0; i < params->len; i++)
    {
      gsize n;

      g_ptr_array_add (values, hp_tensor_to_float64_array (g_ptr_array_index (params, i), &n));
    }

  hp_test_assert_error (GINT_TO_POINTER (hp_optimizer_load_state (opt, bad, 99, &error)), &error,
                        code, message);
  assert_state (opt, before);
  g_assert_cmpuint (hp_optimizer_get_step_count (opt), ==, steps);
  for (guint i = 0; i < params->len; i++)
    {
      HpTensor *p = g_ptr_array_index (params, i);

      hp_test_assert_values (p, g_ptr_array_index (values, i), hp_tensor_get_numel (p),
                             hp_tensor_get_shape (p, NULL), hp_tensor_get_ndim (p), 0, 0);
    }
}

/* States that the step could not use are refused before anything
 * changes: wrong shapes or dtypes (the step would read and write past
 * the buffer), states the optimizer does not keep, part of a
 * parameter's states */
static void
test_load_state_errors (void)
{
  g_autoptr(HpOptimizerConfig) sgd = sgd_config (0.1, 0.9, 0, FALSE, 0);
  g_autoptr(HpOptimizerConfig) adamw = g_object_new (HP_TYPE_ADAMW_CONFIG, "lr", 0.01, NULL);
  g_autoptr(HpTensor) p = param_new (HP_DTYPE_FLOAT64, HP_TEST_DATA (1, 2));
  g_autoptr(HpTensor) q = param_new (HP_DTYPE_FLOAT64, HP_TEST_DATA (3));
  g_autoptr(GPtrArray) params = tensor_list (p, q, NULL);
  g_autoptr(HpOptimizer) opt = optimizer_new (sgd, params);
  g_autoptr(HpStateDict) good = NULL;
  g_autoptr(HpTensor) three = hp_tensor_new_ones (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (3));
  g_autoptr(HpTensor) single = hp_tensor_new_ones (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (1));
  g_autoptr(HpTensor) scalar32 = hp_tensor_new_full (HP_DTYPE_FLOAT32, NULL, 0, 1.0);
  g_autoptr(HpTensor) step_1d = hp_tensor_new_ones (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (1));
  g_autoptr(GError) error = NULL;

  set_grad (p, (const gdouble[]) { 1, 1 });
  set_grad (q, (const gdouble[]) { 2 });
  step_ok (opt);
  good = state_copy (opt);

  {
    g_autoptr(HpStateDict) bad = state_with (good, "0.momentum_buffer", three);

    assert_load_fails (opt, bad, HP_ERROR_SHAPE,
                       "HpSGD: state '0.momentum_buffer' is float64 [3], but parameter 0 is float64 [2]");
  }
  {
    g_autoptr(HpStateDict) bad = state_with (good, "1.momentum_buffer", single);

    assert_load_fails (opt, bad, HP_ERROR_SHAPE,
                       "HpSGD: state '1.momentum_buffer' is float32 [1], but parameter 1 is float64 [1]");
  }
  {
    g_autoptr(HpStateDict) bad = state_with (good, "0.exp_avg", three);

    assert_load_fails (opt, bad, HP_ERROR_INVALID_ARGUMENT,
                       "HpSGD: no optimizer state '0.exp_avg' (the states of a parameter are "
                       "momentum_buffer)");
  }
  {
    g_autoptr(HpStateDict) bad = state_with (good, "2.momentum_buffer", three);

    assert_load_fails (opt, bad, HP_ERROR_INVALID_ARGUMENT,
                       "HpSGD: no optimizer state '2.momentum_buffer' (names are <index>.<state> "
                       "with an index below 2)");
  }
  {
    g_autoptr(HpStateDict) bad = state_with (good, "momentum_buffer", three);

    assert_load_fails (opt, bad, HP_ERROR_INVALID_ARGUMENT,
                       "HpSGD: no optimizer state 'momentum_buffer'");
  }

  /* a good state still loads, and the step goes on */
  g_assert_true (hp_optimizer_load_state (opt, good, 1, &error));
  g_assert_no_error (error);
  step_ok (opt);

  /* AdamW: step, exp_avg and exp_avg_sq come together */
  g_clear_object (&opt);
  g_clear_object (&good);
  opt = optimizer_new (adamw, params);
  step_ok (opt);
  good = state_copy (opt);
  g_assert_cmpuint (hp_state_dict_get_size (good), ==, 6);
  {
    g_autoptr(HpStateDict) no_avg = state_with (good, "1.exp_avg", NULL);
    g_autoptr(HpStateDict) bad = state_with (no_avg, "1.exp_avg_sq", NULL);

    assert_load_fails (opt, bad, HP_ERROR_INVALID_ARGUMENT,
                       "HpAdamW: parameter 1 has the states (step) but needs all of "
                       "(step, exp_avg, exp_avg_sq)");
  }
  {
    g_autoptr(HpStateDict) bad = state_with (good, "0.step", scalar32);

    assert_load_fails (opt, bad, HP_ERROR_SHAPE,
                       "HpAdamW: state '0.step' is float32 [], but it must be a plain float64 scalar");
  }
  {
    g_autoptr(HpStateDict) bad = state_with (good, "1.step", step_1d);

    assert_load_fails (opt, bad, HP_ERROR_SHAPE,
                       "HpAdamW: state '1.step' is float64 [1], but it must be a plain float64 scalar");
  }
  {
    g_autoptr(HpStateDict) bad = state_with (good, "0.exp_avg_sq", three);

    assert_load_fails (opt, bad, HP_ERROR_SHAPE,
                       "HpAdamW: state '0.exp_avg_sq' is float64 [3], but parameter 0 is float64 [2]");
  }
  /* a parameter without states is fine */
  {
    g_autoptr(HpStateDict) no_step = state_with (good, "1.step", NULL);
    g_autoptr(HpStateDict) no_avg = state_with (no_step, "1.exp_avg", NULL);
    g_autoptr(HpStateDict) only_p = state_with (no_avg, "1.exp_avg_sq", NULL);

    g_assert_true (hp_optimizer_load_state (opt, only_p, 1, &error));
    g_assert_no_error (error);
    step_ok (opt);
  }
}

static void
test_clip_grad_norm (void)
{
  g_autoptr(HpTensor) a = param_new (HP_DTYPE_FLOAT64, HP_TEST_DATA (0, 0));
  g_autoptr(HpTensor) b = param_new (HP_DTYPE_FLOAT64, HP_TEST_DATA (0));
  g_autoptr(HpTensor) none = param_new (HP_DTYPE_FLOAT64, HP_TEST_DATA (0));
  g_autoptr(GPtrArray) params = tensor_list (a, none, b, NULL);
  g_autoptr(GPtrArray) empty = g_ptr_array_new ();
  g_autoptr(HpTensor) old_a = NULL;
  g_autoptr(GError) error = NULL;
  gdouble norm, factor;

  /* no gradient at all: norm 0, nothing to do */
  g_assert_cmpfloat (hp_clip_grad_norm (params, 1.0, 2.0, &error), ==, 0.0);
  g_assert_cmpfloat (hp_clip_grad_norm (empty, 1.0, 2.0, &error), ==, 0.0);
  g_assert_no_error (error);
  g_assert_null (hp_tensor_get_grad (a));

  /* [3, 4] and [12]: 2-norm sqrt (9 + 16 + 144) = 13, 1-norm 19,
   * inf-norm 12, 3-norm (27 + 64 + 1728)^(1/3) */
  set_grad (a, (const gdouble[]) { 3, -4 });
  set_grad (b, (const gdouble[]) { 12 });
  old_a = g_object_ref (hp_tensor_get_grad (a));
  g_assert_cmpfloat_with_epsilon (hp_clip_grad_norm (params, 100, 1.0, &error), 19.0, 1e-13);
  g_assert_cmpfloat (hp_clip_grad_norm (params, 100, INFINITY, &error), ==, 12.0);
  g_assert_cmpfloat_with_epsilon (hp_clip_grad_norm (params, 100, 3.0, &error), cbrt (1819.0), 1e-12);
  g_assert_no_error (error);
  /* under max_norm: the gradients stay the same tensors */
  g_assert_cmpfloat (hp_clip_grad_norm (params, 13.5, 2.0, &error), ==, 13.0);
  g_assert_no_error (error);
  g_assert_true (hp_tensor_get_grad (a) == old_a);

  /* over: every gradient times 6.5 / (13 + 1e-6), as new tensors */
  norm = hp_clip_grad_norm (params, 6.5, 2.0, &error);
  g_assert_no_error (error);
  g_assert_cmpfloat (norm, ==, 13.0);
  factor = 6.5 / (13.0 + 1e-6);
  assert_tensor (hp_tensor_get_grad (a), HP_TEST_DATA (3 * factor, -4 * factor), 1e-15, 0);
  assert_tensor (hp_tensor_get_grad (b), HP_TEST_DATA (12 * factor), 1e-15, 0);
  g_assert_null (hp_tensor_get_grad (none));
  g_assert_true (hp_tensor_get_grad (a) != old_a);
  assert_tensor (old_a, HP_TEST_DATA (3, -4), 0, 0);
  g_assert_cmpfloat_with_epsilon (hp_clip_grad_norm (params, 100, 2.0, &error), 6.5, 1e-6);

  /* the infinity norm clips too */
  set_grad (a, (const gdouble[]) { 3, -4 });
  set_grad (b, (const gdouble[]) { 12 });
  g_assert_cmpfloat (hp_clip_grad_norm (params, 1.0, INFINITY, &error), ==, 12.0);
  factor = 1.0 / (12.0 + 1e-6);
  assert_tensor (hp_tensor_get_grad (b), HP_TEST_DATA (12 * factor), 1e-15, 0);

  /* an infinite gradient: infinite norm, gradients times 0 (inf * 0 is
   * NaN, as in PyTorch) */
  set_grad (a, (const gdouble[]) { INFINITY, 1 });
  set_grad (b, (const gdouble[]) { 2 });
  g_assert_true (isinf (hp_clip_grad_norm (params, 1.0, 2.0, &error)));
  g_assert_no_error (error);
  {
    gsize n;
    g_autofree gdouble *values = hp_tensor_to_float64_array (hp_tensor_get_grad (a), &n);

    g_assert_true (isnan (values[0]));
    g_assert_cmpfloat (values[1], ==, 0.0);
  }
  assert_tensor (hp_tensor_get_grad (b), HP_TEST_DATA (0), 0, 0);
}

static void
test_clip_errors (void)
{
  const gchar *tp[] = { "tp", NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(HpDeviceMesh) mesh = hp_device_mesh_new ((const gint[]) { 1 }, 1, tp, &error);
  g_autoptr(HpPlacement) r = hp_placement_new_from_string ("R", &error);
  g_autoptr(HpPlacement) partial = hp_placement_new_from_string ("P(sum)", &error);
  g_autoptr(GPtrArray) replicate = g_ptr_array_new ();
  g_autoptr(GPtrArray) summed = g_ptr_array_new ();
  g_autoptr(HpTensor) whole = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (3, 4), HP_TEST_SHAPE (2));
  g_autoptr(HpDTensor) param = NULL;
  g_autoptr(HpDTensor) grad = NULL;
  g_autoptr(HpTensor) plain = param_new (HP_DTYPE_FLOAT64, HP_TEST_DATA (0, 0));
  g_autoptr(GPtrArray) params = NULL;
  g_autoptr(HpTensor) plain_grad = NULL;

  g_assert_no_error (error);
  g_ptr_array_add (replicate, r);
  g_ptr_array_add (summed, partial);
  param = hp_dtensor_distribute (whole, mesh, replicate, -1, &error);
  g_assert_no_error (error);
  hp_tensor_set_requires_grad (HP_TENSOR (param), TRUE);
  grad = hp_dtensor_new_from_local (whole, mesh, summed, NULL, 0, FALSE, &error);
  g_assert_no_error (error);
  set_grad (plain, (const gdouble[]) { 30, 40 });
  plain_grad = g_object_ref (hp_tensor_get_grad (plain));
  params = tensor_list (plain, HP_TENSOR (param), NULL);
  hp_tensor_set_grad (HP_TENSOR (param), HP_TENSOR (grad));

  g_assert_cmpfloat (hp_clip_grad_norm (params, -1.0, 2.0, &error), ==, -1.0);
  hp_test_assert_error (NULL, &error, HP_ERROR_INVALID_ARGUMENT,
                        "hp_clip_grad_norm: max_norm must be 0 or more, not -1");
  g_assert_cmpfloat (hp_clip_grad_norm (params, NAN, 2.0, &error), ==, -1.0);
  hp_test_assert_error (NULL, &error, HP_ERROR_INVALID_ARGUMENT, "max_norm must be 0 or more, not nan");
  g_assert_cmpfloat (hp_clip_grad_norm (params, 1.0, 0.0, &error), ==, -1.0);
  hp_test_assert_error (NULL, &error, HP_ERROR_INVALID_ARGUMENT,
                        "hp_clip_grad_norm: norm_type must be positive (2 for the Euclidean norm, "
                        "infinity for the largest absolute value), not 0");
  g_assert_cmpfloat (hp_clip_grad_norm (params, 1.0, -2.0, &error), ==, -1.0);
  hp_test_assert_error (NULL, &error, HP_ERROR_INVALID_ARGUMENT, "not -2");
  g_assert_cmpfloat (hp_clip_grad_norm (params, 1.0, 2.0, &error), ==, -1.0);
  hp_test_assert_error (NULL, &error, HP_ERROR_PLACEMENT,
                        "hp_clip_grad_norm: the gradient of parameter 1 has placements (P(sum)): "
                        "reduce a Partial gradient (hp_dtensor_redistribute()) before clipping");
  /* nothing changed */
  g_assert_true (hp_tensor_get_grad (plain) == plain_grad);
  g_assert_true (hp_tensor_get_grad (HP_TENSOR (param)) == HP_TENSOR (grad));
  assert_tensor (plain_grad, HP_TEST_DATA (30, 40), 0, 0);
}

/* In a process that has made no optimizer yet, JSON read as an optimizer
 * configuration finds the library's optimizer types by name */
static void
test_config_json_names_subclasses (void)
{
  if (g_test_subprocess ())
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(HpConfig) adamw = NULL;
      g_autoptr(HpConfig) sgd = NULL;

      g_assert_true (g_type_from_name ("HpAdamWConfig") == G_TYPE_INVALID);
      adamw = hp_config_new_from_json (HP_TYPE_OPTIMIZER_CONFIG, "{\"@type\": \"HpAdamWConfig\"}", &error);
      g_assert_no_error (error);
      g_assert_cmpstr (G_OBJECT_TYPE_NAME (adamw), ==, "HpAdamWConfig");
      sgd = hp_config_new_from_json (HP_TYPE_OPTIMIZER_CONFIG, "{\"@type\": \"HpSGDConfig\"}", &error);
      g_assert_no_error (error);
      g_assert_cmpstr (G_OBJECT_TYPE_NAME (sgd), ==, "HpSGDConfig");
      return;
    }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr(GError) error = NULL;

  hp_test_init (&argc, &argv);
  hp_init (&error);
  g_assert_no_error (error);

  g_test_add_func ("/optim/sgd/plain", test_sgd_plain);
  g_test_add_func ("/optim/sgd/hand-computed", test_sgd_hand_computed);
  g_test_add_func ("/optim/sgd/reference", test_sgd_reference);
  g_test_add_func ("/optim/sgd/float32", test_sgd_float32);
  g_test_add_func ("/optim/adamw/closed-form", test_adamw_closed_form);
  g_test_add_func ("/optim/adamw/first-step-decay", test_adamw_first_step_decay);
  g_test_add_func ("/optim/adamw/reference", test_adamw_reference);
  g_test_add_func ("/optim/adamw/float32", test_adamw_float32);
  g_test_add_func ("/optim/skip-without-grad", test_skip_without_grad);
  g_test_add_func ("/optim/zero-grad", test_zero_grad);
  g_test_add_func ("/optim/lr", test_lr);
  g_test_add_func ("/optim/config", test_config);
  g_test_add_func ("/optim/config/json-names-subclasses", test_config_json_names_subclasses);
  g_test_add_func ("/optim/errors", test_errors);
  g_test_add_func ("/optim/dtensor-errors", test_dtensor_errors);
  g_test_add_func ("/optim/load-state-errors", test_load_state_errors);
  g_test_add_func ("/optim/clip-grad-norm", test_clip_grad_norm);
  g_test_add_func ("/optim/clip-errors", test_clip_errors);

  return g_test_run ();
}
