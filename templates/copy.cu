// Copy family: the coalescing probe of the CUDA C++ Best Practices Guide (offsetCopy, strideCopy).
//
//   out[i] = in[offset + i * stride],  i < n
//
// Reads are shifted by `offset` elements or strided by `stride`; writes are always dense and
// aligned, so what the probe measures is the cost of the read pattern. The aligned dense copy
// (offset 0, stride 1) is the device's copy-bandwidth ceiling for a kernel.
//
// Compile-time parameters:
//   CUTUNE_T      element type (float)
//   CUTUNE_BLOCK  threads per block
//   CUTUNE_EPT    elements per thread: a block copies one tile of BLOCK*EPT elements
//   CUTUNE_VEC    elements per vector access (1, 2, 4); CUTUNE_EPT % CUTUNE_VEC == 0
//
// Each thread issues all its loads of a tile before its first store. Vector accesses need an
// aligned dense source; with an odd offset or a stride, and in the partial last tile, a thread
// moves elements j*BLOCK + threadIdx.x instead (consecutive threads, consecutive elements), so
// loads and stores stay coalesced element by element.

typedef CUTUNE_T value_t;

#define BLOCK CUTUNE_BLOCK
#define EPT CUTUNE_EPT
#define VEC CUTUNE_VEC
#define TILE (BLOCK * EPT)
#define LOADS (EPT / VEC)

static_assert(EPT % VEC == 0, "elements per thread must be a multiple of the vector width");

template <int W> struct vec_of { struct __align__(W * sizeof(value_t)) type { value_t v[W]; }; };
template <> struct vec_of<1> { struct type { value_t v[1]; }; };
typedef typename vec_of<VEC>::type vector_t;

extern "C" __global__ void __launch_bounds__(BLOCK)
copy_kernel(const value_t* __restrict__ in, long long offset, long long stride, long long n, value_t* __restrict__ out) {
  const long long first = (long long)blockIdx.x * TILE;
  const value_t* source = in + offset;
  const bool dense_aligned = stride == 1 && ((unsigned long long)source % sizeof(vector_t)) == 0;
  if (dense_aligned && first + TILE <= n) {
    // Vector j of this thread is the tile's vector j*BLOCK + threadIdx.x.
    const vector_t* src = reinterpret_cast<const vector_t*>(source + first) + threadIdx.x;
    vector_t* dst = reinterpret_cast<vector_t*>(out + first) + threadIdx.x;
    vector_t v[LOADS];
#pragma unroll
    for (int j = 0; j < LOADS; ++j) v[j] = src[j * BLOCK];
#pragma unroll
    for (int j = 0; j < LOADS; ++j) dst[j * BLOCK] = v[j];
  } else {
    value_t v[EPT];
#pragma unroll
    for (int j = 0; j < EPT; ++j) {
      const long long i = first + (long long)j * BLOCK + threadIdx.x;
      if (i < n) v[j] = source[i * stride];
    }
#pragma unroll
    for (int j = 0; j < EPT; ++j) {
      const long long i = first + (long long)j * BLOCK + threadIdx.x;
      if (i < n) out[i] = v[j];
    }
  }
}
