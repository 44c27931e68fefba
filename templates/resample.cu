// Resample family: time-series aggregation as in Gnocchi's carbonara.
//
// `in` holds S series of P points each, back to back. Every series is cut into windows of k
// consecutive points (the last one shorter when k does not divide P), and every window gives one
// value: out[s*W + w], W = ceil(P / k). The windows of all series, in order, tile the input
// without gaps: window g = s*W + w starts at s*P + w*k, so consecutive windows read one
// contiguous range.
//
// Compile-time parameters (from the config and the problem, as -D definitions):
//   CUTUNE_T      element type (float)
//   CUTUNE_OP     0 sum (a mean when the kernel's `divide` argument is 1), 1 min, 2 max
//   CUTUNE_MAP    0 thread: each thread computes WPT windows (striped: window i*BLOCK + threadIdx.x
//                   of the block's run), so consecutive threads write consecutive outputs
//                 1 warp: one warp per window, lanes reading interleaved vectors
//                 2 block: one block per window
//   CUTUNE_BLOCK  threads per block
//   CUTUNE_WPT    windows per thread (map=thread)
//   CUTUNE_STAGE  map=thread: 1 first loads the block's whole range of points into shared memory
//                 with coalesced vector loads, then each thread reads its windows from there (the
//                 study's v3). The plan passes `staged` = 0 when the range does not fit its cap;
//                 the kernel then reads like STAGE=0.
//   CUTUNE_VEC    elements per vector load (1, 2, 4); unaligned heads and tails are read singly
//   CUTUNE_PAD    one padding word per 32 in the staging array: thread t reads word t*k + j, a
//                 stride that collides in the banks whenever k is even
//
// Every thread keeps 64 bytes of loads in flight: BATCH = 16 / VEC vector loads before the first
// combine.

typedef CUTUNE_T value_t;

#define BLOCK CUTUNE_BLOCK
#define VEC CUTUNE_VEC
#define BATCH (16 / VEC)
#define WARPS (BLOCK / 32)
#define FULL_MASK 0xffffffffu

static_assert(VEC == 1 || VEC == 2 || VEC == 4, "vector width 1, 2 or 4");
static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "block must be a multiple of 32, at most 1024");

#if CUTUNE_OP == 0
#define IDENTITY ((value_t)0)
__device__ __forceinline__ value_t combine(value_t a, value_t b) { return a + b; }
#elif CUTUNE_OP == 1
#define IDENTITY (__int_as_float(0x7f800000))
// fmin/fmax: one instruction each (see reduce.cu); they ignore NaN operands, and the inputs hold none.
__device__ __forceinline__ value_t combine(value_t a, value_t b) { return fmin(a, b); }
#else
#define IDENTITY (-__int_as_float(0x7f800000))
__device__ __forceinline__ value_t combine(value_t a, value_t b) { return fmax(a, b); }
#endif

// The window's value as stored: a sum becomes a mean by dividing by its own number of points.
__device__ __forceinline__ value_t window_value(value_t acc, int count, int divide) {
  return divide ? acc / (value_t)count : acc;
}

struct Window {
  long long start;
  int count;
};

__device__ __forceinline__ Window window_at(unsigned g, long long points, int window, unsigned per_series) {
  const unsigned s = g / per_series, w = g - s * per_series;
  const long long in_series = (long long)w * window;
  const long long left = points - in_series;
  Window result;
  result.start = (long long)s * points + in_series;
  result.count = (int)(left < window ? left : window);
  return result;
}

template <int W> struct vec_of { struct __align__(W * sizeof(value_t)) type { value_t v[W]; }; };
template <> struct vec_of<1> { struct type { value_t v[1]; }; };
typedef typename vec_of<VEC>::type vector_t;

// Combines in[start, start + count) as member `member` of a group of GROUP threads that share
// the range: single elements up to the first vector boundary, then vectors, then single elements.
// `in` itself is vector-aligned (a cudaMalloc'ed buffer).
template <int GROUP>
__device__ __forceinline__ value_t accumulate_range(const value_t* __restrict__ in, long long start, int count, int member) {
  value_t acc = IDENTITY;
  int head = (int)((VEC - (start & (VEC - 1))) & (VEC - 1));
  if (head > count) head = count;
  // Head and tail hold fewer than VEC elements: unrolled, so their loads are in flight together.
#pragma unroll
  for (int i = 0; i < VEC - 1; ++i)
    if (member + i * GROUP < head) acc = combine(acc, in[start + member + i * GROUP]);
  const int vectors = (count - head) / VEC;
  const vector_t* body = reinterpret_cast<const vector_t*>(in + start + head);
#pragma unroll 1
  for (int base = member; base < vectors; base += GROUP * BATCH) {
    vector_t v[BATCH];
#pragma unroll
    for (int u = 0; u < BATCH; ++u)
      if (base + u * GROUP < vectors) v[u] = body[base + u * GROUP];
#pragma unroll
    for (int u = 0; u < BATCH; ++u)
      if (base + u * GROUP < vectors)
#pragma unroll
        for (int k = 0; k < VEC; ++k) acc = combine(acc, v[u].v[k]);
  }
  const long long tail = start + head + (long long)vectors * VEC;
  const int left = count - head - vectors * VEC;
#pragma unroll
  for (int i = 0; i < VEC - 1; ++i)
    if (member + i * GROUP < left) acc = combine(acc, in[tail + member + i * GROUP]);
  return acc;
}

__device__ __forceinline__ value_t warp_combine(value_t value) {
#pragma unroll
  for (int s = 16; s > 0; s >>= 1) value = combine(value, __shfl_xor_sync(FULL_MASK, value, s));
  return value;
}

#if CUTUNE_MAP == 0
// ---- a thread per window -------------------------------------------------------------------------

#define WPT CUTUNE_WPT
#define PADDED(i) (CUTUNE_PAD ? (i) + ((i) >> 5) : (i))

extern __shared__ __align__(16) unsigned char dynamic_shared[];

// Loads in[lo, hi) into stage[0, hi - lo): lo is vector-aligned; a last vector that would run
// past the input (`total` points) is read element by element.
__device__ __forceinline__ void stage_range(const value_t* __restrict__ in, long long lo, long long hi, long long total,
                                            value_t* stage) {
  const int vectors = (int)((hi - lo + VEC - 1) / VEC);
  const vector_t* source = reinterpret_cast<const vector_t*>(in + lo);
  for (int base = threadIdx.x; base < vectors; base += BLOCK * BATCH) {
    vector_t v[BATCH];
#pragma unroll
    for (int u = 0; u < BATCH; ++u) {
      const int idx = base + u * BLOCK;
      const long long e = lo + (long long)idx * VEC;
      if (idx < vectors && e + VEC <= total) v[u] = source[idx];
      else if (idx < vectors)
#pragma unroll
        for (int k = 0; k < VEC; ++k) v[u].v[k] = e + k < total ? in[e + k] : IDENTITY;
    }
#pragma unroll
    for (int u = 0; u < BATCH; ++u) {
      const int idx = base + u * BLOCK;
      if (idx >= vectors) continue;
      if (CUTUNE_PAD) {
#pragma unroll
        for (int k = 0; k < VEC; ++k) stage[PADDED(idx * VEC + k)] = v[u].v[k];
      } else {
        reinterpret_cast<vector_t*>(stage)[idx] = v[u];
      }
    }
  }
}

extern "C" __global__ void __launch_bounds__(BLOCK)
resample(const value_t* __restrict__ in, long long points, int window, unsigned per_series, unsigned windows,
         int divide, int staged, value_t* __restrict__ out) {
  const unsigned first = blockIdx.x * (unsigned)(BLOCK * WPT);
  const unsigned end = min(first + (unsigned)(BLOCK * WPT), windows);
#if CUTUNE_STAGE
  if (staged) {
    value_t* stage = reinterpret_cast<value_t*>(dynamic_shared);
    const Window head = window_at(first, points, window, per_series), last = window_at(end - 1, points, window, per_series);
    const long long lo = head.start & ~(long long)(VEC - 1);
    const long long total = (long long)(windows / per_series) * points;
    stage_range(in, lo, last.start + last.count, total, stage);
    __syncthreads();
#pragma unroll
    for (int i = 0; i < WPT; ++i) {
      const unsigned g = first + i * BLOCK + threadIdx.x;
      if (g >= end) break;
      const Window w = window_at(g, points, window, per_series);
      const int local = (int)(w.start - lo);
      value_t acc = IDENTITY;
      for (int j = 0; j < w.count; ++j) acc = combine(acc, stage[PADDED(local + j)]);
      out[g] = window_value(acc, w.count, divide);
    }
    return;
  }
#endif
#pragma unroll
  for (int i = 0; i < WPT; ++i) {
    const unsigned g = first + i * BLOCK + threadIdx.x;
    if (g >= end) break;
    const Window w = window_at(g, points, window, per_series);
    out[g] = window_value(accumulate_range<1>(in, w.start, w.count, 0), w.count, divide);
  }
}

#elif CUTUNE_MAP == 1
// ---- a warp per window ---------------------------------------------------------------------------

extern "C" __global__ void __launch_bounds__(BLOCK)
resample(const value_t* __restrict__ in, long long points, int window, unsigned per_series, unsigned windows,
         int divide, int staged, value_t* __restrict__ out) {
  const unsigned g = blockIdx.x * WARPS + (threadIdx.x >> 5);
  const int lane = threadIdx.x & 31;
  if (g >= windows) return;  // whole warps leave together
  const Window w = window_at(g, points, window, per_series);
  const value_t total = warp_combine(accumulate_range<32>(in, w.start, w.count, lane));
  if (lane == 0) out[g] = window_value(total, w.count, divide);
}

#else
// ---- a block per window --------------------------------------------------------------------------

extern "C" __global__ void __launch_bounds__(BLOCK)
resample(const value_t* __restrict__ in, long long points, int window, unsigned per_series, unsigned windows,
         int divide, int staged, value_t* __restrict__ out) {
  __shared__ value_t warp_totals[WARPS];
  const unsigned g = blockIdx.x;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const Window w = window_at(g, points, window, per_series);
  const value_t mine = warp_combine(accumulate_range<BLOCK>(in, w.start, w.count, threadIdx.x));
  if (lane == 0) warp_totals[warp] = mine;
  __syncthreads();
  if (warp == 0) {
    const value_t total = warp_combine(lane < WARPS ? warp_totals[lane] : IDENTITY);
    if (lane == 0) out[g] = window_value(total, w.count, divide);
  }
}
#endif
