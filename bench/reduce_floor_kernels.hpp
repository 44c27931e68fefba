#pragma once
// The probe kernels of bench_reduce_floor (reduce_floor.cpp says what they are for). nvcc
// compiles them on their own; the declarations are plain C++.
#include <cuda_runtime.h>

namespace cutune::bench {

constexpr int kFloorElements = 1 << 20;  // the size whose 1.5x target the probe is about

void launch_empty(cudaStream_t stream);
// A one-pass sum of kFloorElements floats into *out with one atomicAdd a block (1024 threads, 16
// floats each as float4): the shape the tuner picks at 2^20. *out must start at 0 for a correct sum.
void launch_one_pass_sum(const float* in, float* out, cudaStream_t stream);
// The same sum by a single thread block cluster of 8 or 16 blocks: the blocks add their partial
// sums in the first block's shared memory behind the cluster barrier, so *out needs no
// initialisation and no atomics. Call allow_cluster_of_16() once before asking for 16.
void launch_cluster_sum(int cluster_blocks, const float* in, float* out, cudaStream_t stream);
cudaError_t allow_cluster_of_16();

}  // namespace cutune::bench
