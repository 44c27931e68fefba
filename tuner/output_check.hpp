#pragma once
// Output verification on the GPU. A family whose compare() is a set of element-wise rules
// (Family::output_rules) has its expected outputs kept on the device; after a verified run one
// kernel per output reads expected and actual side by side and raises two flags: "some byte
// differs" and "a checked element breaks its rule". Only those 16 bytes come back. The outputs pass
// when no byte differs or no rule is broken — exactly what the CPU path decides (outputs_pass in
// kernels/verify.hpp is the same rule on the host, and tests hold the two together). A mismatch is
// then described by the CPU path, which copies the outputs back: wrong configs are rare, and their
// messages and first bad indexes stay the family's own.
//
// At 2^27 scan elements this replaces two 1 GiB copies and a CPU comparison per config with a
// kernel that reads 2 GiB at device bandwidth.
#include <memory>
#include <string>
#include <vector>

#include "device.hpp"
#include "family.hpp"

namespace cutune {

// The comparison kernels' CUDA source (compiled by the checker; a CPU test compiles it too).
const char* output_check_source();

class OutputChecker {
 public:
  // Compiles the comparison kernels for the current context's device (NVRTC, once per process:
  // see shared_for).
  explicit OutputChecker(const std::string& arch);
  OutputChecker(const OutputChecker&) = delete;  // owns a module and a flag buffer
  OutputChecker& operator=(const OutputChecker&) = delete;

  // The process's checker for `arch`, compiled on first use.
  static OutputChecker& shared_for(const std::string& arch);

  struct Output {
    const OutputRule* rule;
    CUdeviceptr expected, actual;
    std::int64_t elements;
  };

  // Runs the comparisons on `stream` and waits for them. True when the outputs pass.
  bool passes(const std::vector<Output>& outputs, CUstream stream);

 private:
  std::unique_ptr<Module> module_;
  DeviceBuffer flags_;  // [0] some byte differs, [1] a checked element breaks its rule
  int blocks_ = 0;
};

}  // namespace cutune
