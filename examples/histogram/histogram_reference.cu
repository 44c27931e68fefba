// The reference for histogram.cu: one thread per value, one global atomic each, the number of
// bins a run-time argument, so that it shares nothing with the tuned kernel but the element type
// (ELEMENT_TYPE, from the problem) and the definition of a bin. The plan zeroes the counts first.
typedef ELEMENT_TYPE value_t;

extern "C" __global__ void histogram_reference(const value_t* values, long long n, unsigned bins, unsigned* counts) {
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(counts + (unsigned)values[i] % bins, 1u);
}
