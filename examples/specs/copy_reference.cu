// The copy spec's reference: one thread per element, no vectors, no tiles — obviously right.
typedef CUTUNE_T value_t;

extern "C" __global__ void copy_reference(const value_t* in, long long offset, long long stride, long long n, value_t* out) {
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[offset + i * stride];
}
