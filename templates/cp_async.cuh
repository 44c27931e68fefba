// cp.async (sm_80 and newer): copies from global to shared memory that bypass registers, in
// groups that a thread commits and later waits for. The families whose kernels use them
// (matmul's warptile, avgmatvec's cp forms) place this file in front of their template
// (Family::template_headers). Functions that a config never calls emit no code, so a template
// that includes this file still compiles for older architectures.

__device__ __forceinline__ unsigned shared_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// 16 bytes from global memory to shared address `dst`, or 16 zero bytes where !inside (nothing is
// read then; the source is a valid address all the same). Both must be 16-byte aligned.
__device__ __forceinline__ void copy16(unsigned dst, const float* src, bool inside) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(inside ? 16 : 0));
}

// 4 bytes, or a zero: for rows that are not 16-byte aligned, and to transpose.
__device__ __forceinline__ void copy4(unsigned dst, const float* src, bool inside) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src), "r"(inside ? 4 : 0));
}

// The same copies with no zero fill, for copies known to lie inside the source: no predicate, no
// select of a safe source address.
__device__ __forceinline__ void copy16_inside(unsigned dst, const float* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src));
}

__device__ __forceinline__ void copy4_inside(unsigned dst, const float* src) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(dst), "l"(src));
}

// Closes this thread's group of copies issued since the last commit (an empty group if none).
__device__ __forceinline__ void commit_copies() { asm volatile("cp.async.commit_group;\n" ::); }

// Waits until at most N of this thread's committed groups are still in flight.
template <int N>
__device__ __forceinline__ void wait_copies() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}
