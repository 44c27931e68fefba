// cutune-worker: the GPU side of a tuning session, in its own process (see tuner/worker.hpp).
// Started by the session; not meant to be run by hand.
#include <cstring>
#include <iostream>
#include <string>

#include "worker.hpp"

int main(int argc, char** argv) {
  int device = 0;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--device") == 0) device = std::stoi(argv[i + 1]);
  try {
    return cutune::serve_worker(device);
  } catch (const std::exception& e) {
    std::cerr << "cutune-worker: " << e.what() << "\n";
    return 1;
  }
}
