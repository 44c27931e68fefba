// An application of the histogram kernel spec (../histogram.toml): it asks cutune::lookup for the
// best histogram config for its device, value count, bin count and value type, and, when there is
// a GPU and the database holds a cubin for its architecture, runs the config's plan (zero the
// counts, then count) on its own values and checks the counts against the CPU's.
//
//   histogram_app --db cutune.db [--n 10000000 --bins 256 --type uint32] [--device-name NAME --cc 9.0]
//
// Without a GPU it still looks up and prints the config and plan; --device-name and --cc then
// say which device to ask for. The CUDA driver is loaded with dlopen
// (../../common/cuda_driver_loader.hpp), so the application builds and runs without the CUDA
// toolkit, and needs nothing of cutune but the lookup library.
//
// Bins and type are part of the lookup's exact match: the stored cubin was compiled for them (the
// spec passes them as -DBINS and -DELEMENT_TYPE). n is a kernel argument, so one cubin serves
// every size; only the grid and the memset are recomputed here, from the config and the problem.
#include <cstdint>
#include <cstdio>
#include <exception>
#include <random>
#include <string>
#include <vector>

#include <cutune/lookup.hpp>

#include "lookup_app.hpp"  // examples/common: the driver, the device, the printing the apps share

namespace {

// ---- the application's own problem --------------------------------------------------------------

struct Problem {
  std::int64_t n = 10'000'000;
  unsigned bins = 256;
  std::string type = "uint32";  // or int32: the values below are >= 0, so their bits are the same
};

// Values in [0, 2^24), as the spec's inputs.
std::vector<std::uint32_t> random_values(std::int64_t n) {
  std::mt19937 rng(2026);
  std::uniform_int_distribution<std::uint32_t> value(0, (1u << 24) - 1);
  std::vector<std::uint32_t> values(n);
  for (auto& v : values) v = value(rng);
  return values;
}

// Runs the config's plan, as the spec's steps: zero the counts, then one launch.
bool run_on_gpu(example::Driver& d, example::CUdevice device, const cutune::lookup::Match& match,
                const cutune::lookup::Cubin& cubin, const Problem& p) {
  const auto block = static_cast<unsigned>(match.integer("block_size_x"));
  const std::int64_t tile = match.integer("block_size_x") * match.integer("items_per_thread");
  const bool shared_counters = match.parameter("counters")->value == "shared";
  const unsigned shared = shared_counters ? static_cast<unsigned>(match.integer("replicas")) * p.bins * 4 : 0;
  const auto grid = static_cast<unsigned>((p.n + tile - 1) / tile);

  const example::Module module(d, device, cubin.image.data());
  const auto values = random_values(p.n);
  example::Buffer in(d, p.n * 4), out(d, p.bins * 4);
  CU_CHECK(d.cuMemcpyHtoD(in.get(), values.data(), p.n * 4));
  const example::CUfunction kernel = module.kernel("histogram", shared);
  example::CUdeviceptr values_ptr = in.get(), counts_ptr = out.get();
  long long n = p.n;
  void* args[] = {&values_ptr, &n, &counts_ptr};
  std::printf("run        memset counts 0 (%u words), histogram grid %u block %u shared %u B\n", p.bins, grid, block,
              shared);
  CU_CHECK(d.cuMemsetD32(counts_ptr, 0, p.bins));  // every variant adds into the counts
  CU_CHECK(d.cuLaunchKernel(kernel, grid, 1, 1, block, 1, 1, shared, nullptr, args, nullptr));
  CU_CHECK(d.cuCtxSynchronize());
  std::vector<std::uint32_t> gpu(p.bins), cpu(p.bins, 0);
  CU_CHECK(d.cuMemcpyDtoH(gpu.data(), counts_ptr, p.bins * 4));
  for (const std::uint32_t v : values) ++cpu[v % p.bins];
  const bool ok = gpu == cpu;
  std::printf("gpu        %s: %u counts %s the CPU's\n", ok ? "verified" : "FAILED", p.bins,
              ok ? "equal" : "differ from");
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  std::string database, device_name, cc;
  Problem p;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string option = argv[i];
    if (option == "--db")
      database = argv[i + 1];
    else if (option == "--n")
      p.n = std::stoll(argv[i + 1]);
    else if (option == "--bins")
      p.bins = static_cast<unsigned>(std::stoul(argv[i + 1]));
    else if (option == "--type")
      p.type = argv[i + 1];
    else if (option == "--device-name")
      device_name = argv[i + 1];
    else if (option == "--cc")
      cc = argv[i + 1];
    else
      return std::fprintf(stderr, "histogram_app: unknown option %s\n", option.c_str()), 2;
  }
  if (database.empty() || p.n <= 0 || p.bins == 0 || (p.type != "uint32" && p.type != "int32"))
    return std::fprintf(stderr,
                        "usage: histogram_app --db PATH [--n N --bins B --type uint32|int32] [--device-name NAME "
                        "--cc 9.0]\n"),
           2;

  try {
    example::Driver driver;
    const auto target = example::choose_target(driver, device_name, cc);
    if (!target) return std::fprintf(stderr, "histogram_app: --cc must look like 9.0\n"), 2;

    cutune::lookup::Database results(database);
    // The spec's fields: n is the extent (the size), bins and type must match exactly.
    const cutune::lookup::Query query{"histogram", target->identity, {p.n, p.type, {{"bins", std::to_string(p.bins)}}}};
    const auto match = results.find(query);
    example::print_match(*match, "sizes for the matched problem");
    const auto cubin = example::cubin_to_launch(results, query, *target, "../histogram.cu");
    if (!cubin) return 0;
    return run_on_gpu(driver, target->device, *match, *cubin, p) ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "histogram_app: %s\n", e.what());
    return 1;
  }
}
