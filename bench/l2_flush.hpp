#pragma once
// A clean L2 flush, for probes that compare it with the tuner's dirty one (a memset of 2x L2):
// reading 2x L2 evicts everything else and leaves only clean lines, so a kernel's reads after it
// cause no write-backs. nvcc compiles the kernel; the declaration is plain C++.
#include <cuda_runtime.h>

#include <cstddef>

namespace cutune::bench {

// Reads every int of `buffer` (`bytes` long, a multiple of 8, one memset byte throughout) on `stream`.
void read_through(const void* buffer, std::size_t bytes, cudaStream_t stream);

}  // namespace cutune::bench
