// An application that uses a cutune results database: it asks cutune::lookup for the best scan
// (compact_offsets) config for its device and problem size, and, when there is a GPU and the
// database holds a cubin for it, launches that kernel on its own data and checks the result.
//
//   scan_app --db cutune.db [--n 1000000] [--device-name NAME --cc 9.0]
//
// Without a GPU it still looks up and prints the config; --device-name and --cc then say which
// device to ask for. The CUDA driver is loaded with dlopen (../common/cuda_driver_loader.hpp), so
// the application builds and runs without the CUDA toolkit, and needs nothing of cutune but the
// lookup library.
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

struct Lists {
  std::vector<std::int32_t> starts, stops;
};

Lists make_lists(std::int64_t n) {
  Lists lists{std::vector<std::int32_t>(n), std::vector<std::int32_t>(n)};
  std::mt19937 rng(2026);
  std::uniform_int_distribution<std::int32_t> position(0, 999'999), length(0, 31);
  for (std::int64_t i = 0; i < n; ++i) {
    lists.starts[i] = position(rng);
    lists.stops[i] = lists.starts[i] + length(rng);
  }
  return lists;
}

std::vector<std::int64_t> offsets_on_cpu(const Lists& lists) {
  std::vector<std::int64_t> offsets(lists.starts.size() + 1, 0);
  for (std::size_t i = 0; i < lists.starts.size(); ++i)
    offsets[i + 1] = offsets[i] + (lists.stops[i] - lists.starts[i]);
  return offsets;
}

unsigned shared_bytes_of(const cutune::lookup::Cubin& cubin, const std::string& kernel) {
  for (const auto& launch : cubin.launches)
    if (launch.kernel == kernel) return launch.dynamic_shared_bytes;
  return 0;
}

// Runs the config's launch plan (as the scan family defines it) and compares with the CPU.
bool run_on_gpu(example::Driver& d, example::CUdevice device, const cutune::lookup::Match& match,
                const cutune::lookup::Cubin& cubin, std::int64_t n) {
  const example::Module module(d, device, cubin.image.data());
  const Lists lists = make_lists(n);
  const auto block = static_cast<unsigned>(match.integer("block"));
  const std::int64_t tile = match.integer("block") * match.integer("ept");
  long long tiles = (n + tile - 1) / tile, size = n;
  example::Buffer starts(d, n * 4), stops(d, n * 4), offsets(d, (n + 1) * 8), error(d, 8), scratch(d, (tiles + 2) * 8);
  CU_CHECK(d.cuMemcpyHtoD(starts.get(), lists.starts.data(), n * 4));
  CU_CHECK(d.cuMemcpyHtoD(stops.get(), lists.stops.data(), n * 4));
  CU_CHECK(d.cuMemsetD32(error.get(), 0xffffffffu, 2));
  const auto launch = [&](const char* name, unsigned grid, std::vector<void*> args) {
    const unsigned shared = shared_bytes_of(cubin, name);
    const example::CUfunction kernel = module.kernel(name, shared);
    CU_CHECK(d.cuLaunchKernel(kernel, grid, 1, 1, block, 1, 1, shared, nullptr, args.data(), nullptr));
  };
  example::CUdeviceptr s = starts.get(), t = stops.get(), out = offsets.get(), e = error.get(), state = scratch.get();
  example::CUdeviceptr counter = state + tiles * 8;
  // lookback, striped and striped's variants (striped_*): one pass, the same kernel name and arguments
  if (const std::string& algo = match.parameter("algo")->value; algo == "lookback" || algo.rfind("striped", 0) == 0) {
    CU_CHECK(d.cuMemsetD32(state, 0, (tiles + 2) * 2));
    launch("scan_lookback", static_cast<unsigned>(tiles), {&s, &t, &size, &state, &counter, &out, &e});
  } else {  // blelloch and warp: tile sums, their scan in one block, then each tile again
    launch("scan_tile_sums", static_cast<unsigned>(tiles), {&s, &t, &size, &state, &e});
    launch("scan_tile_offsets", 1, {&state, &tiles});
    launch("scan_tiles", static_cast<unsigned>(tiles), {&s, &t, &size, &state, &out});
  }
  CU_CHECK(d.cuCtxSynchronize());
  std::vector<std::int64_t> gpu(n + 1);
  std::uint64_t bad = 0;
  CU_CHECK(d.cuMemcpyDtoH(gpu.data(), out, (n + 1) * 8));
  CU_CHECK(d.cuMemcpyDtoH(&bad, e, 8));
  const auto cpu = offsets_on_cpu(lists);
  const bool ok = bad == ~0ull && gpu == cpu;
  std::printf("gpu        %s: %lld offsets %s the CPU's\n", ok ? "verified" : "FAILED", static_cast<long long>(n + 1),
              ok ? "equal" : "differ from");
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  std::string database, device_name, cc;
  std::int64_t n = 1'000'000;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string option = argv[i];
    if (option == "--db")
      database = argv[i + 1];
    else if (option == "--n")
      n = std::stoll(argv[i + 1]);
    else if (option == "--device-name")
      device_name = argv[i + 1];
    else if (option == "--cc")
      cc = argv[i + 1];
    else
      return std::fprintf(stderr, "scan_app: unknown option %s\n", option.c_str()), 2;
  }
  if (database.empty() || n <= 0)
    return std::fprintf(stderr, "usage: scan_app --db PATH [--n N] [--device-name NAME --cc 9.0]\n"), 2;

  try {
    example::Driver driver;
    const auto target = example::choose_target(driver, device_name, cc);
    if (!target) return std::fprintf(stderr, "scan_app: --cc must look like 9.0\n"), 2;
    const cutune::lookup::DeviceIdentity& identity = target->identity;

    cutune::lookup::Database results(database);
    const cutune::lookup::Query query{"scan", identity, {n, "int32", {}}};
    const auto match = results.find(query);
    example::print_level_and_config(*match);
    for (const auto& p : match->parameters) std::printf("  %-8s %s\n", p.name.c_str(), p.value.c_str());
    if (match->result_id)
      std::printf("measured   %s, %.4f ms on %s; size distance %.3f\n", match->matched_problem.c_str(), *match->time_ms,
                  match->device_name.c_str(), match->size_distance);
    for (const auto& l : match->launches)
      std::printf("launch     %s grid %u block %u shared %u B (grid as measured; this app sizes its own)\n",
                  l.kernel.c_str(), l.grid[0], l.block[0], l.dynamic_shared_bytes);

    if (identity.cc_major == 0) {
      std::printf("cubin      not asked for: the device's architecture is unknown\n");
      return 0;
    }
    const std::string arch = cutune::lookup::arch_of(identity.cc_major, identity.cc_minor);
    const auto cubin = results.cubin(query, arch);
    if (!cubin) {
      std::printf("cubin      none for %s: %s (an application would compile the template with NVRTC here)\n",
                  arch.c_str(), cubin.reason.c_str());
      return 0;
    }
    std::printf("cubin      %zu bytes for %s\n", cubin.image.size(), cubin.arch.c_str());
    if (!target->no_gpu.empty()) {
      std::printf("gpu        skipped: %s\n", target->no_gpu.c_str());
      return 0;
    }
    return run_on_gpu(driver, target->device, *match, cubin, n) ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "scan_app: %s\n", e.what());
    return 1;
  }
}
