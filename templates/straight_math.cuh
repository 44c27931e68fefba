// Straight-line double-precision log and exp: no branches, so that several run interleaved.
//
// Why not CUDA's log() and exp(): both guard their special cases (subnormal arguments, infinities,
// overflow) with branches, and ptxas does not schedule across them. A lane that needs the powers of
// two distances (the powersum ladder's starts), or JT exponentials (its explog term), then computes
// them one after another, each a chain of about twenty dependent FMAs; a small window leaves too
// few warps per SM to hide that latency. Here the special cases are selects, so two or more calls
// in one basic block overlap.
//
// Domain and accuracy (tests/unit/test_straight_math.cpp measures both on the host, from this
// same text):
//   straight_log(d): d >= 0 and finite, subnormals included; 0 gives -inf. Within 1 ulp.
//   straight_exp(z): any z, -inf included (gives 0); z > 709.78 gives +inf. Within 1 ulp where
//                    the result is normal; below that, the subnormal result's own spacing.
// kernels/powersum.cpp's tolerance counts 1 ulp for each.
//
// The text is plain C++: NVRTC compiles it in front of the family's template, and the host test
// includes it, with the few operations that differ (bit casts, a reciprocal estimate) defined
// below for each side.

#if defined(__CUDACC_RTC__) || defined(__CUDA_ARCH__)
#define STRAIGHT_FN __device__ __forceinline__
STRAIGHT_FN long long straight_bits(double x) { return __double_as_longlong(x); }
STRAIGHT_FN double straight_double(long long bits) { return __longlong_as_double(bits); }
// MUFU.RCP64H: an estimate good to about 2^-20, which the Newton steps below refine.
STRAIGHT_FN double straight_reciprocal_estimate(double b) {
  double y;
  asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(y) : "d"(b));
  return y;
}
#else
#include <cmath>
#include <cstring>
#define STRAIGHT_FN inline
inline long long straight_bits(double x) {
  long long bits;
  std::memcpy(&bits, &x, sizeof bits);
  return bits;
}
inline double straight_double(long long bits) {
  double x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}
// A deliberately coarse estimate (18 good bits, coarser than the GPU's), so that the host test
// shows the two Newton steps are enough.
inline double straight_reciprocal_estimate(double b) { return straight_double(straight_bits(1.0 / b) & ~((1LL << 34) - 1)); }
using std::fma;
using std::fmax;
using std::fmin;
#endif

#define STRAIGHT_LN2 0.6931471805599453           // ln 2 rounded to double
#define STRAIGHT_LN2_LOW 2.3190468138462996e-17   // ln 2 - STRAIGHT_LN2
#define STRAIGHT_LOG2_E 1.4426950408889634
// 1.5 * 2^52: adding it rounds a double of magnitude below 2^51 to an integer that sits, two's
// complement, in the low bits of the sum; subtracting it back gives that integer as a double.
#define STRAIGHT_MAGIC 6755399441055744.0
#define STRAIGHT_MAGIC_BITS 0x4338000000000000LL

// b / c for c in [1, 4): the estimate, two Newton steps (each doubles its good bits), the quotient.
// Within about 1.5 ulp, which is all the callers need (see straight_log).
STRAIGHT_FN double straight_divide(double b, double c) {
  double y = straight_reciprocal_estimate(c);
  y = fma(y, fma(-c, y, 1.0), y);
  y = fma(y, fma(-c, y, 1.0), y);
  return b * y;
}

// c[0] + c[1] x + ... + c[N-1] x^(N-1) by Horner's rule. With the coefficients a local constant
// array, the loop unrolls and they become immediates.
template <int N>
STRAIGHT_FN double straight_polynomial(double x, const double (&c)[N]) {
  double p = c[N - 1];
  for (int n = N - 2; n >= 0; --n) p = fma(p, x, c[n]);
  return p;
}

// ln d = k ln 2 + ln m with d = 2^k m, m in [sqrt(1/2), sqrt(2)). With f = m - 1 (exact) and
// s = f / (2 + f), ln m = 2 atanh s = f - f^2/2 + s (f^2/2 + R), R = 2 s^2/3 + 2 s^4/5 + ... (the
// Taylor series: |s| <= 0.172, and the terms kept reach s^18; the next is below 2^-55 of the
// sum). The parts that carry the roundings of s and R are at most a quarter of the result, which
// the last subtraction rounds once, and k ln 2 is added with one fma and the low part of ln 2.
STRAIGHT_FN double straight_log(double d) {
  // Subnormals are scaled into the normal range first; their exponent field says nothing.
  const bool subnormal = d < 2.2250738585072014e-308;
  const double scaled = subnormal ? d * 18014398509481984.0 : d;  // 2^54
  const long long bits = straight_bits(scaled);
  int k = static_cast<int>((bits >> 52) & 0x7ff) - 1023 - (subnormal ? 54 : 0);
  double m = straight_double((bits & 0x000fffffffffffffLL) | 0x3ff0000000000000LL);  // [1, 2)
  const bool high = m > 1.4142135623730951;
  m = high ? 0.5 * m : m;
  k = high ? k + 1 : k;
  const double f = m - 1.0;
  const double s = straight_divide(f, 2.0 + f);
  const double z = s * s;
  const double atanh_series[] = {2.0 / 3, 2.0 / 5, 2.0 / 7, 2.0 / 9, 2.0 / 11, 2.0 / 13, 2.0 / 15, 2.0 / 17, 2.0 / 19};
  const double r = z * straight_polynomial(z, atanh_series);
  const double half_f2 = 0.5 * f * f;
  const double kd = straight_double(STRAIGHT_MAGIC_BITS + k) - STRAIGHT_MAGIC;  // (double)k without a conversion
  const double small = half_f2 - fma(s, half_f2 + r, kd * STRAIGHT_LN2_LOW);
  const double result = fma(kd, STRAIGHT_LN2, f - small);
  return d > 0 ? result : straight_double(static_cast<long long>(0xfff0000000000000ULL));  // -inf
}

// e^z = 2^n e^r, n = round(z / ln 2), r = z - n ln 2 in [-0.347, 0.347] (two fmas with the split
// ln 2: exact to well below an ulp of r). e^r by its Taylor series to r^13 (the next term is below
// 2^-57 of e^r). 2^n is applied in two halves, each a normal power of two, so that n down to
// -2020 (a subnormal or zero result) and up to +2020 (infinity) need no branch.
STRAIGHT_FN double straight_exp(double z) {
  const double clamped = fmin(fmax(z, -1400.0), 1400.0);  // -inf -> e^-1400 = 0
  // n = round(z / ln 2), as a double and (the low word of the sum) as an integer, with no
  // conversion instruction.
  const double shifted = fma(clamped, STRAIGHT_LOG2_E, STRAIGHT_MAGIC);
  const double n = shifted - STRAIGHT_MAGIC;
  const int ni = static_cast<int>(straight_bits(shifted));
  double r = fma(-n, STRAIGHT_LN2, clamped);
  r = fma(-n, STRAIGHT_LN2_LOW, r);
  const double taylor[] = {1.0,           1.0,           0.5,           1.0 / 6,         1.0 / 24,
                           1.0 / 120,     1.0 / 720,     1.0 / 5040,    1.0 / 40320,     1.0 / 362880,
                           1.0 / 3628800, 1.0 / 39916800, 1.0 / 479001600, 1.0 / 6227020800};  // 1/n!, n <= 13
  const double p = straight_polynomial(r, taylor);
  const int half = ni / 2;
  const double scale1 = straight_double(static_cast<long long>(half + 1023) << 52);
  const double scale2 = straight_double(static_cast<long long>(ni - half + 1023) << 52);
  return p * scale1 * scale2;
}
