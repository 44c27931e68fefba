// histogram: counts[b] = the number of i < n with bin(values[i]) == b, for b < BINS, where
//
//   bin(v) = (unsigned)v % BINS
//
// (an int32 value is taken as its 32-bit pattern, so negative values have bins too). The counts
// are uint32 and the plan zeroes them before the launch: every variant adds into them with
// atomics, so the result is exact and the same for any order.
//
// Compile-time parameters (-D definitions; see histogram.toml):
//   ELEMENT_TYPE     element type of the values (unsigned int, int), from the problem
//   BINS             number of bins, from the problem: the modulo by a constant is a multiply (an
//                    AND for powers of two), which is why bins is an exact-match field
//   block_size_x     threads per block (a multiple of 32)
//   items_per_thread values per thread: a block counts one tile of block_size_x*items_per_thread
//                    consecutive values, item j of thread t at j*block_size_x + t (coalesced)
//   counters         0 global: every value is one atomicAdd on the output in global memory
//                    1 shared: each block counts into sub-histograms in shared memory, then adds
//                      each nonzero bin into the output with one global atomic; more items per
//                      thread amortise the sub-histograms' zeroing and merging over more values
//   replicas         shared: sub-histograms per block. Threads that hit the same bin at the same
//                    time serialise on its counter; with R replicas a thread uses replica
//                    lane % R (one warp's atomics are spread over R counters per bin) or, with
//                    warp_aggregated, warp % R (a warp's lanes already have distinct bins after
//                    aggregation; the replicas spread the warps). Replicas are interleaved,
//                    counter bin*R + r, so a bin's replicas lie in different banks.
//   warp_aggregated  1: the lanes of a warp holding the same bin (__match_any_sync) are counted by
//                    one atomicAdd of their number, from the lowest of them: far fewer atomics on
//                    skewed data, a match per item on uniform data
//
// Shared memory (dynamic): counters == shared ? replicas * BINS * 4 bytes : 0, which the spec's
// launch step computes.

typedef ELEMENT_TYPE value_t;

#define BLOCK block_size_x
#define IPT items_per_thread
#define TILE (BLOCK * IPT)
#define COUNTERS_GLOBAL 0
#define COUNTERS_SHARED 1
#define FULL_MASK 0xffffffffu
#define NO_BIN 0xffffffffu  // a lane without an item: never a bin, since BINS < 2^32
// Items loaded before any is counted: enough loads in flight without holding a whole long tile
// in registers.
#define CHUNK (IPT < 8 ? IPT : 8)

static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "whole warps, at most 1024 threads");
static_assert(IPT % CHUNK == 0, "items per thread: below 8, or a multiple of 8");
static_assert(BINS >= 1, "at least one bin");
static_assert(counters == COUNTERS_SHARED || replicas == 1, "replicas are sub-histograms in shared memory");

extern __shared__ __align__(16) unsigned char dynamic_shared[];

__device__ __forceinline__ unsigned bin_of(value_t v) { return (unsigned)v % BINS; }

// Counts one item per lane into base[bin * STRIDE]: base is the output (STRIDE 1) or the
// thread's replica of the sub-histograms (STRIDE replicas). With warp aggregation all 32 lanes
// must call it together, those without an item passing NO_BIN.
template <int STRIDE>
__device__ __forceinline__ void count(unsigned* base, unsigned bin) {
#if warp_aggregated
  const unsigned peers = __match_any_sync(FULL_MASK, bin);
  const unsigned lane = threadIdx.x % 32;
  if (bin != NO_BIN && (peers & ((1u << lane) - 1)) == 0) atomicAdd(base + bin * STRIDE, (unsigned)__popc(peers));
#else
  if (bin != NO_BIN) atomicAdd(base + bin * STRIDE, 1u);
#endif
}

// The block's tile, CHUNK items at a time. FULL: the tile lies inside the values, no checks.
template <bool FULL, int STRIDE>
__device__ __forceinline__ void count_tile(const value_t* __restrict__ values, long long first, long long n,
                                           unsigned* base) {
#pragma unroll 1
  for (int c = 0; c < IPT; c += CHUNK) {
    unsigned bins[CHUNK];
#pragma unroll
    for (int j = 0; j < CHUNK; ++j) {
      const long long i = first + (long long)(c + j) * BLOCK + threadIdx.x;
      bins[j] = FULL || i < n ? bin_of(values[i]) : NO_BIN;
    }
#pragma unroll
    for (int j = 0; j < CHUNK; ++j) count<STRIDE>(base, bins[j]);
  }
}

extern "C" __global__ void __launch_bounds__(BLOCK)
histogram(const value_t* __restrict__ values, long long n, unsigned* __restrict__ counts) {
  const long long first = (long long)blockIdx.x * TILE;
  const bool full = first + TILE <= n;
#if counters == COUNTERS_SHARED
  unsigned* sub = reinterpret_cast<unsigned*>(dynamic_shared);
  for (int i = threadIdx.x; i < BINS * replicas; i += BLOCK) sub[i] = 0;
  __syncthreads();
#if warp_aggregated
  unsigned* mine = sub + (threadIdx.x / 32) % replicas;
#else
  unsigned* mine = sub + threadIdx.x % replicas;
#endif
  if (full) count_tile<true, replicas>(values, first, n, mine);
  else count_tile<false, replicas>(values, first, n, mine);
  __syncthreads();
  // Merge: bin b's replicas are adjacent; a bin no value of the tile hit costs no global atomic.
  for (int b = threadIdx.x; b < BINS; b += BLOCK) {
    unsigned total = 0;
#pragma unroll
    for (int r = 0; r < replicas; ++r) total += sub[b * replicas + r];
    if (total != 0) atomicAdd(counts + b, total);
  }
#else
  if (full) count_tile<true, 1>(values, first, n, counts);
  else count_tile<false, 1>(values, first, n, counts);
#endif
}
