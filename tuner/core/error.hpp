#pragma once
#include <stdexcept>
#include <string>

namespace cutune {

// Any failure the engine reports; the message carries what was being done and why it failed.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Bad input from the user (unknown kernel, bad --n, …): the CLI prints one line and exits 2.
struct UsageError : Error {
  using Error::Error;
};

// The environment cannot do what was asked (no CUDA driver, no such device): one line, exit 3.
struct EnvironmentError : Error {
  using Error::Error;
};

}  // namespace cutune
