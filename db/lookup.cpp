#include "lookup.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "builtin_defaults.hpp"
#include "config_choice.hpp"
#include "core/error.hpp"
#include "problem_identity.hpp"
#include "schema.hpp"
#include "sqlite.hpp"

namespace cutune::lookup {
namespace {

constexpr const char* kDetailsSql = R"sql(
  SELECT r.config, r.config_json, r.launch_json, r.time_ms_median, p.key, p.size, d.name, d.uuid, t.source_hash,
         r.verified
  FROM results r JOIN problems p ON p.id = r.problem_id JOIN devices d ON d.id = r.device_id
  JOIN templates t ON t.id = r.template_id WHERE r.id = ?1)sql";

constexpr const char* kCubinsSql = R"sql(
  SELECT c.arch, c.cubin, c.launch_json, c.nvrtc_version, c.compile_options FROM results r
  JOIN cubins c ON c.problem_id = r.problem_id AND c.template_id = r.template_id AND c.config = r.config
  WHERE r.id = ?1 ORDER BY c.arch)sql";

// What a query asks for once its fields are read with the family's stored schema.
struct CanonicalProblem {
  std::string match_key;  // the fields every answer's problem must have
  std::int64_t size = 0;
};

// The devices one fallback level draws on, and how to say so.
struct LevelSource {
  db::DeviceSet devices;
  Level level;
  std::string basis;
};

double size_distance(std::int64_t requested, std::int64_t stored) {
  return std::abs(std::log(static_cast<double>(requested)) - std::log(static_cast<double>(stored)));
}

// -1, 0 or 1 as distance a is nearer, as near (to rounding: 32768 lies midway between 1024 and
// 2^20 although the logarithms differ in the last bit) or farther than b.
int compare_distances(double a, double b) {
  constexpr double kSame = 1e-9;
  return a < b - kSame ? -1 : a > b + kSame ? 1 : 0;
}

std::optional<std::int64_t> parse_integer(const std::string& text) {
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

Parameter parameter_of(const std::string& name, const nlohmann::ordered_json& value) {
  Parameter p{name, value.is_string() ? value.get<std::string>() : value.dump(), std::nullopt};
  if (value.is_number_integer()) p.integer = value.get<std::int64_t>();
  return p;
}

// From the stored JSON object when there is one (it keeps numbers apart from labels), else from
// the canonical "name=value,…" text.
std::vector<Parameter> parameters_of(const std::string& config_json, const std::string& config) {
  std::vector<Parameter> parameters;
  const auto json = nlohmann::ordered_json::parse(config_json, nullptr, false);
  if (json.is_object() && !json.empty()) {
    for (const auto& [name, value] : json.items()) parameters.push_back(parameter_of(name, value));
    return parameters;
  }
  for (NamedValue& item : parse_named_values(config)) {
    auto integer = parse_integer(item.value);
    parameters.push_back({std::move(item.name), std::move(item.value), integer});
  }
  return parameters;
}

// A stored result's plan (records.hpp: launch_json, written by the tuner's stored_step and
// evaluator): launches and memsets in order. Results stored before memsets were kept hold
// launches only.
std::vector<Step> steps_of(const std::string& launch_json) {
  std::vector<Step> steps;
  const auto json = nlohmann::json::parse(launch_json, nullptr, false);
  if (!json.is_array()) return steps;
  const auto dim3 = [](const nlohmann::json& entry, const char* key) {
    std::array<unsigned, 3> d{1, 1, 1};
    if (auto it = entry.find(key); it != entry.end() && it->is_array())
      for (std::size_t i = 0; i < std::min<std::size_t>(3, it->size()); ++i) d[i] = it->at(i).get<unsigned>();
    return d;
  };
  for (const auto& entry : json) {
    if (!entry.is_object()) continue;
    if (entry.contains("memset")) {
      steps.emplace_back(Memset{entry.value("memset", ""), entry.value("word", 0u), entry.value("bytes", std::int64_t{0}),
                                entry.value("byte_offset", std::int64_t{0}), entry.value("stream_write", false)});
      continue;
    }
    Launch launch;
    launch.kernel = entry.value("kernel", "");
    launch.grid = dim3(entry, "grid");
    launch.block = dim3(entry, "block");
    launch.dynamic_shared_bytes = entry.value("dynamic_shared_bytes", 0u);
    steps.emplace_back(std::move(launch));
  }
  return steps;
}

// The launches of a plan, without its memsets.
std::vector<Launch> launches_in(const std::vector<Step>& steps) {
  std::vector<Launch> launches;
  for (const auto& step : steps)
    if (const auto* launch = std::get_if<Launch>(&step)) launches.push_back(*launch);
  return launches;
}

struct Arch {
  int major = 0, minor = 0;
  std::string suffix;  // "a" or "f": architecture-specific, runs on exactly that architecture
};

// "sm_90" → 9.0, "sm_100a" → 10.0 "a"; nullopt when it is no architecture name.
std::optional<Arch> parse_arch(const std::string& name) {
  if (name.rfind("sm_", 0) != 0) return std::nullopt;
  std::size_t digits_end = 3;
  while (digits_end < name.size() && std::isdigit(static_cast<unsigned char>(name[digits_end]))) ++digits_end;
  const std::string digits = name.substr(3, digits_end - 3);
  if (digits.size() < 2) return std::nullopt;
  return Arch{std::stoi(digits.substr(0, digits.size() - 1)), digits.back() - '0', name.substr(digits_end)};
}

}  // namespace

const char* to_string(Level level) {
  switch (level) {
    case Level::exact_device: return "exact_device";
    case Level::same_compute_capability: return "same_compute_capability";
    case Level::family_default: return "family_default";
    case Level::builtin_default: return "builtin_default";
  }
  return "unknown";
}

std::string arch_of(int cc_major, int cc_minor) {
  // No GPU has compute capability 0.x, and a minor version has one digit: "sm_00" or "sm_910"
  // would only fail later, far from the mistake.
  if (cc_major < 1 || cc_minor < 0 || cc_minor > 9)
    throw Error("no architecture for compute capability " + std::to_string(cc_major) + "." + std::to_string(cc_minor));
  return "sm_" + std::to_string(cc_major) + std::to_string(cc_minor);
}

const Parameter* Match::parameter(const std::string& name) const {
  for (const auto& p : parameters)
    if (p.name == name) return &p;
  return nullptr;
}

std::int64_t Match::integer(const std::string& name) const {
  const Parameter* p = parameter(name);
  if (!p) throw Error("config '" + config + "' has no parameter '" + name + "'");
  if (!p->integer) throw Error("parameter '" + name + "' of config '" + config + "' is '" + p->value + "', not an integer");
  return *p->integer;
}

struct Database::Impl {
  sql::Database db;
  std::mutex db_mutex;  // one lookup at a time on the connection: it reads in one snapshot
  std::shared_mutex cache_mutex;
  std::unordered_map<std::string, std::shared_ptr<const Match>> cache;

  explicit Impl(const std::string& path) : db(path, sql::Database::Mode::read_only) {
    const int version = db::schema_version(db);
    if (version == 0) throw Error("'" + path + "' is not a cutune database (it has no schema)");
    if (version > db::kSchemaVersion)
      throw Error("database '" + path + "' has schema version " + std::to_string(version) +
                  ", newer than this cutune lookup library reads (" + std::to_string(db::kSchemaVersion) +
                  "); use a newer cutune");
    if (version < db::kOldestSchemaVersionForLookups)
      throw Error("database '" + path + "' has schema version " + std::to_string(version) +
                  ", older than this library reads (" + std::to_string(db::kOldestSchemaVersionForLookups) +
                  "); any tune db command migrates it, e.g. tune db devices --db " + path);
  }

  // The match from these candidates: the chosen config, shown through its measurement nearest in
  // size to the request (the fastest among equally near ones).
  // Stored problem schemas by family, read once per family (guarded by db_mutex).
  std::unordered_map<std::string, std::optional<ProblemSchema>> schemas;

  // The query's match key and size: its fields read with the family's stored schema (defaults
  // filled in, names and values checked), or, for a family stored without one, its element type.
  CanonicalProblem canonical(const Query& q) {
    auto it = schemas.find(q.family);
    if (it == schemas.end()) it = schemas.emplace(q.family, db::stored_problem_schema(db, q.family)).first;
    const std::optional<ProblemSchema>& schema = it->second;
    CanonicalProblem c;
    c.size = q.problem.size;
    if (!schema) {
      if (!q.problem.fields.empty())
        throw Error("family '" + q.family + "' has no stored problem schema (its results were imported); its problems "
                    "match on size and element type only, so the query may not name fields");
      c.match_key = db::untyped_match_key(q.problem.dtype);
      return c;
    }
    std::vector<NamedValue> fields;
    for (const Field& f : q.problem.fields) fields.push_back({f.name, f.value});
    if (!q.problem.dtype.empty()) {
      const ProblemField* type_field = schema->element_type_field();
      if (!type_field) throw Error("family '" + q.family + "' has no element type; leave the query's dtype empty");
      bool given = false;
      for (const NamedValue& f : fields)
        if (f.name == type_field->name) {
          if (f.value != q.problem.dtype)
            throw Error("the query's dtype '" + q.problem.dtype + "' and its field " + f.name + "=" + f.value +
                        " disagree");
          given = true;
        }
      if (!given) fields.push_back({type_field->name, q.problem.dtype});
    }
    // Extents, when all are given, say the size; with a size given too, they must agree.
    std::int64_t product = 1;
    bool all_extents = true;
    for (const ProblemField& declared : schema->fields()) {
      if (declared.kind != FieldKind::extent) continue;
      const NamedValue* given = nullptr;
      for (const NamedValue& f : fields)
        if (f.name == declared.name) given = &f;
      if (!given) {
        all_extents = false;
        continue;
      }
      product *= std::get<std::int64_t>(declared.parse(given->value));
    }
    c.match_key = schema->match_key(fields);
    if (all_extents && c.size <= 0) c.size = product;
    else if (all_extents && product != c.size)
      throw Error("the query's size " + std::to_string(c.size) + " is not the product of its extents (" +
                  std::to_string(product) + ")");
    return c;
  }

  std::shared_ptr<Match> match_from(const db::Candidates& c, const CanonicalProblem& p, Level level,
                                    const std::string& basis) {
    const std::int64_t size = p.size;
    const std::string& match_key = p.match_key;
    const std::size_t config = db::choose_config(c).config;
    const db::Candidate* shown = nullptr;
    for (const db::Candidate& row : c.rows) {
      if (row.config != config) continue;
      if (!shown) {
        shown = &row;
        continue;
      }
      const int order = compare_distances(size_distance(size, row.size), size_distance(size, shown->size));
      if (order < 0 || (order == 0 && row.ms < shown->ms)) shown = &row;
    }
    auto s = db.prepare(kDetailsSql);
    s.bind(1, shown->result_id);
    s.step();
    auto m = std::make_shared<Match>();
    m->level = level;
    m->basis = basis;
    m->config = s.column_text(0);
    m->parameters = parameters_of(s.column_text(1), m->config);
    m->steps = steps_of(s.column_text(2));
    m->launches = launches_in(m->steps);
    m->time_ms = s.column_double(3);
    m->matched_problem = s.column_text(4);
    m->matched_size = s.column_int(5);
    m->size_distance = size_distance(size, m->matched_size);
    m->match_key = match_key;
    m->device_name = s.column_text(6);
    m->device_uuid = s.column_text(7);
    m->template_hash = s.column_text(8);
    m->verified = s.column_int(9) != 0;
    m->result_id = shown->result_id;
    return m;
  }

  // Levels 1 and 2: the nearest stored size of the type on these devices (the larger of two
  // equally near ones, whose timing is less dominated by launch overhead), then the best config there.
  std::shared_ptr<Match> nearest_size_match(const Query& q, const CanonicalProblem& p, const LevelSource& source) {
    const auto sizes = db::stored_sizes(db, q.family, p.match_key, source.devices);
    if (sizes.empty()) return nullptr;
    std::int64_t nearest = sizes.front();
    for (std::int64_t size : sizes) {
      const int order = compare_distances(size_distance(p.size, size), size_distance(p.size, nearest));
      if (order < 0 || (order == 0 && size > nearest)) nearest = size;
    }
    const auto c = db::candidates(db, q.family, p.match_key, source.devices, nearest);
    return match_from(c, p, source.level, source.basis);
  }

  // Level 3: the writer's precomputed choice when it is fresh (one config's rows to read), else
  // the same choice scored here over every stored result.
  std::shared_ptr<Match> family_default_match(const Query& q, const CanonicalProblem& p) {
    const db::DeviceSet all{};
    const auto precomputed = db::precomputed_family_default(db, q.family, p.match_key);
    if (precomputed && precomputed->empty()) return nullptr;
    const auto c = db::candidates(db, q.family, p.match_key, all, 0, precomputed.value_or(""));
    if (c.rows.empty()) return nullptr;
    return match_from(c, p, Level::family_default, "every stored device and size");
  }

  std::shared_ptr<Match> builtin_match(const Query& q, const CanonicalProblem& p) {
    const db::BuiltinDefault* fallback = db::builtin_default(q.family);
    if (!fallback)
      throw Error("no stored result for family '" + q.family + "' with '" + p.match_key +
                  "', and the family has no built-in default (is the family name right?)");
    auto m = std::make_shared<Match>();
    m->level = Level::builtin_default;
    m->basis = "built-in default of " + q.family;
    m->config = fallback->config;
    m->parameters = parameters_of("", m->config);
    m->size_distance = std::numeric_limits<double>::infinity();
    m->match_key = p.match_key;
    return m;
  }

  std::shared_ptr<const Match> resolve(const Query& q) {
    std::lock_guard lock(db_mutex);
    sql::Transaction snapshot(db, sql::Transaction::Kind::read);
    const CanonicalProblem p = canonical(q);
    if (p.size <= 0) throw Error("lookup needs a positive problem size (got " + std::to_string(p.size) + ")");
    using Rule = db::DeviceSet::Rule;
    const DeviceIdentity& d = q.device;
    std::vector<LevelSource> sources;
    const auto add = [&sources](Rule rule, const std::string& text, Level level, std::string basis, int cc_major = 0,
                                int cc_minor = 0) {
      LevelSource& source = sources.emplace_back();
      source.devices.rule = rule;
      source.devices.text = text;
      source.devices.cc_major = cc_major;
      source.devices.cc_minor = cc_minor;
      source.level = level;
      source.basis = std::move(basis);
    };
    if (!d.uuid.empty()) add(Rule::uuid, d.uuid, Level::exact_device, "device " + d.uuid);
    if (!d.name.empty()) add(Rule::name, d.name, Level::exact_device, "device name " + d.name);
    if (d.cc_major > 0)
      add(Rule::compute_capability, "", Level::same_compute_capability,
          "compute capability " + std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor), d.cc_major, d.cc_minor);
    for (const auto& source : sources)
      if (auto m = nearest_size_match(q, p, source)) return m;
    if (auto m = family_default_match(q, p)) return m;
    return builtin_match(q, p);
  }

  Cubin cubin_of(const Match& match, const std::string& arch) {
    Cubin none;
    const auto wanted = parse_arch(arch);
    if (!wanted) {
      none.reason = "'" + arch + "' is not an architecture name like sm_90";
      return none;
    }
    if (match.result_id == 0) {
      none.reason = "the built-in default of a family has no stored cubin; compile the template for " + arch;
      return none;
    }
    std::lock_guard lock(db_mutex);
    auto s = db.prepare(kCubinsSql);
    s.bind(1, match.result_id);
    std::string stored;
    Cubin best;
    while (s.step()) {
      const std::string candidate_arch = s.column_text(0);
      stored += (stored.empty() ? "" : ", ") + candidate_arch;
      const auto have = parse_arch(candidate_arch);
      // A cubin runs on its own architecture and, without an architecture-specific suffix, on
      // later minors of the same major; never across majors. The nearest minor wins.
      const bool exact = candidate_arch == arch;
      const bool compatible = have && have->suffix.empty() && wanted->suffix.empty() && have->major == wanted->major &&
                              have->minor <= wanted->minor;
      const bool nearer = best.image.empty() || (have && parse_arch(best.arch)->minor < have->minor);
      if (!exact && !(compatible && nearer)) continue;
      best.image = s.column_blob(1);
      best.arch = candidate_arch;
      best.exact_arch = exact;
      best.steps = steps_of(s.column_text(2));
      best.launches = launches_in(best.steps);
      best.nvrtc_version = s.column_text(3);
      best.compile_options = s.column_text(4);
      if (exact) break;
    }
    if (best.image.empty()) {
      none.reason = "no cubin of config '" + match.config + "' (problem " + match.matched_problem + ") for " + arch +
                    (stored.empty() ? std::string(": none stored; compile the template") : "; stored for: " + stored);
      return none;
    }
    if (best.image.size() < 4 || best.image[0] != 0x7f || best.image[1] != 'E' || best.image[2] != 'L' ||
        best.image[3] != 'F') {
      none.reason = "the stored cubin for " + best.arch + " is damaged (no ELF header)";
      return none;
    }
    return best;
  }
};

Database::Database(const std::string& path) {
  try {
    impl_ = std::make_unique<Impl>(path);
  } catch (const sql::DbError& e) {
    throw Error(e.what());
  }
}

Database::~Database() = default;

static std::string cache_key(const Query& q) {
  std::string key;
  key.reserve(q.family.size() + q.device.uuid.size() + q.device.name.size() + q.problem.dtype.size() + 48);
  // Unit separators keep ("ab", "c") apart from ("a", "bc").
  key.append(q.family).push_back('\x1f');
  key.append(q.device.uuid).push_back('\x1f');
  key.append(q.device.name).push_back('\x1f');
  key.append(q.problem.dtype).push_back('\x1f');
  key.append(std::to_string(q.device.cc_major)).push_back('.');
  key.append(std::to_string(q.device.cc_minor)).push_back('\x1f');
  key.append(std::to_string(q.problem.size));
  for (const Field& f : q.problem.fields) {
    key.push_back('\x1e');
    key.append(f.name).push_back('\x1f');
    key.append(f.value);
  }
  return key;
}

std::shared_ptr<const Match> Database::find(const Query& query) {
  const std::string key = cache_key(query);
  {
    std::shared_lock lock(impl_->cache_mutex);
    if (auto it = impl_->cache.find(key); it != impl_->cache.end()) return it->second;
  }
  if (query.family.empty()) throw Error("lookup needs a family");
  if (query.problem.size < 0) throw Error("lookup needs a positive problem size (got " + std::to_string(query.problem.size) + ")");
  std::shared_ptr<const Match> match;
  try {
    match = impl_->resolve(query);
  } catch (const sql::DbError& e) {
    throw Error(std::string("lookup of ") + query.family + " failed: " + e.what());
  } catch (const UsageError& e) {  // a field the family does not declare, a value it does not take, …
    throw Error(std::string("lookup of ") + query.family + ": " + e.what());
  }
  std::unique_lock lock(impl_->cache_mutex);
  return impl_->cache.try_emplace(key, std::move(match)).first->second;
}

Cubin Database::cubin(const Query& query, const std::string& arch) {
  const auto match = find(query);
  try {
    return impl_->cubin_of(*match, arch);
  } catch (const sql::DbError& e) {
    throw Error(std::string("reading the cubin of ") + query.family + " failed: " + e.what());
  }
}

void Database::clear_cache() {
  {
    std::lock_guard lock(impl_->db_mutex);
    impl_->schemas.clear();  // a tuner may have stored a new declaration meanwhile
  }
  std::unique_lock lock(impl_->cache_mutex);
  impl_->cache.clear();
}

}  // namespace cutune::lookup
