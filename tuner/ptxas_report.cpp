#include "ptxas_report.hpp"

#include <regex>
#include <sstream>

namespace cutune {
namespace {

// "ptxas info    : Compiling entry function '_Z1kILi64EEvPf' for 'sm_90'"
const std::regex kEntry(R"(^ptxas info\s*: Compiling entry function '([^']+)')");
// "ptxas info    : Function properties for _Z1fPf"
const std::regex kProperties(R"(^ptxas info\s*: Function properties for (\S+))");
// "ptxas         .     256 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads"
const std::regex kFrame(R"(^ptxas\s+\.\s+(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
// "ptxas info    : Used 72 registers, used 0 barriers, …"
const std::regex kRegisters(R"(^ptxas info\s*: Used (\d+) registers)");
// Any other informational line of ptxas: gmem, compile time, cmem, …
const std::regex kInformation(R"(^ptxas(\s+info\s*:|\s+\.))");

}  // namespace

PtxasReport parse_ptxas_report(const std::string& log) {
  PtxasReport report;
  std::istringstream lines(log);
  std::string line, entry, properties_of;
  std::smatch m;
  while (std::getline(lines, line)) {
    if (std::regex_search(line, m, kEntry)) {
      entry = m[1];
      report.functions[entry];
    } else if (std::regex_search(line, m, kProperties)) {
      properties_of = m[1];
    } else if (std::regex_search(line, m, kFrame) && !properties_of.empty()) {
      PtxasFunction& f = report.functions[properties_of];
      f.stack_frame_bytes = std::stoll(m[1]);
      f.spill_store_bytes = std::stoll(m[2]);
      f.spill_load_bytes = std::stoll(m[3]);
      properties_of.clear();
    } else if (std::regex_search(line, m, kRegisters) && !entry.empty()) {
      report.functions[entry].registers = std::stoll(m[1]);
    } else if (!std::regex_search(line, kInformation)) {
      report.warnings += line;
      report.warnings += '\n';
    }
  }
  while (!report.warnings.empty() && (report.warnings.back() == '\n' || report.warnings.back() == ' '))
    report.warnings.pop_back();
  return report;
}

}  // namespace cutune
