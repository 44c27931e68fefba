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
//                  2, 3, 4 stream SxP (8x32, 8x64, 16x64): one kernel; a block averages P rows
//                    (components) of S sets, a chunk, multiplies them by the matching P columns
//                    of A (read from L2, reused by the S sets) and stores the L x S partial
//                    product; the last block of a set group to finish (a self-resetting
//                    counter) adds the group's partials into y. No second launch, no pass over
//                    avg; but a block multiplies only after its whole read
//                  5, 6 pipe SxP (8x32, 16x32): as stream, but a block takes 4 chunks in turn
//                    and each warp spreads its share of the previous chunk's products over its
//                    rows of the current one, so the products overlap the reads
//   CUTUNE_REDUCE  how a row of M values is added up: 0 a warp per row, shuffles;
//                  1 a block per row, shared-memory tree (not with stream: warps only)
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

#elif CUTUNE_FUSE >= 2
// ---- stream and pipe: averages and partial products per block, the last block of a group adds
// them -------------------------------------------------------------------------------------------

// Sets (S) and components (P) per chunk, chunks per block (K): mirrored in kernels/avgmatvec.cpp
// (stream_shape).
#if CUTUNE_FUSE == 2
#define STREAM_SETS 8
#define STREAM_ROWS 32
#define STREAM_CHUNKS 1
#elif CUTUNE_FUSE == 3
#define STREAM_SETS 8
#define STREAM_ROWS 64
#define STREAM_CHUNKS 1
#elif CUTUNE_FUSE == 4
#define STREAM_SETS 16
#define STREAM_ROWS 64
#define STREAM_CHUNKS 1
#elif CUTUNE_FUSE == 5
#define STREAM_SETS 8
#define STREAM_ROWS 32
#define STREAM_CHUNKS 4
#else
#define STREAM_SETS 16
#define STREAM_ROWS 32
#define STREAM_CHUNKS 4
#endif
static_assert(STREAM_SETS % 4 == 0 && STREAM_ROWS % 4 == 0, "sets and components per chunk go as float4");

// Layout. Block b handles set group g = b / spans (sets g*S ..) and span b % spans of K chunks
// (chunk c holds components c*P ..): the spans of a group are neighbours in launch order, so a
// group's partials are written close together in time and are still in L2 when its last block
// adds them. partials: [groups][chunks][L][S] floats; finished: a counter per group (scratch,
// poisoned before the first run: see group_finish).
typedef float ChunkAverages[STREAM_ROWS][STREAM_SETS];  // [p][s]: this chunk's averages

// Averages of rows `first`, `first + step`, … of the chunk's set_count x row_count rows (row
// i = set i / row_count, component i % row_count): a warp per row.
__device__ __forceinline__ void chunk_averages(const float* __restrict__ v, int m, int l, int set0, int p0, int set_count,
                                               int row_count, int i, ChunkAverages& avg) {
  const int s = i / row_count, p = i % row_count;
  const float* row = v + ((long long)(set0 + s) * l + p0 + p) * m;
  const float sum = warp_sum(partial<false>(row, nullptr, m, threadIdx.x % 32, 32));
  if (threadIdx.x % 32 == 0) avg[p][s] = sum * (1.0f / m);
}

// Row r of A, columns p0 .. p0 + row_count, times the chunk's S averages: S partial products
// stored at out (16-byte aligned).
__device__ __forceinline__ void row_products(const float* __restrict__ a, int l, int r, int p0, int row_count,
                                             const ChunkAverages& avg, float* __restrict__ out) {
  float acc[STREAM_SETS];
#pragma unroll
  for (int s = 0; s < STREAM_SETS; ++s) acc[s] = 0.0f;
  const float* a_row = a + (long long)r * l + p0;
  if (row_count == STREAM_ROWS && l % 4 == 0) {  // a whole chunk, 16-byte aligned
#pragma unroll 4
    for (int p = 0; p < STREAM_ROWS; p += 4) {
      const float4 q = *reinterpret_cast<const float4*>(a_row + p);
      const float x[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
      for (int k = 0; k < 4; ++k)
#pragma unroll
        for (int s = 0; s < STREAM_SETS; s += 4) {
          const float4 w = *reinterpret_cast<const float4*>(&avg[p + k][s]);
          acc[s] += x[k] * w.x, acc[s + 1] += x[k] * w.y, acc[s + 2] += x[k] * w.z, acc[s + 3] += x[k] * w.w;
        }
    }
  } else {
    for (int p = 0; p < row_count; ++p) {
      const float x = a_row[p];
#pragma unroll
      for (int s = 0; s < STREAM_SETS; s += 4) {
        const float4 w = *reinterpret_cast<const float4*>(&avg[p][s]);
        acc[s] += x * w.x, acc[s + 1] += x * w.y, acc[s + 2] += x * w.z, acc[s + 3] += x * w.w;
      }
    }
  }
  float4* dst = reinterpret_cast<float4*>(out);
#pragma unroll
  for (int s = 0; s < STREAM_SETS; s += 4) dst[s / 4] = make_float4(acc[s], acc[s + 1], acc[s + 2], acc[s + 3]);
}

// Absent sets (beyond the last) average to 0; absent components are never read.
__device__ __forceinline__ void zero_absent_sets(ChunkAverages& avg, int set_count) {
  for (int i = threadIdx.x; i < STREAM_ROWS * STREAM_SETS; i += BLOCK)
    if (i % STREAM_SETS >= set_count) avg[i / STREAM_SETS][i % STREAM_SETS] = 0.0f;
}

// Called by every thread once its partials are stored. The group's last block to get here adds
// the group's partials in chunk order (the same order every run) into y, then drops their L2
// lines.
__device__ __forceinline__ void group_finish(const float* __restrict__ partials, unsigned int* __restrict__ finished,
                                             float* __restrict__ y, int sets, int l, int group, int chunks, int spans,
                                             int set0, int set_count) {
  __shared__ bool is_last;
  __threadfence();  // this thread's partials are visible device-wide before the counter says so
  __syncthreads();
  if (threadIdx.x == 0) {
    // atomicInc wraps to 0 after spans - 1, so the group's last block leaves its counter at 0
    // for the next run. A counter never used before (the poison, >= spans) is only reset by the
    // first call, which then takes a ticket of its own.
    unsigned int ticket = atomicInc(&finished[group], spans - 1);
    if (ticket >= (unsigned)spans) ticket = atomicInc(&finished[group], spans - 1);
    is_last = ticket == (unsigned)spans - 1;
  }
  __syncthreads();
  if (!is_last) return;
  __threadfence();  // every other block's partials of the group are visible to this one

  const float* group_partials = partials + (long long)group * chunks * l * STREAM_SETS;
  for (int r = threadIdx.x; r < l; r += BLOCK) {
    float sum[STREAM_SETS];
#pragma unroll
    for (int s = 0; s < STREAM_SETS; ++s) sum[s] = 0.0f;
    for (int c = 0; c < chunks; ++c) {
      const float4* src = reinterpret_cast<const float4*>(group_partials + ((long long)c * l + r) * STREAM_SETS);
#pragma unroll
      for (int s = 0; s < STREAM_SETS; s += 4) {
        const float4 w = __ldcg(src + s / 4);  // from L2: other SMs wrote it
        sum[s] += w.x, sum[s + 1] += w.y, sum[s + 2] += w.z, sum[s + 3] += w.w;
      }
    }
#pragma unroll
    for (int s = 0; s < STREAM_SETS; ++s)
      if (s < set_count) y[(long long)r * sets + set0 + s] = sum[s];
  }
#if __CUDA_ARCH__ >= 800
  // The group's partials are dead now: drop their L2 lines unwritten, or they would go back to
  // memory (N L chunks floats, a few % of v's bytes). Only lines wholly inside the group's
  // region: a line shared with a neighbouring group may hold partials it has yet to add.
  __syncthreads();  // every thread has read its partials
  const unsigned long long region = (unsigned long long)group_partials;
  const unsigned long long first = (region + 127) & ~127ull;
  const unsigned long long end = (region + (unsigned long long)chunks * l * STREAM_SETS * 4) & ~127ull;
  for (unsigned long long line = first + threadIdx.x * 128ull; line < end; line += BLOCK * 128ull)
    asm volatile("discard.global.L2 [%0], 128;" ::"l"(line) : "memory");
#endif
}

#if STREAM_CHUNKS == 1
// stream: a block averages its chunk, then all its threads compute the chunk's products.
extern "C" __global__ void __launch_bounds__(BLOCK)
avgmatvec_stream(const float* __restrict__ v, const float* __restrict__ a, int sets, int m, int l, float* __restrict__ partials,
                 unsigned int* __restrict__ finished, float* __restrict__ y) {
  __shared__ __align__(16) ChunkAverages avg;
  const int chunks = (l + STREAM_ROWS - 1) / STREAM_ROWS;
  const int group = blockIdx.x / chunks, chunk = blockIdx.x % chunks;
  const int set0 = group * STREAM_SETS, p0 = chunk * STREAM_ROWS;
  const int set_count = min(STREAM_SETS, sets - set0), row_count = min(STREAM_ROWS, l - p0);
  zero_absent_sets(avg, set_count);
  for (int i = threadIdx.x / 32; i < set_count * row_count; i += WARPS)
    chunk_averages(v, m, l, set0, p0, set_count, row_count, i, avg);
  __syncthreads();
  float* out = partials + (long long)blockIdx.x * l * STREAM_SETS;
  for (int r = threadIdx.x; r < l; r += BLOCK) row_products(a, l, r, p0, row_count, avg, out + (long long)r * STREAM_SETS);
  group_finish(partials, finished, y, sets, l, group, chunks, chunks, set0, set_count);
}
#else
// pipe: a block takes K chunks in turn. While its warps average chunk c, each warp also computes
// its share of chunk c - 1's products, spread over its rows of chunk c, so that an SM's warps
// compute at different times and the loads of the others keep memory busy; only the block's
// last chunk is multiplied after its reads.
extern "C" __global__ void __launch_bounds__(BLOCK)
avgmatvec_pipe(const float* __restrict__ v, const float* __restrict__ a, int sets, int m, int l, float* __restrict__ partials,
               unsigned int* __restrict__ finished, float* __restrict__ y) {
  __shared__ __align__(16) ChunkAverages avg[2];  // chunk c in avg[c % 2]
  const int chunks = (l + STREAM_ROWS - 1) / STREAM_ROWS;
  const int spans = (chunks + STREAM_CHUNKS - 1) / STREAM_CHUNKS;
  const int group = blockIdx.x / spans, span = blockIdx.x % spans;
  const int c_begin = span * STREAM_CHUNKS, c_end = min(c_begin + STREAM_CHUNKS, chunks);
  const int set0 = group * STREAM_SETS, set_count = min(STREAM_SETS, sets - set0);
  const int warp = threadIdx.x / 32;
  zero_absent_sets(avg[0], set_count);
  zero_absent_sets(avg[1], set_count);
  float* group_partials = partials + (long long)group * chunks * l * STREAM_SETS;
  // This warp's rows of A in the products: r = warp * 32 + lane + j * BLOCK, j < slices.
  const int slices = l > warp * 32 ? (l - warp * 32 + BLOCK - 1) / BLOCK : 0;
  for (int c = c_begin; c <= c_end; ++c) {
    // Stream chunk c (none after the last) and multiply chunk c - 1 (none before the first).
    const int row_count = c < c_end ? min(STREAM_ROWS, l - c * STREAM_ROWS) : 0;
    const int rows = c < c_end ? set_count * row_count : 0;
    const int my_rows = rows > warp ? (rows - warp + WARPS - 1) / WARPS : 0;
    const int my_slices = c > c_begin ? slices : 0;
    const int prev_p0 = (c - 1) * STREAM_ROWS, prev_count = min(STREAM_ROWS, l - prev_p0);
    float* prev_out = group_partials + (long long)(c - 1) * l * STREAM_SETS;
    int done = 0;
    for (int t = 0; t < my_rows; ++t) {
      chunk_averages(v, m, l, set0, c * STREAM_ROWS, set_count, row_count, warp + t * WARPS, avg[c % 2]);
      // Slices due after t + 1 of my_rows rows: spread evenly, the first after a row's loads.
      for (; done < my_slices && (long long)done * my_rows < (long long)(t + 1) * my_slices; ++done) {
        const int r = done * BLOCK + threadIdx.x;
        if (r < l) row_products(a, l, r, prev_p0, prev_count, avg[(c - 1) % 2], prev_out + (long long)r * STREAM_SETS);
      }
    }
    for (; done < my_slices; ++done) {  // the last chunk, or a warp without rows
      const int r = done * BLOCK + threadIdx.x;
      if (r < l) row_products(a, l, r, prev_p0, prev_count, avg[(c - 1) % 2], prev_out + (long long)r * STREAM_SETS);
    }
    __syncthreads();  // chunk c's averages are complete; chunk c - 1's buffer is free for c + 1
  }
  group_finish(partials, finished, y, sets, l, group, chunks, spans, set0, set_count);
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
