#pragma once
// What ptxas says of each function it compiled (NVRTC passes it --ptxas-options=-v, compile.cpp):
// registers, stack frame and spills. The driver's function attributes give registers and local
// memory of a loaded kernel, but not its spills; this report is where they are.
//
// NVRTC writes no ptxas report in a process where the CUDA driver has been initialised (measured on
// NVRTC 13.0 with driver 580: after cuInit the log of the same compile is empty). Sessions compile
// in `cutune-worker --compile` processes, which never load the driver; a compile made elsewhere
// (the pool's in-process fallback, a test) leaves its spills unknown, never 0.
#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace cutune {

struct PtxasFunction {
  std::optional<std::int64_t> registers;  // entry functions only ("Used N registers")
  std::int64_t stack_frame_bytes = 0;
  std::int64_t spill_store_bytes = 0;
  std::int64_t spill_load_bytes = 0;
};

struct PtxasReport {
  std::map<std::string, PtxasFunction> functions;  // by (mangled) name, as cuModuleGetFunction takes it
  // The log without ptxas' informational lines: NVRTC's and ptxas' warnings, or '' for a clean compile.
  std::string warnings;
};

// Parses an NVRTC log. Lines it does not recognise are kept as warnings, never dropped.
PtxasReport parse_ptxas_report(const std::string& log);

}  // namespace cutune
