// cutune-worker: the GPU side of a tuning session, in its own process (see tuner/worker.hpp), or
// with --compile one of the compile pool's processes (tuner/compile_pool.hpp). Started by the
// session; not meant to be run by hand.
#include <cstring>
#include <iostream>
#include <string>

#include "compile_pool.hpp"
#include "worker.hpp"

int main(int argc, char** argv) {
  int device = 0;
  bool compiles = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--compile") == 0) compiles = true;
    if (std::strcmp(argv[i], "--device") == 0 && i + 1 < argc) device = std::stoi(argv[i + 1]);
  }
  try {
    if (compiles) return cutune::serve_compiles();
    return cutune::serve_worker(device);
  } catch (const std::exception& e) {
    std::cerr << "cutune-worker: " << e.what() << "\n";
    return 1;
  }
}
