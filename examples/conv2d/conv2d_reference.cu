// The reference for conv2d.cu: one thread per output, the radius a run-time argument, the plain
// loops of the definition, so that it shares nothing with the tuned kernel but the element type
// (ELEMENT_TYPE, from the problem). Zero-padded "same" output: taps outside the image are
// skipped (adding their zero products would not change the sum). Filter row i ascending, then
// column j, one fma per tap.
typedef ELEMENT_TYPE value_t;

__device__ __forceinline__ float fma_of(float a, float b, float c) { return fmaf(a, b, c); }
__device__ __forceinline__ double fma_of(double a, double b, double c) { return fma(a, b, c); }

extern "C" __global__ void conv2d_reference(const value_t* image, const value_t* filter, int height, int width,
                                            int radius, value_t* output) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= width || y >= height) return;
  const int f = 2 * radius + 1;
  value_t sum = 0;
  for (int i = 0; i < f; ++i) {
    const int yy = y + i - radius;
    if (yy < 0 || yy >= height) continue;
    for (int j = 0; j < f; ++j) {
      const int xx = x + j - radius;
      if (xx < 0 || xx >= width) continue;
      sum = fma_of(filter[i * f + j], image[(long long)yy * width + xx], sum);
    }
  }
  output[(long long)y * width + x] = sum;
}
