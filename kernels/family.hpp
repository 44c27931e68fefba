#pragma once
// A kernel family: a CUDA source template plus everything the engine needs to tune it —
// parameter space, problems, buffers, launch plan, input generator, CPU reference and the
// bytes/flops model. One small definition file per family (see scan.cpp), in the spirit of
// CLBlast's tuning kernel definitions.
#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/limits.hpp"
#include "core/space.hpp"
#include "problem.hpp"

namespace cutune {

// What the user asked for on the command line; empty means the family's defaults.
struct ProblemRequest {
  std::optional<std::string> type;
  std::vector<std::int64_t> sizes;
};

// A Problem (identity/problem.hpp) is one instance a family is tuned for, e.g. scan with
// n = 2^20 of int32: its fields are declared by the family's problem_schema(), and its key, size,
// element type and lookup match key derive from them.

enum class BufferRole { input, output, scratch };

struct BufferSpec {
  std::string name;
  std::int64_t bytes = 0;
  BufferRole role = BufferRole::input;
  // An output whose initial contents the kernels read (y = a*x + y): generate_inputs fills it
  // like an input, and every run — the verified ones and each timed sample — starts from those
  // contents again, restored outside the timed region. Other outputs start poisoned.
  bool initialised = false;
};

// Host copies of buffers, by name.
class HostBuffers {
 public:
  std::vector<std::byte>& at(const std::string& name) { return buffers_[name]; }
  const std::vector<std::byte>& at(const std::string& name) const;
  bool contains(const std::string& name) const { return buffers_.count(name) != 0; }
  template <class T>
  std::span<T> as(const std::string& name) {
    auto& b = at(name);
    return {reinterpret_cast<T*>(b.data()), b.size() / sizeof(T)};
  }
  template <class T>
  std::span<const T> as(const std::string& name) const {
    const auto& b = at(name);
    return {reinterpret_cast<const T*>(b.data()), b.size() / sizeof(T)};
  }
  const std::map<std::string, std::vector<std::byte>>& all() const { return buffers_; }

 private:
  std::map<std::string, std::vector<std::byte>> buffers_;
};

// ---- the launch plan: what one timed run of a config does, in order --------------------------

struct BufferArg {
  std::string buffer;
  std::int64_t byte_offset = 0;
  bool operator==(const BufferArg&) const = default;
};
using KernelArg = std::variant<BufferArg, std::int32_t, std::uint32_t, std::int64_t, std::uint64_t, float, double>;

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

struct KernelLaunch {
  std::string kernel;  // extern "C" name in the template
  Dim3 grid, block;
  unsigned dynamic_shared_bytes = 0;
  std::vector<KernelArg> args;
  // A persistent grid: grid.x is cut to the blocks that the device holds at once (blocks per SM
  // at this block size and shared memory, times its SMs), for kernels that share their work out
  // over gridDim.x blocks (matmul's stream-K). Results store the grid that ran.
  bool fill_device = false;
  // Programmatic dependent launch (sm_90 and newer): the launch may begin while the plan's previous
  // launch is still running, and its blocks must wait (`griddepcontrol.wait`) before they read
  // anything that launch writes. Launched without the attribute, the wait returns at once, so an
  // application that ignores the flag still computes the same result, only without the overlap.
  bool programmatic = false;
};

// Fills `bytes` bytes of a buffer (from byte_offset) with a repeated 32-bit word; part of the
// timed run, like the initialisation kernels a library would launch.
struct MemsetStep {
  std::string buffer;
  std::uint32_t word = 0;
  std::int64_t bytes = 0;
  std::int64_t byte_offset = 0;
  // Write the words as stream memory operations (cuStreamWriteValue32, at most
  // kMaxStreamWriteWords of them) instead of a memset: for presetting a word or two, where a
  // memset's own launch costs about as much as a small kernel.
  bool stream_write = false;
  static constexpr std::int64_t kMaxStreamWriteWords = 4;
};

using Step = std::variant<KernelLaunch, MemsetStep>;

// A memset step as results store it: a result's launch_json lists its plan's steps in order,
// launches as the evaluator describes them ({"kernel", "grid", "block", …}) and memsets as
// {"memset": buffer, "word", "bytes", "byte_offset", "stream_write"}, so that an application that looks the config
// up (db/lookup) can run the whole plan, not only its kernels.
nlohmann::json stored_step(const MemsetStep& step);

// A reference computed on the GPU (Kernel Tuner's `answer` way, for families whose reference is
// a kernel the user trusts rather than CPU code): a plan over the family's buffers, run once per
// problem on the inputs with every output poisoned first; what it leaves in the outputs is the
// expected result.
struct GpuReference {
  std::string program_name;  // for NVRTC's messages
  std::string source;
  std::vector<std::string> options;  // NVRTC options (definitions from the problem, include paths)
  std::vector<Step> plan;
};

// How one output is compared, as a rule the GPU can apply element by element. The rules of all
// outputs together say what Family::compare() says: the outputs pass when they are byte-identical
// to the expected ones, or when every checked output passes its rule at every element.
struct OutputRule {
  std::string buffer;
  std::string element_type;   // int32, uint32, int64, uint64, float32, float64
  bool checked = true;        // false: its contents are unspecified (only the byte-identity test reads it)
  bool exact = true;          // exact: actual == expected by value (NaN never); else:
  double rtol = 0, atol = 0;  //   |actual - expected| <= rtol·|expected| + atol in double (NaN never)
};

// The first element at which outputs break their rules: the first rule, in order, with a broken
// element, and its lowest such index, with the two elements' bytes (what the GPU copies back).
struct RuleBreak {
  std::size_t rule = 0;
  std::int64_t index = 0;
  std::array<std::byte, 8> expected{}, actual{};
};

// What checking outputs against rules decides, on the host (check_outputs) or the GPU
// (tuner/output_check): pass, or where the rules first break.
struct OutputCheck {
  bool pass = true;
  std::optional<RuleBreak> first_break;  // set when !pass
};

struct Verdict {
  bool ok = true;
  std::string message;  // first mismatch, with index, expected and actual
  std::optional<std::int64_t> first_bad_index;
};

struct Work {
  double bytes = 0;  // the fewest bytes a run must move: each input read once, each output written once
  double flops = 0;
};

class Family {
 public:
  virtual ~Family() = default;

  virtual std::string name() const = 0;
  virtual std::string summary() const = 0;  // one line for `tune --list`
  virtual std::string template_file() const = 0;
  // Embedded templates/*.cuh texts the template builds on, placed in front of it in source().
  virtual std::vector<std::string> template_headers() const { return {}; }
  // The CUDA source: the headers, then the embedded template (a #line keeps NVRTC's messages
  // naming the template's own lines), unless a family (or a test) substitutes its own. One text,
  // so that the stored template hash and the compile cache cover the headers too.
  virtual std::string source() const;

  virtual Space space(const DeviceLimits& limits) const = 0;
  // -D definitions for a config. The built-in templates read CUTUNE_<NAME> (every axis but the
  // plan-only ones; see config_definitions below); spec families may pass names as they are.
  virtual std::vector<std::string> axis_definitions(const Space& space, const Config& config) const;
  // NVRTC options besides the definitions: include paths, -use_fast_math, …
  virtual std::vector<std::string> compile_options() const { return {}; }
  // The problem fields, their types and defaults: the one source of every problem's identity.
  virtual const ProblemSchema& problem_schema() const = 0;
  // What the schema cannot say about a problem (float64 takes only sum, at most 2^31 windows, …);
  // throws UsageError naming it. Every problem a family builds or parses passes through here.
  virtual void check_problem(const Problem& problem) const;
  // A problem from values by name (defaults filled in), checked: the one way families build them.
  Problem make(const std::vector<std::pair<std::string, FieldValue>>& values) const;
  // A problem from "name=value,…" text (tune --problem, stored keys), checked.
  Problem parse_problem(std::string_view text) const;
  // The same from a stored or transmitted descriptor (a JSON object of every field), checked.
  Problem problem_from_descriptor(const nlohmann::json& descriptor) const;
  // The default problems when the request is empty; throws UsageError for a bad type or size.
  virtual std::vector<Problem> problems(const ProblemRequest& request) const = 0;
  // -D definitions that come from the problem rather than the config (element type, …).
  virtual std::vector<std::string> problem_definitions(const Problem& problem) const = 0;

  // Inputs and outputs: their sizes depend on the problem only.
  virtual std::vector<BufferSpec> buffers(const Problem& problem) const = 0;
  // Per-config working memory (tile states, partial sums); none by default.
  virtual std::vector<BufferSpec> scratch(const Problem& problem, const ConfigView& config) const;
  virtual std::vector<Step> plan(const Problem& problem, const ConfigView& config) const = 0;

  // Random, non-zero inputs, the same for the same seed.
  virtual void generate_inputs(const Problem& problem, std::uint64_t seed, HostBuffers& inputs) const = 0;
  // Expected outputs, computed on the CPU.
  virtual HostBuffers reference(const Problem& problem, const HostBuffers& inputs) const = 0;
  // compare() as rules over every output, when it is one: outputs are then compared on the GPU
  // and copied back only to describe a mismatch. nullopt (the default) where compare() is more
  // than such rules (range checks, sampled references): outputs come back to the CPU.
  virtual std::optional<std::vector<OutputRule>> output_rules(const Problem&, const HostBuffers& /*expected*/) const {
    return std::nullopt;
  }
  // A reference plan to run on the GPU instead of reference(); nullopt for CPU references.
  virtual std::optional<GpuReference> gpu_reference(const Problem&) const { return std::nullopt; }
  // False when the family has no reference at all: results are stored as unverified.
  virtual bool verifies() const { return true; }
  // The spec file a family was read from (kernel spec families), so that a worker process can
  // read it again; nullopt for families compiled into cutune.
  virtual std::optional<std::string> spec_file() const { return std::nullopt; }
  virtual Verdict compare(const Problem& problem, const HostBuffers& expected, const HostBuffers& actual) const = 0;
  virtual Work work(const Problem& problem) const = 0;
};

// -D definitions for a config: every axis but the plan-only ones as CUTUNE_<NAME>=<value> (names
// upper-cased).
std::vector<std::string> config_definitions(const Space& space, const Config& config);

// All families, in `tune --list` order.
const std::vector<std::unique_ptr<Family>>& families();
// The family called `name`; throws UsageError listing the known ones.
const Family& family_named(const std::string& name);

}  // namespace cutune
