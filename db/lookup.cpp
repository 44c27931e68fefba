#include "lookup.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "builtin_defaults.hpp"
#include "choice_tables.hpp"
#include "config_choice.hpp"
#include "core/error.hpp"
#include "problem_identity.hpp"
#include "schema.hpp"
#include "sqlite.hpp"

namespace cutune::lookup {
namespace {

// What a match shows of its result; energy and power where the schema has them (version 8).
std::string details_sql(int schema_version) {
  return std::string(R"sql(
  SELECT r.config, r.config_json, r.launch_json, r.time_ms_median, p.key, p.size, d.name, d.uuid, t.source_hash,
         r.verified, )sql") +
         (schema_version >= db::kObservationsSchemaVersion ? "r.energy_j, r.power_w" : "NULL, NULL") + R"sql(
  FROM results r JOIN problems p ON p.id = r.problem_id JOIN devices d ON d.id = r.device_id
  JOIN templates t ON t.id = r.template_id WHERE r.id = ?1)sql";
}

constexpr const char* kCubinsSql = R"sql(
  SELECT c.arch, c.cubin, c.launch_json, c.nvrtc_version, c.compile_options FROM results r
  JOIN cubins c ON c.problem_id = r.problem_id AND c.template_id = r.template_id AND c.config = r.config
  WHERE r.id = ?1 ORDER BY c.arch)sql";

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
      steps.emplace_back(Memset{entry.value("memset", ""), entry.value("word", 0u),
                                entry.value("bytes", std::int64_t{0}), entry.value("byte_offset", std::int64_t{0}),
                                entry.value("stream_write", false)});
      continue;
    }
    Launch launch;
    launch.kernel = entry.value("kernel", "");
    launch.grid = dim3(entry, "grid");
    launch.block = dim3(entry, "block");
    launch.dynamic_shared_bytes = entry.value("dynamic_shared_bytes", 0u);
    launch.fill_device = entry.value("fill_device", false);
    launch.programmatic = entry.value("programmatic", false);
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
    case Level::exact_device:
      return "exact_device";
    case Level::same_compute_capability:
      return "same_compute_capability";
    case Level::family_default:
      return "family_default";
    case Level::builtin_default:
      return "builtin_default";
  }
  return "unknown";
}

const char* to_string(Objective::Kind kind) {
  switch (kind) {
    case Objective::Kind::fastest:
      return "fastest";
    case Objective::Kind::lowest_energy:
      return "lowest_energy";
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
  if (!p->integer)
    throw Error("parameter '" + name + "' of config '" + config + "' is '" + p->value + "', not an integer");
  return *p->integer;
}

namespace {

// A map that never holds more than `capacity` entries: an application that asks about millions of
// distinct problems must not grow the cache without bound. When full, an entry goes (the first in
// the table's order: an arbitrary one).
template <class Value>
class BoundedMap {
 public:
  explicit BoundedMap(std::size_t capacity) : capacity_(capacity) {}
  const Value* find(const std::string& key) const {
    const auto it = map_.find(key);
    return it == map_.end() ? nullptr : &it->second;
  }
  const Value& insert(const std::string& key, Value value) {
    if (const auto it = map_.find(key); it != map_.end()) return it->second;
    if (map_.size() >= capacity_) map_.erase(map_.begin());
    return map_.emplace(key, std::move(value)).first->second;
  }
  void clear() { map_.clear(); }

 private:
  std::size_t capacity_;
  std::unordered_map<std::string, Value> map_;
};

// The answers to every size of one (family, device, match key): the level that answers, and for
// each size stored there the match as if asked at exactly that size. A lookup searches the sizes
// and fills in what depends on the requested size (size_distance).
struct Plan {
  struct Entry {
    std::int64_t size = 0;
    double log_size = 0;
    double ms = 0;  // the shown measurement's time; level 3 answers equally near sizes with the faster
    // Null until scored, in a plan of a database without precomputed choices (`lazy`); such
    // entries are read and filled under the connection's mutex.
    mutable std::shared_ptr<const Match> match;
  };
  std::vector<Entry> entries;  // ascending size; empty: `builtin` answers every size
  std::shared_ptr<const Match> builtin;
  bool ties_to_faster = false;
  bool lazy = false;
  // What scoring a lazy entry needs.
  std::string family, match_key;
  db::DeviceSet devices;
  Level level = Level::builtin_default;
  std::string basis;
};

// A query as asked, without its size: the plan that answers it, and the size its extents fix
// when they are all given (0 otherwise).
struct KnownQuery {
  std::shared_ptr<const Plan> plan;
  std::int64_t fixed_size = 0;
};

// The cache key of a query as asked, without its size. Unit separators keep ("ab", "c") apart
// from ("a", "bc").
std::string query_key(const Query& q) {
  std::string key;
  key.reserve(q.family.size() + q.device.uuid.size() + q.device.name.size() + q.problem.dtype.size() + 32);
  key.append(q.family).push_back('\x1f');
  key.append(q.device.uuid).push_back('\x1f');
  key.append(q.device.name).push_back('\x1f');
  key.append(q.problem.dtype).push_back('\x1f');
  key.append(std::to_string(q.device.cc_major)).push_back('.');
  key.append(std::to_string(q.device.cc_minor));
  for (const Field& f : q.problem.fields) {
    key.push_back('\x1e');
    key.append(f.name).push_back('\x1f');
    key.append(f.value);
  }
  return key;
}

}  // namespace

struct Database::Impl {
  sql::Database db;
  int version = 0;
  std::mutex db_mutex;  // one reader at a time on the connection: a plan is read in one snapshot
  // Stored problem schemas by family, read once per family (guarded by db_mutex).
  BoundedMap<std::optional<ProblemSchema>> schemas{256};
  std::shared_mutex cache_mutex;  // taken after db_mutex where both are held
  BoundedMap<KnownQuery> queries{4096};
  BoundedMap<std::shared_ptr<const Plan>> plans{1024};  // by family, device and match key
  // Lowest-energy answers by the fastest answer they replace and the window (energy_key).
  BoundedMap<std::shared_ptr<const Match>> energy_answers{4096};
  std::string details_query;  // what stored_match reads, as this schema version has it

  explicit Impl(const std::string& path) : db(path, sql::Database::Mode::read_only) {
    version = db::schema_version(db);
    details_query = details_sql(version);
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

  // The element type of a query that gives none, for a family stored without a problem schema
  // (so without a declared default): "" where its problems have no element type (imported Kernel
  // Tuner files), else the one element type its problems have. Refused where that does not say
  // it — several types, or nothing stored of a family that has a built-in default — rather than
  // answered with the built-in default for want of a type.
  std::string untyped_element_type(const std::string& family) {
    auto s = db.prepare("SELECT DISTINCT dtype FROM problems WHERE family = ?1 ORDER BY dtype LIMIT 4");
    s.bind(1, family);
    std::vector<std::string> types;
    while (s.step()) types.push_back(s.column_text(0));
    if (types.size() == 1 || (!types.empty() && types.front().empty())) return types.front();
    if (types.empty() && !db::builtin_default(family)) return "";  // unknown: find() says so
    std::string stored;
    for (const std::string& type : types) stored += (stored.empty() ? "" : ", ") + type;
    throw Error("lookup of " + family + " needs the element type (dtype, or the element-type field): " +
                (types.empty()
                     ? std::string("nothing of the family is stored")
                     : "its stored problems have several (" + stored + (types.size() > 3 ? ", …" : "") + ")") +
                ", and the database has no problem schema of it to take a default from");
  }

  // The query's match key, and the size its extents give when all are given (0 otherwise): its
  // fields read with the family's stored schema (defaults filled in, names and values checked),
  // or, for a family stored without one, its element type.
  std::pair<std::string, std::int64_t> canonical(const Query& q) {
    const std::optional<ProblemSchema>* cached = schemas.find(q.family);
    if (!cached) cached = &schemas.insert(q.family, db::stored_problem_schema(db, q.family));
    const std::optional<ProblemSchema>& schema = *cached;
    if (!schema) {
      if (!q.problem.fields.empty())
        throw Error("family '" + q.family +
                    "' has no stored problem schema (its results were imported); its problems "
                    "match on size and element type only, so the query may not name fields");
      return {db::untyped_match_key(q.problem.dtype.empty() ? untyped_element_type(q.family) : q.problem.dtype), 0};
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
    // Extents, when all are given, say the size.
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
    return {schema->match_key(fields), all_extents ? product : 0};
  }

  // The match as if asked at exactly the stored size of result `result_id`.
  std::shared_ptr<Match> stored_match(sql::Statement& details, std::int64_t result_id, Level level,
                                      const std::string& basis, const std::string& match_key) {
    details.bind(1, result_id);
    if (!details.step()) throw Error("the stored result " + std::to_string(result_id) + " a choice names is missing");
    auto m = std::make_shared<Match>();
    m->level = level;
    m->basis = basis;
    m->config = details.column_text(0);
    m->parameters = parameters_of(details.column_text(1), m->config);
    m->steps = steps_of(details.column_text(2));
    m->launches = launches_in(m->steps);
    m->time_ms = details.column_double(3);
    m->matched_problem = details.column_text(4);
    m->matched_size = details.column_int(5);
    m->size_distance = 0;
    m->match_key = match_key;
    m->device_name = details.column_text(6);
    m->device_uuid = details.column_text(7);
    m->template_hash = details.column_text(8);
    m->verified = details.column_int(9) != 0;
    m->energy_j = details.column_optional_double(10);
    m->power_w = details.column_optional_double(11);
    m->result_id = result_id;
    details.reset();
    return m;
  }

  std::shared_ptr<const Match> builtin_match(const std::string& family, const std::string& match_key) {
    const db::BuiltinDefault* fallback = db::builtin_default(family);
    if (!fallback)
      throw Error("no stored result for family '" + family + "' with '" + match_key +
                  "', and the family has no built-in default (is the family name right?)");
    auto m = std::make_shared<Match>();
    m->level = Level::builtin_default;
    m->basis = "built-in default of " + family;
    m->config = fallback->config;
    m->parameters = parameters_of("", m->config);
    m->size_distance = std::numeric_limits<double>::infinity();
    m->match_key = match_key;
    return m;
  }

  // Everything a (family, device, match key) is answered from, through the fallback levels: the
  // first level with a successful result of the match key answers every size.
  std::shared_ptr<const Plan> load_plan(const Query& q, const std::string& match_key) {
    auto plan = std::make_shared<Plan>();
    plan->family = q.family;
    plan->match_key = match_key;
    db::ChoiceReader choices(db, version, q.family, match_key);
    auto details = db.prepare(details_query);
    using Rule = db::DeviceSet::Rule;
    const DeviceIdentity& d = q.device;
    struct Source {
      db::DeviceSet devices;
      Level level;
      std::string basis;
    };
    std::vector<Source> sources;
    if (!d.uuid.empty()) sources.push_back({{Rule::uuid, d.uuid, 0, 0}, Level::exact_device, "device " + d.uuid});
    if (!d.name.empty()) sources.push_back({{Rule::name, d.name, 0, 0}, Level::exact_device, "device name " + d.name});
    if (d.cc_major > 0)
      sources.push_back({{Rule::compute_capability, "", d.cc_major, d.cc_minor},
                         Level::same_compute_capability,
                         "compute capability " + std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor)});
    for (Source& source : sources) {
      const std::vector<db::SizeChoice> sizes = choices.sizes(source.devices);
      if (sizes.empty()) continue;
      plan->devices = std::move(source.devices);
      plan->level = source.level;
      plan->basis = std::move(source.basis);
      plan->lazy = !choices.precomputed();
      for (const db::SizeChoice& at : sizes) {
        Plan::Entry& e = plan->entries.emplace_back();
        e.size = at.size;
        e.log_size = std::log(static_cast<double>(at.size));
        if (at.result_id != 0) e.match = stored_match(details, at.result_id, plan->level, plan->basis, match_key);
      }
      return plan;
    }
    // Level 3: the family default, shown at each size through its fastest measurement there.
    if (const auto config = choices.family_default()) {
      plan->level = Level::family_default;
      plan->basis = "every stored device and size";
      plan->ties_to_faster = true;
      auto rows = db.prepare(R"sql(
        SELECT r.id, p.size, r.time_ms_median FROM results r INDEXED BY results_ok_by_config
        JOIN problems p ON p.id = r.problem_id
        WHERE r.config = ?1 AND r.status = 'ok' AND r.time_ms_median > 0 AND p.family = ?2 AND p.match_key = ?3
          AND p.size > 0)sql");
      rows.bind(1, *config).bind(2, q.family).bind(3, match_key);
      std::map<std::int64_t, std::pair<double, std::int64_t>> fastest;  // size → (ms, result)
      while (rows.step()) {
        const auto [it, fresh] = fastest.try_emplace(rows.column_int(1), rows.column_double(2), rows.column_int(0));
        if (!fresh && rows.column_double(2) < it->second.first)
          it->second = {rows.column_double(2), rows.column_int(0)};
      }
      for (const auto& [size, shown] : fastest) {
        Plan::Entry& e = plan->entries.emplace_back();
        e.size = size;
        e.log_size = std::log(static_cast<double>(size));
        e.ms = shown.first;
        e.match = stored_match(details, shown.second, plan->level, plan->basis, match_key);
      }
      if (!plan->entries.empty()) return plan;
    }
    plan->level = Level::builtin_default;
    plan->builtin = builtin_match(q.family, match_key);
    return plan;
  }

  // Reads what the query needs once (its canonical form, and its plan unless another query with
  // the same family, device and match key loaded it).
  KnownQuery resolve(const Query& q) {
    std::lock_guard lock(db_mutex);
    sql::Transaction snapshot(db, sql::Transaction::Kind::read);
    const auto [match_key, fixed_size] = canonical(q);
    std::string plan_key = query_key({q.family, q.device, {}});
    plan_key.append("\x1d").append(match_key);
    {
      std::shared_lock cache_lock(cache_mutex);
      if (const auto* plan = plans.find(plan_key)) return {*plan, fixed_size};
    }
    auto plan = load_plan(q, match_key);
    std::unique_lock cache_lock(cache_mutex);
    return {plans.insert(plan_key, std::move(plan)), fixed_size};
  }

  // Scores a lazy entry on first use (a database without precomputed choices).
  std::shared_ptr<const Match> lazy_match(const Plan& plan, const Plan::Entry& e) {
    std::lock_guard lock(db_mutex);
    if (e.match) return e.match;
    sql::Transaction snapshot(db, sql::Transaction::Kind::read);
    const std::int64_t result_id = db::scored_choice(db, plan.family, plan.match_key, plan.devices, e.size);
    if (result_id == 0)
      throw Error("the results of " + plan.family + " at size " + std::to_string(e.size) +
                  " went away while this lookup::Database was open; call clear_cache()");
    auto details = db.prepare(details_query);
    e.match = stored_match(details, result_id, plan.level, plan.basis, plan.match_key);
    return e.match;
  }

  // The answer for size n: the nearest stored size by |ln n − ln size|; of equally near ones (to
  // rounding) the larger, or at level 3 the faster measurement.
  std::shared_ptr<const Match> answer(const Plan& plan, std::int64_t n) {
    if (plan.entries.empty()) return plan.builtin;
    const auto& e = plan.entries;
    const double log_n = std::log(static_cast<double>(n));
    const auto distance = [&](std::size_t i) { return std::abs(log_n - e[i].log_size); };
    const std::size_t above = static_cast<std::size_t>(
        std::lower_bound(e.begin(), e.end(), n, [](const Plan::Entry& x, std::int64_t v) { return x.size < v; }) -
        e.begin());
    double best = std::numeric_limits<double>::infinity();
    if (above < e.size()) best = distance(above);
    if (above > 0) best = std::min(best, distance(above - 1));
    std::size_t first = above, last = above;  // [first, last): as near as the nearest
    while (first > 0 && compare_distances(distance(first - 1), best) == 0) --first;
    while (last < e.size() && compare_distances(distance(last), best) == 0) ++last;
    std::size_t chosen = last - 1;
    if (plan.ties_to_faster)
      for (std::size_t i = last - 1; i-- > first;)
        if (e[i].ms < e[chosen].ms) chosen = i;
    const Plan::Entry& entry = e[chosen];
    std::shared_ptr<const Match> match = plan.lazy ? lazy_match(plan, entry) : entry.match;
    if (entry.size == n) return match;
    auto asked = std::make_shared<Match>(*match);
    asked->size_distance = distance(chosen);
    return asked;
  }

  // ---- the lowest energy near the fastest (Objective::lowest_energy) ----------------------------

  // The cache key of a lowest-energy answer: the fastest answer it replaces (its result, and the
  // level and basis it was found at, which the answer keeps) and the window, bit for bit.
  static std::string energy_key(const Match& fastest, double within_fraction) {
    std::string key = std::to_string(fastest.result_id);
    key.append("\x1f").append(std::to_string(static_cast<int>(fastest.level))).append("\x1f").append(fastest.basis);
    std::uint64_t bits = 0;
    static_assert(sizeof bits == sizeof within_fraction);
    std::memcpy(&bits, &within_fraction, sizeof bits);
    return key.append("\x1f").append(std::to_string(bits));
  }

  // The fastest answer, kept, with why it answers a lowest-energy query.
  static std::shared_ptr<const Match> fastest_because(const Match& fastest, std::string note) {
    auto m = std::make_shared<Match>(fastest);
    m->objective_note = std::move(note);
    return m;
  }

  // The lowest-energy answer that replaces `fastest`, read from the database (config_choice.hpp:
  // lowest_energy, on the pair of problem and device that measured the fastest answer).
  std::shared_ptr<const Match> read_lowest_energy(const Match& fastest, double within_fraction) {
    if (fastest.level == Level::builtin_default)
      return fastest_because(fastest, "the built-in default was never measured, so it has no energy to compare");
    if (fastest.level == Level::family_default)
      return fastest_because(fastest,
                             "a family default is chosen over every stored device, not for this one: no energy "
                             "compared; answered with the family default");
    if (version < db::kObservationsSchemaVersion)
      return fastest_because(
          fastest, "the database has schema version " + std::to_string(version) + ", from before energy was stored (" +
                       std::to_string(db::kObservationsSchemaVersion) + "): answered with the fastest config");
    std::lock_guard lock(db_mutex);
    sql::Transaction snapshot(db, sql::Transaction::Kind::read);
    auto pair = db.prepare("SELECT problem_id, device_id FROM results WHERE id = ?1");
    pair.bind(1, fastest.result_id);
    if (!pair.step())
      throw Error("the stored result " + std::to_string(fastest.result_id) +
                  " went away while this lookup::Database was "
                  "open; call clear_cache()");
    const auto choice = db::lowest_energy_choice(db, pair.column_int(0), pair.column_int(1), within_fraction);
    if (!choice || choice->result_id == 0)
      return fastest_because(fastest, "no result of " + fastest.matched_problem + " on " + fastest.device_uuid +
                                          " within " + percent_text(within_fraction) +
                                          " of the fastest has a measured energy (tune --energy measures it): "
                                          "answered with the fastest config");
    auto details = db.prepare(details_query);
    auto m = stored_match(details, choice->result_id, fastest.level, fastest.basis, fastest.match_key);
    m->size_distance = fastest.size_distance;
    m->chosen_by = Objective::Kind::lowest_energy;
    m->fastest_time_ms = choice->fastest_ms;
    return m;
  }

  // "5 %", "0.5 %", "12.5 %".
  static std::string percent_text(double fraction) {
    char text[32];
    std::snprintf(text, sizeof text, "%g %%", fraction * 100);
    return text;
  }

  std::shared_ptr<const Match> lowest_energy(const std::shared_ptr<const Match>& fastest, double within_fraction) {
    const std::string key = energy_key(*fastest, within_fraction);
    std::shared_ptr<const Match> answer;
    {
      std::shared_lock lock(cache_mutex);
      if (const auto* cached = energy_answers.find(key)) answer = *cached;
    }
    if (!answer) {
      answer = read_lowest_energy(*fastest, within_fraction);
      std::unique_lock lock(cache_mutex);
      answer = energy_answers.insert(key, std::move(answer));
    }
    // Kept as first asked: another size asked nearest to the same stored one has its own distance.
    if (answer->size_distance == fastest->size_distance) return answer;
    auto asked = std::make_shared<Match>(*answer);
    asked->size_distance = fastest->size_distance;
    return asked;
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

std::shared_ptr<const Match> Database::find(const Query& query) {
  if (query.family.empty()) throw Error("lookup needs a family");
  if (query.problem.size < 0)
    throw Error("lookup needs a positive problem size (got " + std::to_string(query.problem.size) + ")");
  const std::string key = query_key(query);
  KnownQuery known;
  {
    std::shared_lock lock(impl_->cache_mutex);
    if (const KnownQuery* cached = impl_->queries.find(key)) known = *cached;
  }
  if (!known.plan) {
    try {
      known = impl_->resolve(query);
    } catch (const sql::DbError& e) {
      throw Error(std::string("lookup of ") + query.family + " failed: " + e.what());
    } catch (const UsageError& e) {  // a field the family does not declare, a value it does not take, …
      throw Error(std::string("lookup of ") + query.family + ": " + e.what());
    }
    std::unique_lock lock(impl_->cache_mutex);
    impl_->queries.insert(key, known);
  }
  std::int64_t size = query.problem.size;
  if (known.fixed_size > 0 && size == 0)
    size = known.fixed_size;
  else if (known.fixed_size > 0 && size != known.fixed_size)
    throw Error("the query's size " + std::to_string(size) + " is not the product of its extents (" +
                std::to_string(known.fixed_size) + ")");
  if (size <= 0) throw Error("lookup needs a positive problem size (got " + std::to_string(size) + ")");
  try {
    return impl_->answer(*known.plan, size);
  } catch (const sql::DbError& e) {
    throw Error(std::string("lookup of ") + query.family + " failed: " + e.what());
  }
}

std::shared_ptr<const Match> Database::find(const Query& query, const Objective& objective) {
  if (objective.kind == Objective::Kind::fastest) return find(query);
  if (objective.kind != Objective::Kind::lowest_energy)
    throw Error("unknown lookup objective " + std::to_string(static_cast<int>(objective.kind)));
  if (!db::valid_within_fraction(objective.within_fraction))
    throw Error("a lowest-energy lookup needs a window (within_fraction) of at least 0, e.g. 0.05 for 5 % (got " +
                std::to_string(objective.within_fraction) + ")");
  const auto fastest = find(query);
  try {
    return impl_->lowest_energy(fastest, objective.within_fraction);
  } catch (const sql::DbError& e) {
    throw Error(std::string("lowest-energy lookup of ") + query.family + " failed: " + e.what());
  }
}

Cubin Database::cubin(const Query& query, const std::string& arch) { return cubin(query, arch, Objective::fastest()); }

Cubin Database::cubin(const Query& query, const std::string& arch, const Objective& objective) {
  const auto match = find(query, objective);
  try {
    return impl_->cubin_of(*match, arch);
  } catch (const sql::DbError& e) {
    throw Error(std::string("reading the cubin of ") + query.family + " failed: " + e.what());
  }
}

void Database::clear_cache() {
  std::lock_guard lock(impl_->db_mutex);
  impl_->schemas.clear();  // a tuner may have stored a new declaration meanwhile
  std::unique_lock cache_lock(impl_->cache_mutex);
  impl_->queries.clear();
  impl_->plans.clear();
  impl_->energy_answers.clear();
}

}  // namespace cutune::lookup
