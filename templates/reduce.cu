// Reduce family: the sum, minimum or maximum of n values.
//
// Compile-time parameters (from the config and the problem, as -D definitions):
//   CUTUNE_T       element type (float, double)
//   CUTUNE_OP      0 sum, 1 min, 2 max
//   CUTUNE_BLOCK   threads per block (power of two, 128 … 1024)
//   CUTUNE_EPT     elements per thread: each block reduces one tile of BLOCK*EPT values
//   CUTUNE_VEC     elements per vector load (1, 2, 4); CUTUNE_EPT % CUTUNE_VEC == 0
//   CUTUNE_FINISH  0 smem: shared-memory tree; its levels inside one warp run warp-synchronously
//                    (volatile, no __syncthreads), as in Harris's unrolled last warp
//                  1 shuffle: every warp folds its values with shuffles, then warp 0 folds the
//                    warp totals with shuffles
//   CUTUNE_FOLD    fold stop k: the parallel fold stops when 2k partials are left, and thread 0
//                  adds those serially (the power-law MLE study found k = 8 faster than k = 1)
//   CUTUNE_PAD     1: one padding word per 32 in the shared tree (smem only)
//   CUTUNE_PASS    0 atomic: each block combines its result into *out with one atomic; the plan
//                    presets *out to the identity
//                  1 lastblock: each block writes a partial; the last block to finish reduces
//                    them. Its ticket counter resets itself, so the run is one launch, no memset
//                  2 twopass: each block writes a partial; a second launch of one block reduces them
//
// Loads: each thread issues all its vector loads of a tile before combining any (up to 16 in
// flight), consecutive threads reading consecutive vectors, so a warp reads 32*VEC*sizeof(T)
// contiguous bytes per load. The partial last tile is read element by element.

typedef CUTUNE_T value_t;

#define BLOCK CUTUNE_BLOCK
#define EPT CUTUNE_EPT
#define VEC CUTUNE_VEC
#define FOLD CUTUNE_FOLD
#define TILE (BLOCK * EPT)
#define WARPS (BLOCK / 32)
#define FULL_MASK 0xffffffffu

static_assert(EPT % VEC == 0, "elements per thread must be a multiple of the vector width");
static_assert(BLOCK >= 64 && BLOCK <= 1024 && (BLOCK & (BLOCK - 1)) == 0, "block must be a power of two, 64 … 1024");
static_assert(2 * FOLD <= BLOCK, "the fold must stop with at most BLOCK partials");

// ---- the operator ------------------------------------------------------------------------------

#define POSITIVE_INFINITY ((value_t)__int_as_float(0x7f800000))  // float's infinity widens to double's

#if CUTUNE_OP == 0
#define IDENTITY ((value_t)0)
__device__ __forceinline__ value_t combine(value_t a, value_t b) { return a + b; }
#elif CUTUNE_OP == 1
// fmin and fmax are one instruction (FMNMX) where a comparison and a select are two: on a 2^20
// float minimum the block's dependent chain of combines ran 0.1 us longer that way (H200). They
// ignore a NaN operand instead of propagating it; the inputs hold none.
#define IDENTITY POSITIVE_INFINITY
__device__ __forceinline__ value_t combine(value_t a, value_t b) { return fmin(a, b); }
#else
#define IDENTITY (-POSITIVE_INFINITY)
__device__ __forceinline__ value_t combine(value_t a, value_t b) { return fmax(a, b); }
#endif

// Atomic combine into global memory. Sums use the hardware atomicAdd (float; double on sm_60+).
// For min and max, IEEE values with the sign bit clear order like signed integers, and with it
// set order in reverse like unsigned integers, so one integer atomic does it.
__device__ __forceinline__ void atomic_combine(float* target, float v) {
#if CUTUNE_OP == 0
  atomicAdd(target, v);
#elif CUTUNE_OP == 1
  if (__float_as_int(v) >= 0) atomicMin((int*)target, __float_as_int(v));
  else atomicMax((unsigned int*)target, __float_as_uint(v));
#else
  if (__float_as_int(v) >= 0) atomicMax((int*)target, __float_as_int(v));
  else atomicMin((unsigned int*)target, __float_as_uint(v));
#endif
}

__device__ __forceinline__ void atomic_combine(double* target, double v) {
#if CUTUNE_OP == 0
  atomicAdd(target, v);
#elif CUTUNE_OP == 1
  if (__double_as_longlong(v) >= 0) atomicMin((long long*)target, __double_as_longlong(v));
  else atomicMax((unsigned long long*)target, (unsigned long long)__double_as_longlong(v));
#else
  if (__double_as_longlong(v) >= 0) atomicMax((long long*)target, __double_as_longlong(v));
  else atomicMin((unsigned long long*)target, (unsigned long long)__double_as_longlong(v));
#endif
}

// ---- one thread's share of a tile --------------------------------------------------------------

template <int W> struct vec_of { struct __align__(W * sizeof(value_t)) type { value_t v[W]; }; };
template <> struct vec_of<1> { struct type { value_t v[1]; }; };
typedef typename vec_of<VEC>::type vector_t;

#define LOADS (EPT / VEC)
#define BATCH (LOADS < 16 ? LOADS : 16)  // vector loads in flight per thread

// One accumulator per vector lane: VEC independent chains of combines instead of one.
__device__ __forceinline__ value_t thread_reduce_tile(const value_t* __restrict__ in, long long n, long long first) {
  value_t acc[VEC];
#pragma unroll
  for (int k = 0; k < VEC; ++k) acc[k] = IDENTITY;
  const bool aligned = ((unsigned long long)in % (VEC * sizeof(value_t))) == 0;
  if (aligned && first + TILE <= n) {
    const vector_t* p = reinterpret_cast<const vector_t*>(in + first) + threadIdx.x;
#pragma unroll 1
    for (int b = 0; b < LOADS; b += BATCH) {
      vector_t v[BATCH];
#pragma unroll
      for (int j = 0; j < BATCH; ++j) v[j] = p[(b + j) * BLOCK];
#pragma unroll
      for (int j = 0; j < BATCH; ++j)
#pragma unroll
        for (int k = 0; k < VEC; ++k) acc[k] = combine(acc[k], v[j].v[k]);
    }
  } else {
    for (int j = 0; j < EPT; ++j) {
      const long long i = first + (long long)j * BLOCK + threadIdx.x;
      if (i < n) acc[0] = combine(acc[0], in[i]);
    }
  }
#pragma unroll
  for (int k = 1; k < VEC; ++k) acc[0] = combine(acc[0], acc[k]);
  return acc[0];
}

// Reduces `count` values (partials) with the whole block; used by the final step of lastblock
// and twopass. L1 is bypassed: the partials were written by other multiprocessors.
__device__ __forceinline__ value_t thread_reduce_partials(const value_t* partials, long long count) {
  value_t acc = IDENTITY;
  for (long long i = threadIdx.x; i < count; i += BLOCK) acc = combine(acc, __ldcg(partials + i));
  return acc;
}

// ---- the block's fold --------------------------------------------------------------------------

#if CUTUNE_FINISH == 0
#define PADDED(i) (CUTUNE_PAD ? (i) + ((i) >> 5) : (i))
struct BlockShared {
  value_t tree[PADDED(BLOCK - 1) + 1];
};

// The block's value in thread 0. Tree levels s (s partials left after the level) run while s > FOLD.
__device__ __forceinline__ value_t block_reduce(value_t value, BlockShared& sh) {
  const int t = threadIdx.x;
  sh.tree[PADDED(t)] = value;
  __syncthreads();
#pragma unroll
  for (int s = BLOCK / 2; s > 32 && s > FOLD; s >>= 1) {
    if (t < s) sh.tree[PADDED(t)] = combine(sh.tree[PADDED(t)], sh.tree[PADDED(t + s)]);
    __syncthreads();
  }
  volatile value_t* tree = sh.tree;
  if (FOLD < 32 && t < 32) {
#pragma unroll
    for (int s = 32; s > FOLD; s >>= 1) {
      if (t < s) tree[PADDED(t)] = combine(tree[PADDED(t)], tree[PADDED(t + s)]);
      __syncwarp();
    }
  }
  value_t result = IDENTITY;
  if (t == 0) {
    result = tree[PADDED(0)];
#pragma unroll
    for (int i = 1; i < 2 * FOLD; ++i) result = combine(result, tree[PADDED(i)]);
  }
  return result;
}
#else
struct BlockShared {
  value_t warp_totals[WARPS];
};

__device__ __forceinline__ value_t warp_fold(value_t value, int levels_from) {
#pragma unroll
  for (int s = levels_from; s > FOLD; s >>= 1) value = combine(value, __shfl_down_sync(FULL_MASK, value, s));
  return value;
}

// The block's value in thread 0: each warp folds its 32 values completely, then warp 0 folds the
// WARPS warp totals while more than 2*FOLD are left, and lane 0 adds the rest one by one.
__device__ __forceinline__ value_t block_reduce(value_t value, BlockShared& sh) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int s = 16; s > 0; s >>= 1) value = combine(value, __shfl_down_sync(FULL_MASK, value, s));
  if (lane == 0) sh.warp_totals[warp] = value;
  __syncthreads();
  value_t result = IDENTITY;
  if (warp == 0) {
    value_t v = lane < WARPS ? sh.warp_totals[lane] : IDENTITY;
    v = warp_fold(v, WARPS / 2);
    result = v;
    const int left = 2 * FOLD < WARPS ? 2 * FOLD : WARPS;
#pragma unroll
    for (int i = 1; i < left; ++i) result = combine(result, __shfl_sync(FULL_MASK, v, i));
  }
  return result;
}
#endif

// ---- the passes ----------------------------------------------------------------------------------

#if CUTUNE_PASS == 0
extern "C" __global__ void __launch_bounds__(BLOCK)
reduce_atomic(const value_t* __restrict__ in, long long n, value_t* __restrict__ out) {
  __shared__ BlockShared sh;
  const value_t mine = thread_reduce_tile(in, n, (long long)blockIdx.x * TILE);
  const value_t block_value = block_reduce(mine, sh);
  if (threadIdx.x == 0) atomic_combine(out, block_value);
}
#elif CUTUNE_PASS == 1
extern "C" __global__ void __launch_bounds__(BLOCK)
reduce_lastblock(const value_t* __restrict__ in, long long n, value_t* __restrict__ partials,
                 unsigned int* __restrict__ finished, value_t* __restrict__ out) {
  __shared__ BlockShared sh;
  __shared__ bool is_last;
  const value_t mine = thread_reduce_tile(in, n, (long long)blockIdx.x * TILE);
  const value_t block_value = block_reduce(mine, sh);
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = block_value;
    __threadfence();  // the partial is visible device-wide before the counter says so
    // atomicInc wraps to 0 after gridDim.x - 1, so the last block leaves the counter at 0 for
    // the next run. A counter never used before (any value >= gridDim.x) is only reset by the
    // first call, which then takes a ticket of its own.
    unsigned int ticket = atomicInc(finished, gridDim.x - 1);
    if (ticket >= gridDim.x) ticket = atomicInc(finished, gridDim.x - 1);
    is_last = ticket == gridDim.x - 1;
    if (is_last) __threadfence();  // and every other block's partial is visible to this one
  }
  __syncthreads();  // also: the shared tree is free for reuse
  if (!is_last) return;
  const value_t total = block_reduce(thread_reduce_partials(partials, gridDim.x), sh);
  if (threadIdx.x == 0) *out = total;
}
#else
extern "C" __global__ void __launch_bounds__(BLOCK)
reduce_partials(const value_t* __restrict__ in, long long n, value_t* __restrict__ partials) {
  __shared__ BlockShared sh;
  const value_t mine = thread_reduce_tile(in, n, (long long)blockIdx.x * TILE);
  const value_t block_value = block_reduce(mine, sh);
  if (threadIdx.x == 0) partials[blockIdx.x] = block_value;
}

extern "C" __global__ void __launch_bounds__(BLOCK)
reduce_final(const value_t* __restrict__ partials, long long count, value_t* __restrict__ out) {
  __shared__ BlockShared sh;
  const value_t total = block_reduce(thread_reduce_partials(partials, count), sh);
  if (threadIdx.x == 0) *out = total;
}
#endif
