// Powersum family: the sums of the power-law maximum-likelihood study. For a window of w sorted
// points x and A exponents alpha > 0, in double:
//
//   minus[j*w + i] = sum over k <= i of |x[k] - x[i]|^alpha[j]   (the k = i term is 0^alpha = 0)
//   plus [j*w + i] = sum over k >  i of (x[k] - x[i])^alpha[j]
//
// The cost is the w*w*A powers; everything else is bookkeeping around them.
//
// Compile-time parameters (-D definitions):
//   CUTUNE_MAP     how (i, j) pairs map to blocks:
//                  0 pair: one block per (i, j), its threads split k, a shared-memory tree adds
//                    them up (the study's layout)
//                  1 exponent: one block per j looping over i, same tree per i
//                  2 tile: groups of KSPLIT consecutive lanes own one i and JT exponents; the
//                    lanes split k and combine by warp shuffle; a block holds BLOCK/KSPLIT groups
//                  3 sym: |x[k] - x[i]|^alpha is symmetric, so each pair k > i is computed once:
//                    a block takes a 32 x 32 tile of pairs above the diagonal and JT exponents,
//                    adds its rows into plus[i] and its columns into minus[k] with double
//                    atomics (the plan zeroes both first). The k = i terms are 0^alpha = 0.
//   CUTUNE_BLOCK   threads per block (power of two, >= 64)
//   CUTUNE_FOLD    tree maps: the fold stops at stride FOLD and thread 0 adds the remaining
//                  2*FOLD partial sums serially (1: a full tree)
//   CUTUNE_STAGE   0: read x from global memory; 1: the block first copies the window into
//                  shared memory (w doubles of dynamic shared memory)
//   CUTUNE_KSPLIT  tile map: lanes per group (1, 2, 4, …, 32)
//   CUTUNE_JT      tile map: exponents per group
//   CUTUNE_TERM    0: pow(d, alpha) per term; 1: exp(alpha * log d), log d computed once per
//                  (i, k) and shared by the group's JT exponents (exact for d = 0 since alpha > 0:
//                  log 0 = -inf, exp(-inf) = 0)
//                  2 (tile map) ladder: where the group's exponents are evenly spaced, as an MLE
//                  scan's candidate grid is, d^(a0 + jj step) = d^a0 (d^step)^jj: two exp and
//                  JT - 1 multiplies per (i, k) instead of JT exp. Exponents that are not evenly
//                  spaced (checked per group at run time) take the explog path.

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
  __shared__ double pair[SYM_TILE][SYM_TILE + 1];  // |x_k - x_i|, or its log for explog
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
  __syncthreads();
  // Distances (and logs) once per pair, shared by the block's exponents.
  for (int p = t; p < SYM_TILE * SYM_TILE; p += BLOCK) {
    const int r = p / SYM_TILE, c = p % SYM_TILE;
    const double d = fabs(xk[c] - xi[r]);
    pair[r][c] = CUTUNE_TERM == 1 ? log(d) : d;
  }
  __syncthreads();

  for (int jj = 0; jj < JT; ++jj) {
    const int j = blockIdx.y * JT + jj;
    if (j >= exponents) break;  // uniform across the block
    const double a = alpha[j];
    for (int p = t; p < SYM_TILE * SYM_TILE; p += BLOCK) {
      const int r = p / SYM_TILE, c = p % SYM_TILE;
      const bool counted = k0 + c > i0 + r && k0 + c < w;  // above the diagonal, inside the window
      term[r][c] = counted ? (CUTUNE_TERM == 1 ? exp(a * pair[r][c]) : pow(pair[r][c], a)) : 0.0;
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

#else
// ---- tile map: groups of lanes, each owning one i and JT exponents ------------------------------

// The ladder's test for evenly spaced exponents: each may sit this far (relative) from the line
// through the group's first and last: a few roundings of a grid like 1.5 + j * 0.025. The
// tolerance (kernels/powersum.cpp) accounts for it.
#define LADDER_SLACK (4 * 2.220446049250313e-16)
#define LADDER_CHAINS 4  // independent multiply chains in the ladder

// The group's exponents, and for the ladder whether they are evenly spaced (a0 + jj * step). The
// same for every thread of the block (they share blockIdx.y), so branching on it never diverges.
struct Exponents {
  int count;  // exponents of this group that exist
#if CUTUNE_TERM == 2
  // The ladder needs only the line; its fallback reads the exponents from memory, so that the
  // registers go to the JT accumulators.
  const double* __restrict__ alpha;  // the group's first
  double a0, step;
  bool even;
  __device__ __forceinline__ double at(int jj) const { return jj < count ? alpha[jj] : 1.0; }
#else
  double a[JT];  // past the last exponent: 1.0, whose sums are computed and dropped
  __device__ __forceinline__ double at(int jj) const { return a[jj]; }
#endif
};

__device__ __forceinline__ Exponents group_exponents(const double* __restrict__ alpha, int j0, int exponents) {
  Exponents e;
  e.count = min(JT, exponents - j0);
#if CUTUNE_TERM == 2
  e.alpha = alpha + j0;
  e.a0 = alpha[j0];
  e.step = e.count > 1 ? (alpha[j0 + e.count - 1] - e.a0) / (e.count - 1) : 0.0;
  e.even = true;
  for (int jj = 1; jj < e.count; ++jj)
    e.even = e.even && fabs(alpha[j0 + jj] - (e.a0 + jj * e.step)) <= LADDER_SLACK * alpha[j0 + jj];
#else
#pragma unroll
  for (int jj = 0; jj < JT; ++jj) e.a[jj] = jj < e.count ? alpha[j0 + jj] : 1.0;
#endif
  return e;
}

#if CUTUNE_TERM == 2
// The ladder's chains for one distance d: d^(a0 + jj step) = d^a0 (d^step)^jj as LADDER_CHAINS
// independent chains t[q] (term jj = LADDER_CHAINS m + q is t[q] after m steps of `stride`), so
// that the multiplies do not wait on each other. d = 0 (k = i, repeated points, or no k at all)
// gives chains of zeros: 0^a = 0, and no 0 * inf.
__device__ __forceinline__ void ladder_start(double d, const Exponents& e, double (&t)[LADDER_CHAINS], double& stride) {
  const bool live = d > 0;
  const double log_d = log(d);
  const double ratio = live ? exp(e.step * log_d) : 0.0;
  t[0] = live ? exp(e.a0 * log_d) : 0.0;
#pragma unroll
  for (int q = 1; q < LADDER_CHAINS; ++q) t[q] = t[q - 1] * ratio;
  // ratio^LADDER_CHAINS by LADDER_CHAINS - 1 multiplies: term jj still sees at most jj
  // roundings, as the tolerance counts them.
  stride = ratio;
#pragma unroll
  for (int q = 1; q < LADDER_CHAINS; ++q) stride *= ratio;
}
#endif

// Adds d^a[jj] for this lane's k in [begin, end) to acc[jj].
__device__ __forceinline__ void add_terms(const double* xs, double xi, int begin, int end, int lane_in_group,
                                          const Exponents& e, double (&acc)[JT]) {
#pragma unroll
  for (int jj = 0; jj < JT; ++jj) acc[jj] = 0;
#if CUTUNE_TERM == 2
  if (e.even) {
    // Two k per iteration: their logs and exponentials are independent, so their latencies
    // overlap (a lane's k loop is a chain of them, and small windows leave few warps to hide it).
#pragma unroll 1
    for (int k = begin + lane_in_group; k < end; k += 2 * KSPLIT) {
      double t1[LADDER_CHAINS], t2[LADDER_CHAINS], stride1, stride2;
      ladder_start(fabs(xs[k] - xi), e, t1, stride1);
      const int k2 = k + KSPLIT;
      ladder_start(k2 < end ? fabs(xs[k2] - xi) : 0.0, e, t2, stride2);
#pragma unroll
      for (int jj = 0; jj < JT; jj += LADDER_CHAINS)
#pragma unroll
        for (int q = 0; q < LADDER_CHAINS; ++q)
          if (jj + q < JT) {
            acc[jj + q] += t1[q] + t2[q];
            t1[q] *= stride1;
            t2[q] *= stride2;
          }
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
#else
    // exp(a log d), log d shared by the group's exponents (exact for d = 0: exp(-inf) = 0).
    const double log_d = log(d);
#pragma unroll
    for (int jj = 0; jj < JT; ++jj) acc[jj] += exp(e.at(jj) * log_d);
#endif
  }
}

// Sums acc over the KSPLIT lanes of each group, and lane 0 of the group writes the existing ones.
__device__ __forceinline__ void write_group_sums(double (&acc)[JT], bool active, int lane_in_group, const Exponents& e,
                                                 int j0, int w, int i, double* __restrict__ sums) {
#pragma unroll
  for (int offset = KSPLIT / 2; offset > 0; offset >>= 1)
#pragma unroll
    for (int jj = 0; jj < JT; ++jj) acc[jj] += __shfl_xor_sync(FULL_MASK, acc[jj], offset);
  if (active && lane_in_group == 0)
#pragma unroll
    for (int jj = 0; jj < JT; ++jj)
      if (jj < e.count) sums[(long long)(j0 + jj) * w + i] = acc[jj];
}

extern "C" __global__ void __launch_bounds__(BLOCK)
powersum_tile(const double* __restrict__ x, const double* __restrict__ alpha, int w, int exponents,
              double* __restrict__ minus, double* __restrict__ plus) {
  const double* xs = window(x, w);
  const int i = blockIdx.x * (BLOCK / KSPLIT) + threadIdx.x / KSPLIT;
  const int lane_in_group = threadIdx.x % KSPLIT;
  const int j0 = blockIdx.y * JT;
  const Exponents e = group_exponents(alpha, j0, exponents);
  // Lanes past the window still take part in the shuffles, with nothing to add.
  const bool active = i < w;
  const double xi = active ? xs[i] : 0.0;
  // One sum at a time (k <= i, then k > i), so only JT accumulators are live.
  double acc[JT];
  add_terms(xs, xi, 0, active ? i + 1 : 0, lane_in_group, e, acc);
  write_group_sums(acc, active, lane_in_group, e, j0, w, i, minus);
  add_terms(xs, xi, i + 1, active ? w : 0, lane_in_group, e, acc);
  write_group_sums(acc, active, lane_in_group, e, j0, w, i, plus);
}
#endif
