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

// ---- Powers through a table: d^a = 2^(a log2 d) for many a sharing one d (powersum's tabexp) ----
//
// Per d, once: straight_log16(d) = 16 log2 d. Per exponent a: z = a * 16 log2 d splits into
// n = round(z) and r = z - n in [-1/2, 1/2] (the product a * 16 log2 d is exact inside the fmas, so
// r carries no rounding of it); 2^(z/16) = 2^(n >> 4) * 2^((n & 15)/16) * 2^(r/16), the first
// applied to the exponent bits, the second from a table of 16 doubles, the third a degree-6
// polynomial. That is 6 FP64 operations for the polynomial and 3 for the split, against about 20
// for exp: with the table, r/16 is within 1/32 of zero instead of 1/2.
//
// Accuracy (tests/unit/test_straight_math.cpp measures it on the host, from this same text): the
// table entries are correctly rounded (1/2 ulp), the polynomial is a near-minimax fit of 2^(r/16)
// on [-1/2, 1/2] (relative error below 8e-18, a fifteenth of an ulp), and its last Horner step and
// the product with the table entry round once each: within 3u relative, u = 2^-53 (measured:
// 2.7u). straight_power_add's fused product saves the last of them.
// straight_power_add(acc, ...) returns acc + 2^(z/16) with the product fused into the add.
//
// Range: the caller clamps 16 log2 d per d to [-2^30, 16368] / a_max (straight_log16_limit), so
// that z fits the integer taken from the low word and 2^(n >> 4) is at most 2^1023, and n is
// clamped to -16368 on the integer side (2^(n >> 4) at least 2^-1023), with no branch. A power
// below 2^-1022 (d = 0 among them, for every a >= a_max / 65536) then comes out as some value
// below 2^-1022 instead of its own, or 0; a power of 2^1023 or more comes out below 2^1024.

#define STRAIGHT_LOG16_2E 23.083120654223414  // 16 / ln 2
// 2^(i/16), i = 0..15, correctly rounded.
#define STRAIGHT_EXP2_SIXTEENTHS                                                                                   \
  {                                                                                                                \
    1.0, 1.0442737824274138, 1.0905077326652577, 1.1387886347566916, 1.189207115002721, 1.241857812073484,       \
        1.2968395546510096, 1.3542555469368927, 1.4142135623730951, 1.4768261459394993, 1.5422108254079407,      \
        1.6104903319492543, 1.681792830507429, 1.7562521603732995, 1.8340080864093424, 1.9152065613971474        \
  }
#if defined(__CUDACC_RTC__) || defined(__CUDA_ARCH__)
__device__ const double straight_exp2_sixteenths[16] = STRAIGHT_EXP2_SIXTEENTHS;
// Through the read-only data cache: lanes index the table at random, which a constant-bank load
// would serialise.
STRAIGHT_FN double straight_exp2_sixteenth(int i) { return __ldg(&straight_exp2_sixteenths[i]); }
// v * 2^(n >> 4) for a normal v whose exponent field stays in [0, 2047]: (n >> 4) << 20, which
// is (n << 16) with the low 20 bits cleared, added to the high word alone (one 32-bit add; a
// 64-bit add of the shift << 52 takes two).
STRAIGHT_FN double straight_scale_exponent(double v, int n) {
  return __hiloint2double(
      static_cast<int>(static_cast<unsigned>(__double2hiint(v)) + ((static_cast<unsigned>(n) << 16) & 0xfff00000u)),
      __double2loint(v));
}
#else
inline constexpr double straight_exp2_sixteenths[16] = STRAIGHT_EXP2_SIXTEENTHS;
inline double straight_exp2_sixteenth(int i) { return straight_exp2_sixteenths[i]; }
inline double straight_scale_exponent(double v, int n) {
  return straight_double(static_cast<long long>(static_cast<unsigned long long>(straight_bits(v)) +
                                                (static_cast<unsigned long long>(static_cast<long long>(n >> 4)) << 52)));
}
#endif

// The clamp that keeps a * straight_log16(d) in [-2^30, 16368] for every a in (0, a_max]: its
// lower end, which no d > 0 reaches (16 log2 d >= -17184) for a_max below 60000. The upper end is
// reached by powers of 2^1023 and more only.
STRAIGHT_FN double straight_log16_limit(double a_max) { return 1073741824.0 / a_max; }

// 16 log2 d, clamped to [-limit, limit * 16368 / 2^30] (d = 0 gives -limit). Within 3u relative
// of the exact value where not clamped: straight_log's ulp, the constant's and the product's
// roundings.
STRAIGHT_FN double straight_log16(double d, double limit) {
  return fmin(fmax(straight_log(d) * STRAIGHT_LOG16_2E, -limit), limit * (16368.0 / 1073741824.0));
}

// 2^(a l16 / 16) as the table's entry (scaled by 2^(n >> 4)) and the polynomial's value, for
// |a l16| <= 2^30; their product is the power.
struct StraightPowerParts {
  double scale, poly;
};
STRAIGHT_FN StraightPowerParts straight_power_parts(double a, double l16) {
  const double shifted = fma(a, l16, STRAIGHT_MAGIC);  // n = round(a l16) in the low bits
  const double n = shifted - STRAIGHT_MAGIC;
  const double r = fma(a, l16, -n);  // in [-1/2, 1/2]
  const int ni = static_cast<int>(straight_bits(shifted));
  // 2^(r/16), near-minimax on [-1/2, 1/2] (coefficients fitted in 50-digit arithmetic)
  const double fit[] = {1.0,
                        0.04332169878499668,
                        0.0009383847928089877,
                        1.3550807776390032e-05,
                        1.4676100321236697e-07,
                        1.2716120543851127e-09,
                        9.181354192172116e-12};
  const double poly = straight_polynomial(r, fit);
  // n >> 4 added to the entry's exponent field (1023: the entry is in [1, 2)), n clamped below
  // (the caller's clamp bounds it above by 16368) so that the field stays in [0, 2046].
  const int clamped = ni < -16368 ? -16368 : ni;
  return {straight_scale_exponent(straight_exp2_sixteenth(ni & 15), clamped), poly};
}

STRAIGHT_FN double straight_power(double a, double l16) {
  const StraightPowerParts parts = straight_power_parts(a, l16);
  return parts.scale * parts.poly;
}

// acc + 2^(a l16 / 16), the product fused into the add (one rounding fewer, one FP64 op fewer).
STRAIGHT_FN double straight_power_add(double acc, double a, double l16) {
  const StraightPowerParts parts = straight_power_parts(a, l16);
  return fma(parts.scale, parts.poly, acc);
}

// ---- The same with a table of 32: 2^(a 32 log2 d / 32) (powersum's tabexp32) ---------------------
//
// With 32 entries r/32 is within 1/64 of zero, and a degree-5 polynomial, 1 + r q(r), fits 2^(r/32)
// on [-1/2, 1/2] within 1.3u (a Chebyshev fit of q in 50-digit arithmetic): 5 FP64 operations
// instead of 6, so 10 per term with the split (9 with straight_power32_add's fused add) instead of
// 11. The table is 256 B, two lines of the read-only cache instead of one. Accuracy (measured by
// tests/unit/test_straight_math.cpp): within 4u relative. Range as above, with 32736 = 32 * 1023 in
// place of 16368: straight_log32_limit, and n clamped to -32736 on the integer side; d = 0 gives a
// value below 2^-1022 for every exponent down to a_max / 32768.

// 2^(i/32), i = 0..31, correctly rounded.
#define STRAIGHT_EXP2_THIRTYSECONDS                                                                                \
  {                                                                                                                \
    1.0, 1.0218971486541166, 1.0442737824274138, 1.0671404006768237, 1.0905077326652577, 1.1143867425958924,     \
        1.1387886347566916, 1.1637248587775775, 1.189207115002721, 1.215247359980469, 1.241857812073484,         \
        1.2690509571917332, 1.2968395546510096, 1.3252366431597413, 1.3542555469368927, 1.383909881963832,       \
        1.4142135623730951, 1.4451808069770467, 1.4768261459394993, 1.5091644275934228, 1.5422108254079407,      \
        1.5759808451078865, 1.6104903319492543, 1.645755478153965, 1.681792830507429, 1.718619298122478,         \
        1.7562521603732995, 1.7947090750031072, 1.8340080864093424, 1.8741676341103, 1.9152065613971474,         \
        1.9571441241754002                                                                                       \
  }
#if defined(__CUDACC_RTC__) || defined(__CUDA_ARCH__)
__device__ const double straight_exp2_thirtyseconds[32] = STRAIGHT_EXP2_THIRTYSECONDS;
STRAIGHT_FN double straight_exp2_thirtysecond(int i) { return __ldg(&straight_exp2_thirtyseconds[i]); }
// v * 2^(n >> 5): (n >> 5) << 20 is (n << 15) with the low 20 bits cleared, added to the high word.
STRAIGHT_FN double straight_scale_exponent32(double v, int n) {
  return __hiloint2double(
      static_cast<int>(static_cast<unsigned>(__double2hiint(v)) + ((static_cast<unsigned>(n) << 15) & 0xfff00000u)),
      __double2loint(v));
}
#else
inline constexpr double straight_exp2_thirtyseconds[32] = STRAIGHT_EXP2_THIRTYSECONDS;
inline double straight_exp2_thirtysecond(int i) { return straight_exp2_thirtyseconds[i]; }
inline double straight_scale_exponent32(double v, int n) {
  return straight_double(static_cast<long long>(static_cast<unsigned long long>(straight_bits(v)) +
                                                (static_cast<unsigned long long>(static_cast<long long>(n >> 5)) << 52)));
}
#endif

// ---- 32 log2 d through a table (tabexp32's logs): about 16 FP64 operations instead of 33 -------
//
// d = 2^e m0, m0 in [1, 2); j = m0's nearest 32nd (0..32), c_j = 1 + j/32 and rc_j = 1/c_j rounded;
// t = m0 rc_j - 1 (one fma, |t| <= 1/64), and 32 log2 d = 32 e + 32 log2(1/rc_j) + t Q(t), Q(t) =
// 32 log2(1 + t) / t to degree 7 (Chebyshev fit in 50-digit arithmetic, 0.13u). From j = 16 on the
// table holds 32 (log2(1/rc_j) - 1) and e counts one more, so that d just below 1 (j = 32, rc =
// 1/2) is 32 log2(1 + t) alone, as d just above 1 is (j = 0, rc = 1): nothing cancels near 1.
// Entries: (rc_j, 32 log2(1/rc_j) [- 32]), one 16-byte load. Within 4u relative (measured by
// tests/unit/test_straight_math.cpp; the worst is where the entry's rounding meets a small result,
// 32 log2 d near 1); d = 0 gives -inf, subnormals are scaled first as in straight_log.
#define STRAIGHT_LOG32_ENTRIES \
  { \
    1.0, 0.0, 0.9696969696969697, 1.4206118194705086, 0.9411764705882353, 2.7988109200108617, \
    0.9142857142857143, 4.137056542238928, 0.8888888888888888, 5.437600046153999, 0.8648648648648649, \
    6.70250770012639, 0.8421052631578947, 7.933680430194738, 0.8205128205128205, 9.132871003591948, 0.8, \
    10.301699036395593, 0.7804878048780488, 11.441664147778676, 0.7619047619047619, 12.554157528920332, \
    0.7441860465116279, 13.640472150467135, 0.7272727272727273, 14.70181179639351, 0.7111111111111111, \
    15.73929908254959, 0.6956521739130435, 16.753982593824414, 0.6808510638297872, 17.746843253684396, \
    0.6666666666666666, -13.281199976923, 0.6530612244897959, -12.329284988313333, 0.64, -11.396601927208811, \
    0.6274509803921569, -10.48238905691214, 0.6153846153846154, -9.585929019485054, 0.6037735849056604, \
    -8.706545453977624, 0.5925925925925926, -7.843599930769004, 0.5818181818181818, -6.996489167210891, \
    0.5714285714285714, -6.164642494156666, 0.5614035087719298, -5.347519546728264, 0.5517241379310345, \
    -4.544608155917691, 0.5423728813559322, -3.7554224204210795, 0.5333333333333333, -2.9795009405274064, \
    0.5245901639344263, -2.2164051979876414, 0.5161290322580645, -1.4657180676199921, 0.5079365079365079, \
    -0.7270424480026704, 0.5, 0.0 \
  }
#if defined(__CUDACC_RTC__) || defined(__CUDA_ARCH__)
__device__ __align__(16) const double straight_log32_entries[66] = STRAIGHT_LOG32_ENTRIES;
STRAIGHT_FN double2 straight_log32_entry(int j) {
  return __ldg(reinterpret_cast<const double2*>(straight_log32_entries) + j);
}
#else
struct StraightLog32Entry {
  double x, y;
};
inline constexpr double straight_log32_entries[66] = STRAIGHT_LOG32_ENTRIES;
inline StraightLog32Entry straight_log32_entry(int j) {
  return {straight_log32_entries[2 * j], straight_log32_entries[2 * j + 1]};
}
#endif

STRAIGHT_FN double straight_log32_of(double d) {
  const bool subnormal = d < 2.2250738585072014e-308;
  const double scaled = subnormal ? d * 18014398509481984.0 : d;  // 2^54
  const long long bits = straight_bits(scaled);
  const int j = (static_cast<int>((bits >> 46) & 63) + 1) >> 1;  // m0's top 6 fraction bits, rounded to 5
  const int e = static_cast<int>((bits >> 52) & 0x7ff) - 1023 - (subnormal ? 54 : 0) + (j >= 16 ? 1 : 0);
  const double m0 = straight_double((bits & 0x000fffffffffffffLL) | 0x3ff0000000000000LL);  // [1, 2)
  const auto entry = straight_log32_entry(j);
  const double t = fma(m0, entry.x, -1.0);
  const double q_fit[] = {46.16624130844683,   -23.083120654223414, 15.388747102834289, -11.541560327128519,
                          9.233247879215266,   -7.694373207178822,  6.597683198003284,  -5.773035456433402};
  const double e32 = straight_double(STRAIGHT_MAGIC_BITS + 32 * e) - STRAIGHT_MAGIC;  // (double)(32 e), no conversion
  const double result = fma(t, straight_polynomial(t, q_fit), e32 + entry.y);
  return d > 0 ? result : straight_double(static_cast<long long>(0xfff0000000000000ULL));  // -inf
}

// The clamp that keeps a * straight_log32(d) in [-2^30, 32736] for every a in (0, a_max].
STRAIGHT_FN double straight_log32_limit(double a_max) { return 1073741824.0 / a_max; }

// 32 log2 d through the table, clamped to [-limit, limit * 32736 / 2^30] (d = 0 gives -limit).
// Within 4u relative of the exact value where not clamped.
STRAIGHT_FN double straight_log32(double d, double limit) {
  return fmin(fmax(straight_log32_of(d), -limit), limit * (32736.0 / 1073741824.0));
}

// 2^(a l32 / 32) as the scaled table entry and the polynomial's value, for |a l32| <= 2^30.
STRAIGHT_FN StraightPowerParts straight_power32_parts(double a, double l32) {
  const double shifted = fma(a, l32, STRAIGHT_MAGIC);  // n = round(a l32) in the low bits
  const double n = shifted - STRAIGHT_MAGIC;
  const double r = fma(a, l32, -n);  // in [-1/2, 1/2]
  const int ni = static_cast<int>(straight_bits(shifted));
  // (2^(r/32) - 1) / r, Chebyshev fit of degree 4 (50-digit arithmetic); 1 + r q(r) within 1.3u
  const double fit[] = {0.02166084939249829, 0.0002345961981994449, 1.6938509724285119e-06, 9.172607532092245e-09,
                        3.9737238568525983e-11};
  const double poly = fma(straight_polynomial(r, fit), r, 1.0);
  const int clamped = ni < -32736 ? -32736 : ni;
  return {straight_scale_exponent32(straight_exp2_thirtysecond(ni & 31), clamped), poly};
}

STRAIGHT_FN double straight_power32(double a, double l32) {
  const StraightPowerParts parts = straight_power32_parts(a, l32);
  return parts.scale * parts.poly;
}
