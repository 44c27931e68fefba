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
//                    computes y = A avg^T as a small tiled matrix product that reuses A, in
//                    64 x 64 tiles
//                  1 fused: one block per set averages its L rows into shared memory, then
//                    its warps compute the L dot products with rows of A
//                  2 split64x32, 3 split64k2, 4 split64k4: split with 64 x 32 tiles, or with
//                    64 x 64 tiles whose depth is split in 2 or 4 parts (blocks), the last part
//                    of a tile to finish adding them: more blocks where N and L are small;
//                    2 to 4 prefetch their slabs of A and avg into L2 (see prefetch_slab), 0 does not
//                  5 splitcp, 6 split64k2cp, 7 split64k4cp: split's, split64k2's and split64k4's tiles
//                    fed by a cp.async pipeline: steps 32 deep, 3 of them in flight ahead of the
//                    one computed (see the second matvec_tiles)
//                  8 splittc, 9 split64k2tc, 10 split64k4tc: the cp forms with the products on the
//                    tensor cores, as three TF32 products each (3xTF32, tf32x3.cuh)
//   CUTUNE_REDUCE  how a row of M values is added up: 0 a warp per row, shuffles;
//                  1 a block per row, shared-memory tree
//   CUTUNE_BLOCK   threads per block of avg_rows / the fused kernel
//   CUTUNE_EPT     vector loads each thread issues before adding (in flight together)
//   CUTUNE_VEC     floats per vector load (1, 2, 4); scalar when M (or L for rows of A) is not
//                  a multiple of VEC, since rows are then not aligned
//   CUTUNE_PDL     the cp forms' product by programmatic dependent launch (sm_90; the plan flags
//                  its launch): 0 off; 1 avg_rows lets it launch once each of its blocks has read
//                  its rows. The product fetches its first steps of A, then waits for the averages
//                  (griddepcontrol.wait) before it copies any of them.

#define BLOCK CUTUNE_BLOCK
#ifndef CUTUNE_PDL
#define CUTUNE_PDL 0
#endif
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

#if CUTUNE_FUSE != 1
// ---- split: averages to global memory, then y = A avg^T ----------------------------------------

extern "C" __global__ void __launch_bounds__(BLOCK)
avg_rows(const float* __restrict__ v, int sets, int m, int l, float* __restrict__ avg) {
  const float scale = 1.0f / m;
#if CUTUNE_REDUCE == 0
  const long long rows = (long long)sets * l;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const long long row = (long long)blockIdx.x * WARPS + warp;
  if (row >= rows) return;  // whole warps leave together: the shuffles stay full
  const float sum = warp_sum(partial<false>(v + row * m, nullptr, m, lane, 32));
#if CUTUNE_PDL
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
  if (lane == 0) avg[row] = sum * scale;
#else
  __shared__ float tree[BLOCK];
  const long long row = blockIdx.x;
  const float sum = block_sum(partial<false>(v + row * m, nullptr, m, threadIdx.x, BLOCK), tree);
#if CUTUNE_PDL
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
  if (threadIdx.x == 0) avg[row] = sum * scale;
#endif
}

// y (L x N) = A (L x L) times avg^T (avg is N x L): both operands run along p contiguously.
// Tiles of MV_ROWS rows of y (rows of A) x MV_SETS sets, 16 deep, a thread with 4 x 4 results;
// the tiles of A and avg are stored transposed so that a thread reads its 4 rows (sets) as
// float4, and the next tiles are fetched into registers while the current ones are used.
// With MV_PARTS > 1 the depth (p) is split into that many parts, a block each (blockIdx.z): at
// N = L = 512, 64 x 64 tiles are 64 blocks for 132 SMs, each thread 8192 multiply-adds; parts
// or narrower tiles fill the GPU. The last part of a tile to finish adds the parts in order.
// The table is mirrored in kernels/avgmatvec.cpp (matvec_shape).
#if CUTUNE_FUSE == 0
#define MV_ROWS 64
#define MV_SETS 64
#define MV_PARTS 1
#define MV_PREFETCH 0  // as before the other shapes came (N = L = 1024: 0.99 of the byte floor)
#elif CUTUNE_FUSE == 2
#define MV_ROWS 64
#define MV_SETS 32
#define MV_PARTS 1
#define MV_PREFETCH 1
#elif CUTUNE_FUSE == 3
#define MV_ROWS 64
#define MV_SETS 64
#define MV_PARTS 2
#define MV_PREFETCH 1
#elif CUTUNE_FUSE == 4
#define MV_ROWS 64
#define MV_SETS 64
#define MV_PARTS 4
#define MV_PREFETCH 1
#elif CUTUNE_FUSE >= 5 && CUTUNE_FUSE <= 10
#define MV_ROWS 64
#define MV_SETS 64
#define MV_PARTS (CUTUNE_FUSE % 3 == 2 ? 1 : CUTUNE_FUSE % 3 == 0 ? 2 : 4)  // split's, split64k2's, split64k4's
#define MV_PREFETCH 0  // the pipeline asks for its steps ahead of time itself
#define MV_ASYNC 1
#define MV_TENSOR (CUTUNE_FUSE >= 8)
#else
#error "CUTUNE_FUSE: 0 and 2 to 10 are the split variants"
#endif
#ifndef MV_TENSOR
#define MV_TENSOR 0
#endif
#ifndef MV_ASYNC
#define MV_ASYNC 0
#endif
#if CUTUNE_PDL && !MV_ASYNC
#error "CUTUNE_PDL: only the cp forms' product waits for the averages"
#endif
#if MV_ASYNC
#define MV_DEPTH 32                  // depth of a pipeline step
#define MV_STAGES 4                  // shared buffers: 3 steps in flight while one is computed
#define MV_PITCH (MV_DEPTH + (MV_TENSOR ? 8 : 4))  // floats per shared row; see matvec_tiles below
#else
#define MV_DEPTH 16
#endif
#define MV_THREADS (MV_ROWS * MV_SETS / 16)
#define MV_A_QUADS (MV_ROWS * MV_DEPTH / 4 / MV_THREADS)    // quads of A's tile each thread fetches
#define MV_AVG_QUADS (MV_SETS * MV_DEPTH / 4 / MV_THREADS)  // and of avg's
static_assert(MV_A_QUADS >= 1 && MV_AVG_QUADS >= 1 && MV_ROWS % 4 == 0 && MV_SETS % 4 == 0, "matvec tile shape");
static_assert(MV_ROWS * MV_DEPTH / 4 % MV_THREADS == 0 && MV_SETS * MV_DEPTH / 4 % MV_THREADS == 0,
              "every thread copies as many quads of a step");

// One quad of a tile: row r0 + q / 4 and depth d0 + q % 4 * 4 of a row-major matrix with row
// pitch `pitch`, four consecutive floats; zero outside the matrix's `rows` and beyond column
// `limit` (the end of this block's part of the depth).
struct TileQuad {
  float x[4];
  __device__ __forceinline__ void fetch(const float* __restrict__ g, int rows, int pitch, int limit, int r0, int d0, int q,
                                        bool vector_ok) {
    const int gr = r0 + q / (MV_DEPTH / 4), gd = d0 + q % (MV_DEPTH / 4) * 4;
    x[0] = x[1] = x[2] = x[3] = 0.0f;
    if (gr >= rows) return;
    const float* src = g + (long long)gr * pitch + gd;
    if (vector_ok && gd < limit) {  // pitch % 4 == 0 and limit is pitch or a multiple of 16: all four inside
      const float4 v4 = *reinterpret_cast<const float4*>(src);
      x[0] = v4.x, x[1] = v4.y, x[2] = v4.z, x[3] = v4.w;
    } else {
#pragma unroll
      for (int i = 0; i < 4; ++i)
        if (gd + i < limit) x[i] = src[i];
    }
  }
  // Stored transposed: tile[depth][row]; +4 in the row pitch: conflict-light transposed
  // stores, rows stay 16-byte aligned.
  template <int PITCH>
  __device__ __forceinline__ void put(float (*tile)[PITCH], int q) const {
    const int r = q / (MV_DEPTH / 4), d = q % (MV_DEPTH / 4) * 4;
#pragma unroll
    for (int i = 0; i < 4; ++i) tile[d + i][r] = x[i];
  }
};

// Asks L2 for the lines of rows r0 .. r0 + count (of `rows`) between columns k0 and k1, so that
// the tile steps find them there: a step's loads are issued one step ahead, and a short step
// (few warps per SM) can end before A's lines come from memory (the averages' pass evicts A).
// Not for split (CUTUNE_FUSE 0), which stays as first measured. (A splitpf variant, split's
// tiles with this prefetch, was never faster than split or split64k2/k4 on an H100 and was removed.)
__device__ __forceinline__ void prefetch_slab(const float* g, int rows, int pitch, int r0, int count, int k0, int k1) {
  if (k1 <= k0) return;
  const int lines = (k1 - k0 + 31) / 32 + 1;  // the 128-byte lines a row's range can touch
  for (int i = threadIdx.x; i < count * lines; i += MV_THREADS) {
    const int r = r0 + i / lines;
    if (r >= rows) break;
    const float* row = g + (long long)r * pitch;
    const unsigned long long line = ((unsigned long long)(row + k0) & ~127ull) + (unsigned long long)(i % lines) * 128ull;
    if (line <= (unsigned long long)(row + k1 - 1)) asm volatile("prefetch.global.L2 [%0];" ::"l"(line));
  }
}

// Rows and sets of the tile that this thread's results belong to: runs of 4 (ty * 4 + i, tx * 4 +
// j) for the register-staged kernel, which reads its 4 rows at one depth as a float4; strided (ty
// + 16 i, tx + 16 j) for the cp.async one, which reads 4 depths of one row as a float4. The tc
// forms hold mma tiles' results: ty is the warp's row (of 2) and g, tx its column (of 4) and t
// (g = lane / 4, t = lane % 4); i is the 16-row tile and its upper or lower 8 rows, j the 8-set tile
// and the first or second of the thread's two sets.
__device__ __forceinline__ int result_row(int ty, int i) {
  if (MV_TENSOR) return ty / 8 * 32 + i / 2 * 16 + i % 2 * 8 + ty % 8;
  return MV_ASYNC ? ty + MV_ROWS / 4 * i : ty * 4 + i;
}
__device__ __forceinline__ int result_set(int tx, int j) {
  if (MV_TENSOR) return tx / 4 * 16 + j / 2 * 8 + tx % 4 * 2 + j % 2;
  return MV_ASYNC ? tx + MV_SETS / 4 * j : tx * 4 + j;
}

// This thread's results into y.
__device__ __forceinline__ void store_results(const float (&acc)[4][4], int row0, int set0, int tx, int ty, int sets, int l,
                                              float* __restrict__ y) {
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int row = row0 + result_row(ty, i);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int set = set0 + result_set(tx, j);
      if (row < l && set < sets) y[(long long)row * sets + set] = acc[i][j];
    }
  }
}

#if MV_PARTS > 1
// Called by every thread once its part is stored: whether this block is the last of `arrivals`
// to get here for `counter`. atomicInc wraps to 0 after arrivals - 1, so the last block leaves
// the counter at 0 for the next run. A counter never used before (the scratch's poison, >=
// arrivals) is only reset by the first call, which then takes a ticket of its own.
__device__ __forceinline__ bool last_to_arrive(unsigned int* counter, unsigned int arrivals) {
  __shared__ bool is_last;
  __threadfence();  // this thread's part is visible device-wide before the counter says so
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned int ticket = atomicInc(counter, arrivals - 1);
    if (ticket >= arrivals) ticket = atomicInc(counter, arrivals - 1);
    is_last = ticket == arrivals - 1;
  }
  __syncthreads();
  if (is_last) __threadfence();  // the other blocks' parts are visible to this one
  return is_last;
}
#endif

// The end of a tile's block: y, or with MV_PARTS > 1 this block's part of the tile, and y from the
// last part of the tile to finish.
__device__ __forceinline__ void finish_tile(const float (&acc)[4][4], int row0, int set0, int tx, int ty, int sets, int l,
                                            float* __restrict__ parts, unsigned int* __restrict__ finished,
                                            float* __restrict__ y) {
#if MV_PARTS == 1
  store_results(acc, row0, set0, tx, ty, sets, l, y);
#else
  const int part = blockIdx.z;
  // parts: [tile][part][i][thread] float4s (tile = blockIdx.y * gridDim.x + blockIdx.x), so a
  // tile's parts are one region and each store of a warp is 512 contiguous bytes.
  const int tile = blockIdx.y * gridDim.x + blockIdx.x;
  float4* tile_parts = reinterpret_cast<float4*>(parts) + (long long)tile * MV_PARTS * 4 * MV_THREADS;
#pragma unroll
  for (int i = 0; i < 4; ++i)
    tile_parts[(part * 4 + i) * MV_THREADS + threadIdx.x] = make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
  if (!last_to_arrive(&finished[tile], MV_PARTS)) return;
  // The parts in order (the same sums every run, whichever block is last); this block's own
  // from its registers.
  float sum[4][4] = {};
  for (int z = 0; z < MV_PARTS; ++z) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const float4 w = z == part ? make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3])
                                 : __ldcg(&tile_parts[(z * 4 + i) * MV_THREADS + threadIdx.x]);  // from L2: other SMs wrote it
      sum[i][0] += w.x, sum[i][1] += w.y, sum[i][2] += w.z, sum[i][3] += w.w;
    }
  }
  store_results(sum, row0, set0, tx, ty, sets, l, y);
#if __CUDA_ARCH__ >= 800
  // The tile's parts are dead now: drop their L2 lines unwritten, or they would go back to
  // memory during the next pass over v. The region is whole lines (16 KiB a part, the scratch
  // 256-byte aligned).
  __syncthreads();  // every thread has read its parts
  const unsigned long long region = (unsigned long long)tile_parts;
  for (unsigned int offset = threadIdx.x * 128u; offset < MV_PARTS * 4u * MV_THREADS * 16u; offset += MV_THREADS * 128u)
    asm volatile("discard.global.L2 [%0], 128;" ::"l"(region + offset) : "memory");
#endif
#endif
}

// The product's parameters, the same for both kernels below; parts and finished only with MV_PARTS > 1.
#if MV_PARTS == 1
#define MATVEC_PARAMS \
  const float *__restrict__ a, const float *__restrict__ avg, int sets, int l, float *__restrict__ y
#define MATVEC_PARTS nullptr, nullptr
#else
#define MATVEC_PARAMS                                                                                       \
  const float *__restrict__ a, const float *__restrict__ avg, int sets, int l, float *__restrict__ parts, \
      unsigned int *__restrict__ finished, float *__restrict__ y
#define MATVEC_PARTS parts, finished
#endif

// This block's part of the depth: steps [first, last) of MV_DEPTH, split evenly.
struct DepthPart {
  int first, last, limit;  // limit: the end of the part in columns (the matrices' l at most)
  __device__ __forceinline__ DepthPart(int l) {
    const int all_steps = (l + MV_DEPTH - 1) / MV_DEPTH, part = blockIdx.z;
    first = (int)((long long)all_steps * part / MV_PARTS);
    last = (int)((long long)all_steps * (part + 1) / MV_PARTS);
    limit = min(l, last * MV_DEPTH);
  }
};

#if !MV_ASYNC
extern "C" __global__ void __launch_bounds__(MV_THREADS) matvec_tiles(MATVEC_PARAMS) {
  __shared__ __align__(16) float a_tile[2][MV_DEPTH][MV_ROWS + 4];    // a_tile[.][p][row of y]
  __shared__ __align__(16) float avg_tile[2][MV_DEPTH][MV_SETS + 4];  // avg_tile[.][p][set]
  const int tx = threadIdx.x % (MV_SETS / 4), ty = threadIdx.x / (MV_SETS / 4);
  const int row0 = blockIdx.y * MV_ROWS, set0 = blockIdx.x * MV_SETS;
  const bool vector_ok = l % 4 == 0;
  const DepthPart depth(l);
  const int first = depth.first, last = depth.last, limit = depth.limit;
#if MV_PREFETCH
  prefetch_slab(a, l, l, row0, MV_ROWS, first * MV_DEPTH, limit);
  prefetch_slab(avg, sets, l, set0, MV_SETS, first * MV_DEPTH, limit);
#endif
  float acc[4][4] = {};
  TileQuad next_a[MV_A_QUADS], next_avg[MV_AVG_QUADS];
  if (first < last) {
#pragma unroll
    for (int k = 0; k < MV_A_QUADS; ++k) {
      next_a[k].fetch(a, l, l, limit, row0, first * MV_DEPTH, threadIdx.x + k * MV_THREADS, vector_ok);
      next_a[k].put(a_tile[0], threadIdx.x + k * MV_THREADS);
    }
#pragma unroll
    for (int k = 0; k < MV_AVG_QUADS; ++k) {
      next_avg[k].fetch(avg, sets, l, limit, set0, first * MV_DEPTH, threadIdx.x + k * MV_THREADS, vector_ok);
      next_avg[k].put(avg_tile[0], threadIdx.x + k * MV_THREADS);
    }
    __syncthreads();
  }
  for (int step = first; step < last; ++step) {
    const int current = (step - first) & 1;
    // One barrier per step: a buffer is rewritten only after every thread has passed the
    // barrier that ends the step reading it.
    if (step + 1 < last) {
#pragma unroll
      for (int k = 0; k < MV_A_QUADS; ++k)
        next_a[k].fetch(a, l, l, limit, row0, (step + 1) * MV_DEPTH, threadIdx.x + k * MV_THREADS, vector_ok);
#pragma unroll
      for (int k = 0; k < MV_AVG_QUADS; ++k)
        next_avg[k].fetch(avg, sets, l, limit, set0, (step + 1) * MV_DEPTH, threadIdx.x + k * MV_THREADS, vector_ok);
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
    if (step + 1 < last) {
#pragma unroll
      for (int k = 0; k < MV_A_QUADS; ++k) next_a[k].put(a_tile[current ^ 1], threadIdx.x + k * MV_THREADS);
#pragma unroll
      for (int k = 0; k < MV_AVG_QUADS; ++k) next_avg[k].put(avg_tile[current ^ 1], threadIdx.x + k * MV_THREADS);
    }
    __syncthreads();
  }
  finish_tile(acc, row0, set0, tx, ty, sets, l, MATVEC_PARTS, y);
}

#else
// ---- the cp.async product: split's tiles, fed by a pipeline --------------------------------------
//
// The register-staged kernel above fetches one step (16 deep) ahead: with one 256-thread block an
// SM, a step's multiply-adds (2 warps a scheduler, 256 each) take less time than its loads, and
// Nsight Compute saw its schedulers issue 0.42 instructions a cycle (N = L = 512, H200). Here
// cp.async copies steps of 32 into MV_STAGES shared buffers, MV_STAGES - 1 steps ahead of the one
// computed, with no registers spent on staging and one barrier a step.
//
// A stage is the tile's MV_ROWS rows of A then its MV_SETS rows of avg, MV_DEPTH floats each,
// row-major as in global memory (cp.async copies 16-byte runs and cannot transpose). A thread
// reads 4 depths of a row as a float4: of A its rows ty + 16 i, of avg its sets tx + 16 j. A warp
// is 8 tx by 4 ty (cp_thread_of), so each of its reads touches 8 consecutive rows of avg or 4 of A,
// and a row pitch of MV_DEPTH + 4 floats (9 16-byte units, odd) puts 8 consecutive rows in the 8
// distinct 16-byte bank groups: one wavefront per read. (16 tx by 2 ty, as the register-staged
// kernel has it, needs two for avg's 16 rows: a third more shared-memory traffic, which is what
// the schedulers waited on most.)

extern __shared__ __align__(16) float mv_stages[];  // [MV_STAGES][MV_ROWS + MV_SETS][MV_PITCH]

// (shared_address, copy16, copy4, commit_copies, wait_copies: cp_async.cuh.)

// Rows r0 .. r0 + ROWS of the row-major l-wide matrix g (of `rows`), columns d0 .. d0 + MV_DEPTH,
// into shared rows `shared` (MV_PITCH apart); zeros past `rows` and past column `limit`.
// Consecutive threads copy consecutive 16-byte runs of a row.
template <int ROWS>
__device__ __forceinline__ void copy_rows(float* shared, const float* __restrict__ g, int rows, int l, int limit, int r0,
                                          int d0, bool wide) {
  constexpr int quads = MV_DEPTH / 4;  // 16-byte runs a row
#pragma unroll
  for (int k = 0; k < ROWS * quads / MV_THREADS; ++k) {
    const int q = threadIdx.x + k * MV_THREADS, r = q / quads, d = d0 + q % quads * 4;
    const bool row_inside = r0 + r < rows;
    const float* src = g + (long long)(r0 + r) * l + d;
    const unsigned dst = shared_address(shared + r * MV_PITCH + q % quads * 4);
    if (wide) {  // l % 4 == 0, so limit is too: the four are in or out together
      const bool inside = row_inside && d < limit;
      copy16(dst, inside ? src : g, inside);
    } else {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const bool inside = row_inside && d + e < limit;
        copy4(dst + 4 * e, inside ? src + e : g, inside);
      }
    }
  }
}

// This thread's tx (0 .. 15) and ty (0 .. 15): lanes are 8 tx by 4 ty, warps 2 by 8 of those.
struct CpThread {
  int tx, ty;
};
__device__ __forceinline__ CpThread cp_thread_of(int thread) {
  const int lane = thread % 32, warp = thread / 32;
  // tc forms: warps 2 (rows of 32) by 4 (sets of 16), a thread's tx = warp column * 4 + t and
  // ty = warp row * 8 + g (see result_row).
  if (MV_TENSOR) return {warp % 4 * 4 + lane % 4, warp / 4 * 8 + lane / 4};
  return {warp % 2 * 8 + lane % 8, warp / 2 * 4 + lane / 8};
}

#if MV_TENSOR
// (split_tf32, mma_tf32: tf32x3.cuh.)
// One step of the tile (MV_DEPTH deep) as 3xTF32 mma tiles: the warp's 32 rows by 16 sets are
// 2 x 2 tiles of m16n8k8. Their k slots t and t + 4 stand for depths 2t and 2t + 1 (the same for A
// and avg, whose rows both run along the depth), so each operand pair is one 8-byte read; a row
// pitch of MV_DEPTH + 8 floats puts the 8 rows of such a read's half-warp in distinct banks. The
// step is summed on the tensor cores from zero and added to acc by FADD (see tf32x3.cuh): acc[i][j]
// is result_row(ty, i), result_set(tx, j).
__device__ __forceinline__ void tc_step(const float* as, const float* ss, int tx, int ty, float (&acc)[4][4]) {
  const int g = ty % 8, t = tx % 4, warp_row = ty / 8 * 32, warp_set = tx / 4 * 16;  // the warp's corner
  float part[4][4] = {};
#pragma unroll
  for (int d = 0; d < MV_DEPTH; d += 8) {
    const int k = d + 2 * t;
    unsigned a_hi[2][4], a_lo[2][4], b_hi[2][2], b_lo[2][2];
#pragma unroll
    for (int mt = 0; mt < 2; ++mt)
#pragma unroll
      for (int h = 0; h < 2; ++h) {  // rows g and g + 8: registers h (slot t) and h + 2 (slot t + 4)
        const float2 v = *reinterpret_cast<const float2*>(as + (warp_row + 16 * mt + 8 * h + g) * MV_PITCH + k);
        split_tf32(v.x, a_hi[mt][h], a_lo[mt][h]);
        split_tf32(v.y, a_hi[mt][h + 2], a_lo[mt][h + 2]);
      }
#pragma unroll
    for (int nt = 0; nt < 2; ++nt) {
      const float2 v = *reinterpret_cast<const float2*>(ss + (warp_set + 8 * nt + g) * MV_PITCH + k);
      split_tf32(v.x, b_hi[nt][0], b_lo[nt][0]);
      split_tf32(v.y, b_hi[nt][1], b_lo[nt][1]);
    }
#pragma unroll
    for (int pass = 0; pass < 3; ++pass)  // lo*hi, hi*lo, hi*hi: the small products first
#pragma unroll
      for (int mt = 0; mt < 2; ++mt)
#pragma unroll
        for (int nt = 0; nt < 2; ++nt) {
          const unsigned(&a_part)[4] = pass == 0 ? a_lo[mt] : a_hi[mt];
          const unsigned(&b_part)[2] = pass == 1 ? b_lo[nt] : b_hi[nt];
          mma_tf32(part[2 * mt][2 * nt], part[2 * mt][2 * nt + 1], part[2 * mt + 1][2 * nt], part[2 * mt + 1][2 * nt + 1],
                   a_part, b_part[0], b_part[1]);
        }
  }
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) acc[i][j] += part[i][j];
}
#endif

extern "C" __global__ void __launch_bounds__(MV_THREADS) matvec_tiles(MATVEC_PARAMS) {
  static_assert(MV_ROWS == 64 && MV_SETS == 64, "cp_thread_of lays out 64 x 64 tiles");
  constexpr int stage_floats = (MV_ROWS + MV_SETS) * MV_PITCH;
  const auto [tx, ty] = cp_thread_of(threadIdx.x);
  const int row0 = blockIdx.y * MV_ROWS, set0 = blockIdx.x * MV_SETS;
  const bool wide = l % 4 == 0;
  const DepthPart depth(l);
  const int steps = depth.last - depth.first;
  // Step k of this block's part into its buffer: A's rows, then the averages'.
  const auto copy_a = [&](int k) {
    const int d0 = (depth.first + k) * MV_DEPTH;
    copy_rows<MV_ROWS>(mv_stages + k % MV_STAGES * stage_floats, a, l, l, depth.limit, row0, d0, wide);
  };
  const auto copy_avg = [&](int k) {
    const int d0 = (depth.first + k) * MV_DEPTH;
    copy_rows<MV_SETS>(mv_stages + k % MV_STAGES * stage_floats + MV_ROWS * MV_PITCH, avg, sets, l, depth.limit,
                       set0, d0, wide);
  };
  const auto copy_step = [&](int k) {
    copy_a(k);
    copy_avg(k);
  };
  // Every iteration commits one group, empty or not, so that "all but MV_STAGES - 2 groups done"
  // always means "step k has landed".
#if CUTUNE_PDL
  // Launched while the averages may still run: A is an input, so its first steps are fetched
  // before the wait, into the first group (which the first step waits for anyway).
#pragma unroll
  for (int k = 0; k < MV_STAGES - 1; ++k)
    if (k < steps) copy_a(k);
  asm volatile("griddepcontrol.wait;" ::: "memory");
#pragma unroll
  for (int k = 0; k < MV_STAGES - 1; ++k) {
    if (k < steps) copy_avg(k);
    commit_copies();
  }
#else
#pragma unroll
  for (int k = 0; k < MV_STAGES - 1; ++k) {
    if (k < steps) copy_step(k);
    commit_copies();
  }
#endif
  float acc[4][4] = {};
  for (int k = 0; k < steps; ++k) {
    wait_copies<MV_STAGES - 2>();
    // Step k is in every thread's view, and every thread is done with step k - 1, whose buffer
    // the next copy overwrites.
    __syncthreads();
    if (k + MV_STAGES - 1 < steps) copy_step(k + MV_STAGES - 1);
    commit_copies();
    const float* as = mv_stages + k % MV_STAGES * stage_floats;
    const float* ss = as + MV_ROWS * MV_PITCH;
#if MV_TENSOR
    tc_step(as, ss, tx, ty, acc);
#else
#pragma unroll
    for (int d = 0; d < MV_DEPTH; d += 4) {
      float4 av[4], sv[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) av[i] = *reinterpret_cast<const float4*>(as + result_row(ty, i) * MV_PITCH + d);
#pragma unroll
      for (int j = 0; j < 4; ++j) sv[j] = *reinterpret_cast<const float4*>(ss + result_set(tx, j) * MV_PITCH + d);
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          float r = acc[i][j];  // depths in order, as the other kernel adds them
          r += av[i].x * sv[j].x;
          r += av[i].y * sv[j].y;
          r += av[i].z * sv[j].z;
          r += av[i].w * sv[j].w;
          acc[i][j] = r;
        }
    }
#endif
  }
  finish_tile(acc, row0, set0, tx, ty, sets, l, MATVEC_PARTS, y);
}
#endif

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
