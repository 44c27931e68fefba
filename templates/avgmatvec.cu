// Avgmatvec family: NVIDIA's analysis-driven-optimisation example. N sets of M vectors of
// length L, laid out v[n][l][m] (m contiguous); each set's M vectors are averaged and the
// average is multiplied by an L x L matrix A (row-major):
//
//   avg[n][l] = (1/M) sum over m of v[n][l][m]
//   y[l][n]   = sum over p of A[l][p] avg[n][p]        (y is L x N, row-major)
//
// Reading v (N*M*L floats) is the cost; the matrix products are N*L*L multiply-adds on data
// that stays in cache.
//
// Compile-time parameters (-D definitions):
//   CUTUNE_FUSE    0 split: avg_rows writes avg (N x L) to global memory, then matvec_tiles
//                    computes y = A avg^T as a small tiled matrix product that reuses A
//                  1 fused: one block per set averages its L rows into shared memory, then
//                    its warps compute the L dot products with rows of A
//   CUTUNE_REDUCE  how a row of M values is added up: 0 a warp per row, shuffles;
//                  1 a block per row, shared-memory tree
//   CUTUNE_BLOCK   threads per block of avg_rows / the fused kernel
//   CUTUNE_EPT     vector loads each thread issues before adding (in flight together)
//   CUTUNE_VEC     floats per vector load (1, 2, 4); scalar when M (or L for rows of A) is not
//                  a multiple of VEC, since rows are then not aligned

#define BLOCK CUTUNE_BLOCK
#define EPT CUTUNE_EPT
#define VEC CUTUNE_VEC
#define WARPS (BLOCK / 32)
#define FULL_MASK 0xffffffffu

static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "block must be a multiple of 32, at most 1024");

template <int W> struct vec_of;
template <> struct vec_of<1> { typedef float type; };
template <> struct vec_of<2> { typedef float2 type; };
template <> struct vec_of<4> { typedef float4 type; };

__device__ __forceinline__ float lane_sum(float v) { return v; }
__device__ __forceinline__ float lane_sum(float2 v) { return v.x + v.y; }
__device__ __forceinline__ float lane_sum(float4 v) { return (v.x + v.y) + (v.z + v.w); }
__device__ __forceinline__ float lane_dot(float a, float b) { return a * b; }
__device__ __forceinline__ float lane_dot(float2 a, float2 b) { return a.x * b.x + a.y * b.y; }
__device__ __forceinline__ float lane_dot(float4 a, float4 b) { return (a.x * b.x + a.y * b.y) + (a.z * b.z + a.w * b.w); }

// This thread's part of sum(row[0..len)) or, with `other`, of sum(row[i] * other[i]): elements
// lane*W, (lane + lanes)*W, … as W-wide vectors, EPT loads in flight at a time.
template <int W, bool DOT>
__device__ __forceinline__ float strided_partial(const float* __restrict__ row, const float* other, int len, int lane, int lanes) {
  typedef typename vec_of<W>::type V;
  const V* rv = reinterpret_cast<const V*>(row);
  const V* ov = reinterpret_cast<const V*>(other);
  const int vectors = len / W;
  float sum = 0.0f;
  for (int base = lane; base < vectors; base += lanes * EPT) {
    V loaded[EPT];
#pragma unroll
    for (int e = 0; e < EPT; ++e) {
      const int i = base + e * lanes;
      if (i < vectors) loaded[e] = rv[i];
    }
#pragma unroll
    for (int e = 0; e < EPT; ++e) {
      const int i = base + e * lanes;
      if (i < vectors) sum += DOT ? lane_dot(loaded[e], ov[i]) : lane_sum(loaded[e]);
    }
  }
  return sum;
}

template <bool DOT>
__device__ __forceinline__ float partial(const float* __restrict__ row, const float* other, int len, int lane, int lanes) {
  // W-wide loads need len % W == 0 (row starts are multiples of len; bases are 256-byte aligned).
  if (VEC > 1 && len % VEC == 0) return strided_partial<VEC, DOT>(row, other, len, lane, lanes);
  return strided_partial<1, DOT>(row, other, len, lane, lanes);
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(FULL_MASK, v, offset);
  return v;
}

// Sum of one value per thread, valid in thread 0; ends with a barrier so `tree` can be reused.
__device__ __forceinline__ float block_sum(float v, float* tree) {
  const int t = threadIdx.x;
  tree[t] = v;
  __syncthreads();
  for (int stride = BLOCK / 2; stride > 0; stride >>= 1) {
    if (t < stride) tree[t] += tree[t + stride];
    __syncthreads();
  }
  const float total = tree[0];
  __syncthreads();
  return total;
}

#if CUTUNE_FUSE == 0
// ---- split: averages to global memory, then y = A avg^T ----------------------------------------

extern "C" __global__ void __launch_bounds__(BLOCK)
avg_rows(const float* __restrict__ v, int sets, int m, int l, float* __restrict__ avg) {
  const long long rows = (long long)sets * l;
  const float scale = 1.0f / m;
#if CUTUNE_REDUCE == 0
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const long long row = (long long)blockIdx.x * WARPS + warp;
  if (row >= rows) return;  // whole warps leave together: the shuffles stay full
  const float sum = warp_sum(partial<false>(v + row * m, nullptr, m, lane, 32));
  if (lane == 0) avg[row] = sum * scale;
#else
  __shared__ float tree[BLOCK];
  const long long row = blockIdx.x;
  const float sum = block_sum(partial<false>(v + row * m, nullptr, m, threadIdx.x, BLOCK), tree);
  if (threadIdx.x == 0) avg[row] = sum * scale;
#endif
}

// y (L x N) = A (L x L) times avg^T (avg is N x L): both operands run along p contiguously.
// A fixed, untuned tiling: 64 x 64 tiles of y, 16 deep, 256 threads with 4 x 4 results each; the
// tiles of A and avg are stored transposed so that a thread reads its 4 rows (columns) as float4,
// and the next tiles are fetched into registers while the current ones are used.
#define MV_TILE 64
#define MV_DEPTH 16
#define MV_THREADS 256
#define MV_ROW (MV_TILE + 4)  // +4: conflict-light transposed stores, rows stay 16-byte aligned

// One thread's part of a tile: rows r0.. and depth d0.. of a row-major matrix with `cols`
// columns, four consecutive floats (zero outside the matrix).
struct TileQuad {
  float x[4];
  __device__ __forceinline__ void fetch(const float* __restrict__ g, int rows, int cols, int r0, int d0, bool vector_ok) {
    const int gr = r0 + threadIdx.x / (MV_DEPTH / 4), gd = d0 + threadIdx.x % (MV_DEPTH / 4) * 4;
    x[0] = x[1] = x[2] = x[3] = 0.0f;
    if (gr >= rows) return;
    const float* src = g + (long long)gr * cols + gd;
    if (vector_ok && gd < cols) {  // cols % 4 == 0: all four are inside
      const float4 q = *reinterpret_cast<const float4*>(src);
      x[0] = q.x, x[1] = q.y, x[2] = q.z, x[3] = q.w;
    } else {
#pragma unroll
      for (int i = 0; i < 4; ++i)
        if (gd + i < cols) x[i] = src[i];
    }
  }
  // Stored transposed: tile[depth][row].
  __device__ __forceinline__ void put(float (*tile)[MV_ROW]) const {
    const int r = threadIdx.x / (MV_DEPTH / 4), d = threadIdx.x % (MV_DEPTH / 4) * 4;
#pragma unroll
    for (int i = 0; i < 4; ++i) tile[d + i][r] = x[i];
  }
};

extern "C" __global__ void __launch_bounds__(MV_THREADS)
matvec_tiles(const float* __restrict__ a, const float* __restrict__ avg, int sets, int l, float* __restrict__ y) {
  __shared__ __align__(16) float a_tile[2][MV_DEPTH][MV_ROW];    // a_tile[.][p][row of y]
  __shared__ __align__(16) float avg_tile[2][MV_DEPTH][MV_ROW];  // avg_tile[.][p][set]
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int row0 = blockIdx.y * MV_TILE, set0 = blockIdx.x * MV_TILE;
  const bool vector_ok = l % 4 == 0;
  float acc[4][4] = {};
  TileQuad next_a, next_avg;
  next_a.fetch(a, l, l, row0, 0, vector_ok);
  next_avg.fetch(avg, sets, l, set0, 0, vector_ok);
  next_a.put(a_tile[0]);
  next_avg.put(avg_tile[0]);
  __syncthreads();
  const int steps = (l + MV_DEPTH - 1) / MV_DEPTH;
  for (int step = 0; step < steps; ++step) {
    const int current = step & 1;
    // One barrier per step: a buffer is rewritten only after every thread has passed the
    // barrier that ends the step reading it.
    if (step + 1 < steps) {
      next_a.fetch(a, l, l, row0, (step + 1) * MV_DEPTH, vector_ok);
      next_avg.fetch(avg, sets, l, set0, (step + 1) * MV_DEPTH, vector_ok);
    }
#pragma unroll
    for (int p = 0; p < MV_DEPTH; ++p) {
      const float4 av = *reinterpret_cast<const float4*>(&a_tile[current][p][ty * 4]);
      const float4 sv = *reinterpret_cast<const float4*>(&avg_tile[current][p][tx * 4]);
      const float ar[4] = {av.x, av.y, av.z, av.w}, sr[4] = {sv.x, sv.y, sv.z, sv.w};
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] += ar[i] * sr[j];
    }
    if (step + 1 < steps) {
      next_a.put(a_tile[current ^ 1]);
      next_avg.put(avg_tile[current ^ 1]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int row = row0 + ty * 4 + i;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int set = set0 + tx * 4 + j;
      if (row < l && set < sets) y[(long long)row * sets + set] = acc[i][j];
    }
  }
}

#else
// ---- fused: one block per set --------------------------------------------------------------------

extern __shared__ __align__(16) unsigned char dynamic_shared[];

extern "C" __global__ void __launch_bounds__(BLOCK)
avgmatvec_fused(const float* __restrict__ v, const float* __restrict__ a, int sets, int m, int l, float* __restrict__ y) {
  float* avg = reinterpret_cast<float*>(dynamic_shared);  // this set's average, L floats
  const int set = blockIdx.x;
  const float* rows = v + (long long)set * l * m;
  const float scale = 1.0f / m;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
#if CUTUNE_REDUCE == 0
  for (int r = warp; r < l; r += WARPS) {
    const float sum = warp_sum(partial<false>(rows + (long long)r * m, nullptr, m, lane, 32));
    if (lane == 0) avg[r] = sum * scale;
  }
#else
  __shared__ float tree[BLOCK];
  for (int r = 0; r < l; ++r) {
    const float sum = block_sum(partial<false>(rows + (long long)r * m, nullptr, m, threadIdx.x, BLOCK), tree);
    if (threadIdx.x == 0) avg[r] = sum * scale;
  }
#endif
  __syncthreads();
  // The matrix-vector product: a warp per row of A, whatever the averaging used (a block-wide
  // tree per dot product would only add barriers).
  for (int r = warp; r < l; r += WARPS) {
    const float dot = warp_sum(partial<true>(a + (long long)r * l, avg, l, lane, 32));
    if (lane == 0) y[(long long)r * sets + set] = dot;
  }
}
#endif
