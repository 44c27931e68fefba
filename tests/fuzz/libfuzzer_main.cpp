// libFuzzer entry (clang only; README "Fuzzing", tests/fuzz/CMakeLists.txt: CUTUNE_LIBFUZZER): the
// same targets and oracles as cutune_fuzz, with libFuzzer's coverage-guided mutations instead of
// ours. CUTUNE_FUZZ_TARGET names the target (kernel_tuner, t4, cutune_json, expression);
// an input that fails (see targets.hpp) aborts, so libFuzzer keeps it as a crash.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "targets.hpp"

namespace {

cutune::fuzz::Workspace workspace;
cutune::fuzz::Target target = cutune::fuzz::Target::kernel_tuner;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* name = std::getenv("CUTUNE_FUZZ_TARGET");
  const auto named = cutune::fuzz::target_named(name ? name : "kernel_tuner");
  if (!named) {
    std::fprintf(stderr, "CUTUNE_FUZZ_TARGET: unknown target '%s'\n", name);
    std::exit(2);
  }
  target = *named;
  if (target == cutune::fuzz::Target::simulate) {
    std::fprintf(stderr,
                 "CUTUNE_FUZZ_TARGET: simulate is not in libFuzzer builds (the engine does not build with clang 14)\n");
    std::exit(2);
  }
  workspace.folder = std::filesystem::temp_directory_path() / ("cutune-libfuzzer-" + std::to_string(getpid()));
  std::filesystem::remove_all(workspace.folder);
  std::filesystem::create_directories(workspace.folder);
  workspace.base_database = (workspace.folder / "base.db").string();
  cutune::fuzz::make_base_database(workspace.base_database);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  cutune::fuzz::Rng rng(std::hash<std::string>{}(input));
  const auto outcome = cutune::fuzz::run_in_process(target, input, workspace, rng);
  if (outcome.kind == cutune::fuzz::Outcome::Kind::failure) {
    std::fprintf(stderr, "cutune_libfuzzer: %s: %s\n", cutune::fuzz::name_of(target), outcome.detail.c_str());
    std::abort();
  }
  return 0;
}
