#pragma once
// A fresh folder per test under the temp directory, removed with everything in it when the test
// ends, so that test runs leave nothing behind. Named after the process and the running test, so
// that ctest's parallel runs and gtest's test cases never share one.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace cutune::testing {

class TempFolder {
 public:
  explicit TempFolder(const std::string& prefix = "cutune-test")
      : path_(std::filesystem::temp_directory_path() /
              (prefix + "-" + std::to_string(getpid()) + "-" +
               ::testing::UnitTest::GetInstance()->current_test_info()->test_suite_name() + "-" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name())) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempFolder() {
    // A test may have taken the write permission away (unwritable-database tests).
    std::error_code ignored;
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all, std::filesystem::perm_options::add, ignored);
    std::filesystem::remove_all(path_, ignored);
  }
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;

  const std::filesystem::path& path() const { return path_; }
  operator const std::filesystem::path&() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  std::string string() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace cutune::testing
