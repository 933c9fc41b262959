/* hp-vec-private.h: float32 helpers that the compiler can vectorise
 *
 * The float32 kernels of the training step (softmax, cross entropy,
 * SiLU, AdamW) spent most of their time in libm's exp in double, one
 * call per element, which no compiler turns into vector code. The
 * helpers here are branch-free inline float arithmetic, so that a loop
 * marked HP_SIMD runs 4, 8 or 16 elements at a time.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <glib.h>
#include <math.h>

G_BEGIN_DECLS

/* The build turns on -fopenmp-simd, which honours these pragmas (and no
 * other OpenMP): they let the loop be vectorised, a sum be reassociated
 * into vector lanes, even at -O2, where GCC's cost model otherwise
 * vectorises almost nothing. */
#define HP_SIMD _Pragma ("omp simd")
#define HP_SIMD_SUM(var) _HP_PRAGMA (omp simd reduction (+:var))
/* clang does not vectorise a float max reduction without
 * -ffinite-math-only, and warns that it could not (an error with
 * -Werror); there the loop stays scalar */
#ifdef __clang__
#define HP_SIMD_MAX(var)
#else
#define HP_SIMD_MAX(var) _HP_PRAGMA (omp simd reduction (max:var))
#endif
#define _HP_PRAGMA(x) _Pragma (#x)

/* On x86-64, whose baseline has 4-float vectors (SSE2), a vector loop's
 * function is also built for AVX2, 8 floats a vector, and for AVX-512,
 * 16, and the loader picks the widest that the CPU has. Not with FMA: a
 * fused multiply-add would round differently from one machine to the
 * next (AVX-512 has fused multiply-adds of its own, which the build's
 * -ffp-contract=off keeps the compiler from using). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define HP_VEC_CLONES __attribute__ ((target_clones ("avx512f", "avx2", "default")))
#else
#define HP_VEC_CLONES
#endif

/* e^x in float32, within 2 ulp of the rounded exact value: x = k ln 2 + r
 * with |r| <= ln 2 / 2, e^r by its Taylor polynomial of degree 7 (the
 * remainder is below 1e-8 relative), times 2^k in two factors, each a
 * normal float, so that results down to the subnormal ones come out
 * (below e^-104, under half the smallest subnormal, 0). Overflows to
 * +inf; NaN stays NaN. */
static inline gfloat
_hp_expf (gfloat x)
{
  const gfloat log2e = 1.44269504088896341f;
  /* ln 2 in two parts, the first with few enough bits that k * ln2_hi
   * is exact for every k used here */
  const gfloat ln2_hi = 0.693359375f;
  const gfloat ln2_lo = -2.12194440e-4f;
  /* 1.5 * 2^23: adding and subtracting it rounds to an integer */
  const gfloat round_magic = 12582912.0f;
  /* clamped (and NaN replaced) so that k stays within [-150, 128] */
  gfloat xc = x != x ? 0.0f : x < -104.0f ? -104.0f : x > 88.72284f ? 88.72284f : x;
  gfloat kf = (xc * log2e + round_magic) - round_magic;
  gfloat r = (xc - kf * ln2_hi) - kf * ln2_lo;
  gint32 k = (gint32) kf;
  gint32 k1 = k / 2;
  gfloat p = 1.0f / 5040.0f;
  union { guint32 u; gfloat f; } scale1, scale2;
  gfloat y;

  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  scale1.u = (guint32) (k1 + 127) << 23;
  scale2.u = (guint32) (k - k1 + 127) << 23;
  y = p * scale1.f * scale2.f;
  y = x < -104.0f ? 0.0f : y;
  y = x > 88.72284f ? INFINITY : y;
  return x != x ? x : y;
}

/* The logistic function 1 / (1 + e^-x) in float32, from e^-|x| so that
 * no exponential overflows: for x < 0 it is e^x / (1 + e^x), which keeps
 * the tiny values of a very negative x */
static inline gfloat
_hp_sigmoidf (gfloat x)
{
  gfloat e = _hp_expf (x < 0.0f ? x : -x);

  return (x < 0.0f ? e : 1.0f) / (1.0f + e);
}

/* The derivative of SiLU x sigmoid(x) at @x, given @s = sigmoid(x) */
static inline gfloat
_hp_silu_gradf (gfloat x,
                gfloat s)
{
  return s * (1.0f + x * (1.0f - s));
}

G_END_DECLS
