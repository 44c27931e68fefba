#pragma once
// Output verification on the GPU. A family whose compare() is a set of element-wise rules
// (Family::output_rules) has its expected outputs kept on the device; after a verified run one
// kernel per output reads expected and actual side by side and raises, per output, "some byte
// differs" and lowers "first broken element". Those words come back, and on a failure the two
// elements at the first break: never the outputs. The verdict and the index are exactly what the
// CPU path decides (check_outputs in kernels/verify.hpp is the same rule on the host, unit tests hold
// it to every family's compare(), and test_gpu_output_check holds this to it), and verdict_of
// words the message alike for both.
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
  // Frees every shared checker's module and buffer. A process calls it before it destroys the
  // context they live in: left to the end of the process, their destructors would run after the
  // context is gone (compute-sanitizer reported cuModuleUnload on an invalid handle at exit).
  static void release_all();

  struct Output {
    const OutputRule* rule;
    CUdeviceptr expected, actual;
    std::int64_t elements;
  };

  // Runs the comparisons on `stream` and waits for them.
  OutputCheck check(const std::vector<Output>& outputs, CUstream stream);

 private:
  std::unique_ptr<Module> module_;
  DeviceBuffer slots_;  // per output "some byte differs", then per output "first broken element"
};

}  // namespace cutune
