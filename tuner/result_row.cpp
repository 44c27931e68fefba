#include "result_row.hpp"

namespace cutune {

db::ResultRecord result_row(const Space& space, const EvaluationQueue::Finished& finished, const RowContext& context,
                            const std::string& measured_on_uuid) {
  const Outcome& outcome = finished.outcome;
  db::ResultRecord row;
  row.run_id = context.run_id;
  row.device_id = context.device_id;
  row.template_id = context.template_id;
  row.problem_id = context.problem_id;
  row.config = space.key(finished.config);
  row.config_json = space.json(finished.config);
  row.status = to_string(outcome.status);
  row.compile_s = finished.compile_seconds;
  row.verify_s = outcome.verify_seconds;
  row.benchmark_s = outcome.benchmark_seconds;
  row.error = outcome.error;
  row.error_index = outcome.error_index;
  row.launch_json = outcome.launch_json.empty() ? "[]" : outcome.launch_json;
  row.verified = outcome.verified;
  row.cut_short = outcome.cut_short;
  row.observations = outcome.observations;
  if (measured_on_uuid != context.device_uuid) row.measured_on = measured_on_uuid;
  if (outcome.measurement) {
    const Measurement& m = *outcome.measurement;
    row.time_ms_median = m.median_ms;
    row.time_ms_min = m.min_ms;
    row.time_ms_max = m.max_ms;
    row.time_ms_stdev = m.stdev_ms;
    row.samples = static_cast<int>(m.samples_ms.size());
    if (context.work.bytes > 0) {
      row.gbs = context.work.bytes / (m.median_ms * 1e-3) / 1e9;
      if (context.copy_gbs > 0) row.copy_fraction = *row.gbs / context.copy_gbs;
    }
    if (context.work.flops > 0) row.gflops = context.work.flops / (m.median_ms * 1e-3) / 1e9;
  }
  row.elapsed_s = context.elapsed_s;
  return row;
}

}  // namespace cutune
