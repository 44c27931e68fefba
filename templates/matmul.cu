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
//   CUTUNE_TILE  block tile edge (for algos 0 and 1 also the k depth of a tile, as in the guide)
//   CUTUNE_EPT   RT: each thread computes an RT x RT register tile; (TILE/RT)^2 threads per block.
//                Algos 0, 1: rows ty + r*TX, columns tx + c*TX (coalesced, conflict-free B reads).
//                regtile: RT/4 groups of 4 consecutive rows (and columns), TILE/(RT/4) apart, so a
//                warp's float4 reads of shared memory are contiguous.
//   CUTUNE_PAD   pad shared rows against bank conflicts: +1 float for algos 0, 1; +4 floats for
//                regtile, whose shared rows are read as float4 and must stay 16-byte aligned
//   CUTUNE_BK    regtile: k depth of a step (8 or 16): 16 halves the barriers per k and doubles
//                each thread's loads in flight, for twice the shared memory
//   CUTUNE_SPLITK regtile: k is split into this many runs of steps (grid z), whose products are
//                added into C with atomics after the plan zeroes it: more blocks where m x n
//                tiles alone would leave a wave of the GPU mostly empty
//   CUTUNE_MINBLOCKS  regtile: blocks per SM promised to the compiler (__launch_bounds__); 2 caps a
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
#define THREADS (TX * TX)

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

#if CUTUNE_ALGO != 2
// ---- the guide's kernels: A (and B) staged tile by tile ----------------------------------------

#define SPAD (CUTUNE_PAD ? 1 : 0)
#define LOAD_W min_int(CUTUNE_VEC, RT * RT)  // a thread's share of a TILE x TILE tile is RT*RT floats

template <int W>
__device__ __forceinline__ void guide_gemm(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                                           int m, int n, int k, float (*As)[TILE + SPAD], float (*Bs)[TILE + SPAD]) {
  const int tx = threadIdx.x % TX, ty = threadIdx.x / TX;
  const int row0 = blockIdx.y * TILE, col0 = blockIdx.x * TILE;
  float acc[RT][RT];
#pragma unroll
  for (int r = 0; r < RT; ++r)
#pragma unroll
    for (int c = 0; c < RT; ++c) acc[r][c] = 0.0f;

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
// ---- register-tiled, double-buffered -------------------------------------------------------------

#define BK CUTUNE_BK
#define SPLITK CUTUNE_SPLITK
#define SROW (TILE + (CUTUNE_PAD ? 4 : 0))
#define GROUPS (RT / 4)        // runs of 4 rows (columns) per thread
#define GROUP_STRIDE (4 * TX)  // distance between a thread's runs
#define FETCH_W min_int(CUTUNE_VEC, TILE * BK / THREADS)  // a thread's share of a TILE x BK tile

static_assert(RT % 4 == 0, "regtile threads read their rows and columns as float4");
static_assert(TILE * BK % THREADS == 0, "every thread fetches a whole share of a tile");

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
#pragma unroll
  for (int r = 0; r < RT; ++r)
#pragma unroll
    for (int c = 0; c < RT; ++c) acc[r][c] = 0.0f;

  // This block's share of k: all of it, or (split k) the blockIdx.z-th of SPLITK runs of steps.
  const int tiles = (k + BK - 1) / BK;
  const int per_split = (tiles + SPLITK - 1) / SPLITK;
  const int t_begin = blockIdx.z * per_split;
  const int t_end = min_int(tiles, t_begin + per_split);
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
