// Matmul family: C = A B in fp32, all row-major: A is m x k, B is k x n, C is m x n. Any sizes:
// tiles that stick out of the matrices read zeros and write nothing.
//
// Compile-time parameters (-D definitions):
//   CUTUNE_ALGO  0 a_shared: the CUDA best-practices guide's coalescedMultiply: TILE x TILE tiles
//                  of A in shared memory, B read from global memory
//                1 ab_shared: the guide's sharedABMultiply: tiles of A and B in shared memory
//                2 regtile: TILE x TILE block tile, BK deep, double-buffered shared memory
//                  (the next tiles are loaded into registers while the current ones are used),
//                  A stored transposed so that each thread reads its rows as float4
//                3 warptile: warp tiles of 8 x 8 register tiles, fed by a multi-stage cp.async
//                  pipeline (see its section below for its own parameters)
//                4 tf32x3: warptile's blocks, warps and pipeline, with each warp's products on the
//                  tensor cores: every fp32 operand split into two TF32 halves, three TF32 products
//                  a product (3xTF32; see its section below)
//   CUTUNE_TILE  block tile edge (for algos 0 and 1 also the k depth of a tile, as in the guide)
//   CUTUNE_EPT   RT: each thread computes an RT x RT register tile; (TILE/RT)^2 threads per block.
//                Algos 0, 1: rows ty + r*TX, columns tx + c*TX (coalesced, conflict-free B reads).
//                regtile: RT/4 groups of 4 consecutive rows (and columns), TILE/(RT/4) apart, so a
//                warp's float4 reads of shared memory are contiguous.
//   CUTUNE_PAD   pad shared rows against bank conflicts: +1 float for algos 0, 1; +4 floats for
//                regtile, whose shared rows are read as float4 and must stay 16-byte aligned
//   CUTUNE_BK    regtile, warptile: k depth of a step (8 or 16; 32 for warptile with A transposed):
//                16 halves the barriers per k and doubles each thread's loads in flight, for twice
//                the shared memory
//   CUTUNE_SPLITK regtile, warptile: k is split into this many runs of steps (grid z), whose products are
//                added into C with atomics after the plan zeroes it: more blocks where m x n
//                tiles alone would leave a wave of the GPU mostly empty
//   CUTUNE_MINBLOCKS  regtile, warptile: blocks per SM promised to the compiler (__launch_bounds__); 2 caps a
//                128 x 128 x 8 block at 128 registers a thread, trading a few spills for occupancy
//   CUTUNE_VEC   widest global load, in floats (1 or 4). A thread loads W = min(VEC, its share
//                of a tile) floats at once.
//
// Each algorithm comes as two kernels: NAME loads W floats at once and needs k and n to be
// multiples of 4 (16-byte aligned rows); NAME_scalar loads one at a time, for any sizes. The
// plan picks one; as separate kernels, the vector one does not pay the scalar path's registers.

#define TILE CUTUNE_TILE
#define RT CUTUNE_EPT
#define TX (TILE / RT)
#if CUTUNE_ALGO >= 3
// warptile's block tile is BM x BN (CUTUNE_SHAPE 0: TILE x TILE, 1: TILE x 2 TILE, 2: 2 TILE x TILE)
#define BM (CUTUNE_SHAPE == 2 ? 2 * TILE : TILE)
#define BN (CUTUNE_SHAPE == 1 ? 2 * TILE : TILE)
#define THREADS ((BM / RT) * (BN / RT))
#else
#define THREADS (TX * TX)
#endif

static_assert(TILE % RT == 0, "the register tile divides the block tile");
static_assert(THREADS >= 32 && THREADS <= 1024, "one to 32 warps per block");

template <int W> struct vec_of;
template <> struct vec_of<1> { typedef float type; };
template <> struct vec_of<2> { typedef float2 type; };
template <> struct vec_of<4> { typedef float4 type; };

__device__ __forceinline__ float lane(float v, int) { return v; }
__device__ __forceinline__ float lane(float2 v, int i) { return i == 0 ? v.x : v.y; }
__device__ __forceinline__ float lane(float4 v, int i) { return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w; }

__host__ __device__ constexpr int min_int(int a, int b) { return a < b ? a : b; }

// A thread's register tile of sums, set to zero before the first step.
__device__ __forceinline__ void clear_tile(float (&acc)[RT][RT]) {
#pragma unroll
  for (int r = 0; r < RT; ++r)
#pragma unroll
    for (int c = 0; c < RT; ++c) acc[r][c] = 0.0f;
}

// A ROWS x COLS tile of a row-major matrix (ld floats per row), fetched into registers as W-wide
// vectors: vector v = threadIdx.x + i*THREADS, row-major over the tile, so consecutive threads
// read consecutive addresses. Elements outside the matrix (rows x cols) read as zero. With
// W > 1 the caller guarantees that W divides ld and cols, so a vector is wholly in or out.
template <int ROWS, int COLS, int W>
struct TileFetch {
  static constexpr int VECTORS = ROWS * COLS / W;
  static constexpr int PER_THREAD = (VECTORS + THREADS - 1) / THREADS;
  float value[PER_THREAD][W];

  static __device__ __forceinline__ int vector_index(int i) { return threadIdx.x + i * THREADS; }
  static __device__ __forceinline__ int row_of(int i) { return vector_index(i) / (COLS / W); }
  static __device__ __forceinline__ int col_of(int i) { return vector_index(i) % (COLS / W) * W; }
  static __device__ __forceinline__ bool mine(int i) { return VECTORS % THREADS == 0 || vector_index(i) < VECTORS; }

  __device__ __forceinline__ void fetch(const float* __restrict__ g, int ld, int row0, int col0, int rows, int cols) {
#pragma unroll
    for (int i = 0; i < PER_THREAD; ++i) {
      const int r = row0 + row_of(i), c = col0 + col_of(i);
      if (mine(i) && r < rows && c < cols) {
        const typename vec_of<W>::type v = *reinterpret_cast<const typename vec_of<W>::type*>(g + (long long)r * ld + c);
#pragma unroll
        for (int w = 0; w < W; ++w) value[i][w] = lane(v, w);
      } else {
#pragma unroll
        for (int w = 0; w < W; ++w) value[i][w] = 0.0f;
      }
    }
  }

  // Writes the fetched values into a shared array with STRIDE floats per row, at their place in
  // the tile, or transposed (element (r, c) at row c, column r).
  template <bool TRANSPOSED, int STRIDE>
  __device__ __forceinline__ void put(float* shared) const {
#pragma unroll
    for (int i = 0; i < PER_THREAD; ++i)
      if (mine(i))
#pragma unroll
        for (int w = 0; w < W; ++w) {
          const int r = row_of(i), c = col_of(i) + w;
          shared[TRANSPOSED ? c * STRIDE + r : r * STRIDE + c] = value[i][w];
        }
  }
};

// One result, if it lies inside C.
__device__ __forceinline__ void store_scalar(float* __restrict__ C, int m, int n, int row, int col, float v) {
  if (row < m && col < n) C[(long long)row * n + col] = v;
}

#if CUTUNE_ALGO == 0 || CUTUNE_ALGO == 1
// ---- the guide's kernels: A (and B) staged tile by tile ----------------------------------------

#define SPAD (CUTUNE_PAD ? 1 : 0)
#define LOAD_W min_int(CUTUNE_VEC, RT * RT)  // a thread's share of a TILE x TILE tile is RT*RT floats

template <int W>
__device__ __forceinline__ void guide_gemm(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                                           int m, int n, int k, float (*As)[TILE + SPAD], float (*Bs)[TILE + SPAD]) {
  const int tx = threadIdx.x % TX, ty = threadIdx.x / TX;
  const int row0 = blockIdx.y * TILE, col0 = blockIdx.x * TILE;
  float acc[RT][RT];
  clear_tile(acc);

  for (int k0 = 0; k0 < k; k0 += TILE) {
    TileFetch<TILE, TILE, W> a;
    a.fetch(A, k, row0, k0, m, k);
    a.template put<false, TILE + SPAD>(&As[0][0]);
#if CUTUNE_ALGO == 1
    TileFetch<TILE, TILE, W> b;
    b.fetch(B, n, k0, col0, k, n);
    b.template put<false, TILE + SPAD>(&Bs[0][0]);
#endif
    __syncthreads();

#if CUTUNE_ALGO == 1
#pragma unroll 8
    for (int i = 0; i < TILE; ++i) {  // zero-filled tiles make the tail of k harmless
      float bv[RT];
#pragma unroll
      for (int c = 0; c < RT; ++c) bv[c] = Bs[i][tx + c * TX];
#else
    const int depth = min_int(TILE, k - k0);  // B comes from global memory: stay inside it
    for (int i = 0; i < depth; ++i) {
      float bv[RT];
      const float* b_row = B + (long long)(k0 + i) * n;
#pragma unroll
      for (int c = 0; c < RT; ++c) {
        const int col = col0 + tx + c * TX;
        bv[c] = col < n ? b_row[col] : 0.0f;
      }
#endif
#pragma unroll
      for (int r = 0; r < RT; ++r) {
        const float av = As[ty + r * TX][i];
#pragma unroll
        for (int c = 0; c < RT; ++c) acc[r][c] += av * bv[c];
      }
    }
    __syncthreads();
  }
#pragma unroll
  for (int r = 0; r < RT; ++r)
#pragma unroll
    for (int c = 0; c < RT; ++c) store_scalar(C, m, n, row0 + ty + r * TX, col0 + tx + c * TX, acc[r][c]);
}

template <int W>
__device__ __forceinline__ void guide_kernel(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                                             int m, int n, int k) {
  __shared__ float As[TILE][TILE + SPAD];
#if CUTUNE_ALGO == 1
  __shared__ float Bs[TILE][TILE + SPAD];
#else
  float (*Bs)[TILE + SPAD] = nullptr;
#endif
  guide_gemm<W>(A, B, C, m, n, k, As, Bs);
}

extern "C" __global__ void __launch_bounds__(THREADS)
matmul_guide(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int m, int n, int k) {
  guide_kernel<LOAD_W>(A, B, C, m, n, k);
}

extern "C" __global__ void __launch_bounds__(THREADS)
matmul_guide_scalar(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int m, int n, int k) {
  guide_kernel<1>(A, B, C, m, n, k);
}

#else
// ---- shared by the register-tiled kernels (regtile, warptile) -------------------------------------

#define BK CUTUNE_BK
#define SPLITK CUTUNE_SPLITK

// A result: stored, or with split k added to what the other splits add (the plan zeroes C first).
// sm_90 adds a float4 in one atomic; older devices add its four floats one by one.
__device__ __forceinline__ void emit_scalar(float* c, float v) {
#if SPLITK > 1
  atomicAdd(c, v);
#else
  *c = v;
#endif
}

__device__ __forceinline__ void emit_vector(float* c, float4 v) {
#if SPLITK > 1 && __CUDA_ARCH__ >= 900
  atomicAdd(reinterpret_cast<float4*>(c), v);
#elif SPLITK > 1
  atomicAdd(c + 0, v.x), atomicAdd(c + 1, v.y), atomicAdd(c + 2, v.z), atomicAdd(c + 3, v.w);
#else
  *reinterpret_cast<float4*>(c) = v;
#endif
}

// This block's share of k, in steps of BK: all of it, or (split k) the blockIdx.z-th of SPLITK
// runs of steps. Empty when k is too short for every split (uniform per block).
struct StepRange {
  int begin, end;
  __device__ __forceinline__ StepRange(int first, int stop) : begin(first), end(stop) {}
  __device__ __forceinline__ StepRange(int k) {
    const int steps = (k + BK - 1) / BK;
    const int per_split = (steps + SPLITK - 1) / SPLITK;
    begin = blockIdx.z * per_split;
    end = min_int(steps, begin + per_split);
  }
};
#endif

#if CUTUNE_ALGO == 2
// ---- register-tiled, double-buffered -------------------------------------------------------------

#define SROW (TILE + (CUTUNE_PAD ? 4 : 0))
#define GROUPS (RT / 4)        // runs of 4 rows (columns) per thread
#define GROUP_STRIDE (4 * TX)  // distance between a thread's runs
#define FETCH_W min_int(CUTUNE_VEC, TILE * BK / THREADS)  // a thread's share of a TILE x BK tile

static_assert(RT % 4 == 0, "regtile threads read their rows and columns as float4");
static_assert(TILE * BK % THREADS == 0, "every thread fetches a whole share of a tile");

template <int W>
__device__ __forceinline__ void regtile_gemm(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                                             int m, int n, int k, float (*As)[BK][SROW], float (*Bs)[BK][SROW]) {
  const int tx = threadIdx.x % TX, ty = threadIdx.x / TX;
  const int row0 = blockIdx.y * TILE, col0 = blockIdx.x * TILE;
  TileFetch<TILE, BK, W> a;  // rows of A, k along the tile's columns
  TileFetch<BK, TILE, W> b;

  // A goes in transposed (As[kk][row]) so that a thread's rows are contiguous in shared memory.
  auto put = [&](int buffer) {
    a.template put<true, SROW>(&As[buffer][0][0]);
    b.template put<false, SROW>(&Bs[buffer][0][0]);
  };

  float acc[RT][RT];
  clear_tile(acc);

  const StepRange range(k);
  const int t_begin = range.begin, t_end = range.end;
  if (t_begin >= t_end) return;  // a k too short for every split: nothing to add (uniform per block)
  a.fetch(A, k, row0, t_begin * BK, m, k);
  b.fetch(B, n, t_begin * BK, col0, k, n);
  put(0);
  __syncthreads();
  for (int t = t_begin; t < t_end; ++t) {
    const int current = (t - t_begin) & 1;
    // One barrier per step suffices: a thread can only start writing buffer current ^ 1 again
    // (two steps on) after every thread has passed the barrier that ends this step's reads.
    if (t + 1 < t_end) {
      a.fetch(A, k, row0, (t + 1) * BK, m, k);
      b.fetch(B, n, (t + 1) * BK, col0, k, n);
    }
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      float av[RT], bv[RT];
#pragma unroll
      for (int g = 0; g < GROUPS; ++g) {
        const float4 a4 = *reinterpret_cast<const float4*>(&As[current][kk][g * GROUP_STRIDE + ty * 4]);
        const float4 b4 = *reinterpret_cast<const float4*>(&Bs[current][kk][g * GROUP_STRIDE + tx * 4]);
        av[g * 4 + 0] = a4.x, av[g * 4 + 1] = a4.y, av[g * 4 + 2] = a4.z, av[g * 4 + 3] = a4.w;
        bv[g * 4 + 0] = b4.x, bv[g * 4 + 1] = b4.y, bv[g * 4 + 2] = b4.z, bv[g * 4 + 3] = b4.w;
      }
#pragma unroll
      for (int r = 0; r < RT; ++r)
#pragma unroll
        for (int c = 0; c < RT; ++c) acc[r][c] += av[r] * bv[c];
    }
    if (t + 1 < t_end) put(current ^ 1);
    __syncthreads();
  }

  const bool vector_store = n % 4 == 0;
#pragma unroll
  for (int r = 0; r < RT; ++r) {
    const int row = row0 + (r / 4) * GROUP_STRIDE + ty * 4 + r % 4;
    if (row >= m) continue;
#pragma unroll
    for (int g = 0; g < GROUPS; ++g) {
      const int col = col0 + g * GROUP_STRIDE + tx * 4;
      const float4 v = make_float4(acc[r][g * 4 + 0], acc[r][g * 4 + 1], acc[r][g * 4 + 2], acc[r][g * 4 + 3]);
      if (vector_store && col < n) {  // n % 4 == 0 and col % 4 == 0: all four are inside
        emit_vector(C + (long long)row * n + col, v);
      } else {
#pragma unroll
        for (int w = 0; w < 4; ++w)
          if (col + w < n) emit_scalar(C + (long long)row * n + col + w, lane(v, w));
      }
    }
  }
}

template <int W>
__device__ __forceinline__ void regtile_kernel(const float* __restrict__ A, const float* __restrict__ B,
                                               float* __restrict__ C, int m, int n, int k) {
  __shared__ __align__(16) float As[2][BK][SROW];
  __shared__ __align__(16) float Bs[2][BK][SROW];
  regtile_gemm<W>(A, B, C, m, n, k, As, Bs);
}

extern "C" __global__ void __launch_bounds__(THREADS, CUTUNE_MINBLOCKS)
matmul_regtile(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int m, int n, int k) {
  regtile_kernel<FETCH_W>(A, B, C, m, n, k);
}

extern "C" __global__ void __launch_bounds__(THREADS, CUTUNE_MINBLOCKS)
matmul_regtile_scalar(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int m, int n, int k) {
  regtile_kernel<1>(A, B, C, m, n, k);
}
#endif

#if CUTUNE_ALGO >= 3
// ---- warp-tiled, multi-stage cp.async pipeline ---------------------------------------------------
//
// A BM x BN block tile, BK deep per step, in STAGES shared buffers that cp.async fills (global to
// shared without passing through registers) STAGES - 1 steps ahead of the step computed, so one
// barrier per step and no register staging. Each warp owns a WM x WN sub-tile of the block tile:
// WROWS x WCOLS threads (32 in all), each with an 8 x 8 register tile: warp-tile rows
// ty + i * WROWS (i < 8) and two runs of 4 columns, tx * 4 and tx * 4 + WCOLS * 4.
//
// A's tile is stored in shared memory one of two ways (CUTUNE_TRANSPOSE):
//  0: row-major, copied 16 bytes at a time. A thread reads 4 k-steps of one of its rows as one
//     float4; its rows are ty + i * WROWS (i < 8). The WROWS threads that read different addresses
//     in one instruction read WROWS consecutive rows; padding a row by 4 floats (PAD) or
//     XOR-swizzling its float4 columns by the row (SWIZZLE) puts those in distinct banks.
//  1: transposed (k-major, BM + 4 floats a row), copied 4 bytes at a time (cp.async copies, it
//     cannot transpose a 16-byte run): a thread reads 4 consecutive rows at one k-step as a float4,
//     as regtile does; its rows are two runs of 4, ty * 4 and ty * 4 + WROWS * 4. Fewer registers
//     (8 of A live per k-step instead of 32) for 4 times the copy instructions of A.
// Either way every shared read is one wavefront. B is row-major BN wide: a warp reads WCOLS
// consecutive float4s of a k row, each broadcast to its WROWS thread rows.
//
// CUTUNE_SHAPE     0: TILE x TILE, 1: TILE x 2 TILE (wide), 2: 2 TILE x TILE (tall) block tiles
// CUTUNE_WARP_ROWS thread rows of a warp (4: 32 x 64 warp tiles, 8: 64 x 32)
// CUTUNE_STAGES    shared buffers in the pipeline (2: double buffering, 3 as cuBLAS)
// CUTUNE_TRANSPOSE A's tile transposed in shared memory (PAD 1) or not (above)
// CUTUNE_SWIZZLE   XOR the float4 column of A's row-major shared rows with bits of the row (PAD 0)
// CUTUNE_RASTER    blocks walk the tiles of C in groups of this many block rows, column after
//                  column, so that blocks resident together share rows of A and columns of B in L2
// CUTUNE_STREAMK   0: a block per tile of C. 1: stream-K. The plan launches as many blocks as the
//                  device holds at once (KernelLaunch::fill_device). They compute the tiles of
//                  every full wave whole, in wave order, and share the k-steps of the remaining
//                  tiles out in equal contiguous runs, one per block. A tile split between blocks
//                  is finished by the last of them to arrive, which adds the parts in block order
//                  (parts in `workspace`, a ticket per tile, which the plan zeroes). At 4096^3 the
//                  1024 tiles are 3.88 waves of 264 blocks on an H100, and a block per tile takes
//                  the time of 4 full waves (n = 3968, 4096 and 4224 took the same time).
// The shared buffers are dynamic shared memory (the plan asks for them; above 48 KiB by opt-in).
//
// tf32x3 (CUTUNE_ALGO 4) keeps all of the above but the warps' arithmetic. A warp's WM x WN tile is
// (WM / 16) x (WN / 8) tiles of mma.sync m16n8k8 with TF32 operands and fp32 accumulators (the
// same 64 results a thread), each product as three TF32 products (3xTF32, see tf32x3.cuh): three
// tensor-core products for one FFMA's, at about five times the FFMA pipe's rate on Hopper
// (mma.sync TF32 324 TFLOP/s against FFMA's 64 on an H200). The results are not fp32's bit for
// bit: they must pass the same verification as every other config.
//
// The mma fragments hold k (and n) in the hardware's order; the kernel chooses which k and n each
// fragment slot stands for, the same for A, B and C, so that each thread's shared reads are wide:
//  - k: slot t of a k8 step is k = 2t, slot t + 4 is k = 2t + 1 (t = lane % 4), so a thread's two
//    values of A in one row are adjacent: one 8-byte read. A's rows are BK + 8 floats, so that the
//    8 rows (lane / 4) that one read covers fall in distinct banks.
//  - n: column g (g = lane / 4) of the warp's fragment nt is column (nt / 4) 32 + 4 g + nt % 4 of
//    the warp tile, so that a thread's values of B in one k row for four fragments are adjacent:
//    one 16-byte read. B's rows are BN + 4 floats: the 8 threads of a 16-byte read phase (2 values
//    of g, 4 of t, t picking the k row) fall in distinct bank groups. Each thread's results of one
//    row are then runs of 4 adjacent columns of C: 16-byte stores.
// A is read row-major (no transpose: its column reads would conflict), padded (no swizzle).

#define STAGES CUTUNE_STAGES
#define WROWS CUTUNE_WARP_ROWS
#define WCOLS (32 / WROWS)
#define WM (WROWS * RT)
#define WN (WCOLS * RT)
#define WARPS_N (BN / WN)
#define A_CHUNKS (BK / 4)                      // float4 columns of a shared row of A
#define TRANSPOSE CUTUNE_TRANSPOSE
#define TF32X3 (CUTUNE_ALGO == 4)
#if TRANSPOSE
#define A_STRIDE (BM + (CUTUNE_PAD ? 4 : 0))  // floats per shared row (a k-step) of A's tile
#define A_STAGE (BK * A_STRIDE)
#else
#define A_STRIDE (BK + (CUTUNE_PAD ? (TF32X3 ? 8 : 4) : 0))  // floats per shared row of A (16-byte multiple)
#define A_STAGE (BM * A_STRIDE)                               // floats of one stage of A
#endif
#define B_STRIDE (BN + (TF32X3 ? 4 : 0))  // floats per shared row (a k-step) of B's tile
#define B_STAGE (BK * B_STRIDE)

static_assert(RT == 8, "warptile threads compute 8 x 8 register tiles");
static_assert(WROWS * WCOLS == 32, "a warp is WROWS x WCOLS threads");
static_assert(BM % WM == 0 && BN % WN == 0, "warp tiles cover the block tile");
static_assert(A_CHUNKS == 2 || A_CHUNKS == 4 || ((TRANSPOSE || TF32X3) && A_CHUNKS == 8),
              "BK is 8 or 16 (32: transposed A, or tf32x3)");
static_assert(!TF32X3 || (!TRANSPOSE && CUTUNE_PAD && BK >= 16),
              "tf32x3 reads A row-major and padded, in k8 steps that pair up k (BK 16 or 32)");
static_assert(STAGES >= 2, "at least double buffering");
static_assert(!(CUTUNE_PAD && CUTUNE_SWIZZLE), "padding or swizzling, not both");
static_assert(!(TRANSPOSE && CUTUNE_SWIZZLE), "the transposed tile is padded");

// Where float4 column `chunk` of shared row `row` of A lives. Swizzled: XOR with (row / D) %
// A_CHUNKS, D = 8 / A_CHUNKS, so that 8 consecutive rows (of A_CHUNKS float4s each, 2 or 4 rows
// per 128 bytes of banks) hit 8 distinct 16-byte bank groups at any one column.
__device__ __forceinline__ int a_chunk(int row, int chunk) {
#if CUTUNE_SWIZZLE
  return chunk ^ ((row / (8 / A_CHUNKS)) % A_CHUNKS);
#else
  return chunk;
#endif
}

// (shared_address, copy16, copy4, their _inside forms, commit_copies, wait_copies: cp_async.cuh.)

// 4 consecutive floats inside the matrices: one 16-byte copy (WIDE), or four of 4 bytes.
template <bool WIDE>
__device__ __forceinline__ void copy_run_inside(unsigned dst, const float* src) {
  if (WIDE) {
    copy16_inside(dst, src);
  } else {
#pragma unroll
    for (int w = 0; w < 4; ++w) copy4_inside(dst + 4 * w, src + w);
  }
}

// FLOATS (1 or 4) consecutive floats of row `row` of a row-major matrix (`ld` floats per row),
// from column `col`, to shared address `dst`; those past column `cols`, or a row past `rows`,
// become zeros. WIDE: four in one 16-byte copy (the caller guarantees that ld and cols are
// multiples of 4, so the four are in or out together). Offsets are 32-bit: m k and k n < 2^31.
template <bool WIDE, int FLOATS>
__device__ __forceinline__ void copy_run(unsigned dst, const float* __restrict__ g, int ld, int row, int rows, int col,
                                         int cols) {
  const bool row_inside = row < rows;
  const float* src = g + (row * ld + col);
  if (FLOATS == 4 && WIDE) {
    const bool inside = row_inside && col < cols;
    copy16(dst, inside ? src : g, inside);
  } else {
#pragma unroll
    for (int w = 0; w < FLOATS; ++w) {
      const bool inside = row_inside && col + w < cols;
      copy4(dst + 4 * w, inside ? src + w : g, inside);
    }
  }
}

// A thread's share of the copies of a step (A's BM x BK tile and B's BK x BN tile), set up once.
// Its copies of A (and of B) are ROWS_APART rows apart at one column, so that each is a fixed
// offset from the first in shared memory and a row stride from it in global memory: few
// registers, where addresses hoisted copy by copy out of the main loop cost dozens.
template <bool VEC>
struct StepCopier {
#if TRANSPOSE
  static constexpr int A_PER_ROW = BK;  // one float each
#else
  static constexpr int A_PER_ROW = A_CHUNKS;  // 16-byte runs
#endif
  static constexpr int B_PER_ROW = BN / 4;
  static constexpr int A_COPIES = BM * A_PER_ROW, B_COPIES = BK * B_PER_ROW;
  static constexpr int A_ROWS_APART = THREADS / A_PER_ROW, B_ROWS_APART = THREADS / B_PER_ROW;
  static_assert(THREADS % A_PER_ROW == 0 && THREADS % B_PER_ROW == 0, "a thread's copies share a column");
  static_assert(A_ROWS_APART % 8 == 0, "a thread's copies of A share a swizzle");

  const float* __restrict__ A;
  const float* __restrict__ B;
  int m, n, k;
  int a_row, a_col;       // the first copy of A: row of A, column within the step
  int b_row, b_col;       // the first copy of B: row within the step, column of B
  unsigned a_dst, b_dst;  // their shared addresses in stage 0

  __device__ __forceinline__ StepCopier(const float* __restrict__ A_, const float* __restrict__ B_, int m_, int n_,
                                        int k_, int row0, int col0, float* As, float* Bs)
      : A(A_), B(B_), m(m_), n(n_), k(k_) {
    const int r = threadIdx.x / A_PER_ROW, c = threadIdx.x % A_PER_ROW;
    a_row = row0 + r;
#if TRANSPOSE
    a_col = c;
    a_dst = shared_address(As + c * A_STRIDE + r);  // element (r, c) at row c, column r
#else
    a_col = c * 4;
    a_dst = shared_address(As + r * A_STRIDE + a_chunk(r, c) * 4);
#endif
    b_row = threadIdx.x / B_PER_ROW;
    b_col = col0 + threadIdx.x % B_PER_ROW * 4;
    b_dst = shared_address(Bs + b_row * B_STRIDE + threadIdx.x % B_PER_ROW * 4);
  }

  // Issues this thread's copies of the step at k0 into `stage`. CHECKED: the step may reach past
  // the matrices (zeros come in there); otherwise the caller knows that it does not.
  template <bool CHECKED>
  __device__ __forceinline__ void copy(int stage, int k0) const {
    if (!CHECKED) {
      copy_inside(stage, k0);
      return;
    }
#pragma unroll
    for (int i = 0; i < (A_COPIES + THREADS - 1) / THREADS; ++i)
      if (A_COPIES % THREADS == 0 || threadIdx.x + i * THREADS < A_COPIES) {
#if TRANSPOSE
        const unsigned dst = a_dst + (stage * A_STAGE + i * A_ROWS_APART) * 4;
        copy_run<false, 1>(dst, A, k, a_row + i * A_ROWS_APART, m, k0 + a_col, k);
#else
        const unsigned dst = a_dst + (stage * A_STAGE + i * A_ROWS_APART * A_STRIDE) * 4;
        copy_run<VEC, 4>(dst, A, k, a_row + i * A_ROWS_APART, m, k0 + a_col, k);
#endif
      }
#pragma unroll
    for (int i = 0; i < (B_COPIES + THREADS - 1) / THREADS; ++i)
      if (B_COPIES % THREADS == 0 || threadIdx.x + i * THREADS < B_COPIES) {
        const unsigned dst = b_dst + (stage * B_STAGE + i * B_ROWS_APART * B_STRIDE) * 4;
        copy_run<VEC, 4>(dst, B, n, k0 + b_row + i * B_ROWS_APART, k, b_col, n);
      }
  }

  // The step's copies when all of them lie inside A and B: the bounds tests and the selects of a
  // safe source were about 7 % of the kernel's instructions at 4096^3 (Nsight Compute, H200).
  __device__ __forceinline__ void copy_inside(int stage, int k0) const {
    const float* a = A + ((long long)a_row * k + k0 + a_col);
    const float* b = B + ((long long)(k0 + b_row) * n + b_col);
#pragma unroll
    for (int i = 0; i < (A_COPIES + THREADS - 1) / THREADS; ++i)
      if (A_COPIES % THREADS == 0 || threadIdx.x + i * THREADS < A_COPIES) {
#if TRANSPOSE
        copy4_inside(a_dst + (stage * A_STAGE + i * A_ROWS_APART) * 4, a + (long long)i * A_ROWS_APART * k);
#else
        copy_run_inside<VEC>(a_dst + (stage * A_STAGE + i * A_ROWS_APART * A_STRIDE) * 4,
                             a + (long long)i * A_ROWS_APART * k);
#endif
      }
#pragma unroll
    for (int i = 0; i < (B_COPIES + THREADS - 1) / THREADS; ++i)
      if (B_COPIES % THREADS == 0 || threadIdx.x + i * THREADS < B_COPIES) {
        copy_run_inside<VEC>(b_dst + (stage * B_STAGE + i * B_ROWS_APART * B_STRIDE) * 4,
                             b + (long long)i * B_ROWS_APART * n);
      }
  }
};

// A thread's place in its warp's tile, the same for every tile of C.
struct ThreadPlace {
  int first_row, first_col;
#if TF32X3
  int k_pair;     // t = lane % 4: the thread's fragment slots t and t + 4 are k = 2t and 2t + 1
  int result_col;  // its results' columns: result_col + 32 q + 4 c + 0..3 (c: accumulator register % 2)
  __device__ __forceinline__ ThreadPlace() {
    const int warp = threadIdx.x / 32, lane_id = threadIdx.x % 32;
    first_row = (warp / WARPS_N) * WM + lane_id / 4;      // its rows: first_row + 16 mt + 8 h
    first_col = (warp % WARPS_N) * WN + lane_id / 4 * 4;  // B's columns it reads: first_col + 32 q + 0..3
    k_pair = lane_id % 4;
    result_col = (warp % WARPS_N) * WN + k_pair * 8;  // C's column slots 2t and 2t + 1
  }
#else
  __device__ __forceinline__ ThreadPlace() {
    const int warp = threadIdx.x / 32, lane_id = threadIdx.x % 32;
    const int ty = lane_id / WCOLS, tx = lane_id % WCOLS;
#if TRANSPOSE
    first_row = (warp / WARPS_N) * WM + ty * 4;  // rows first_row + (i / 4) * WROWS * 4 + i % 4
#else
    first_row = (warp / WARPS_N) * WM + ty;  // the thread's rows: first_row + i * WROWS
#endif
    first_col = (warp % WARPS_N) * WN + tx * 4;  // its columns: first_col + g * WCOLS * 4 + 0..3
  }
#endif
};

#if TF32X3
#define MT (WM / 16)  // a warp's mma tiles down
#define NT (WN / 8)   // and across
static_assert(MT * NT * 4 == RT * RT, "a thread's accumulators are its 8 x 8 register tile");
static_assert(NT % 4 == 0, "fragments come in fours across (one 16-byte read of B)");

// acc as the mma tiles' accumulators: register r of tile (mt, nt).
#define FRAG(acc, mt, nt, r) acc[((mt) * NT + (nt)) / 2][((mt) * NT + (nt)) % 2 * 4 + (r)]

// (split_tf32, mma_tf32: tf32x3.cuh.)

// One stage's BK k-steps of the warp's tile, as 3xTF32 tensor-core products, added to acc.
//
// The tensor cores' fp32 additions are not rounded to nearest. With acc as every mma's C operand,
// the sums of k = 4096 carried a relative error of 4.6e-5, ten times cuBLAS's fp32 kernel's
// (H100). So the stage's products are summed by the tensor cores into `part`, from zero, and the
// stage's part is added to acc by FADD: the tensor cores add 3 BK / 8 terms to sums a few stages'
// worth in size, and the running sums are rounded to nearest (error 9.5e-7 at 4096^3, cuBLAS 4.2e-6).
// The second register tile costs occupancy (about 214 registers: one block an SM) and 14 % of the
// time of the first form; adding each k8 step's part instead cost 22 %.
__device__ __forceinline__ void tf32x3_stage(const float* a, const float* b, const ThreadPlace& place,
                                             float (&acc)[RT][RT]) {
  float part[RT][RT];
  clear_tile(part);
#pragma unroll
  for (int kk = 0; kk < BK; kk += 8) {
    const int k = kk + 2 * place.k_pair;
    unsigned a_hi[MT][4], a_lo[MT][4];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int h = 0; h < 2; ++h) {  // rows g and g + 8 of the tile: registers h and h + 2
        const float2 v = *reinterpret_cast<const float2*>(a + (place.first_row + 16 * mt + 8 * h) * A_STRIDE + k);
        split_tf32(v.x, a_hi[mt][h], a_lo[mt][h]);          // slot t: k = 2t
        split_tf32(v.y, a_hi[mt][h + 2], a_lo[mt][h + 2]);  // slot t + 4: k = 2t + 1
      }
    unsigned b_hi[NT][2], b_lo[NT][2];
#pragma unroll
    for (int j = 0; j < 2; ++j)  // k = 2t + j: register j
#pragma unroll
      for (int q = 0; q < NT / 4; ++q) {
        const float4 v = *reinterpret_cast<const float4*>(b + (k + j) * B_STRIDE + place.first_col + 32 * q);
#pragma unroll
        for (int w = 0; w < 4; ++w) split_tf32(lane(v, w), b_hi[4 * q + w][j], b_lo[4 * q + w][j]);
      }
    // Three passes, lo·hi, hi·lo, hi·hi (the small products first), each over every tile before the
    // next, so that independent mmas lie between two that add into the same sums.
#pragma unroll
    for (int pass = 0; pass < 3; ++pass)
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int nt = 0; nt < NT; ++nt) {
          const unsigned(&a_part)[4] = pass == 0 ? a_lo[mt] : a_hi[mt];
          const unsigned(&b_part)[2] = pass == 1 ? b_lo[nt] : b_hi[nt];
          float* d = &FRAG(part, mt, nt, 0);
          mma_tf32(d[0], d[1], d[2], d[3], a_part, b_part[0], b_part[1]);
        }
  }
#pragma unroll
  for (int i = 0; i < RT; ++i)
#pragma unroll
    for (int j = 0; j < RT; ++j) acc[i][j] += part[i][j];
}
#endif

// The block's k steps through the STAGES-deep pipeline, into acc.
template <bool CHECKED, bool VEC>
__device__ __forceinline__ void warptile_steps(const StepCopier<VEC>& copier, const StepRange& range,
                                               const float* As, const float* Bs, const ThreadPlace& place,
                                               float (&acc)[RT][RT]) {
  const int first_row = place.first_row, first_col = place.first_col;
  // Every thread commits one group per step, empty or not, so that "all but the newest
  // STAGES - 2 groups are done" always means "step t has landed".
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (range.begin + s < range.end) copier.template copy<CHECKED>(s, (range.begin + s) * BK);
    commit_copies();
  }
  int read = 0, write = STAGES - 1;
  for (int t = range.begin; t < range.end; ++t) {
    wait_copies<STAGES - 2>();  // this thread's copies of step t are done
    // Everyone's are; and everyone has finished computing step t - 1, whose stage is `write`.
    __syncthreads();
    if (t + STAGES - 1 < range.end) copier.template copy<CHECKED>(write, (t + STAGES - 1) * BK);
    commit_copies();

    const float* a = As + read * A_STAGE;
    const float* b = Bs + read * B_STAGE;
#if TF32X3
    tf32x3_stage(a, b, place, acc);
    (void)first_row, (void)first_col;
#elif TRANSPOSE
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      const float* a_row = a + kk * A_STRIDE + first_row;
      const float* b_row = b + kk * B_STRIDE + first_col;
      const float4 a0 = *reinterpret_cast<const float4*>(a_row);
      const float4 a1 = *reinterpret_cast<const float4*>(a_row + WROWS * 4);
      const float4 b0 = *reinterpret_cast<const float4*>(b_row);
      const float4 b1 = *reinterpret_cast<const float4*>(b_row + WCOLS * 4);
      const float av[RT] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
      const float bv[RT] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
      for (int i = 0; i < RT; ++i)
#pragma unroll
        for (int j = 0; j < RT; ++j) acc[i][j] += av[i] * bv[j];
    }
#else
#pragma unroll
    for (int kc = 0; kc < A_CHUNKS; ++kc) {
      float4 a4[RT];  // k-steps 4 kc .. 4 kc + 3 of each of the thread's rows
#pragma unroll
      for (int i = 0; i < RT; ++i) {
        const int r = first_row + i * WROWS;
        a4[i] = *reinterpret_cast<const float4*>(a + r * A_STRIDE + a_chunk(r, kc) * 4);
      }
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const float* b_row = b + (kc * 4 + q) * B_STRIDE + first_col;
        const float4 b0 = *reinterpret_cast<const float4*>(b_row);
        const float4 b1 = *reinterpret_cast<const float4*>(b_row + WCOLS * 4);
        const float bv[RT] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
        for (int i = 0; i < RT; ++i) {
          const float av = lane(a4[i], q);
#pragma unroll
          for (int j = 0; j < RT; ++j) acc[i][j] += av * bv[j];
        }
      }
    }
#endif
    read = read + 1 == STAGES ? 0 : read + 1;
    write = write + 1 == STAGES ? 0 : write + 1;
  }
  wait_copies<0>();  // only empty groups are left; retire them before the block's shared memory goes
}

// Where tile `id` of C lies, in the order CUTUNE_RASTER asks for: consecutive ids walk groups of
// CUTUNE_RASTER block rows, column after column (or the rows of C in order, raster 1).
__device__ __forceinline__ void tile_position(int id, int tiles_m, int tiles_n, int& block_row, int& block_col) {
#if CUTUNE_RASTER > 1
  const int per_group = CUTUNE_RASTER * tiles_n;
  const int group_row = id / per_group * CUTUNE_RASTER;
  const int rows = min_int(CUTUNE_RASTER, tiles_m - group_row);
  const int in_group = id % per_group;
  block_row = group_row + in_group % rows;
  block_col = in_group / rows;
#else
  block_row = id / tiles_n;
  block_col = id % tiles_n;
#endif
}

// acc = the product of the tile at (row0, col0) over the k-steps of `range` (not empty).
template <bool VEC>
__device__ __forceinline__ void tile_product(const float* __restrict__ A, const float* __restrict__ B, int m, int n,
                                             int k, float* As, float* Bs, int row0, int col0, const StepRange& range,
                                             const ThreadPlace& place, float (&acc)[RT][RT]) {
  clear_tile(acc);
  const StepCopier<VEC> copier(A, B, m, n, k, row0, col0, As, Bs);
  // A block whose tile and k steps lie wholly inside the matrices copies without bounds tests
  // (uniform per block; 4096^3 has no other kind).
  if (row0 + BM <= m && col0 + BN <= n && k % BK == 0)
    warptile_steps<false>(copier, range, As, Bs, place, acc);
  else
    warptile_steps<true>(copier, range, As, Bs, place, acc);
}

// Four adjacent results of a row of C, from column col (a multiple of 4): those inside C.
__device__ __forceinline__ void store_run(float* __restrict__ C, int n, int row, int col, float4 v) {
  float* out = C + (long long)row * n + col;
  if (n % 4 == 0 && col < n) {  // n % 4 == 0 and col % 4 == 0: all four are inside
    emit_vector(out, v);
  } else {
#pragma unroll
    for (int w = 0; w < 4; ++w)
      if (col + w < n) emit_scalar(out + w, lane(v, w));
  }
}

// The thread's results of the tile at (row0, col0) into C (added to it, with split k).
__device__ __forceinline__ void store_tile(float* __restrict__ C, int m, int n, int row0, int col0,
                                           const ThreadPlace& place, const float (&acc)[RT][RT]) {
#if TF32X3
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int h = 0; h < 2; ++h) {  // accumulator registers 2h and 2h + 1: rows g and g + 8
      const int row = row0 + place.first_row + 16 * mt + 8 * h;
      if (row >= m) continue;
#pragma unroll
      for (int c = 0; c < 2; ++c)
#pragma unroll
        for (int q = 0; q < NT / 4; ++q) {
          const int col = col0 + place.result_col + 32 * q + 4 * c;
          store_run(C, n, row, col,
                    make_float4(FRAG(acc, mt, 4 * q, 2 * h + c), FRAG(acc, mt, 4 * q + 1, 2 * h + c),
                                FRAG(acc, mt, 4 * q + 2, 2 * h + c), FRAG(acc, mt, 4 * q + 3, 2 * h + c)));
        }
    }
#else
#pragma unroll
  for (int i = 0; i < RT; ++i) {
#if TRANSPOSE
    const int row = row0 + place.first_row + (i / 4) * WROWS * 4 + i % 4;
#else
    const int row = row0 + place.first_row + i * WROWS;
#endif
    if (row >= m) continue;
#pragma unroll
    for (int g = 0; g < 2; ++g) {
      const int col = col0 + place.first_col + g * WCOLS * 4;
      store_run(C, n, row, col, make_float4(acc[i][g * 4], acc[i][g * 4 + 1], acc[i][g * 4 + 2], acc[i][g * 4 + 3]));
    }
  }
#endif
}

#if CUTUNE_STREAMK
static_assert(SPLITK == 1, "stream-K shares k out itself");

// The stream-K runs: `steps` k-steps of each of the tiles after the whole ones, cut into
// `blocks` contiguous runs; run b starts at k-step begin(b) of them all.
// 32-bit counts (at most 256^2 tiles of 4096 steps: 2^28), 64-bit products.
struct StreamRuns {
  int total;  // k-steps in all the runs
  int blocks;
  __device__ __forceinline__ int begin(int b) const { return (int)((long long)total * b / blocks); }
  // The block whose run holds k-step x: the last b with begin(b) <= x.
  __device__ __forceinline__ int owner(int x) const { return (int)(((long long)x * blocks + blocks - 1) / total); }
};

// This block's part of a tile that blocks share (in acc). Stores the part in this block's
// workspace slot, and the last block to arrive at the tile adds every part, in block order
// (the same sums whichever block is last), and stores the sum. acc is reused for the sum: a
// second register tile would spill. A block's slot 2b holds the part where its run starts,
// 2b + 1 the part where it ends (where it started in an earlier tile).
__device__ __forceinline__ void finish_shared_tile(float* __restrict__ C, int m, int n, int row0, int col0,
                                                   const ThreadPlace& place, float (&acc)[RT][RT],
                                                   const StreamRuns& runs, int tile_first, int steps,
                                                   float4* __restrict__ workspace, unsigned int* ticket) {
  constexpr int QUADS = RT * RT / 4;  // float4s of a thread's tile
  const int first_block = runs.owner(tile_first), last_block = runs.owner(tile_first + steps - 1);
  const auto slot = [&](int b) { return 2 * b + (runs.begin(b) >= tile_first ? 0 : 1); };
  float4* mine = workspace + (long long)slot(blockIdx.x) * QUADS * THREADS;
#pragma unroll
  for (int q = 0; q < QUADS; ++q)  // q-th float4 of every thread together: coalesced
    mine[q * THREADS + threadIdx.x] =
        make_float4(acc[q / 2][q % 2 * 4], acc[q / 2][q % 2 * 4 + 1], acc[q / 2][q % 2 * 4 + 2], acc[q / 2][q % 2 * 4 + 3]);
  __shared__ bool is_last;
  __threadfence();  // this thread's part is visible device-wide before the ticket says so
  __syncthreads();
  if (threadIdx.x == 0) is_last = atomicAdd(ticket, 1u) == (unsigned)(last_block - first_block);
  __syncthreads();
  if (!is_last) return;
  __threadfence();  // the other blocks' parts are visible to this one
  clear_tile(acc);
  for (int b = first_block; b <= last_block; ++b) {
    const float4* part = workspace + (long long)slot(b) * QUADS * THREADS;
#pragma unroll
    for (int q = 0; q < QUADS; ++q) {
      const float4 w = __ldcg(&part[q * THREADS + threadIdx.x]);  // from L2: other SMs wrote them
      acc[q / 2][q % 2 * 4] += w.x, acc[q / 2][q % 2 * 4 + 1] += w.y;
      acc[q / 2][q % 2 * 4 + 2] += w.z, acc[q / 2][q % 2 * 4 + 3] += w.w;
    }
  }
  store_tile(C, m, n, row0, col0, place, acc);
}

// k-steps [k_begin, k_end) of the tile at (row0, col0): computed, then stored, or, for part of
// a tile that blocks share, finished by the last block to arrive. Not inlined, so that the
// persistent loop's own state is saved once a tile instead of crowding the k loop's registers
// (the 128 that two blocks an SM leave: inlined, ptxas spilled 72-96 bytes).
template <bool VEC>
__device__ __noinline__ void stream_k_tile(const float* __restrict__ A, const float* __restrict__ B,
                                           float* __restrict__ C, int m, int n, int k, float* shared, int row0,
                                           int col0, int k_begin, int k_end, StreamRuns runs, int tile_first,
                                           float4* __restrict__ workspace, unsigned int* ticket) {
  float* const As = shared;
  float* const Bs = shared + STAGES * A_STAGE;
  const ThreadPlace place;
  float acc[RT][RT];
  tile_product<VEC>(A, B, m, n, k, As, Bs, row0, col0, StepRange(k_begin, k_end), place, acc);
  const int steps = (k + BK - 1) / BK;
  if (k_begin == 0 && k_end == steps)
    store_tile(C, m, n, row0, col0, place, acc);
  else
    finish_shared_tile(C, m, n, row0, col0, place, acc, runs, tile_first, steps, workspace, ticket);
  __syncthreads();  // the next tile's copies overwrite stages that other warps may still read
}

template <bool VEC>
__device__ __forceinline__ void warptile_stream_k(const float* __restrict__ A, const float* __restrict__ B,
                                                  float* __restrict__ C, int m, int n, int k, float* shared,
                                                  float4* __restrict__ workspace, unsigned int* __restrict__ tickets) {
  const int tiles_m = (m + BM - 1) / BM, tiles_n = (n + BN - 1) / BN, tiles = tiles_m * tiles_n;
  const int steps = (k + BK - 1) / BK;
  const int blocks = gridDim.x;
  // Whole tiles in wave order, every full wave; the remainder's k-steps are shared out. Those
  // tiles are about a wave's worth (each block's run is at most one tile long), run together
  // like a wave: their rows of A and columns of B are what a wave reads.
  const int whole_tiles = tiles / blocks * blocks;
  const StreamRuns runs{(tiles - whole_tiles) * steps, blocks};
  int block_row, block_col;
  for (int t = blockIdx.x; t < whole_tiles; t += blocks) {
    tile_position(t, tiles_m, tiles_n, block_row, block_col);
    stream_k_tile<VEC>(A, B, C, m, n, k, shared, block_row * BM, block_col * BN, 0, steps, runs, 0, workspace,
                       tickets);
  }
  const int run_end = runs.begin(blockIdx.x + 1);
  for (int x = runs.begin(blockIdx.x); x < run_end;) {
    const int t = x / steps;  // among the tiles after the whole ones
    const int tile_first = t * steps;
    const int k_end = min_int(run_end - tile_first, steps);
    tile_position(whole_tiles + t, tiles_m, tiles_n, block_row, block_col);
    stream_k_tile<VEC>(A, B, C, m, n, k, shared, block_row * BM, block_col * BN, x - tile_first, k_end, runs,
                       tile_first, workspace, tickets + whole_tiles + t);
    x = tile_first + k_end;
  }
}
#endif

template <bool VEC>
__device__ __forceinline__ void warptile_gemm(const float* __restrict__ A, const float* __restrict__ B,
                                              float* __restrict__ C, int m, int n, int k, float* shared) {
  float* const As = shared;                     // STAGES x A_STAGE
  float* const Bs = shared + STAGES * A_STAGE;  // STAGES x BK x BN
  int block_row, block_col;
  tile_position(blockIdx.y * gridDim.x + blockIdx.x, gridDim.y, gridDim.x, block_row, block_col);
  const ThreadPlace place;
  const StepRange range(k);
  if (range.begin >= range.end) return;  // uniform per block, before any barrier
  float acc[RT][RT];
  tile_product<VEC>(A, B, m, n, k, As, Bs, block_row * BM, block_col * BN, range, place, acc);
  store_tile(C, m, n, block_row * BM, block_col * BN, place, acc);
}

#if CUTUNE_STREAMK
extern "C" __global__ void __launch_bounds__(THREADS, CUTUNE_MINBLOCKS)
matmul_warptile(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int m, int n, int k,
                float4* __restrict__ workspace, unsigned int* __restrict__ tickets) {
  extern __shared__ float4 warptile_shared[];  // float4: 16-byte aligned for cp.async and the reads
  warptile_stream_k<true>(A, B, C, m, n, k, reinterpret_cast<float*>(warptile_shared), workspace, tickets);
}

extern "C" __global__ void __launch_bounds__(THREADS, CUTUNE_MINBLOCKS)
matmul_warptile_scalar(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int m, int n,
                       int k, float4* __restrict__ workspace, unsigned int* __restrict__ tickets) {
  extern __shared__ float4 warptile_shared[];
  warptile_stream_k<false>(A, B, C, m, n, k, reinterpret_cast<float*>(warptile_shared), workspace, tickets);
}
#else
extern "C" __global__ void __launch_bounds__(THREADS, CUTUNE_MINBLOCKS)
matmul_warptile(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int m, int n, int k) {
  extern __shared__ float4 warptile_shared[];  // float4: 16-byte aligned for cp.async and the reads
  warptile_gemm<true>(A, B, C, m, n, k, reinterpret_cast<float*>(warptile_shared));
}

extern "C" __global__ void __launch_bounds__(THREADS, CUTUNE_MINBLOCKS)
matmul_warptile_scalar(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int m, int n,
                       int k) {
  extern __shared__ float4 warptile_shared[];
  warptile_gemm<false>(A, B, C, m, n, k, reinterpret_cast<float*>(warptile_shared));
}
#endif
#endif
