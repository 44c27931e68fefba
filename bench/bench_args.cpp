#include "bench_args.hpp"

#include <algorithm>
#include <sstream>

#include "core/error.hpp"
#include "store.hpp"

namespace cutune::bench {
namespace {

std::vector<std::string> pairs_of(const std::string& key) {
  std::vector<std::string> pairs;
  std::stringstream in(key);
  for (std::string pair; std::getline(in, pair, ',');)
    if (!pair.empty()) pairs.push_back(pair);
  return pairs;
}

}  // namespace

bool BenchArgs::wants(const Problem& problem) const {
  if (problems.empty()) return true;
  const std::vector<std::string> have = pairs_of(problem.key());
  return std::any_of(problems.begin(), problems.end(), [&](const std::string& selector) {
    const std::vector<std::string> want = pairs_of(selector);
    return std::all_of(want.begin(), want.end(), [&](const std::string& pair) {
      return std::find(have.begin(), have.end(), pair) != have.end();
    });
  });
}

namespace {
int parse_integer(const std::string& name, const std::string& value) {
  try {
    std::size_t used = 0;
    const int parsed = std::stoi(value, &used);
    if (used == value.size()) return parsed;
  } catch (const std::exception&) {
  }
  throw UsageError(name + " takes an integer (got '" + value + "')");
}
}  // namespace

int BenchArgs::integer(const std::string& name, int fallback) const {
  const auto given = extra.find(name);
  return given == extra.end() ? fallback : parse_integer(name, given->second);
}

BenchArgs parse_bench_args(int argc, char** argv, const std::vector<std::string>& own_options) {
  BenchArgs args{db::default_database_path(), 0, {}, {}};
  std::string usage = "--db PATH, --device N, --problem KEY";
  for (const std::string& option : own_options) usage += ", " + option + " VALUE";
  for (int i = 1; i < argc; ++i) {
    const std::string name = argv[i];
    const bool own = std::find(own_options.begin(), own_options.end(), name) != own_options.end();
    if (name != "--db" && name != "--device" && name != "--problem" && !own)
      throw UsageError("unknown argument '" + name + "' (options: " + usage + ")");
    if (i + 1 >= argc) throw UsageError(name + " needs a value");
    const std::string value = argv[++i];
    if (name == "--db") {
      args.db_path = value;
    } else if (name == "--device") {
      args.device = parse_integer(name, value);
      if (args.device < 0) throw UsageError("--device takes a device number (got '" + value + "')");
    } else if (name == "--problem") {
      if (value.find('=') == std::string::npos)
        throw UsageError("--problem takes name=value pairs, e.g. m=4096 (got '" + value + "')");
      args.problems.push_back(value);
    } else {
      args.extra[name] = value;
    }
  }
  return args;
}

}  // namespace cutune::bench
