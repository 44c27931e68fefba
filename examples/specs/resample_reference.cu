// The resample spec's reference: one thread per window, its points in order, with the operator as
// a run-time argument (0 sum, 1 min, 2 max; divide = 1 turns the sum into a mean).
typedef CUTUNE_T value_t;

extern "C" __global__ void resample_reference(const value_t* in, long long points, int window, unsigned per_series,
                                              unsigned windows, int op, int divide, value_t* out) {
  const unsigned g = blockIdx.x * blockDim.x + threadIdx.x;
  if (g >= windows) return;
  const unsigned s = g / per_series, w = g - s * per_series;
  const long long start = (long long)s * points + (long long)w * window;
  const long long left = points - (long long)w * window;
  const int count = (int)(left < window ? left : window);
  value_t acc = in[start];
  for (int k = 1; k < count; ++k) {
    const value_t v = in[start + k];
    acc = op == 0 ? acc + v : op == 1 ? (v < acc ? v : acc) : (v > acc ? v : acc);
  }
  out[g] = divide ? acc / (value_t)count : acc;
}
