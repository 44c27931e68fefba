// main() for GPU tests: skip (exit 77) unless a CUDA device is there.
#include <gtest/gtest.h>

#include <iostream>

#include "device.hpp"

int main(int argc, char** argv) {
  try {
    if (cutune::device_count() == 0) throw cutune::EnvironmentError("no CUDA device");
  } catch (const std::exception& e) {
    std::cout << "SKIPPED: " << e.what() << '\n';
    return 77;
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
