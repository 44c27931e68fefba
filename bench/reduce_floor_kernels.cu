#include <cooperative_groups.h>

#include "reduce_floor_kernels.hpp"

namespace cutune::bench {
namespace {

constexpr int kBlock = 1024;

__global__ void empty_kernel() {}

// A block's threads' sums, added by shuffles and one shared-memory round; valid in thread 0.
__device__ float block_sum(float s) {
  for (int offset = 16; offset > 0; offset /= 2) s += __shfl_xor_sync(0xffffffffu, s, offset);
  __shared__ float warp_sums[kBlock / 32];
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = s;
  __syncthreads();
  s = threadIdx.x < 32 ? warp_sums[threadIdx.x] : 0.0f;
  if (threadIdx.x < 32)
    for (int offset = 16; offset > 0; offset /= 2) s += __shfl_xor_sync(0xffffffffu, s, offset);
  return s;
}

constexpr int kVectorsPerThread = 4;  // float4 each: 16 floats a thread

__global__ void __launch_bounds__(kBlock) one_pass_sum(const float4* __restrict__ in, float* out, int vectors) {
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
  s = block_sum(s);
  if (threadIdx.x == 0) atomicAdd(out, s);
}

template <int kClusterBlocks>
__global__ void __cluster_dims__(kClusterBlocks, 1, 1) __launch_bounds__(kBlock)
    cluster_sum(const float4* __restrict__ in, float* out) {
  constexpr int kPerThread = kFloorElements / 4 / kClusterBlocks / kBlock;
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
  s = block_sum(s);
  __shared__ float block_sums[kClusterBlocks];
  if (threadIdx.x == 0) *cluster.map_shared_rank(&block_sums[cluster.block_rank()], 0) = s;
  cluster.sync();
  if (cluster.block_rank() == 0 && threadIdx.x == 0) {
    float total = 0;
    for (int b = 0; b < kClusterBlocks; ++b) total += block_sums[b];
    *out = total;
  }
}

}  // namespace

void launch_empty(cudaStream_t stream) { empty_kernel<<<1, 32, 0, stream>>>(); }

void launch_one_pass_sum(const float* in, float* out, cudaStream_t stream) {
  const int vectors = kFloorElements / 4;
  const int blocks = (vectors + kBlock * kVectorsPerThread - 1) / (kBlock * kVectorsPerThread);
  one_pass_sum<<<blocks, kBlock, 0, stream>>>(reinterpret_cast<const float4*>(in), out, vectors);
}

void launch_cluster_sum(int cluster_blocks, const float* in, float* out, cudaStream_t stream) {
  const auto* vectors = reinterpret_cast<const float4*>(in);
  if (cluster_blocks == 16)
    cluster_sum<16><<<16, kBlock, 0, stream>>>(vectors, out);
  else
    cluster_sum<8><<<8, kBlock, 0, stream>>>(vectors, out);
}

cudaError_t allow_cluster_of_16() {
  return cudaFuncSetAttribute(cluster_sum<16>, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
}

}  // namespace cutune::bench
