#pragma once
// The shared landscapes: Kernel Tuner cache files in ../shared/landscapes beside the checkout, as
// CI has them. Every test that reads them asserts they are there with the same message: one that
// skipped instead would let CI pass without reading a single landscape.
#include <gtest/gtest.h>

#include <filesystem>

namespace cutune::testing {

inline std::filesystem::path landscapes_folder() { return std::filesystem::path(CUTUNE_SHARED_DIR) / "landscapes"; }

}  // namespace cutune::testing

#define CUTUNE_ASSERT_LANDSCAPES()                                                     \
  ASSERT_TRUE(std::filesystem::is_directory(::cutune::testing::landscapes_folder()))   \
      << "no shared landscapes at " << ::cutune::testing::landscapes_folder().string() \
      << " (the folder ../shared/landscapes beside the checkout, with Kernel Tuner cache files)"
