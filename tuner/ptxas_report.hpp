#pragma once
// What ptxas says of each function it compiled (NVRTC passes it --ptxas-options=-v, compile.cpp):
// registers, stack frame and spills. The driver's function attributes give registers and local
// memory of a loaded kernel, but not its spills; this report is where they are.
//
// NVRTC 12.9 and later keep a cache of their own, and a compile answered from it has no report
// (measured: NVRTC 13.0, driver 580, the second identical compile's log was empty); compile() turns
// that cache off. Where a log has no report all the same, spills stay unknown, never 0.
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
