// The database the example application reads in CI: scan results of a made-up Hopper ("Example
// GPU", compute capability 9.0) at two sizes, with real cubins of the best configs compiled by
// NVRTC for sm_80 and sm_90, so that the example launches them when it runs on such a GPU.
//
//   make_example_db PATH
#include <cstdio>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "compile.hpp"
#include "scan.hpp"
#include "session.hpp"
#include "store.hpp"

using namespace cutune;

namespace {

// The launch plan's kernels as the evaluator records them.
std::string launch_json(const ScanFamily& scan, const Problem& problem, const Space& space, const Config& config) {
  nlohmann::json launches = nlohmann::json::array();
  for (const Step& step : scan.plan(problem, ConfigView(space, config)))
    if (const auto* l = std::get_if<KernelLaunch>(&step))
      launches.push_back({{"kernel", l->kernel},
                          {"grid", {l->grid.x, l->grid.y, l->grid.z}},
                          {"block", {l->block.x, l->block.y, l->block.z}},
                          {"dynamic_shared_bytes", l->dynamic_shared_bytes}});
  return launches.dump();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return std::fprintf(stderr, "usage: make_example_db PATH\n"), 2;
  std::filesystem::remove(argv[1]);
  db::Store store(argv[1]);
  ScanFamily scan;
  const Space space = scan.space(limits_for_arch("sm_90"));
  db::DeviceRecord device;
  device.uuid = "GPU-00000000-0000-0000-0000-00000000e8a3";
  device.name = "Example GPU";
  device.cc_major = 9;
  device.nvrtc_version = nvrtc_version();
  const auto device_id = store.upsert_device(device);
  const std::string source = scan.source();
  const auto template_id = store.upsert_template("scan", "example", source);
  store.put_problem_schema("scan", scan.problem_schema());
  const auto run =
      store.begin_run({0, "scan", device_id, template_id, "example", 1, "", "make_example_db", "", "", "", ""});
  // Made-up times: the look-back config is the fastest at both sizes.
  const std::vector<std::pair<std::string, double>> configs{{"algo=lookback,block=256,ept=8,vec=4,pad=1", 1.0},
                                                            {"algo=warp,block=256,ept=4,vec=4,pad=0", 1.4},
                                                            {"algo=blelloch,block=128,ept=2,vec=2,pad=1", 2.1}};
  for (std::int64_t n : {1 << 16, 1 << 22}) {
    const Problem problem = ScanFamily::make_problem(n, "int32");
    const auto problem_id = store.upsert_problem(problem_record(scan, problem));
    for (const auto& [key, relative] : configs) {
      const Config config = space.parse(key);
      db::ResultRecord r;
      r.run_id = run;
      r.device_id = device_id;
      r.template_id = template_id;
      r.problem_id = problem_id;
      r.config = key;
      r.config_json = space.json(config);
      r.status = "ok";
      r.time_ms_median = relative * static_cast<double>(n) * 1e-6;
      r.samples = 10;
      r.launch_json = launch_json(scan, problem, space, config);
      store.add_result(r);
    }
    const auto best = store.best_result(device_id, template_id, problem_id);
    for (const char* arch : {"sm_80", "sm_90"}) {
      const Compiled compiled = compile(compile_request(scan, source, space, space.parse(best->config), problem, arch));
      if (!compiled.ok)
        return std::fprintf(stderr, "make_example_db: NVRTC failed for %s:\n%s\n", arch, compiled.log.c_str()), 1;
      store.put_cubin({0,
                       arch,
                       template_id,
                       problem_id,
                       best->config,
                       {compiled.cubin.begin(), compiled.cubin.end()},
                       best->launch_json,
                       nlohmann::json(compiled.options).dump(),
                       nvrtc_version(),
                       ""});
    }
  }
  store.finish_run(run, "finished");
  store.refresh_family_defaults();
  std::printf("wrote %s\n", argv[1]);
  return 0;
}
