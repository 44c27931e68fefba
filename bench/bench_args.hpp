#pragma once
// The command line every bench program shares:
//
//   bench_X [--db PATH] [--device N] [--problem KEY]... [its own options]
//
// --problem KEY benches only the problems whose key holds every name=value of KEY ("m=4096", or
// "n=8388608,type=int32"); repeat it for several. Without it, every problem of the bench. Profiling
// a baseline needs it: without it the first launches a profiler sees are the first problem's.
#include <map>
#include <string>
#include <vector>

#include "problem.hpp"

namespace cutune::bench {

struct BenchArgs {
  std::string db_path;
  int device = 0;
  std::vector<std::string> problems;         // --problem selectors, as given
  std::map<std::string, std::string> extra;  // the bench's own options that were given: name → value

  // Whether `problem` is one that --problem asked for (every problem when none was given).
  bool wants(const Problem& problem) const;
  // The bench's own option `name` as an integer, or `fallback` when it was not given; a UsageError
  // when it is no integer.
  int integer(const std::string& name, int fallback) const;
};

// Parses the arguments after argv[0]. `own_options` names the bench's own options (each takes a
// value, e.g. "--min-log"). An unknown argument or a missing value is a UsageError naming it.
BenchArgs parse_bench_args(int argc, char** argv, const std::vector<std::string>& own_options = {});

}  // namespace cutune::bench
