#pragma once
// Runs the real `tune` binary (TUNE_BINARY) with arguments, as a shell would, and keeps its exit
// code, stdout and stderr; and the check every bad input must pass: one `tune: error:` line, exit 2.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "temp_folder.hpp"

namespace cutune::testing {

struct CommandRun {
  int exit_code = -1;
  std::string out, err;
  int err_lines() const {
    int lines = 0;
    for (char c : err) lines += c == '\n';
    return lines;
  }
};

inline TempFolder temp_folder() { return TempFolder("cutune-cli"); }

// `tune ARGUMENTS`, or with a launcher in front (`mpirun -n 2`).
inline CommandRun tune(const std::string& arguments, const std::string& launcher = "") {
  const auto folder = std::filesystem::temp_directory_path() / ("cutune-cli-out-" + std::to_string(getpid()));
  std::filesystem::create_directories(folder);
  const std::string out = (folder / "out").string(), err = (folder / "err").string();
  const std::string command = launcher + " " + std::string(TUNE_BINARY) + " " + arguments + " >" + out + " 2>" + err;
  const int status = std::system(command.c_str());
  CommandRun run;
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::stringstream o, e;
  o << std::ifstream(out).rdbuf();
  e << std::ifstream(err).rdbuf();
  run.out = o.str();
  run.err = e.str();
  std::filesystem::remove_all(folder);
  return run;
}

inline void expect_usage_error(const CommandRun& run, const std::string& message) {
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_EQ(run.err_lines(), 1) << run.err;
  EXPECT_NE(run.err.find("tune: error: "), std::string::npos) << run.err;
  EXPECT_NE(run.err.find(message), std::string::npos) << run.err;
}

}  // namespace cutune::testing
