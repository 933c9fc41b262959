/* bench/matmul.c: how close hp-protocols ops come to the raw speed
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A measurement, not a test: it prints one line per figure with PASS or
 * FAIL against its target and always exits 0.
 *
 *  (a) hp_tensor_matmul of two 1024 x 1024 float32 tensors against
 *      cblas_sgemm on the same buffers (target: >= 95 % of the GFLOP/s);
 *  (b) hp_tensor_add of two float32 tensors of 8M elements against
 *      memcpy, as memory bandwidth counting every byte read and written
 *      (add moves 3 arrays, memcpy 2; target: >= 50 %).
 *
 * Each side runs REPEATS times, interleaved with the other and going
 * first half of the time, so that clock changes and other load on the
 * machine hit both alike; the best time counts.
 */

#include <math.h>
#include <string.h>
#include <time.h>

#include <cblas.h>

#include <hp-protocols/hp-protocols.h>

#define REPEATS 20
#define MATMUL_N 1024
#define ADD_NUMEL (8 * 1024 * 1024)

static gdouble
now (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The tensor's own buffer, without a copy; the tensor keeps it alive */
static const gfloat *
floats_of (HpTensor *t)
{
  g_autoptr(GBytes) bytes = hp_tensor_get_bytes (t);

  return g_bytes_get_data (bytes, NULL);
}

static const gchar *
verdict (gdouble ratio,
         gdouble target)
{
  return ratio >= target ? "PASS" : "FAIL";
}

/* Seconds one call of an hp-protocols op takes, including creating and
 * freeing its result tensor as a caller does */
typedef HpTensor *(*BinaryOp) (HpTensor *, HpTensor *, GError **);

static gdouble
time_op (BinaryOp  op,
         HpTensor *a,
         HpTensor *b)
{
  g_autoptr(GError) error = NULL;
  gdouble start = now ();
  HpTensor *out = op (a, b, &error);

  g_assert_no_error (error);
  g_object_unref (out);
  return now () - start;
}

static void
bench_matmul (void)
{
  const gint64 shape[] = { MATMUL_N, MATMUL_N };
  const gint64 n = MATMUL_N;
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) a = hp_tensor_new_randn (HP_DTYPE_FLOAT32, shape, 2, 1);
  g_autoptr(HpTensor) b = hp_tensor_new_randn (HP_DTYPE_FLOAT32, shape, 2, 2);
  g_autoptr(HpTensor) check = NULL;
  const gfloat *a_data = floats_of (a);
  const gfloat *b_data = floats_of (b);
  const gfloat *check_data;
  gfloat *c = g_aligned_alloc0 (n * n, sizeof (gfloat), 64);
  gdouble best_hp = G_MAXDOUBLE, best_blas = G_MAXDOUBLE;
  gdouble flop = 2.0 * n * n * n;
  gdouble max_diff = 0.0;
  gdouble hp_gflops, blas_gflops, ratio;

  /* warm up both (BLAS threads, page mappings) and check they agree */
  check = hp_tensor_matmul (a, b, &error);
  g_assert_no_error (error);
  cblas_sgemm (CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n,
               1.0f, a_data, n, b_data, n, 0.0f, c, n);
  check_data = floats_of (check);
  for (gint64 i = 0; i < n * n; i++)
    max_diff = MAX (max_diff, fabs ((gdouble) check_data[i] - c[i]));

  for (int r = 0; r < 2 * REPEATS; r++)
    {
      /* hp, blas, blas, hp, hp, blas, ...: each goes first half the time */
      if ((r + r / 2) % 2 == 0)
        {
          best_hp = MIN (best_hp, time_op (hp_tensor_matmul, a, b));
        }
      else
        {
          gdouble start = now ();

          cblas_sgemm (CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n,
                       1.0f, a_data, n, b_data, n, 0.0f, c, n);
          best_blas = MIN (best_blas, now () - start);
        }
    }

  hp_gflops = flop / best_hp * 1e-9;
  blas_gflops = flop / best_blas * 1e-9;
  ratio = 100.0 * hp_gflops / blas_gflops;
  g_print ("matmul %dx%d float32: hp_tensor_matmul %.1f GFLOP/s, cblas_sgemm %.1f GFLOP/s, "
           "ratio %.1f %% (target >= 95 %%, results differ by at most %.1e): %s\n",
           MATMUL_N, MATMUL_N, hp_gflops, blas_gflops, ratio, max_diff, verdict (ratio, 95.0));

  g_aligned_free (c);
}

static void
bench_add (void)
{
  const gint64 shape[] = { ADD_NUMEL };
  const gsize nbytes = ADD_NUMEL * sizeof (gfloat);
  g_autoptr(HpTensor) x = hp_tensor_new_uniform (HP_DTYPE_FLOAT32, shape, 1, -1.0, 1.0, 3);
  g_autoptr(HpTensor) y = hp_tensor_new_uniform (HP_DTYPE_FLOAT32, shape, 1, -1.0, 1.0, 4);
  const gfloat *x_data = floats_of (x);
  gfloat *dst = g_aligned_alloc0 (ADD_NUMEL, sizeof (gfloat), 64);
  gdouble best_add = G_MAXDOUBLE, best_copy = G_MAXDOUBLE;
  gdouble add_gbs, copy_gbs, ratio;

  /* warm up */
  time_op (hp_tensor_add, x, y);
  memcpy (dst, x_data, nbytes);

  for (int r = 0; r < 2 * REPEATS; r++)
    {
      if ((r + r / 2) % 2 == 0)
        {
          best_add = MIN (best_add, time_op (hp_tensor_add, x, y));
        }
      else
        {
          gdouble start = now ();

          memcpy (dst, x_data, nbytes);
          best_copy = MIN (best_copy, now () - start);
        }
    }

  add_gbs = 3.0 * nbytes / best_add * 1e-9;
  copy_gbs = 2.0 * nbytes / best_copy * 1e-9;
  ratio = 100.0 * add_gbs / copy_gbs;
  g_print ("add %d float32: hp_tensor_add %.1f GB/s (3 arrays), memcpy %.1f GB/s (2 arrays), "
           "ratio %.1f %% (target >= 50 %%): %s\n",
           ADD_NUMEL, add_gbs, copy_gbs, ratio, verdict (ratio, 50.0));

  g_aligned_free (dst);
}

int
main (void)
{
  g_print ("# bench-matmul: best of %d runs each; OPENBLAS_NUM_THREADS=%s OPENBLAS_CORETYPE=%s\n",
           REPEATS, g_getenv ("OPENBLAS_NUM_THREADS") ?: "(unset)",
           g_getenv ("OPENBLAS_CORETYPE") ?: "(unset)");
  bench_matmul ();
  bench_add ();
  return 0;
}
