// An application of the conv2d kernel spec (../conv2d.toml): it asks cutune::lookup for the best
// conv2d config for its device and image, and, when there is a GPU and the database holds a
// cubin for its architecture, convolves its own image with it and checks the result on the CPU.
//
//   conv2d_app --db cutune.db [--height 2160 --width 3840 --radius 2] [--device-name NAME --cc 9.0]
//
// Without a GPU it still looks up and prints the config and plan; --device-name and --cc then
// say which device to ask for. The CUDA driver is loaded with dlopen
// (../../common/cuda_driver_loader.hpp), so the application builds and runs without the CUDA
// toolkit, and needs nothing of cutune but the lookup library.
//
// The radius is part of the lookup's exact match: the stored cubin was compiled for it (the spec
// passes it as -DRADIUS). Height and width are kernel arguments, so one cubin serves every image
// size; only the grid is recomputed here, from the config's block and tile sizes.
#include <cmath>
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

struct Image {
  int height = 0, width = 0, radius = 0;
  int taps() const { return 2 * radius + 1; }
};

// Pixels and taps in [0, 1), as the spec's inputs: all products are >= 0, which the check's
// relative bound needs.
std::vector<float> random_values(std::size_t count, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> value(0.0f, 1.0f);
  std::vector<float> values(count);
  for (float& v : values) v = value(rng);
  return values;
}

// The zero-padded "same" convolution in double: exact to ~2^-53 relative, so each float result
// may differ from it by gamma_m (m = F*F products, one rounding each; see ../conv2d.toml).
bool matches_cpu(const Image& p, const std::vector<float>& image, const std::vector<float>& filter,
                 const std::vector<float>& gpu) {
  const int f = p.taps();
  const double u = std::ldexp(1.0, -24), m = static_cast<double>(f) * f;
  const double rtol = m * u / (1 - m * u) + 1e-12;
  std::int64_t bad = 0;
  for (int y = 0; y < p.height; ++y)
    for (int x = 0; x < p.width; ++x) {
      double sum = 0;
      for (int i = 0; i < f; ++i)
        for (int j = 0; j < f; ++j) {
          const int yy = y + i - p.radius, xx = x + j - p.radius;
          if (yy >= 0 && yy < p.height && xx >= 0 && xx < p.width)
            sum += static_cast<double>(filter[i * f + j]) * image[static_cast<std::size_t>(yy) * p.width + xx];
        }
      const float got = gpu[static_cast<std::size_t>(y) * p.width + x];
      if (!(std::fabs(got - sum) <= rtol * sum) && bad++ < 3)
        std::printf("gpu        output (%d, %d) is %.9g, the CPU's %.9g\n", y, x, got, sum);
    }
  return bad == 0;
}

// Runs the config's plan (the spec's one launch) on this image and compares with the CPU.
bool run_on_gpu(example::Driver& d, example::CUdevice device, const cutune::lookup::Match& match,
                const cutune::lookup::Cubin& cubin, const Image& p) {
  const auto bx = static_cast<unsigned>(match.integer("block_size_x"));
  const auto by = static_cast<unsigned>(match.integer("block_size_y"));
  const auto tx = static_cast<unsigned>(match.integer("tile_size_x"));
  const auto ty = static_cast<unsigned>(match.integer("tile_size_y"));
  const bool staged = match.integer("use_shared") != 0;
  const unsigned f = p.taps(), halo = 2 * p.radius;
  // As the spec's step: the filter, then (use_shared) the block's input window.
  const unsigned shared = (f * f + (staged ? (bx * tx + halo) * (by * ty + halo) : 0)) * sizeof(float);
  const unsigned grid_x = (p.width + bx * tx - 1) / (bx * tx), grid_y = (p.height + by * ty - 1) / (by * ty);

  const example::Module module(d, device, cubin.image.data());
  const std::size_t pixels = static_cast<std::size_t>(p.height) * p.width;
  const auto image = random_values(pixels, 2026), filter = random_values(std::size_t(f) * f, 7);
  example::Buffer in(d, pixels * 4), taps(d, filter.size() * 4), out(d, pixels * 4);
  CU_CHECK(d.cuMemcpyHtoD(in.get(), image.data(), pixels * 4));
  CU_CHECK(d.cuMemcpyHtoD(taps.get(), filter.data(), filter.size() * 4));
  const example::CUfunction kernel = module.kernel("conv2d", shared);  // above 48 KiB: opts in
  example::CUdeviceptr image_ptr = in.get(), filter_ptr = taps.get(), output_ptr = out.get();
  int height = p.height, width = p.width;
  void* args[] = {&image_ptr, &filter_ptr, &height, &width, &output_ptr};
  std::printf("run        conv2d grid %u,%u block %u,%u shared %u B\n", grid_x, grid_y, bx, by, shared);
  CU_CHECK(d.cuLaunchKernel(kernel, grid_x, grid_y, 1, bx, by, 1, shared, nullptr, args, nullptr));
  CU_CHECK(d.cuCtxSynchronize());
  std::vector<float> gpu(pixels);
  CU_CHECK(d.cuMemcpyDtoH(gpu.data(), out.get(), pixels * 4));
  const bool ok = matches_cpu(p, image, filter, gpu);
  std::printf("gpu        %s: %zu outputs %s the CPU's\n", ok ? "verified" : "FAILED", pixels,
              ok ? "within gamma_F*F of" : "differ from");
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  std::string database, device_name, cc;
  Image p{2160, 3840, 2};
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string option = argv[i];
    if (option == "--db")
      database = argv[i + 1];
    else if (option == "--height")
      p.height = std::stoi(argv[i + 1]);
    else if (option == "--width")
      p.width = std::stoi(argv[i + 1]);
    else if (option == "--radius")
      p.radius = std::stoi(argv[i + 1]);
    else if (option == "--device-name")
      device_name = argv[i + 1];
    else if (option == "--cc")
      cc = argv[i + 1];
    else
      return std::fprintf(stderr, "conv2d_app: unknown option %s\n", option.c_str()), 2;
  }
  if (database.empty() || p.height <= 0 || p.width <= 0 || p.radius < 0)
    return std::fprintf(
               stderr, "usage: conv2d_app --db PATH [--height H --width W --radius R] [--device-name NAME --cc 9.0]\n"),
           2;

  try {
    example::Driver driver;
    const auto target = example::choose_target(driver, device_name, cc);
    if (!target) return std::fprintf(stderr, "conv2d_app: --cc must look like 9.0\n"), 2;

    cutune::lookup::Database results(database);
    // The spec's fields: the extents give the size (size 0: their product), radius and type must match.
    const cutune::lookup::Query query{"conv2d",
                                      target->identity,
                                      {0,
                                       "float32",
                                       {{"height", std::to_string(p.height)},
                                        {"width", std::to_string(p.width)},
                                        {"radius", std::to_string(p.radius)}}}};
    const auto match = results.find(query);
    example::print_match(*match, "grids for the matched size");
    const auto cubin = example::cubin_to_launch(results, query, *target, "../conv2d.cu");
    if (!cubin) return 0;
    return run_on_gpu(driver, target->device, *match, *cubin, p) ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "conv2d_app: %s\n", e.what());
    return 1;
  }
}
