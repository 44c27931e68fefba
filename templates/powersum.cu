// Powersum family: the sums of the power-law maximum-likelihood study. For a window of w sorted
// points x and A exponents alpha > 0, in double:
//
//   minus[j*w + i] = sum over k <= i of |x[k] - x[i]|^alpha[j]   (the k = i term is 0^alpha = 0)
//   plus [j*w + i] = sum over k >  i of (x[k] - x[i])^alpha[j]
//
// The cost is the w*w*A powers; everything else is bookkeeping around them. The ladder's starts
// take their log and exp from straight_math.cuh (the family places it in front of this file):
// branch-free, so that a lane's independent ones overlap.
//
// Compile-time parameters (-D definitions):
//   CUTUNE_MAP     how (i, j) pairs map to blocks:
//                  0 pair: one block per (i, j), its threads split k, a shared-memory tree adds
//                    them up (the study's layout)
//                  1 exponent: one block per j looping over i, same tree per i
//                  2 tile: groups of KSPLIT consecutive lanes own one i and JT exponents; the
//                    lanes split k and add their sums through a shared-memory transpose; a block
//                    holds BLOCK/KSPLIT groups
//                  3 sym: |x[k] - x[i]|^alpha is symmetric, so each pair k > i is computed once:
//                    a block takes a 32 x 32 tile of pairs above the diagonal and JT exponents,
//                    adds its rows into plus[i] and its columns into minus[k] with double
//                    atomics (the plan zeroes both first). The k = i terms are 0^alpha = 0.
//                  4 line (ladder only): one block per i and line of BLOCK/32 * JT exponents;
//                    the block computes each k's ladder start and group stride once, and each
//                    warp runs the ladder for JT of the line's exponents (see the map's section)
//                  5 diag (tabexp only): sym's tiles of pairs above the diagonal, each warp of
//                    the block taking JT exponents of the same tile: lane l owns row i0 + l and
//                    at step s takes column (l + s) % 32, so the 32 lanes take 32 distinct
//                    columns; the column sums travel one lane down after each step (a shuffle)
//                    and come back to their own lane, the row sums stay put. No barrier per
//                    exponent, no shared-memory sums; one double atomic per (row or column,
//                    exponent, tile) into plus and minus (the plan zeroes both first). The tile's
//                    logs are computed once per block, shared by its warps.
//                  6 diag2: diag with tiles of 64 rows, a lane owning rows i0 + l and i0 + 32 + l:
//                    each column sum meets two terms per shuffle, and the atomics are halved, for
//                    twice the row sums' registers and half as many warps.
//   CUTUNE_BLOCK   threads per block (power of two, >= 64)
//   CUTUNE_FOLD    tree maps: the fold stops at stride FOLD and thread 0 adds the remaining
//                  2*FOLD partial sums serially (1: a full tree)
//   CUTUNE_STAGE   0: read x from global memory; 1: the block first copies the window into
//                  shared memory (w doubles of dynamic shared memory)
//   CUTUNE_KSPLIT  tile map: lanes per group (1, 2, 4, …, 32); line map: 32
//   CUTUNE_JT      tile and line maps: exponents per group (per warp in the line map); sym: per block
//   CUTUNE_TERM    0: pow(d, alpha) per term (the study's way)
//                  1: exp(alpha * log d), log d computed once per
//                  (i, k) and shared by the group's JT exponents (exact for d = 0 since alpha > 0:
//                  log 0 = -inf, exp(-inf) = 0)
//                  2 ladder (tile and line maps): where the group's exponents are evenly spaced,
//                  as an MLE scan's candidate grid is, d^(a0 + jj step) = d^a0 (d^step)^jj: two
//                  exp and JT - 1 multiplies per (i, k) instead of JT exp. Exponents that are not
//                  evenly spaced (checked per group, or line, at run time) take the explog path.
//                  3 tabexp (tile and sym maps): d^a = 2^(a * 16 log2 d), 16 log2 d once per (i, k)
//                  and shared by the JT exponents, the power through straight_math.cuh's table
//                  of 2^(i/16) and a degree-6 polynomial: 9 FP64 operations per term against
//                  about 20 for exp, for exponents that are no grid. Terms below 2^-1022 (d = 0
//                  among them) come out as some value below 2^-1022 (see straight_math.cuh).
//                  4 tabexp32 (diag maps): the same with a table of 32 entries, 2^(a 32 log2 d / 32),
//                  and a degree-5 polynomial: one FP64 operation fewer per term, within 4u; and
//                  32 log2 d per pair through a table of its own (about half straight_log's FP64
//                  operations: at jt = 4 a block's logs were a sixth of its FP64 work).

#define BLOCK CUTUNE_BLOCK
#define FOLD CUTUNE_FOLD
#define KSPLIT CUTUNE_KSPLIT
#define JT CUTUNE_JT
#define FULL_MASK 0xffffffffu

static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "block must be a multiple of 32, at most 1024");
static_assert(2 * FOLD <= BLOCK, "the fold leaves 2*FOLD partial sums");
static_assert(KSPLIT <= 32 && (KSPLIT & (KSPLIT - 1)) == 0, "a group of lanes lies within one warp");

extern __shared__ __align__(16) unsigned char dynamic_shared[];

// The window x as this block reads it: global memory, or a shared copy. Every thread of the
// block must call it (it synchronises when staging).
__device__ __forceinline__ const double* window(const double* __restrict__ x, int w) {
#if CUTUNE_STAGE
  double* staged = reinterpret_cast<double*>(dynamic_shared);
  for (int k = threadIdx.x; k < w; k += BLOCK) staged[k] = x[k];
  __syncthreads();
  return staged;
#else
  return x;
#endif
}

#if CUTUNE_TERM >= 3
// The largest of alpha[j0 .. j0 + count), in every lane of the warp: the lanes read a share each
// and reduce (one lane looping over 80 exponents is a chain of 80 dependent maxima).
__device__ __forceinline__ double largest_exponent(const double* __restrict__ alpha, int j0, int count) {
  double a_max = 0;
  for (int jj = threadIdx.x % 32; jj < count; jj += 32) a_max = fmax(a_max, alpha[j0 + jj]);
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) a_max = fmax(a_max, __shfl_xor_sync(FULL_MASK, a_max, offset));
  return a_max;
}
#endif

#if CUTUNE_MAP < 2
// ---- tree maps: a block adds up one (i, j) ------------------------------------------------------

// Sums of d^alpha over this thread's share of k (k = threadIdx.x, + BLOCK, …), split at i.
__device__ __forceinline__ void thread_sums(const double* xs, int w, int i, double a, double& m, double& p) {
  const double xi = xs[i];
  m = 0;
  p = 0;
  for (int k = threadIdx.x; k < w; k += BLOCK) {
    const double t = pow(fabs(xs[k] - xi), a);
    if (k <= i)
      m += t;
    else
      p += t;
  }
}

// Block-wide sums of (m, p); the results are valid in thread 0. Ends with a barrier, so the
// tree can be reused at once.
__device__ __forceinline__ void block_sums(double& m, double& p, double* tree_m, double* tree_p) {
  const int t = threadIdx.x;
  tree_m[t] = m;
  tree_p[t] = p;
  __syncthreads();
  for (int stride = BLOCK / 2; stride > FOLD; stride >>= 1) {
    if (t < stride) {
      tree_m[t] += tree_m[t + stride];
      tree_p[t] += tree_p[t + stride];
    }
    __syncthreads();
  }
  if (t == 0) {
    m = 0;
    p = 0;
    for (int r = 0; r < 2 * FOLD; ++r) {
      m += tree_m[r];
      p += tree_p[r];
    }
  }
  __syncthreads();
}

#if CUTUNE_MAP == 0
extern "C" __global__ void __launch_bounds__(BLOCK)
powersum_pair(const double* __restrict__ x, const double* __restrict__ alpha, int w, int exponents,
              double* __restrict__ minus, double* __restrict__ plus) {
  __shared__ double tree_m[BLOCK], tree_p[BLOCK];
  const double* xs = window(x, w);
  const int i = blockIdx.x, j = blockIdx.y;
  double m, p;
  thread_sums(xs, w, i, alpha[j], m, p);
  block_sums(m, p, tree_m, tree_p);
  if (threadIdx.x == 0) {
    minus[(long long)j * w + i] = m;
    plus[(long long)j * w + i] = p;
  }
}
#else
extern "C" __global__ void __launch_bounds__(BLOCK)
powersum_exponent(const double* __restrict__ x, const double* __restrict__ alpha, int w, int exponents,
                  double* __restrict__ minus, double* __restrict__ plus) {
  __shared__ double tree_m[BLOCK], tree_p[BLOCK];
  const double* xs = window(x, w);
  const int j = blockIdx.x;
  const double a = alpha[j];
  for (int i = 0; i < w; ++i) {
    double m, p;
    thread_sums(xs, w, i, a, m, p);
    block_sums(m, p, tree_m, tree_p);
    if (threadIdx.x == 0) {
      minus[(long long)j * w + i] = m;
      plus[(long long)j * w + i] = p;
    }
  }
}
#endif

#elif CUTUNE_MAP == 3
// ---- sym map: tiles of pairs above the diagonal -------------------------------------------------

#define SYM_TILE 32

extern "C" __global__ void __launch_bounds__(BLOCK)
powersum_sym(const double* __restrict__ x, const double* __restrict__ alpha, int w, int exponents,
             double* __restrict__ minus, double* __restrict__ plus) {
  __shared__ double xi[SYM_TILE], xk[SYM_TILE];
  __shared__ double pair[SYM_TILE][SYM_TILE + 1];  // |x_k - x_i|, or its log (16 log2 for tabexp)
  __shared__ double term[SYM_TILE][SYM_TILE + 1];  // +1: row and column sums both conflict-free
  const int t = threadIdx.x;

  // blockIdx.x numbers the tiles (bi, bk), bk >= bi, row by row.
  const int tiles_per_side = (w + SYM_TILE - 1) / SYM_TILE;
  int bi = 0, first_of_row = 0;
  while (first_of_row + (tiles_per_side - bi) <= (int)blockIdx.x) first_of_row += tiles_per_side - bi++;
  const int bk = bi + (blockIdx.x - first_of_row);
  const int i0 = bi * SYM_TILE, k0 = bk * SYM_TILE;

  if (t < SYM_TILE) xi[t] = i0 + t < w ? x[i0 + t] : 0.0;
  else if (t < 2 * SYM_TILE) xk[t - SYM_TILE] = k0 + t - SYM_TILE < w ? x[k0 + t - SYM_TILE] : 0.0;
#if CUTUNE_TERM == 3
  // The clamp of 16 log2 d that keeps every power of the block's exponents in range.
  const double limit = straight_log16_limit(largest_exponent(alpha, blockIdx.y * JT, min(JT, exponents - blockIdx.y * JT)));
#endif
  __syncthreads();
  // Distances (and logs) once per pair, shared by the block's exponents.
  for (int p = t; p < SYM_TILE * SYM_TILE; p += BLOCK) {
    const int r = p / SYM_TILE, c = p % SYM_TILE;
    const double d = fabs(xk[c] - xi[r]);
#if CUTUNE_TERM == 3
    pair[r][c] = straight_log16(d, limit);
#else
    pair[r][c] = CUTUNE_TERM == 1 ? log(d) : d;
#endif
  }
  __syncthreads();

  for (int jj = 0; jj < JT; ++jj) {
    const int j = blockIdx.y * JT + jj;
    if (j >= exponents) break;  // uniform across the block
    const double a = alpha[j];
    for (int p = t; p < SYM_TILE * SYM_TILE; p += BLOCK) {
      const int r = p / SYM_TILE, c = p % SYM_TILE;
      const bool counted = k0 + c > i0 + r && k0 + c < w;  // above the diagonal, inside the window
#if CUTUNE_TERM == 3
      term[r][c] = counted ? straight_power(a, pair[r][c]) : 0.0;
#else
      term[r][c] = counted ? (CUTUNE_TERM == 1 ? exp(a * pair[r][c]) : pow(pair[r][c], a)) : 0.0;
#endif
    }
    __syncthreads();
    if (t < SYM_TILE) {
      double sum = 0;
      for (int c = 0; c < SYM_TILE; ++c) sum += term[t][c];
      if (i0 + t < w) atomicAdd(&plus[(long long)j * w + i0 + t], sum);
    } else if (t < 2 * SYM_TILE) {
      const int c = t - SYM_TILE;
      double sum = 0;
      for (int r = 0; r < SYM_TILE; ++r) sum += term[r][c];
      if (k0 + c < w) atomicAdd(&minus[(long long)j * w + k0 + c], sum);
    }
    __syncthreads();
  }
}

#elif CUTUNE_MAP >= 5
// ---- diag maps: symmetric tiles, lanes own rows, the column sums travel between lanes -----------
//
// diag and diag2 add each tile's sums into plus and minus with double atomics, which the plan
// zeroes first. A form with no memset and no atomics (each warp storing its tile's sums as
// partials, the last contributor by a ticket counter adding them in tile order) was measured
// and removed: 3-6 us slower than diag at the study's window on an H100 (bench/RESULTS.md).

#define DIAG_COLUMNS 32
#define DIAG_ROWS (CUTUNE_MAP - 4)  // rows per lane: diag 1, diag2 2
#define DIAG_TILE_ROWS (32 * DIAG_ROWS)
#define DIAG_WARPS (BLOCK / 32)
static_assert(CUTUNE_TERM == 3 || CUTUNE_TERM == 4,
              "the diag maps take their powers through a table (term = tabexp, tabexp32)");
// The table of 16 (tabexp: 16 log2 d per pair) or of 32 (tabexp32: 32 log2 d; one FP64 operation
// fewer per term).
#if CUTUNE_TERM == 4
#define DIAG_LOG straight_log32
#define DIAG_LOG_LIMIT straight_log32_limit
#define DIAG_POWER_PARTS straight_power32_parts
#else
#define DIAG_LOG straight_log16
#define DIAG_LOG_LIMIT straight_log16_limit
#define DIAG_POWER_PARTS straight_power_parts
#endif

extern "C" __global__ void __launch_bounds__(BLOCK)
powersum_diag(const double* __restrict__ x, const double* __restrict__ alpha, int w, int exponents,
              double* __restrict__ minus, double* __restrict__ plus) {
  // 16 log2 |x_k - x_i| (32 log2 for tabexp32) of the tile, [row][column] without padding: at step s lane l reads
  // (l + 32 h, (l + s) % 32), 32 consecutive columns modulo 32, so no two lanes of a half-warp
  // share a bank pair.
  __shared__ double log16[DIAG_TILE_ROWS * DIAG_COLUMNS];
  const int t = threadIdx.x, lane = t % 32, warp = t / 32;

  // blockIdx.x numbers the tiles (strip r of DIAG_TILE_ROWS rows, column tile bk of 32), with
  // 32 bk >= DIAG_TILE_ROWS r (the tile reaches above the diagonal), strip by strip.
  const int column_tiles = (w + DIAG_COLUMNS - 1) / DIAG_COLUMNS;
  int r = 0, first_of_strip = 0;
  while (first_of_strip + (column_tiles - r * DIAG_ROWS) <= (int)blockIdx.x) first_of_strip += column_tiles - DIAG_ROWS * r++;
  const int bk = r * DIAG_ROWS + (blockIdx.x - first_of_strip);
  const int i0 = r * DIAG_TILE_ROWS, k0 = bk * DIAG_COLUMNS;

  // The clamp of 16 log2 d that keeps every power of the block's exponents in range.
  const int block_j0 = blockIdx.y * (DIAG_WARPS * JT);
  const int block_count = min(DIAG_WARPS * JT, exponents - block_j0);
  const double limit = DIAG_LOG_LIMIT(largest_exponent(alpha, block_j0, block_count));
  // Pairs that do not count (k <= i, k past the window) take the clamp's lowest log: their
  // powers are below 2^-1022 (straight_math.cuh), an absolute error under 1e-307 in the row
  // sums; the column sums past the window are dropped.
  for (int p = t; p < DIAG_TILE_ROWS * DIAG_COLUMNS; p += BLOCK) {
    const int i = i0 + p / DIAG_COLUMNS, k = k0 + p % DIAG_COLUMNS;
    log16[p] = k > i && k < w ? DIAG_LOG(fabs(x[k] - x[i]), limit) : -limit;
  }
  __syncthreads();

  const int j0 = block_j0 + warp * JT;
  const int count = min(JT, exponents - j0);
  if (count <= 0) return;  // a short last line of exponents: nothing for this warp
  // Past the last exponent: the group's first, whose sums are computed and dropped (it stays
  // within the clamp's a_max).
  double a[JT];
#pragma unroll
  for (int jj = 0; jj < JT; ++jj) a[jj] = alpha[j0 + (jj < count ? jj : 0)];
  double row[DIAG_ROWS][JT], column[JT];
#pragma unroll
  for (int jj = 0; jj < JT; ++jj) {
    column[jj] = 0;
#pragma unroll
    for (int h = 0; h < DIAG_ROWS; ++h) row[h][jj] = 0;
  }
  const double* my_rows = log16 + lane * DIAG_COLUMNS;
  const int next_lane = (lane + 1) % 32;
#pragma unroll 1
  for (int s = 0; s < DIAG_COLUMNS; ++s) {
    double l16[DIAG_ROWS];
#pragma unroll
    for (int h = 0; h < DIAG_ROWS; ++h) l16[h] = my_rows[h * 32 * DIAG_COLUMNS + (lane + s) % DIAG_COLUMNS];
    // The product of the table's entry and the polynomial is fused into both adds: one FP64
    // operation fewer per term than rounding the power first, and one rounding fewer.
#pragma unroll
    for (int jj = 0; jj < JT; ++jj)
#pragma unroll
      for (int h = 0; h < DIAG_ROWS; ++h) {
        const StraightPowerParts term = DIAG_POWER_PARTS(a[jj], l16[h]);
        row[h][jj] = fma(term.scale, term.poly, row[h][jj]);
        column[jj] = fma(term.scale, term.poly, column[jj]);
      }
    // Lane l takes column (l + s + 1) % 32 next, which lane l + 1 holds now. After the last step
    // no shuffle: lane l holds column (l + 31) % 32.
    if (s + 1 < DIAG_COLUMNS) {
#pragma unroll
      for (int jj = 0; jj < JT; ++jj) column[jj] = __shfl_sync(FULL_MASK, column[jj], next_lane);
    }
  }
  const int k = k0 + (lane + DIAG_COLUMNS - 1) % DIAG_COLUMNS;
#pragma unroll
  for (int jj = 0; jj < JT; ++jj) {
    if (jj >= count) break;
#pragma unroll
    for (int h = 0; h < DIAG_ROWS; ++h)
      if (i0 + lane + 32 * h < w) atomicAdd(&plus[(long long)(j0 + jj) * w + i0 + lane + 32 * h], row[h][jj]);
    if (k < w) atomicAdd(&minus[(long long)(j0 + jj) * w + k], column[jj]);
  }
}

#else
// ---- tile and line maps: groups of lanes, each owning one i and JT exponents --------------------

// The ladder's test for evenly spaced exponents: each may sit this far (relative) from the line
// through the first and last of its group (tile) or line (line map): a few roundings of a grid
// like 1.5 + j * 0.025. The tolerance (kernels/powersum.cpp) accounts for it.
#define LADDER_SLACK (4 * 2.220446049250313e-16)
#define LADDER_CHAINS 4  // independent multiply chains in the ladder

// A run of exponents (a group, or the line map's line), and for the ladder whether they are
// evenly spaced (a0 + jj * step). The same for every thread of the block (they share
// blockIdx.y), so branching on it never diverges.
struct Exponents {
  int count;  // exponents of this run that exist
#if CUTUNE_TERM == 2
  // The ladder needs only the line; its fallback reads the exponents from memory, so that the
  // registers go to the JT accumulators.
  const double* __restrict__ alpha;  // the run's first
  double a0, step;
  bool even;
  __device__ __forceinline__ double at(int jj) const { return jj < count ? alpha[jj] : 1.0; }
  // The JT exponents starting `offset` into this run (a line map warp's group).
  __device__ __forceinline__ Exponents part(int offset) const {
    Exponents e = *this;
    e.count = min(JT, count - offset);
    e.alpha = alpha + offset;
    e.a0 = a0 + offset * step;
    return e;
  }
#else
  double a[JT];  // past the last exponent: 1.0, whose sums are computed and dropped
#if CUTUNE_TERM == 3
  double log16_limit;  // the clamp of 16 log2 d for these exponents (straight_log16)
#endif
  __device__ __forceinline__ double at(int jj) const { return a[jj]; }
#endif
};

// The run of at most `span` exponents starting at j0. Every lane of the warp calls it: for the
// ladder, the lanes check the run's exponents together and vote. (A loop over the run, each test
// guarding the next load, was a chain of dependent loads: a fifth of a small window's time, the
// first of them from DRAM.)
__device__ __forceinline__ Exponents run_of_exponents(const double* __restrict__ alpha, int j0, int exponents, int span) {
  Exponents e;
  e.count = min(span, exponents - j0);
#if CUTUNE_TERM == 2
  e.alpha = alpha + j0;
  e.a0 = alpha[j0];
  e.step = e.count > 1 ? (alpha[j0 + e.count - 1] - e.a0) / (e.count - 1) : 0.0;
  bool even = true;
  for (int jj = threadIdx.x % 32; jj < e.count; jj += 32) {
    const double a = alpha[j0 + jj];
    even &= fabs(a - (e.a0 + jj * e.step)) <= LADDER_SLACK * a;
  }
  e.even = __all_sync(FULL_MASK, even);
#else
#pragma unroll
  for (int jj = 0; jj < JT; ++jj) e.a[jj] = jj < e.count ? alpha[j0 + jj] : 1.0;
#if CUTUNE_TERM == 3
  double a_max = 1.0;
#pragma unroll
  for (int jj = 0; jj < JT; ++jj) a_max = fmax(a_max, e.a[jj]);
  e.log16_limit = straight_log16_limit(a_max);
#endif
#endif
  return e;
}

// Adds exp(a log d) for the group's exponents to acc (exact for d = 0: exp(-inf) = 0). CUDA's
// exp, not straight_exp: JT straight-line exponentials interleave and hold registers (as the
// ladder's fallback, the tile map at JT = 32 went from 127 to 168 registers and JT = 80 spilled),
// and the sym map's explog measured slower with them (H200: 56.9 against 50.0 us at w = 500).
__device__ __forceinline__ void explog_add(double (&acc)[JT], const Exponents& e, double log_d) {
#pragma unroll
  for (int jj = 0; jj < JT; ++jj) acc[jj] += exp(e.at(jj) * log_d);
}

#if CUTUNE_TERM == 3
// Adds 2^(a 16 log2 d / 16) = d^a for the group's exponents to acc, each product fused into its add.
__device__ __forceinline__ void tabexp_add(double (&acc)[JT], const Exponents& e, double log16_d) {
#pragma unroll
  for (int jj = 0; jj < JT; ++jj) acc[jj] = straight_power_add(acc[jj], e.at(jj), log16_d);
}
#endif

#if CUTUNE_TERM == 2
// The ladder's start for one distance d: (d^a0, d^step). d = 0 (k = i, repeated points, or no k
// at all) gives (0, 0), whose chains are zeros: 0^a = 0, and no 0 * inf.
__device__ __forceinline__ double2 ladder_start(double d, double a0, double step) {
  const bool live = d > 0;
  const double log_d = straight_log(d);
  return make_double2(live ? straight_exp(a0 * log_d) : 0.0, live ? straight_exp(step * log_d) : 0.0);
}

// Adds two distances' ladders to acc: d^(a0 + jj step) = d^a0 (d^step)^jj, from their starts
// (d^a0, d^step), as LADDER_CHAINS independent chains t[q] each (term jj = LADDER_CHAINS m + q
// is t[q] after m steps of `stride`), so that the multiplies do not wait on each other. Two
// distances at a time: their starts (logs and exponentials) are independent, so their latencies
// overlap (a lane's k loop is a chain of them, and small windows leave few warps to hide it).
__device__ __forceinline__ void ladder_add(double (&acc)[JT], double2 start1, double2 start2) {
  double t1[LADDER_CHAINS], t2[LADDER_CHAINS];
  t1[0] = start1.x;
  t2[0] = start2.x;
#pragma unroll
  for (int q = 1; q < LADDER_CHAINS; ++q) {
    t1[q] = t1[q - 1] * start1.y;
    t2[q] = t2[q - 1] * start2.y;
  }
  // ratio^LADDER_CHAINS by LADDER_CHAINS - 1 multiplies: term jj still sees at most jj
  // roundings, as the tolerance counts them.
  double stride1 = start1.y, stride2 = start2.y;
#pragma unroll
  for (int q = 1; q < LADDER_CHAINS; ++q) {
    stride1 *= start1.y;
    stride2 *= start2.y;
  }
#pragma unroll
  for (int jj = 0; jj < JT; jj += LADDER_CHAINS)
    // A short last group (80 = 32 + 32 + 16) computes its missing terms and drops them:
    // skipping them (a branch on the group's count) cost ptxas 40 more registers.
#pragma unroll
    for (int q = 0; q < LADDER_CHAINS; ++q)
      if (jj + q < JT) {
        acc[jj + q] += t1[q] + t2[q];
        t1[q] *= stride1;
        t2[q] *= stride2;
      }
}
#endif

__device__ __forceinline__ void clear_sums(double (&acc)[JT]) {
#pragma unroll
  for (int jj = 0; jj < JT; ++jj) acc[jj] = 0;
}

// Adds d^a[jj] for this lane's k in [begin, end) to acc[jj].
__device__ __forceinline__ void add_terms(const double* xs, double xi, int begin, int end, int lane_in_group,
                                          const Exponents& e, double (&acc)[JT]) {
  clear_sums(acc);
#if CUTUNE_TERM == 2
  if (e.even) {
#pragma unroll 1
    for (int k = begin + lane_in_group; k < end; k += 2 * KSPLIT) {
      const int k2 = k + KSPLIT;
      ladder_add(acc, ladder_start(fabs(xs[k] - xi), e.a0, e.step),
                 ladder_start(k2 < end ? fabs(xs[k2] - xi) : 0.0, e.a0, e.step));
    }
    return;
  }
#endif
#pragma unroll 1
  for (int k = begin + lane_in_group; k < end; k += KSPLIT) {
    const double d = fabs(xs[k] - xi);
#if CUTUNE_TERM == 0
#pragma unroll
    for (int jj = 0; jj < JT; ++jj) acc[jj] += pow(d, e.at(jj));
#elif CUTUNE_TERM == 3
    tabexp_add(acc, e, straight_log16(d, e.log16_limit));
#else
    explog_add(acc, e, log(d));
#endif
  }
}

// The groups' sums leave through shared memory, a transpose: each lane writes its accumulators
// as a row, then the lanes of a group add up the group's rows column by column. Shuffling every
// accumulator down a butterfly instead costs JT log2(KSPLIT) shuffle pairs and adds per lane, as
// much as a third of the instructions of a small window; the transpose costs about 3 JT.
// COMBINE_COLUMNS accumulators go through at a time: all JT of them (up to 32) where the buffer
// stays within 40 KiB of static shared memory, since each round is a chain of shared-memory round
// trips and a warp barrier. A row has one double of padding: an odd row length puts every 16
// consecutive rows on distinct bank pairs, for the writes and for the column reads alike.
// PowersumFamily::combine_columns() mirrors this.
__host__ __device__ constexpr int combine_columns() {
  int columns = 1;
  while (columns < JT && columns < 32) columns *= 2;
  while (columns > 8 && BLOCK * (columns + 1) * 8 > 40 * 1024) columns /= 2;
  return columns;
}
#define COMBINE_COLUMNS combine_columns()
#define COMBINE_ROW (COMBINE_COLUMNS + 1)

// rows[0] + rows[stride] + ... + rows[(N-1) stride] as a tree: log2 N dependent adds, not N.
template <int N>
__device__ __forceinline__ double tree_sum(const double* rows, int stride) {
  if constexpr (N == 1) {
    return rows[0];
  } else {
    return tree_sum<N / 2>(rows, stride) + tree_sum<N - N / 2>(rows + N / 2 * stride, stride);
  }
}

// Adds acc over the KSPLIT lanes of each group and writes the group's existing sums.
__device__ __forceinline__ void write_group_sums(double (&acc)[JT], bool active, int lane_in_group, const Exponents& e,
                                                 int j0, int w, int i, double* __restrict__ combine,
                                                 double* __restrict__ sums) {
  const int lane = threadIdx.x % 32;
  double* warp_rows = combine + (threadIdx.x - lane) * COMBINE_ROW;
  double* my_row = warp_rows + lane * COMBINE_ROW;
  // Where KSPLIT > COMBINE_COLUMNS, a column's KSPLIT rows are split between KSPLIT /
  // COMBINE_COLUMNS lanes, which then add their parts by shuffle; otherwise one lane takes whole
  // columns.
  constexpr int rows_per_lane = KSPLIT > COMBINE_COLUMNS ? COMBINE_COLUMNS : KSPLIT;
  const double* first_row =
      warp_rows + (lane - lane_in_group + (KSPLIT > COMBINE_COLUMNS ? lane_in_group / COMBINE_COLUMNS * COMBINE_COLUMNS : 0)) * COMBINE_ROW;
#pragma unroll
  for (int c0 = 0; c0 < JT; c0 += COMBINE_COLUMNS) {
    if (c0 >= e.count) break;  // uniform across the block
#pragma unroll
    for (int q = 0; q < COMBINE_COLUMNS; ++q)
      if (c0 + q < JT) my_row[q] = acc[c0 + q];
    __syncwarp();
    // With KSPLIT >= COMBINE_COLUMNS every lane takes exactly one column, so the shuffles below
    // run converged.
    for (int c = lane_in_group % COMBINE_COLUMNS; c < COMBINE_COLUMNS; c += KSPLIT) {
      double s = tree_sum<rows_per_lane>(first_row + c, COMBINE_ROW);
#pragma unroll
      for (int offset = COMBINE_COLUMNS; offset < KSPLIT; offset *= 2) s += __shfl_xor_sync(FULL_MASK, s, offset);
      if (active && lane_in_group < COMBINE_COLUMNS && c0 + c < e.count) sums[(long long)(j0 + c0 + c) * w + i] = s;
    }
    __syncwarp();  // the rows are rewritten next
  }
}

#if CUTUNE_MAP == 2
extern "C" __global__ void __launch_bounds__(BLOCK)
powersum_tile(const double* __restrict__ x, const double* __restrict__ alpha, int w, int exponents,
              double* __restrict__ minus, double* __restrict__ plus) {
  __shared__ double combine[BLOCK * COMBINE_ROW];
  const double* xs = window(x, w);
  const int i = blockIdx.x * (BLOCK / KSPLIT) + threadIdx.x / KSPLIT;
  const int lane_in_group = threadIdx.x % KSPLIT;
  // Lanes past the window still take part in combining the sums, with nothing to add.
  const bool active = i < w;
  const double xi = active ? xs[i] : 0.0;
  const int j0 = blockIdx.y * JT;
  const Exponents e = run_of_exponents(alpha, j0, exponents, JT);
  // One sum at a time (k <= i, then k > i), so only JT accumulators are live.
  double acc[JT];
  add_terms(xs, xi, 0, active ? i + 1 : 0, lane_in_group, e, acc);
  write_group_sums(acc, active, lane_in_group, e, j0, w, i, combine, minus);
  add_terms(xs, xi, i + 1, active ? w : 0, lane_in_group, e, acc);
  write_group_sums(acc, active, lane_in_group, e, j0, w, i, combine, plus);
}

#else
// ---- line map: a block per (i, line of exponents); its warps share the ladder's starts ----------
//
// In the tile map every group of JT exponents pays its own log and two exp per (i, k), as many
// instructions as a 32-term ladder. Here a block owns one i and a line of LINE_WARPS * JT evenly
// spaced exponents, and takes the window in chunks of LINE_CHUNK distances. For each chunk its
// threads first compute, once per k, d^step and every warp's start d^(a0 + g JT step) =
// d^a0 ((d^step)^JT)^g (one log, two exp, (d^step)^JT by squaring and LINE_WARPS - 1 multiplies)
// into shared memory; then warp g runs the ladder for exponents g JT .. g JT + JT - 1 of the line
// over the chunk. The ladder loop holds no log or exp, so it needs fewer registers than the tile
// map's, and the chunks bound the shared memory whatever the window. A line that is not evenly
// spaced keeps log d per k instead and takes exp(a log d) per term.

#define LINE_WARPS (BLOCK / 32)
// Distances per chunk (PowersumFamily::kLineChunk): the study's window of 500 in one chunk, so
// two barriers. On an H200 at w = 500 the best line config took 0.0132 ms with chunks of 256,
// 0.0125 with 512 and 0.0152 with 1024 (whose shared memory leaves fewer blocks per SM).
#define LINE_CHUNK 512
static_assert(CUTUNE_TERM == 2 && KSPLIT == 32, "the line map runs the ladder, a warp's lanes splitting k");

// base^exponent by squaring: floor(log2 n) + popcount(n) - 1 roundings for exponent n (the
// tolerance counts them).
__device__ __forceinline__ double power(double base, int exponent) {
  double result = 1.0;
  for (int m = exponent; m > 0; m >>= 1) {  // a compile-time constant here: unrolled
    if (m & 1) result *= base;
    base *= base;
  }
  return result;
}

// Adds the terms of this lane's k in [begin, end) of the chunk starting at c0 to warp `group`'s
// accumulators, from the chunk's starts and ratios (or logs, off the ladder).
__device__ __forceinline__ void line_add_terms(const double* starts, const double* ratios, int c0, int begin, int end,
                                               int lane, const Exponents& e, double (&acc)[JT]) {
  if (e.even) {
#pragma unroll 1
    for (int k = begin + lane; k < end; k += 64) {
      const int k2 = k + 32;
      ladder_add(acc, make_double2(starts[k - c0], ratios[k - c0]),
                 k2 < end ? make_double2(starts[k2 - c0], ratios[k2 - c0]) : make_double2(0.0, 0.0));
    }
    return;
  }
#pragma unroll 1
  for (int k = begin + lane; k < end; k += 32) explog_add(acc, e, ratios[k - c0]);
}

extern "C" __global__ void __launch_bounds__(BLOCK)
powersum_line(const double* __restrict__ x, const double* __restrict__ alpha, int w, int exponents,
              double* __restrict__ minus, double* __restrict__ plus) {
  __shared__ double combine[BLOCK * COMBINE_ROW];
  // Per k of the chunk: d^step (or log d off the ladder), then each warp's start.
  double* ratios = reinterpret_cast<double*>(dynamic_shared);
  double* starts = ratios + LINE_CHUNK;  // [LINE_WARPS][LINE_CHUNK]
  const int i = blockIdx.x;
  const int line0 = blockIdx.y * (LINE_WARPS * JT);
  const double xi = x[i];
  const Exponents line = run_of_exponents(alpha, line0, exponents, LINE_WARPS * JT);
  const int lane = threadIdx.x % 32;
  const int group = threadIdx.x / 32;
  const int offset = group * JT;
  // A short last line leaves trailing warps nothing to sum; they still compute starts.
  const bool has_exponents = offset < line.count;
  const Exponents e = line.part(has_exponents ? offset : 0);
  const int j0 = line0 + offset;
  // One sum at a time (k <= i, then k > i), so only JT accumulators are live.
  double acc[JT];
  clear_sums(acc);
  for (int c0 = 0; c0 < w; c0 += LINE_CHUNK) {
    const int c1 = min(c0 + LINE_CHUNK, w);
    __syncthreads();  // every warp is done with the previous chunk
#pragma unroll 2
    for (int k = c0 + threadIdx.x; k < c1; k += BLOCK) {
      const double d = fabs(x[k] - xi);
      if (line.even) {
        const double2 start = ladder_start(d, line.a0, line.step);
        const double stride = power(start.y, JT);
        ratios[k - c0] = start.y;
        double s = start.x;
#pragma unroll
        for (int g = 0; g < LINE_WARPS; ++g) {
          starts[g * LINE_CHUNK + k - c0] = s;
          s *= stride;
        }
      } else {
        ratios[k - c0] = straight_log(d);
      }
    }
    __syncthreads();
    if (!has_exponents) continue;
    const double* my_starts = starts + group * LINE_CHUNK;
    line_add_terms(my_starts, ratios, c0, c0, min(c1, i + 1), lane, e, acc);
    if (c0 <= i && i < c1) {  // the minus sums are complete
      write_group_sums(acc, true, lane, e, j0, w, i, combine, minus);
      clear_sums(acc);
    }
    line_add_terms(my_starts, ratios, c0, max(c0, i + 1), c1, lane, e, acc);
  }
  if (has_exponents) write_group_sums(acc, true, lane, e, j0, w, i, combine, plus);
}
#endif
#endif
