#pragma once
// cutune::lookup — what an application links to ask a cutune results database for the best launch
// configuration of a kernel family on its device and problem, and for a ready-to-load cubin.
//
// Depends on SQLite and the C++ standard library only: no CUDA, no NVRTC, no tuner. The caller
// describes its device (UUID, name, compute capability from the driver API) and its problem
// (size, element type and the family's other problem fields, such as reduce's operator); the
// answer says how good the match is, so the application can decide whether to trust it or tune.
//
//   cutune::lookup::Database results("/path/cutune.db");   // read-only
//   cutune::lookup::Query scan{"scan", {uuid, name, 9, 0}, {n, "int32"}};
//   auto match = results.find(scan);
//   auto sum = results.find({"reduce", {uuid, name, 9, 0}, {n, "float32", {{"op", "sum"}}}});
//   match->integer("block"), match->steps (memsets and launches), match->level, match->size_distance
//   auto cubin = results.cubin(scan, cutune::lookup::arch_of(9, 0));  // empty + reason when none fits
//   auto frugal = results.find(scan, cutune::lookup::Objective::lowest_energy(0.05));  // ≤ 5 % slower
//
// The README ("Applications: cutune::lookup") has a complete program in C++ and one in C; CI
// compiles both against this library.
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#define CUTUNE_LOOKUP_API __attribute__((visibility("default")))

namespace cutune::lookup {

// Where a match comes from, most specific first. Each level is tried only when the one before
// has no successful result of the requested problem kind (its match key: every problem field but
// the sizes, element type included).
enum class Level : int {
  exact_device = 1,             // this device's results: by UUID, else by name
  same_compute_capability = 2,  // results of every device with the same compute capability
  family_default = 3,           // the config with the best average over all stored devices and sizes
  builtin_default = 4,          // nothing stored fits: the family's built-in default config
};
CUTUNE_LOOKUP_API const char* to_string(Level level);

struct DeviceIdentity {
  std::string uuid;                // "GPU-…" as the driver reports it; may be empty
  std::string name;                // "NVIDIA H100 80GB HBM3"; may be empty
  int cc_major = 0, cc_minor = 0;  // 0.0: unknown, and the compute-capability level is skipped
};

// One problem field by name, its value as text: {"op", "sum"}, {"window", "60"}.
struct Field {
  std::string name;
  std::string value;
};

// The problem to look up. A family declares its problem fields (the tuner stores the declaration
// with the results): extents, whose product is the size and which match by nearness, and the
// others (element type, operator, window, offsets, …), which must match exactly — a lookup for a
// sum never answers with a min's config, plan or cubin. Fields left out take their declared
// default; a field without a default must be given. `tune db families` lists each family's fields.
struct ProblemDescriptor {
  std::int64_t size = 0;  // elements (product of the extents); 0: computed from extents in `fields`
  // The element type (the family's first element-type field). Empty: the element-type field in
  // `fields`, else its declared default; for a family stored without a problem schema (imported
  // results), the one element type its problems are stored with (none, for Kernel Tuner imports).
  // Where none of these says it, find() refuses the query (Error) rather than answer with the
  // built-in default. Match::match_key shows the type that answered.
  std::string dtype;
  std::vector<Field> fields;
};

struct Query {
  std::string family;
  DeviceIdentity device;
  ProblemDescriptor problem;
};

// What find() answers with. fastest: the config the fallback levels choose (the default).
// lowest_energy: the same level and problem are found as for the fastest; then, of the results that
// device measured on that problem, those at most within_fraction slower than the fastest of them
// (0.05: 5 %) compete, and the one with the least energy per run wins (ties: the faster, then the
// smaller config text). Where none of them has a measured energy (results stored before schema
// version 8, imported ones, runs without tune --energy), and at the family-default and built-in
// levels, which are not chosen per device, the answer is the fastest's, and Match::objective_note
// says why.
struct Objective {
  enum class Kind : int { fastest = 0, lowest_energy = 1 };
  Kind kind = Kind::fastest;
  double within_fraction = 0;  // lowest_energy: a finite fraction of at least 0

  static Objective fastest() { return {}; }
  static Objective lowest_energy(double within_fraction) { return {Kind::lowest_energy, within_fraction}; }
};
CUTUNE_LOOKUP_API const char* to_string(Objective::Kind kind);  // "fastest", "lowest_energy"

struct Parameter {
  std::string name;
  std::string value;                    // as stored: a number, or a label such as "lookback"
  std::optional<std::int64_t> integer;  // set when the value is an integer
};

struct Launch {
  std::string kernel;
  std::array<unsigned, 3> grid{1, 1, 1}, block{1, 1, 1};
  unsigned dynamic_shared_bytes = 0;
  // The kernel shares its work out over however many blocks run (matmul's stream-K), and `grid` is
  // what the measured device held at once: blocks per SM at this block size and shared memory
  // (cuOccupancyMaxActiveBlocksPerMultiprocessor) times its SMs. Size it so on another GPU.
  bool fill_device = false;
  // Measured with programmatic dependent launch (sm_90 and newer): launch it with
  // CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION (cudaLaunchAttributeProgrammaticStreamSerialization)
  // to let it start while the launch before it finishes. Launched plainly it computes the same.
  bool programmatic = false;
};

// A step that fills part of one of the family's buffers with a repeated 32-bit word before (or
// between) launches, as cuMemsetD32(buffer + byte_offset, word, bytes / 4): the output that an
// atomic reduction adds into is zeroed first, say. `buffer` is the family's name for it, which is
// also the name of the kernels' parameter that receives it.
struct Memset {
  std::string buffer;
  std::uint32_t word = 0;
  std::int64_t bytes = 0, byte_offset = 0;
  // Measured as stream memory writes of the words (cuStreamWriteValue32), which launch nothing,
  // rather than a memset; either gives the same contents.
  bool stream_write = false;
};

// One step of a measured plan.
using Step = std::variant<Launch, Memset>;

struct CUTUNE_LOOKUP_API Match {
  Level level = Level::builtin_default;
  std::string basis;   // what the level matched, in words: "device GPU-…", "compute capability 9.0", …
  std::string config;  // canonical "name=value,…"
  std::vector<Parameter> parameters;
  // The launches as measured on the matched problem. Block and shared memory carry over to other
  // sizes; grids usually grow with the size, so recompute them when size_distance > 0. Empty for
  // the built-in default, which was never measured.
  std::vector<Launch> launches;
  // The whole plan as measured, in order: the launches above and the memsets before or between
  // them. Configs whose plan has memsets (reduce's atomic pass, powersum's sym map, matmul's split
  // k) give wrong results when only `launches` run. Byte counts, like grids, are the matched
  // problem's.
  std::vector<Step> steps;
  std::int64_t matched_size = 0;
  std::string matched_problem;           // the stored problem key, e.g. "n=1048576,type=int32"
  std::string match_key;                 // the fields matched exactly, e.g. "op=sum,type=float32"
  double size_distance = 0;              // |ln(requested size) − ln(matched size)|: 0 exact, +inf built-in
  std::optional<double> time_ms;         // median measured for the launches below
  std::string device_name, device_uuid;  // the device that measured them
  std::string template_hash;             // the template version they were measured with
  std::int64_t result_id = 0;            // the stored result behind the launches; 0 for built-in
  // False when the result was never checked against a reference (a kernel spec without one):
  // its config ran and was timed, but its outputs may be wrong.
  bool verified = true;
  // What the result behind the launches observed besides its time, where it was measured (schema
  // version 8, tune --energy): the energy of one run of its plan and the average power meanwhile,
  // the whole board's (NVML). nullopt where unknown.
  std::optional<double> energy_j, power_w;
  // How the config was chosen: lowest_energy only where energies were compared (the fastest config
  // may win that too); fastest otherwise, lowest-energy queries answered with the fastest included.
  Objective::Kind chosen_by = Objective::Kind::fastest;
  // For a lowest-energy query that compared energies: the fastest time among the results it
  // compared, the window's reference (time_ms is at most (1 + within_fraction) times this).
  std::optional<double> fastest_time_ms;
  // Why a lowest-energy query was answered with the fastest config, in a line; empty when it was
  // answered as asked, and for fastest queries.
  std::string objective_note;

  const Parameter* parameter(const std::string& name) const;  // nullptr when absent
  std::int64_t integer(const std::string& name) const;        // throws Error when absent or not an integer
};

// A ready-to-load image of a match's config. Empty, with the reason, when none fits the
// architecture: the application then compiles the template itself (JIT) or reports it.
struct Cubin {
  std::vector<unsigned char> image;
  std::string arch;         // of the image, e.g. "sm_90"
  bool exact_arch = false;  // false: built for an earlier minor of the same major (binary compatible)
  std::string reason;       // why there is none, when image is empty
  std::vector<Launch> launches;
  std::vector<Step> steps;  // as Match::steps
  std::string nvrtc_version;
  std::string compile_options;  // JSON array of the options NVRTC saw
  explicit operator bool() const { return !image.empty(); }
};

struct CUTUNE_LOOKUP_API Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// "sm_90" for compute capability 9.0; throws Error for one no GPU has (0.0, a minor above 9).
CUTUNE_LOOKUP_API std::string arch_of(int cc_major, int cc_minor);

class CUTUNE_LOOKUP_API Database {
 public:
  // Opens read-only, so a tuner may write meanwhile. Throws Error when the file cannot be opened,
  // is no cutune database, or has another schema version than this library reads.
  explicit Database(const std::string& path);
  ~Database();
  Database(const Database&) = delete;  // owns the connection and the cache
  Database& operator=(const Database&) = delete;

  // The best config for the query, through the fallback levels. The first lookup of a family,
  // device and problem fields (all but the size) reads what every stored size of its level needs
  // (a millisecond or so; see bench/RESULTS.md); later ones, for any size, are answered from memory
  // (well under a microsecond) for the life of this object: results stored later are not seen until
  // clear_cache(). The cache is bounded: at most 4096 queries as asked (without their size) and
  // 1024 (family, device, match key) entries, whatever sizes are asked. A database of schema
  // version 4 or 5 has no precomputed choices: each size of a level is then scored on the spot
  // the first time it is the nearest. Thread-safe.
  // Throws Error for a bad query (empty family, size ≤ 0, a field the family does not declare, a
  // value it does not take, a field without default left out, an element type nothing says; see
  // ProblemDescriptor::dtype) or a family with neither stored results nor a built-in default.
  std::shared_ptr<const Match> find(const Query& query);
  // The answer for `objective` (see Objective). A lowest-energy answer is read from the database
  // the first time it is asked for a (fastest answer, window) and kept like the fastest one.
  // Throws Error as find(query) does, and for a window that is not a finite fraction of at least 0.
  std::shared_ptr<const Match> find(const Query& query, const Objective& objective);

  // The stored cubin of find(query)'s config for `arch` ("sm_90"): the exact architecture, else
  // the newest earlier minor of the same major. Never throws for a missing cubin; see Cubin::reason.
  Cubin cubin(const Query& query, const std::string& arch);
  // The same for find(query, objective)'s config.
  Cubin cubin(const Query& query, const std::string& arch, const Objective& objective);

  // Forgets every answer and stored problem schema: the next lookups read the database again.
  void clear_cache();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cutune::lookup
