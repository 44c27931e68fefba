#pragma once
// What a finished evaluation becomes in the results database: the one mapping from an Outcome
// (tuner/evaluate.hpp) to a ResultRecord (db/records.hpp). The session stores the row; a test
// checks every field without a GPU.
#include <cstdint>
#include <string>

#include "family.hpp"
#include "records.hpp"
#include "scheduler.hpp"

namespace cutune {

// Where the row belongs and what its rates are measured against.
struct RowContext {
  std::int64_t run_id = 0, device_id = 0, template_id = 0, problem_id = 0;
  Work work;                // the problem's bytes and flops: GB/s and GFLOP/s
  double copy_gbs = 0;      // the device's measured copy bandwidth: the fraction of it
  std::string device_uuid;  // the run's device; a result measured on another GPU of the model says which
  double elapsed_s = 0;     // since the run started
};

// `measured_on_uuid`: the GPU whose lane evaluated it.
db::ResultRecord result_row(const Space& space, const EvaluationQueue::Finished& finished, const RowContext& context,
                            const std::string& measured_on_uuid);

}  // namespace cutune
