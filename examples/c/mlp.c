/* mlp.c: forward and backward of a two-layer perceptron
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A batch of 64 random points in 16 dims is classified into 4 classes by
 * linear -> gelu -> linear; the program prints the cross-entropy loss and
 * the norm of every parameter gradient, then takes a few plain gradient
 * descent steps and prints the falling loss. Run: ./build/examples/hp-mlp
 */

#include <math.h>
#include <stdio.h>

#include <hp-protocols/hp-protocols.h>

#define BATCH 64
#define IN 16
#define HIDDEN 32
#define CLASSES 4

typedef struct
{
  HpTensor *w1, *b1, *w2, *b2;
} Mlp;

static HpTensor *
parameter (HpTensor *init)
{
  hp_tensor_set_requires_grad (init, TRUE);
  return init;
}

static HpTensor *
mlp_loss (Mlp       *mlp,
          HpTensor  *x,
          HpTensor  *targets,
          GError   **error)
{
  g_autoptr(HpTensor) h = NULL;
  g_autoptr(HpTensor) a = NULL;
  g_autoptr(HpTensor) logits = NULL;

  if (!(h = hp_tensor_linear (x, mlp->w1, mlp->b1, error)) ||
      !(a = hp_tensor_gelu (h, error)) ||
      !(logits = hp_tensor_linear (a, mlp->w2, mlp->b2, error)))
    return NULL;

  return hp_tensor_cross_entropy (logits, targets, -100, error);
}

static gdouble
norm (HpTensor *t)
{
  gsize n;
  g_autofree gdouble *v = hp_tensor_to_float64_array (t, &n);
  gdouble total = 0.0;

  for (gsize i = 0; i < n; i++)
    total += v[i] * v[i];
  return sqrt (total);
}

/* p <- p - lr * grad, outside the graph */
static gboolean
sgd_step (HpTensor **param,
          gdouble    lr,
          GError   **error)
{
  g_autoptr(HpTensor) step = NULL;
  g_autoptr(HpTensor) updated = NULL;

  if (!(step = hp_tensor_scale (hp_tensor_get_grad (*param), lr, error)) ||
      !(updated = hp_tensor_sub (*param, step, error)))
    return FALSE;

  g_object_unref (*param);
  *param = parameter (g_steal_pointer (&updated));
  return TRUE;
}

int
main (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) x = hp_tensor_new_randn (HP_DTYPE_FLOAT32, (gint64[]) { BATCH, IN }, 2, 1);
  g_autoptr(HpTensor) targets = NULL;
  gint64 labels[BATCH];
  Mlp mlp;
  HpTensor **params[] = { &mlp.w1, &mlp.b1, &mlp.w2, &mlp.b2 };
  const gchar *names[] = { "w1", "b1", "w2", "b2" };

  /* the class is the sign pattern of the first two coordinates */
  {
    gsize n;
    g_autofree gdouble *xv = hp_tensor_to_float64_array (x, &n);

    for (int i = 0; i < BATCH; i++)
      labels[i] = (xv[i * IN] > 0) * 2 + (xv[i * IN + 1] > 0);
  }
  targets = hp_tensor_new_from_int64_data (labels, BATCH, (gint64[]) { BATCH }, 1, &error);

  mlp.w1 = parameter (hp_tensor_new_uniform (HP_DTYPE_FLOAT32, (gint64[]) { HIDDEN, IN }, 2, -0.25, 0.25, 2));
  mlp.b1 = parameter (hp_tensor_new_zeros (HP_DTYPE_FLOAT32, (gint64[]) { HIDDEN }, 1));
  mlp.w2 = parameter (hp_tensor_new_uniform (HP_DTYPE_FLOAT32, (gint64[]) { CLASSES, HIDDEN }, 2, -0.18, 0.18, 3));
  mlp.b2 = parameter (hp_tensor_new_zeros (HP_DTYPE_FLOAT32, (gint64[]) { CLASSES }, 1));

  for (int step = 0; step <= 50; step++)
    {
      g_autoptr(HpTensor) loss = mlp_loss (&mlp, x, targets, &error);

      if (loss == NULL || !hp_tensor_backward (loss, NULL, &error))
        break;

      if (step == 0)
        {
          printf ("loss %.6f\n", hp_tensor_item (loss, NULL));
          for (guint i = 0; i < G_N_ELEMENTS (params); i++)
            printf ("  |grad %s| = %.6f\n", names[i], norm (hp_tensor_get_grad (*params[i])));
        }
      else if (step % 10 == 0)
        printf ("step %2d  loss %.6f\n", step, hp_tensor_item (loss, NULL));

      hp_grad_mode_set_enabled (FALSE);
      for (guint i = 0; i < G_N_ELEMENTS (params) && error == NULL; i++)
        sgd_step (params[i], 0.5, &error);
      hp_grad_mode_set_enabled (TRUE);
      if (error != NULL)
        break;
    }

  for (guint i = 0; i < G_N_ELEMENTS (params); i++)
    g_object_unref (*params[i]);

  if (error != NULL)
    {
      fprintf (stderr, "mlp: %s\n", error->message);
      return 1;
    }
  return 0;
}
