// bench_reduce_floor: where the time of a float sum of 2^20 elements goes, timed the bench's way
// (an L2 flush before every sample, CUDA events around one operation, median of 300 samples).
//
// Why it exists: reduce's target of 1.5x CUB at 2^20 needs about 5.9 us, and every config of the
// family's space measures 6.3 us or more. This splits that time into what no kernel can avoid (an
// event-timed launch, the output's initialisation) and what reading 4 MiB costs, and shows the
// same for CUB. It runs each operation after two kinds of flush:
//   write: a memset of 2x L2, as the tuner and the bench flush (measure.hpp). L2 is then full of
//          dirty lines, so every line a kernel reads first evicts one, a write-back to DRAM.
//   read:  a kernel that reads 2x L2 instead, which leaves L2 clean.
// The probe kernel is a one-pass sum (1024 threads, 16 floats each as float4, a shuffle tree, one
// atomicAdd a block): the shape of the family's best configs at 2^20. It is not verified; it
// only needs to do the same memory work.
#include <cooperative_groups.h>
#include <cub/device/device_reduce.cuh>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#define CHECK(call)                                                                              \
  do {                                                                                           \
    const cudaError_t error_ = (call);                                                           \
    if (error_ != cudaSuccess) {                                                                 \
      std::fprintf(stderr, "bench_reduce_floor: %s: %s\n", #call, cudaGetErrorString(error_)); \
      std::exit(1);                                                                              \
    }                                                                                            \
  } while (0)

namespace {

constexpr int kElements = 1 << 20;
constexpr int kBlock = 1024;
constexpr int kVectorsPerThread = 4;  // float4 each: 16 floats a thread
constexpr int kSamples = 300;

__global__ void empty_kernel() {}

__global__ void __launch_bounds__(kBlock) atomic_sum(const float4* __restrict__ in, float* out, int vectors) {
  float s = 0;
  const int base = blockIdx.x * kBlock * kVectorsPerThread + threadIdx.x;
#pragma unroll
  for (int r = 0; r < kVectorsPerThread; ++r) {
    const int i = base + r * kBlock;
    if (i < vectors) {
      const float4 v = in[i];
      s += (v.x + v.y) + (v.z + v.w);
    }
  }
  for (int offset = 16; offset > 0; offset /= 2) s += __shfl_xor_sync(0xffffffffu, s, offset);
  __shared__ float warp_sums[kBlock / 32];
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = s;
  __syncthreads();
  if (threadIdx.x < 32) {
    s = warp_sums[threadIdx.x];
    for (int offset = 16; offset > 0; offset /= 2) s += __shfl_xor_sync(0xffffffffu, s, offset);
    if (threadIdx.x == 0) atomicAdd(out, s);
  }
}

// One thread block cluster reads the whole array: no output to initialise and no atomics, since
// the blocks add their partial sums in the first block's shared memory (distributed shared
// memory) behind a cluster barrier. It trades SMs (a cluster holds at most 16 blocks) for the
// initialisation.
template <int kClusterBlocks>
__global__ void __cluster_dims__(kClusterBlocks, 1, 1) __launch_bounds__(kBlock)
    cluster_sum(const float4* __restrict__ in, float* out) {
  constexpr int kVectors = kElements / 4;
  constexpr int kPerThread = kVectors / kClusterBlocks / kBlock;
  constexpr int kBatch = 8;  // loads in flight a thread
  static_assert(kPerThread % kBatch == 0, "whole batches");
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  const float4* mine = in + (long long)cluster.block_rank() * kPerThread * kBlock + threadIdx.x;
  float s = 0;
  for (int b = 0; b < kPerThread; b += kBatch) {
    float4 v[kBatch];
#pragma unroll
    for (int q = 0; q < kBatch; ++q) v[q] = mine[(b + q) * kBlock];
#pragma unroll
    for (int q = 0; q < kBatch; ++q) s += (v[q].x + v[q].y) + (v[q].z + v[q].w);
  }
  for (int offset = 16; offset > 0; offset /= 2) s += __shfl_xor_sync(0xffffffffu, s, offset);
  __shared__ float warp_sums[kBlock / 32];
  __shared__ float block_sums[kClusterBlocks];
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = s;
  __syncthreads();
  if (threadIdx.x < 32) {
    s = warp_sums[threadIdx.x];
    for (int offset = 16; offset > 0; offset /= 2) s += __shfl_xor_sync(0xffffffffu, s, offset);
    if (threadIdx.x == 0) *cluster.map_shared_rank(&block_sums[cluster.block_rank()], 0) = s;
  }
  cluster.sync();
  if (cluster.block_rank() == 0 && threadIdx.x == 0) {
    float total = 0;
    for (int b = 0; b < kClusterBlocks; ++b) total += block_sums[b];
    *out = total;
  }
}

// Reads every int of the buffer; the store never happens for the flush's data (no int equals
// the sentinel), but the compiler cannot drop the loads.
__global__ void read_flush(const int* __restrict__ buffer, long long ints, int* sink) {
  int x = 0;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < ints; i += (long long)gridDim.x * blockDim.x)
    x ^= buffer[i];
  if (x == 0x7fffffff) *sink = x;
}

struct Flush {
  int* buffer = nullptr;
  long long bytes = 0;
  int* sink = nullptr;
  explicit Flush(long long l2_bytes) : bytes(2 * l2_bytes) {
    CHECK(cudaMalloc(&buffer, bytes));
    CHECK(cudaMemset(buffer, 1, bytes));  // no int of it is the sentinel
    CHECK(cudaMalloc(&sink, sizeof(int)));
  }
  ~Flush() {
    cudaFree(buffer);
    cudaFree(sink);
  }
  void write() { CHECK(cudaMemsetAsync(buffer, 1, bytes)); }
  void read() { read_flush<<<1024, 512>>>(buffer, bytes / 4, sink); }
};

// Median event time of `op` in microseconds, each sample after a flush.
double median_us(const std::function<void()>& flush, const std::function<void()>& op) {
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  for (int w = 0; w < 10; ++w) op();  // warm-up: module load, CUB's first-call setup
  std::vector<float> samples;
  for (int s = 0; s < kSamples; ++s) {
    flush();
    CHECK(cudaEventRecord(start));
    op();
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    samples.push_back(ms);
  }
  CHECK(cudaGetLastError());
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::nth_element(samples.begin(), samples.begin() + kSamples / 2, samples.end());
  return samples[kSamples / 2] * 1000.0;
}

}  // namespace

int main() {
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  int driver = 0;
  CHECK(cudaDriverGetVersion(&driver));
  std::printf("# reduce floor at n = 2^20 float sum: %s (driver API %d), median of %d samples, us\n", prop.name, driver,
              kSamples);

  float *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, kElements * sizeof(float)));
  CHECK(cudaMalloc(&out, sizeof(float)));
  std::vector<float> host(kElements, 1.0f);
  CHECK(cudaMemcpy(in, host.data(), kElements * sizeof(float), cudaMemcpyHostToDevice));
  void* temp = nullptr;
  size_t temp_bytes = 0;
  CHECK(cub::DeviceReduce::Sum(temp, temp_bytes, in, out, kElements));
  CHECK(cudaMalloc(&temp, std::max<size_t>(temp_bytes, 1)));
  Flush flush(prop.l2CacheSize);

  const int vectors = kElements / 4;
  const int blocks = (vectors + kBlock * kVectorsPerThread - 1) / (kBlock * kVectorsPerThread);
  const auto kernel = [&] { atomic_sum<<<blocks, kBlock>>>(reinterpret_cast<const float4*>(in), out, vectors); };
  const auto memset_output = [&] { CHECK(cudaMemsetAsync(out, 0, sizeof(float))); };
  struct Row {
    const char* what;
    std::function<void()> op;
  };
  CHECK(cudaFuncSetAttribute(cluster_sum<16>, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  const std::vector<Row> rows{
      {"empty kernel", [] { empty_kernel<<<1, 32>>>(); }},
      {"memset of the 4-byte output", memset_output},
      {"one-pass sum kernel alone", kernel},
      {"memset + one-pass sum kernel", [&] { memset_output(); kernel(); }},
      {"one cluster of 8 blocks, no initialisation", [&] { cluster_sum<8><<<8, kBlock>>>(reinterpret_cast<const float4*>(in), out); }},
      {"one cluster of 16 blocks, no initialisation", [&] { cluster_sum<16><<<16, kBlock>>>(reinterpret_cast<const float4*>(in), out); }},
      {"cub::DeviceReduce::Sum", [&] { CHECK(cub::DeviceReduce::Sum(temp, temp_bytes, in, out, kElements)); }},
  };
  cluster_sum<16><<<16, kBlock>>>(reinterpret_cast<const float4*>(in), out);
  float check = 0;
  CHECK(cudaMemcpy(&check, out, sizeof check, cudaMemcpyDeviceToHost));
  std::printf("# the cluster sum of 2^20 ones: %.1f\n", check);
  std::printf("| operation | after a write flush (the bench's) | after a read flush (clean L2) |\n|---|---|---|\n");
  for (const auto& row : rows)
    std::printf("| %s | %.2f | %.2f |\n", row.what, median_us([&] { flush.write(); }, row.op),
                median_us([&] { flush.read(); }, row.op));
  cudaFree(temp);
  cudaFree(in);
  cudaFree(out);
  return 0;
}
