// Scan family: awkward-array's compact_offsets.
//
//   tooffsets[0] = 0
//   tooffsets[i+1] = tooffsets[i] + (stops[stopsoffset+i] - starts[startsoffset+i])
//
// and the lowest i with stops[i] < starts[i] is reported through *error_index (left at
// ~0ull when there is none), as the sequential code would stop there.
//
// Compile-time parameters (from the config and the problem, as -D definitions):
//   CUTUNE_T      input element type (int, unsigned int, long long)
//   CUTUNE_ALGO   0 blelloch: shared-memory work-efficient tree over per-thread sums
//                 1 warp: warp-shuffle scan of per-thread sums
//                 2 lookback: single pass with decoupled look-back (Merrill & Garland)
//                 3 striped: lookback with warp-striped tiles: coalesced vector loads, no shared-memory
//                   staging, exclusive offsets stored as aligned int64 pairs (see its kernel)
//                 4..6 striped with cache hints or an L2 prefetch (see "striped variants" below):
//                   4 striped_ld_cs, 5 striped_ld_nc, 6 striped_pf_cs
//   CUTUNE_BLOCK  threads per block (power of two)
//   CUTUNE_EPT    elements per thread (consecutive, "blocked" arrangement; striped: EPT / VEC runs of
//                 VEC consecutive elements, 32 * VEC apart)
//   CUTUNE_VEC    elements per vector load (1, 2 or 4; CUTUNE_EPT % CUTUNE_VEC == 0)
//   CUTUNE_PAD    1: pad shared arrays by one word per 32 to avoid bank conflicts
//
// blelloch and warp work for any n with three launches: tile sums, a scan of the tile sums in
// one block, then each tile scanned again with its offset. lookback does it in one launch.

typedef CUTUNE_T value_t;
typedef long long sum_t;
typedef unsigned long long u64;

#define BLOCK CUTUNE_BLOCK
#define EPT CUTUNE_EPT
#define VEC CUTUNE_VEC
#define TILE (BLOCK * EPT)
#define WARPS (BLOCK / 32)
#define FULL_MASK 0xffffffffu

static_assert(EPT % VEC == 0, "elements per thread must be a multiple of the vector width");
static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "block must be a multiple of 32, at most 1024");

// Shared-array index with optional padding: one extra word every 32 spreads strided accesses
// (thread t touching t*EPT+k) over all banks.
__device__ __forceinline__ int padded(int i) { return CUTUNE_PAD ? i + (i >> 5) : i; }
#define PADDED_SIZE(n) (CUTUNE_PAD ? (n) + ((n) >> 5) + 1 : (n))

// ---- loading lengths -------------------------------------------------------------------------

template <int W> struct vec_of;
template <> struct vec_of<1> { typedef value_t type; };
template <> struct vec_of<2> { struct __align__(2 * sizeof(value_t)) type { value_t v[2]; }; };
template <> struct vec_of<4> { struct __align__(4 * sizeof(value_t)) type { value_t v[4]; }; };

__device__ __forceinline__ value_t element(const vec_of<1>::type& v, int) { return v; }
template <class V> __device__ __forceinline__ value_t element(const V& v, int i) { return v.v[i]; }

// Reads this thread's EPT lengths starting at element `first`, records the lowest bad index,
// and returns their sum. Vector loads are used only when the whole tile is in range and both
// arrays are aligned for them; the check is uniform across the block.
__device__ __forceinline__ sum_t load_lengths(const value_t* __restrict__ starts, const value_t* __restrict__ stops,
                                              long long n, long long first, bool vector_ok, sum_t (&len)[EPT],
                                              u64& bad) {
  sum_t total = 0;
  if (vector_ok && first + EPT <= n) {
    typedef typename vec_of<VEC>::type V;
    const V* s = reinterpret_cast<const V*>(starts + first);
    const V* e = reinterpret_cast<const V*>(stops + first);
#pragma unroll
    for (int j = 0; j < EPT / VEC; ++j) {
      const V sv = s[j];
      const V ev = e[j];
#pragma unroll
      for (int k = 0; k < VEC; ++k) {
        const value_t a = element(sv, k), b = element(ev, k);
        if (b < a && bad == ~0ull) bad = first + j * VEC + k;
        len[j * VEC + k] = (sum_t)b - (sum_t)a;
      }
    }
  } else {
#pragma unroll
    for (int k = 0; k < EPT; ++k) {
      const long long i = first + k;
      sum_t l = 0;
      if (i < n) {
        const value_t a = starts[i], b = stops[i];
        if (b < a && bad == ~0ull) bad = i;
        l = (sum_t)b - (sum_t)a;
      }
      len[k] = l;
    }
  }
#pragma unroll
  for (int k = 0; k < EPT; ++k) total += len[k];
  return total;
}

__device__ __forceinline__ void report_bad(u64 bad, u64* error_index) {
  if (bad != ~0ull) atomicMin(error_index, bad);
}

// ---- block-wide exclusive scan of one value per thread ---------------------------------------

struct ScanShared {
#if CUTUNE_ALGO == 0
  sum_t tree[PADDED_SIZE(BLOCK)];
#else
  sum_t warp_totals[WARPS];
#endif
  sum_t block_total;
  sum_t block_prefix;
  int tile;
};

#if CUTUNE_ALGO == 0
// Blelloch: up-sweep builds partial sums in place, down-sweep turns them into exclusive sums.
__device__ __forceinline__ sum_t block_exclusive_scan(sum_t value, ScanShared& sh, sum_t& block_total) {
  const int t = threadIdx.x;
  sh.tree[padded(t)] = value;
  __syncthreads();
  for (int stride = 1; stride < BLOCK; stride <<= 1) {
    const int i = (t + 1) * stride * 2 - 1;
    if (i < BLOCK) sh.tree[padded(i)] += sh.tree[padded(i - stride)];
    __syncthreads();
  }
  if (t == 0) {
    sh.block_total = sh.tree[padded(BLOCK - 1)];
    sh.tree[padded(BLOCK - 1)] = 0;
  }
  __syncthreads();
  for (int stride = BLOCK / 2; stride >= 1; stride >>= 1) {
    const int i = (t + 1) * stride * 2 - 1;
    if (i < BLOCK) {
      const sum_t left = sh.tree[padded(i - stride)];
      sh.tree[padded(i - stride)] = sh.tree[padded(i)];
      sh.tree[padded(i)] += left;
    }
    __syncthreads();
  }
  const sum_t result = sh.tree[padded(t)];
  block_total = sh.block_total;
  __syncthreads();  // the tree is reused by the next call
  return result;
}
#else
// Warp shuffles within each warp, then one warp scans the warp totals.
__device__ __forceinline__ sum_t warp_inclusive_scan(sum_t value) {
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int offset = 1; offset < 32; offset <<= 1) {
    const sum_t other = __shfl_up_sync(FULL_MASK, value, offset);
    if (lane >= offset) value += other;
  }
  return value;
}

__device__ __forceinline__ sum_t block_exclusive_scan(sum_t value, ScanShared& sh, sum_t& block_total) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const sum_t inclusive = warp_inclusive_scan(value);
  if (lane == 31) sh.warp_totals[warp] = inclusive;
  __syncthreads();
  if (warp == 0) {
    const sum_t total = lane < WARPS ? sh.warp_totals[lane] : 0;
    const sum_t scanned = warp_inclusive_scan(total);
    if (lane < WARPS) sh.warp_totals[lane] = scanned - total;
    if (lane == WARPS - 1) sh.block_total = scanned;
  }
  __syncthreads();
  const sum_t result = sh.warp_totals[warp] + inclusive - value;
  block_total = sh.block_total;
  __syncthreads();
  return result;
}
#endif

// ---- writing offsets ---------------------------------------------------------------------------

// Each thread holds EPT consecutive inclusive sums; they go out through shared memory so that
// consecutive threads write consecutive 8-byte words (coalesced), since out+1 is only 8-byte aligned.
__device__ __forceinline__ void store_offsets(sum_t* __restrict__ out, long long n, long long tile_first,
                                              const sum_t (&inclusive)[EPT], sum_t* staging) {
  if (EPT == 1) {
    const long long i = tile_first + threadIdx.x;
    if (i < n) out[i + 1] = inclusive[0];
    return;
  }
#pragma unroll
  for (int k = 0; k < EPT; ++k) staging[padded(threadIdx.x * EPT + k)] = inclusive[k];
  __syncthreads();
#pragma unroll
  for (int k = 0; k < EPT; ++k) {
    const int local = k * BLOCK + threadIdx.x;
    const long long i = tile_first + local;
    if (i < n) out[i + 1] = staging[padded(local)];
  }
}

__device__ __forceinline__ bool vectors_aligned(const value_t* starts, const value_t* stops) {
  return VEC == 1 ||
         (((unsigned long long)starts | (unsigned long long)stops) % (VEC * sizeof(value_t))) == 0;
}

extern __shared__ __align__(16) unsigned char dynamic_shared[];

// Scans one tile with a known exclusive offset and writes its offsets.
__device__ __forceinline__ void finish_tile(sum_t* __restrict__ out, long long n, long long tile_first,
                                            const sum_t (&len)[EPT], sum_t thread_prefix) {
  sum_t inclusive[EPT];
  sum_t running = thread_prefix;
#pragma unroll
  for (int k = 0; k < EPT; ++k) {
    running += len[k];
    inclusive[k] = running;
  }
  store_offsets(out, n, tile_first, inclusive, reinterpret_cast<sum_t*>(dynamic_shared));
}

#if CUTUNE_ALGO < 2
// ---- three-launch scheme (blelloch, warp) --------------------------------------------------------

extern "C" __global__ void __launch_bounds__(BLOCK)
scan_tile_sums(const value_t* __restrict__ starts, const value_t* __restrict__ stops, long long n,
               sum_t* __restrict__ tile_sums, u64* __restrict__ error_index) {
  __shared__ ScanShared sh;
  const long long tile_first = (long long)blockIdx.x * TILE;
  sum_t len[EPT];
  u64 bad = ~0ull;
  const sum_t mine = load_lengths(starts, stops, n, tile_first + (long long)threadIdx.x * EPT,
                                  vectors_aligned(starts, stops), len, bad);
  report_bad(bad, error_index);
  sum_t total;
  block_exclusive_scan(mine, sh, total);
  if (threadIdx.x == 0) tile_sums[blockIdx.x] = total;
}

// One block turns the tile sums into exclusive tile offsets, BLOCK at a time with a carry.
extern "C" __global__ void __launch_bounds__(BLOCK)
scan_tile_offsets(sum_t* __restrict__ tile_sums, long long tiles) {
  __shared__ ScanShared sh;
  sum_t carry = 0;
  for (long long first = 0; first < tiles; first += BLOCK) {
    const long long i = first + threadIdx.x;
    const sum_t value = i < tiles ? tile_sums[i] : 0;
    sum_t total;
    const sum_t exclusive = block_exclusive_scan(value, sh, total);
    if (i < tiles) tile_sums[i] = carry + exclusive;
    carry += total;
  }
}

extern "C" __global__ void __launch_bounds__(BLOCK)
scan_tiles(const value_t* __restrict__ starts, const value_t* __restrict__ stops, long long n,
           const sum_t* __restrict__ tile_offsets, sum_t* __restrict__ out) {
  __shared__ ScanShared sh;
  const long long tile_first = (long long)blockIdx.x * TILE;
  sum_t len[EPT];
  u64 bad = ~0ull;  // already reported by scan_tile_sums
  const sum_t mine = load_lengths(starts, stops, n, tile_first + (long long)threadIdx.x * EPT,
                                  vectors_aligned(starts, stops), len, bad);
  sum_t total;
  const sum_t prefix = block_exclusive_scan(mine, sh, total);
  if (blockIdx.x == 0 && threadIdx.x == 0) out[0] = 0;
  finish_tile(out, n, tile_first, len, tile_offsets[blockIdx.x] + prefix);
}

#else
// ---- single pass with decoupled look-back --------------------------------------------------------
//
// Each tile publishes one 64-bit word: status in the top two bits, a 62-bit two's-complement
// value below. One word means a reader never sees a status without its value. Sums beyond
// ±2^61 (far past any offsets array that fits in memory) are not representable.

#define STATUS_INVALID 0ull
#define STATUS_AGGREGATE 1ull
#define STATUS_PREFIX 2ull
#define VALUE_MASK ((1ull << 62) - 1)

__device__ __forceinline__ u64 pack(u64 status, sum_t value) { return (status << 62) | ((u64)value & VALUE_MASK); }
__device__ __forceinline__ u64 status_of(u64 word) { return word >> 62; }
__device__ __forceinline__ sum_t value_of(u64 word) { return ((sum_t)(word << 2)) >> 2; }

__device__ __forceinline__ void publish(u64* state, long long tile, u64 status, sum_t value) {
  // A relaxed store of the whole word is enough: status and value travel together.
  asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(state + tile), "l"(pack(status, value)) : "memory");
}

__device__ __forceinline__ u64 observe(const u64* state, long long tile) {
  u64 word;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(word) : "l"(state + tile) : "memory");
  return word;
}

// Warp 0 walks back over predecessors 32 at a time until it meets one with an inclusive prefix.
__device__ __forceinline__ sum_t look_back(const u64* state, long long tile) {
  const int lane = threadIdx.x & 31;
  sum_t exclusive = 0;
  long long window_last = tile - 1;  // lane 0 looks at the nearest predecessor
  while (true) {
    const long long pred = window_last - lane;
    u64 word = pred >= 0 ? observe(state, pred) : pack(STATUS_PREFIX, 0);
    while (__any_sync(FULL_MASK, status_of(word) == STATUS_INVALID)) {
      if (status_of(word) == STATUS_INVALID) {
        __nanosleep(20);
        word = observe(state, pred);
      }
    }
    const unsigned prefixes = __ballot_sync(FULL_MASK, status_of(word) == STATUS_PREFIX);
    // Lanes up to and including the nearest PREFIX contribute; farther ones are already in it.
    const int stop_lane = prefixes ? __ffs(prefixes) - 1 : 31;
    sum_t contribution = lane <= stop_lane ? value_of(word) : 0;
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) contribution += __shfl_xor_sync(FULL_MASK, contribution, offset);
    exclusive += contribution;
    if (prefixes) return exclusive;
    window_last -= 32;
  }
}

#if CUTUNE_ALGO == 2
extern "C" __global__ void __launch_bounds__(BLOCK)
scan_lookback(const value_t* __restrict__ starts, const value_t* __restrict__ stops, long long n,
              u64* __restrict__ tile_state, unsigned int* __restrict__ tile_counter, sum_t* __restrict__ out,
              u64* __restrict__ error_index) {
  __shared__ ScanShared sh;
  // Tiles are numbered in the order blocks start, so every predecessor is already running:
  // waiting on it cannot deadlock.
  if (threadIdx.x == 0) sh.tile = atomicAdd(tile_counter, 1u);
  __syncthreads();
  const long long tile = sh.tile;
  const long long tile_first = tile * TILE;

  sum_t len[EPT];
  u64 bad = ~0ull;
  const sum_t mine = load_lengths(starts, stops, n, tile_first + (long long)threadIdx.x * EPT,
                                  vectors_aligned(starts, stops), len, bad);
  report_bad(bad, error_index);
  sum_t total;
  const sum_t prefix = block_exclusive_scan(mine, sh, total);

  if (tile == 0) {
    if (threadIdx.x == 0) {
      publish(tile_state, 0, STATUS_PREFIX, total);
      sh.block_prefix = 0;
      out[0] = 0;
    }
  } else if (threadIdx.x < 32) {
    if (threadIdx.x == 0) publish(tile_state, tile, STATUS_AGGREGATE, total);
    const sum_t exclusive = look_back(tile_state, tile);
    if (threadIdx.x == 0) {
      publish(tile_state, tile, STATUS_PREFIX, exclusive + total);
      sh.block_prefix = exclusive;
    }
  }
  __syncthreads();
  finish_tile(out, n, tile_first, len, sh.block_prefix + prefix);
}

#else
// ---- single pass, warp-striped (striped) -------------------------------------------------------
//
// The same look-back, with the tile laid out so that global memory is touched only by whole,
// aligned warp-wide runs and shared memory holds nothing but the warp totals:
//   - warp w owns elements [tile_first + w * 32 * EPT, + 32 * EPT); in chunk j its lane l holds
//     VEC consecutive elements at j * 32 * VEC + l * VEC of that range, so each load instruction
//     of the warp reads 32 * VEC consecutive elements (blocked tiles read 64-byte strides);
//   - each chunk is scanned across the warp with shuffles (EPT / VEC warp scans, instead of one
//     scan and a transpose through shared memory);
//   - element i's thread writes tooffsets[i], the EXCLUSIVE sum (tooffsets[0] = 0 falls out),
//     and the thread of element n - 1 also writes tooffsets[n]; the run of VEC offsets starts
//     at a multiple of VEC, so it goes out as aligned 16-byte int64 pairs (at VEC = 4 after a
//     swap between neighbouring lanes, see store_run). The blocked kernels write inclusive sums
//     from tooffsets + 1, which is only 8-byte aligned.
//   - the bad-index check is one OR per element; only a lane that saw a bad element looks again
//     for its lowest one (rare).

#define CHUNKS (EPT / VEC)
#define CHUNK_SPAN (32 * VEC)  // elements one warp covers per chunk

// ---- striped variants: the same kernel with other memory instructions (issue 19) ----------------
//
// At 2^27 the kernel reads 1 GiB and writes 1 GiB once each; nothing is reused. The variants
// change how memory is moved, against plain striped (algo 3, unchanged):
//   STRIPED_LOAD   0 plain (the compiler's choice, ld.global.nc), 1 ld.global.cs (evict-first in
//                  L1 and L2), 2 ld.global.nc.L1::no_allocate.L2::256B (no L1 line, 256-byte DRAM
//                  fetches)
//   STRIPED_STORE  0 st.global, 1 st.global.cs (streaming: evict-first)
//   STRIPED_PREFETCH 1: once its own loads are issued, each block asks L2 for the inputs of the
//                  tile one wave ahead (tile + SMs * blocks an SM holds), so that DRAM keeps
//                  reading while the block waits on its look-back and stores (an SM's loads
//                  otherwise stop from the last load of a tile until the next block's first).
// Streaming stores alone, L2 evict-first stores, and the prefetch with plain loads and stores were
// measured too (H100, 2^20 to 2^27, bench/RESULTS.md) and never won a size: removed from the space.
#if CUTUNE_ALGO == 4
#define STRIPED_LOAD 1
#define STRIPED_STORE 0
#define STRIPED_PREFETCH 0
#elif CUTUNE_ALGO == 5
#define STRIPED_LOAD 2
#define STRIPED_STORE 0
#define STRIPED_PREFETCH 0
#elif CUTUNE_ALGO == 6
#define STRIPED_LOAD 1
#define STRIPED_STORE 1
#define STRIPED_PREFETCH 1
#else
#define STRIPED_LOAD 0
#define STRIPED_STORE 0
#define STRIPED_PREFETCH 0
#endif

#if STRIPED_STORE == 1
#define STORE_OP "st.global.cs"
#else
#define STORE_OP "st.global"
#endif

#if STRIPED_LOAD == 1
#define LOAD_OP "ld.global.cs"
#elif STRIPED_LOAD == 2
#define LOAD_OP "ld.global.nc.L1::no_allocate.L2::256B"
#endif

// One vector of VEC elements (4 to 32 bytes) read with LOAD_OP, in pieces of at most 16 bytes.
template <class V> __device__ __forceinline__ V load_vector(const V* at) {
#if STRIPED_LOAD == 0
  return *at;
#else
  union {
    V v;
    unsigned w[sizeof(V) / 4];
  } u;
  const unsigned* p = reinterpret_cast<const unsigned*>(at);
  if (sizeof(V) >= 16) {
#pragma unroll
    for (int i = 0; i < (int)(sizeof(V) / 16); ++i)
      asm(LOAD_OP ".v4.u32 {%0, %1, %2, %3}, [%4];"
          : "=r"(u.w[4 * i]), "=r"(u.w[4 * i + 1]), "=r"(u.w[4 * i + 2]), "=r"(u.w[4 * i + 3])
          : "l"(p + 4 * i));
  } else if (sizeof(V) == 8) {
    asm(LOAD_OP ".v2.u32 {%0, %1}, [%2];" : "=r"(u.w[0]), "=r"(u.w[1]) : "l"(p));
  } else {
    asm(LOAD_OP ".u32 %0, [%1];" : "=r"(u.w[0]) : "l"(p));
  }
  return u.v;
#endif
}

#if STRIPED_PREFETCH
// Asks L2 for the inputs of tile `tile` one 128-byte line per request, the block's threads
// sharing the lines of both arrays; lines past n are left out.
__device__ __forceinline__ void prefetch_tile(const value_t* starts, const value_t* stops, long long n, long long tile) {
  const int per_line = 128 / (int)sizeof(value_t);
  const int lines = TILE / per_line;  // per array; TILE is a multiple of 32
  const long long tile_first = tile * TILE;
  for (int l = threadIdx.x; l < 2 * lines; l += BLOCK) {
    const long long i = tile_first + (long long)(l % lines) * per_line;
    if (i >= n) continue;
    const value_t* at = (l < lines ? starts : stops) + i;
    asm volatile("prefetch.global.L2 [%0];" ::"l"(at));
  }
}

// How far ahead: one wave, the SMs times the blocks one holds (one 1024-thread block at the ~62
// registers a thread the striped kernel takes at ept 16, so 1024 / BLOCK; smaller ept fit more,
// which only makes the distance shorter than a wave; ept 24 and 32 fit fewer (3 and 2 blocks of
// 256 threads, one of 512), so there it reaches up to two waves ahead).
__device__ __forceinline__ long long prefetch_distance() {
  unsigned sms;
  asm("mov.u32 %0, %%nsmid;" : "=r"(sms));
  return (long long)sms * (BLOCK >= 1024 ? 1 : 1024 / BLOCK);
}
#endif

// A length held in registers until its offset is stored: for 32-bit elements an unsigned 32-bit
// word (stops - starts is below 2^32 when stops >= starts; where stops < starts the offsets are
// unspecified anyway), halving what the tile's lengths take; 64-bit elements keep 64 bits.
template <int BYTES> struct length_of { typedef sum_t type; };
template <> struct length_of<4> { typedef unsigned int type; };
typedef length_of<sizeof(value_t)>::type len_t;

__device__ __forceinline__ len_t length(value_t start, value_t stop) {
  return sizeof(value_t) == 4 ? (len_t)((unsigned int)stop - (unsigned int)start) : (len_t)((sum_t)stop - (sum_t)start);
}

__device__ __forceinline__ void store_pair(sum_t* at, sum_t first, sum_t second) {
  asm volatile(STORE_OP ".v2.s64 [%0], {%1, %2};" ::"l"(at), "l"(first), "l"(second));
}

// This lane's VEC consecutive offsets, at = out + its first element (aligned to VEC * 8 bytes);
// the whole warp calls it. Pairs go out with st.global.v2 explicitly: left to the compiler, the
// first pair of a thread came out as two 8-byte stores (its first value is shared with the
// element-wise path).
__device__ __forceinline__ void store_run(sum_t* __restrict__ at, const sum_t (&values)[VEC]) {
#if VEC == 1
#if STRIPED_STORE == 0
  at[0] = values[0];
#else
  asm volatile(STORE_OP ".s64 [%0], %1;" ::"l"(at), "l"(values[0]));
#endif
#elif VEC == 2
  store_pair(at, values[0], values[1]);
#else
  // Lanes 2m and 2m+1 hold 8 consecutive offsets. Each lane's own two pairs would make each
  // store instruction write half of every 32-byte sector it touches (32-byte steps between lanes);
  // swapping one pair with the neighbour makes it whole sectors: the first instruction writes
  // the lane pair's first 4 offsets, the second its last 4.
  // Selects, not branches: both instructions must run with all 32 lanes.
  const bool odd = threadIdx.x & 1;
  const sum_t give0 = odd ? values[0] : values[2], give1 = odd ? values[1] : values[3];
  const sum_t got0 = __shfl_xor_sync(FULL_MASK, give0, 1), got1 = __shfl_xor_sync(FULL_MASK, give1, 1);
  // even: its own first two, then the odd neighbour's first two just after its own four;
  // odd: the even neighbour's last two just before its own four, then its own last two.
  store_pair(odd ? at - 2 : at, odd ? got0 : values[0], odd ? got1 : values[1]);
  store_pair(odd ? at + 2 : at + 4, odd ? values[2] : got0, odd ? values[3] : got1);
#endif
}

extern "C" __global__ void __launch_bounds__(BLOCK)
scan_lookback(const value_t* __restrict__ starts, const value_t* __restrict__ stops, long long n,
              u64* __restrict__ tile_state, unsigned int* __restrict__ tile_counter, sum_t* __restrict__ out,
              u64* __restrict__ error_index) {
  __shared__ ScanShared sh;
  // Tiles are numbered in the order blocks start, so every predecessor is already running.
  if (threadIdx.x == 0) sh.tile = atomicAdd(tile_counter, 1u);
  __syncthreads();
  const long long tile = sh.tile;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  // This lane's element k of chunk j is first + j * CHUNK_SPAN + k.
  const long long first = tile * TILE + (long long)warp * (32 * EPT) + lane * VEC;
  const bool full = (tile + 1) * TILE <= n;  // uniform across the block

  // All loads are issued before any arithmetic on them.
  len_t len[EPT];
  bool any_bad = false;
  if (full && vectors_aligned(starts, stops)) {
    typedef typename vec_of<VEC>::type V;
    V sv[CHUNKS], ev[CHUNKS];
#pragma unroll
    for (int j = 0; j < CHUNKS; ++j) {
      sv[j] = load_vector(reinterpret_cast<const V*>(starts + first + j * CHUNK_SPAN));
      ev[j] = load_vector(reinterpret_cast<const V*>(stops + first + j * CHUNK_SPAN));
    }
#if STRIPED_PREFETCH
    prefetch_tile(starts, stops, n, tile + prefetch_distance());
#endif
#pragma unroll
    for (int j = 0; j < CHUNKS; ++j) {
#pragma unroll
      for (int k = 0; k < VEC; ++k) {
        const value_t a = element(sv[j], k), b = element(ev[j], k);
        any_bad |= b < a;
        len[j * VEC + k] = length(a, b);
      }
    }
  } else {
#pragma unroll
    for (int j = 0; j < CHUNKS; ++j) {
#pragma unroll
      for (int k = 0; k < VEC; ++k) {
        const long long i = first + j * CHUNK_SPAN + k;
        len_t l = 0;
        if (i < n) {
          const value_t a = starts[i], b = stops[i];
          any_bad |= b < a;
          l = length(a, b);
        }
        len[j * VEC + k] = l;
      }
    }
  }
  u64 bad = ~0ull;
  if (any_bad) {
    // Rare: read this lane's elements again in increasing index order for the lowest bad one.
#pragma unroll
    for (int j = 0; j < CHUNKS; ++j) {
#pragma unroll
      for (int k = 0; k < VEC; ++k) {
        const long long i = first + j * CHUNK_SPAN + k;
        if (bad == ~0ull && i < n && stops[i] < starts[i]) bad = i;
      }
    }
  }
  report_bad(bad, error_index);

  // Each chunk scanned across the warp: lane_prefix[j] is what precedes this lane's chunk j
  // within the warp's range.
  sum_t lane_prefix[CHUNKS];
  sum_t warp_sum = 0;
#pragma unroll
  for (int j = 0; j < CHUNKS; ++j) {
    sum_t mine = 0;
#pragma unroll
    for (int k = 0; k < VEC; ++k) mine += (sum_t)len[j * VEC + k];
    const sum_t inclusive = warp_inclusive_scan(mine);
    lane_prefix[j] = warp_sum + inclusive - mine;
    warp_sum += __shfl_sync(FULL_MASK, inclusive, 31);
  }
  if (lane == 0) sh.warp_totals[warp] = warp_sum;
  __syncthreads();

  // Warp 0 scans the warp totals, publishes the tile's aggregate as soon as it has it, looks back,
  // and leaves each warp's exclusive offset (tile prefix included) in warp_totals.
  if (warp == 0) {
    const sum_t total_of_warp = lane < WARPS ? sh.warp_totals[lane] : 0;
    const sum_t scanned = warp_inclusive_scan(total_of_warp);
    const sum_t tile_total = __shfl_sync(FULL_MASK, scanned, 31);  // lanes past WARPS add 0
    sum_t tile_prefix = 0;
    if (tile == 0) {
      if (lane == 0) publish(tile_state, 0, STATUS_PREFIX, tile_total);
    } else {
      if (lane == 0) publish(tile_state, tile, STATUS_AGGREGATE, tile_total);
      tile_prefix = look_back(tile_state, tile);  // the same in every lane
      if (lane == 0) publish(tile_state, tile, STATUS_PREFIX, tile_prefix + tile_total);
    }
    if (lane < WARPS) sh.warp_totals[lane] = tile_prefix + scanned - total_of_warp;
  }
  __syncthreads();
  const sum_t warp_offset = sh.warp_totals[warp];

  const bool vector_out = full && ((unsigned long long)out % (VEC * sizeof(sum_t))) == 0;
#pragma unroll
  for (int j = 0; j < CHUNKS; ++j) {
    const long long i0 = first + j * CHUNK_SPAN;
    sum_t running = warp_offset + lane_prefix[j];
    if (vector_out) {
      sum_t run[VEC];
#pragma unroll
      for (int k = 0; k < VEC; ++k) {
        run[k] = running;
        running += (sum_t)len[j * VEC + k];
      }
      store_run(out + i0, run);
      if (i0 + VEC == n) out[n] = running;  // a full last tile: this lane has element n - 1
    } else {
#pragma unroll
      for (int k = 0; k < VEC; ++k) {
        const long long i = i0 + k;
        if (i < n) {
          out[i] = running;
          running += (sum_t)len[j * VEC + k];
          if (i == n - 1) out[n] = running;
        }
      }
    }
  }
}
#endif
#endif
