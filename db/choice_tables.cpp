#include "choice_tables.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <map>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "config_choice.hpp"
#include "sqlite.hpp"

namespace cutune::db {
namespace {

// A prepared statement read through views: the scans here read thousands of rows, and
// sql::Statement copies every text it returns.
class Cursor {
 public:
  Cursor(sql::Database& db, std::string_view sql) : db_(db.handle()), sql_(sql) {
    if (sqlite3_prepare_v2(db_, sql_.data(), static_cast<int>(sql_.size()), &stmt_, nullptr) != SQLITE_OK)
      fail("prepare");
  }
  ~Cursor() { sqlite3_finalize(stmt_); }
  Cursor(const Cursor&) = delete;  // owns the statement
  Cursor& operator=(const Cursor&) = delete;

  Cursor& bind(int index, std::int64_t value) { return check(sqlite3_bind_int64(stmt_, index, value)); }
  Cursor& bind(int index, std::string_view text) {
    return check(sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT));
  }
  Cursor& bind_real(int index, double value) { return check(sqlite3_bind_double(stmt_, index, value)); }
  Cursor& bind_blob(int index, const std::vector<unsigned char>& bytes) {
    return check(sqlite3_bind_blob64(stmt_, index, bytes.data(), bytes.size(), SQLITE_TRANSIENT));
  }
  bool step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    fail("step");
  }
  void run() {
    step();
    reset();
  }
  void reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  std::int64_t integer(int column) const { return sqlite3_column_int64(stmt_, column); }
  double real(int column) const { return sqlite3_column_double(stmt_, column); }
  bool null(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }
  std::string_view text(int column) const {
    const auto* data = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
    return data ? std::string_view(data, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)))
                : std::string_view();
  }
  std::string_view blob(int column) const {
    const auto* data = static_cast<const char*>(sqlite3_column_blob(stmt_, column));
    return data ? std::string_view(data, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)))
                : std::string_view();
  }

 private:
  Cursor& check(int rc) {
    if (rc != SQLITE_OK) fail("bind");
    return *this;
  }
  [[noreturn]] void fail(const char* doing) const {
    throw sql::DbError(std::string("sqlite ") + doing + " failed: " + sqlite3_errmsg(db_) +
                       " (in: " + sql_.substr(0, 120) + ")");
  }
  sqlite3* db_;
  std::string sql_;
  sqlite3_stmt* stmt_ = nullptr;
};

// ---- blobs: little-endian, fixed-width fields -------------------------------------------------

void put(std::vector<unsigned char>& out, std::uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<unsigned char>(value >> (8 * i)));
}

std::uint64_t get(const char* at, int bytes) {
  std::uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) value |= static_cast<std::uint64_t>(static_cast<unsigned char>(at[i])) << (8 * i);
  return value;
}

constexpr std::size_t kMeasurementBytes = 4 + 8 + 8;  // config index, quantised log time, result id
constexpr std::size_t kTotalBytes = 4 + 8;            // coverage, sum of log ratios

// A changed pair is patched (its changed results read one by one) while its changes are fewer
// than its precomputed measurements over this, else read again whole: a result read by id costs
// about as much as this many read in a scan of the pair.
constexpr std::int64_t kPatchShare = 8;

std::vector<unsigned char> encode_measurements(const std::vector<Measurement>& measurements) {
  std::vector<unsigned char> out;
  out.reserve(measurements.size() * kMeasurementBytes);
  for (const Measurement& m : measurements) {
    put(out, m.config, 4);
    put(out, static_cast<std::uint64_t>(m.log_ms), 8);
    put(out, static_cast<std::uint64_t>(m.result_id), 8);
  }
  return out;
}

std::vector<Measurement> decode_measurements(std::string_view blob) {
  std::vector<Measurement> measurements(blob.size() / kMeasurementBytes);
  const char* at = blob.data();
  for (Measurement& m : measurements) {
    m.config = static_cast<std::uint32_t>(get(at, 4));
    m.log_ms = static_cast<std::int64_t>(get(at + 4, 8));
    m.result_id = static_cast<std::int64_t>(get(at + 12, 8));
    at += kMeasurementBytes;
  }
  return measurements;
}

std::vector<unsigned char> encode_totals(const Scores& scores) {
  std::vector<unsigned char> out;
  out.reserve(scores.coverage.size() * kTotalBytes);
  for (std::size_t c = 0; c < scores.coverage.size(); ++c) {
    put(out, static_cast<std::uint64_t>(scores.coverage[c]), 4);
    put(out, static_cast<std::uint64_t>(scores.log_ratio_sum[c]), 8);
  }
  return out;
}

Scores decode_totals(std::string_view blob) {
  Scores scores;
  scores.resize(blob.size() / kTotalBytes);
  const char* at = blob.data();
  for (std::size_t c = 0; c < scores.coverage.size(); ++c, at += kTotalBytes) {
    scores.coverage[c] = static_cast<std::int64_t>(get(at, 4));
    scores.log_ratio_sum[c] = static_cast<std::int64_t>(get(at + 4, 8));
  }
  return scores;
}

// Config texts, each as its byte length (4 bytes) and its bytes.
std::vector<unsigned char> encode_texts(const std::vector<std::string>& texts) {
  std::vector<unsigned char> out;
  for (const std::string& text : texts) {
    put(out, text.size(), 4);
    out.insert(out.end(), text.begin(), text.end());
  }
  return out;
}

std::vector<std::string_view> decode_texts(std::string_view blob) {
  std::vector<std::string_view> texts;
  for (std::size_t at = 0; at + 4 <= blob.size();) {
    const auto length = static_cast<std::size_t>(get(blob.data() + at, 4));
    texts.push_back(blob.substr(at + 4, length));
    at += 4 + length;
  }
  return texts;
}

// ---- devices ------------------------------------------------------------------------------------

struct DeviceRow {
  std::string uuid, name;
  int cc_major = 0, cc_minor = 0;
};

std::unordered_map<std::int64_t, DeviceRow> read_devices(sql::Database& db) {
  std::unordered_map<std::int64_t, DeviceRow> devices;
  Cursor s(db, "SELECT id, uuid, name, cc_major, cc_minor FROM devices");
  while (s.step())
    devices.emplace(s.integer(0), DeviceRow{std::string(s.text(1)), std::string(s.text(2)),
                                            static_cast<int>(s.integer(3)), static_cast<int>(s.integer(4))});
  return devices;
}

bool member(const DeviceRow& d, const DeviceSet& set) {
  switch (set.rule) {
    case DeviceSet::Rule::uuid:
      return d.uuid == set.text;
    case DeviceSet::Rule::name:
      return d.name == set.text;
    case DeviceSet::Rule::compute_capability:
      return d.cc_major == set.cc_major && d.cc_minor == set.cc_minor;
    case DeviceSet::Rule::any:
      return true;
  }
  return false;
}

std::string cc_text(int major, int minor) { return std::to_string(major) + "." + std::to_string(minor); }

// What the choices table stores as `devices` for a set.
std::string devices_key(const DeviceSet& set) {
  return set.rule == DeviceSet::Rule::compute_capability ? cc_text(set.cc_major, set.cc_minor) : set.text;
}

std::vector<const Pair*> pointers(const std::vector<Pair>& pairs) {
  std::vector<const Pair*> out;
  for (const Pair& p : pairs) out.push_back(&p);
  return out;
}

bool by_problem_and_device(const Pair* a, const Pair* b) {
  return a->problem_id != b->problem_id ? a->problem_id < b->problem_id : a->device_id < b->device_id;
}

// ---- scoring from the results (no precomputed choices) ------------------------------------------

// One SQL text serves every device rule: ?3 picks it. The devices table is small.
std::string with_devices(const char* head, const char* tail) {
  return std::string(head) +
         "(SELECT id FROM devices WHERE (?3 = 1 AND uuid = ?4) OR (?3 = 2 AND name = ?4)"
         " OR (?3 = 3 AND cc_major = ?5 AND cc_minor = ?6) OR ?3 = 4)" +
         tail;
}

void bind_selection(Cursor& s, const std::string& family, const std::string& match_key, const DeviceSet& devices) {
  s.bind(1, family)
      .bind(2, match_key)
      .bind(3, static_cast<std::int64_t>(devices.rule))
      .bind(4, devices.text)
      .bind(5, static_cast<std::int64_t>(devices.cc_major))
      .bind(6, static_cast<std::int64_t>(devices.cc_minor));
}

// The successful results of the family and match key on the devices, at one size (0: all), as
// pairs over `configs`, ordered by problem and device.
std::vector<Pair> scored_pairs(sql::Database& db, const std::string& family, const std::string& match_key,
                               const DeviceSet& devices, std::int64_t size, ConfigList& configs) {
  static const std::string sql = with_devices(R"sql(
    SELECT r.problem_id, r.device_id, p.size, r.config, r.time_ms_median, r.id
    FROM problems p JOIN results r ON r.problem_id = p.id
    WHERE p.family = ?1 AND p.match_key = ?2 AND p.size > 0 AND (?7 = 0 OR p.size = ?7)
      AND r.status = 'ok' AND r.time_ms_median > 0 AND r.device_id IN )sql",
                                              "");
  Cursor s(db, sql);
  bind_selection(s, family, match_key, devices);
  s.bind(7, size);
  std::map<std::pair<std::int64_t, std::int64_t>, Pair> pairs;
  while (s.step()) {
    Pair& pair = pairs[{s.integer(0), s.integer(1)}];
    pair.problem_id = s.integer(0);
    pair.device_id = s.integer(1);
    pair.size = s.integer(2);
    const double ms = s.real(4);
    pair.measurements.push_back({configs.index_of(s.text(3)), quantised_log(ms), s.integer(5), ms});
  }
  std::vector<Pair> out;
  for (auto& [key, pair] : pairs) {
    sort_measurements(pair.measurements);
    out.push_back(std::move(pair));
  }
  return out;
}

// The choice over some pairs and the result it is shown through; 0 when the pairs hold nothing.
std::int64_t chosen_result(std::vector<const Pair*> pairs, const ConfigList& configs) {
  std::sort(pairs.begin(), pairs.end(), by_problem_and_device);
  Scores scores;
  scores.resize(configs.size());
  for (const Pair* pair : pairs) scores.add(*pair);
  const auto choice = choose(scores, configs);
  if (!choice) return 0;
  return fastest(pairs, choice->config)->result_id;
}

// ---- the writer ---------------------------------------------------------------------------------

// Recomputes one (family, match key)'s rows; the caller has deleted the old ones.
void compute_key(sql::Database& db, const std::unordered_map<std::int64_t, DeviceRow>& devices,
                 const std::string& family, const std::string& match_key) {
  // Every successful result, its config interned by text for now, renumbered in text order below.
  struct Row {
    std::int64_t problem_id, device_id, size, result_id;
    std::uint32_t text;
    double ms;
  };
  std::vector<Row> rows;
  std::vector<std::string> texts;
  {
    std::unordered_map<std::string, std::uint32_t> text_index;
    Cursor s(db, R"sql(
      SELECT r.problem_id, r.device_id, p.size, r.id, r.config, r.time_ms_median
      FROM problems p JOIN results r INDEXED BY results_by_pair ON r.problem_id = p.id
      WHERE p.family = ?1 AND p.match_key = ?2 AND p.size > 0 AND r.status = 'ok' AND r.time_ms_median > 0)sql");
    s.bind(1, family).bind(2, match_key);
    while (s.step()) {
      const auto [it, fresh] = text_index.try_emplace(std::string(s.text(4)), static_cast<std::uint32_t>(texts.size()));
      if (fresh) texts.push_back(it->first);
      rows.push_back({s.integer(0), s.integer(1), s.integer(2), s.integer(3), it->second, s.real(5)});
    }
  }
  if (rows.empty()) return;
  std::vector<std::uint32_t> order(texts.size());
  for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return texts[a] < texts[b]; });
  std::vector<std::uint32_t> rank(texts.size());
  std::vector<std::string> sorted;
  for (std::uint32_t i = 0; i < order.size(); ++i) {
    rank[order[i]] = i;
    sorted.push_back(texts[order[i]]);
  }
  std::vector<std::string_view> views(sorted.begin(), sorted.end());
  const ConfigList configs(views);

  std::map<std::pair<std::int64_t, std::int64_t>, Pair> by_pair;
  for (const Row& row : rows) {
    Pair& pair = by_pair[{row.problem_id, row.device_id}];
    pair.problem_id = row.problem_id;
    pair.device_id = row.device_id;
    pair.size = row.size;
    pair.measurements.push_back({rank[row.text], quantised_log(row.ms), row.result_id, row.ms});
  }
  std::vector<Pair> pairs;
  for (auto& [key, pair] : by_pair) {
    sort_measurements(pair.measurements);
    pairs.push_back(std::move(pair));
  }

  // Level 3, and the scores a reader corrects when pairs change.
  Scores totals;
  totals.resize(configs.size());
  for (const Pair& pair : pairs) totals.add(pair);
  const std::vector<const Pair*> all = pointers(pairs);
  if (const auto choice = choose(totals, configs)) {
    Cursor insert(
        db,
        "INSERT INTO family_defaults (family, match_key, config, pairs, geomean_ratio) VALUES (?1, ?2, ?3, ?4, ?5)");
    insert.bind(1, family)
        .bind(2, match_key)
        .bind(3, configs.text(choice->config))
        .bind(4, std::int64_t{choice->pairs})
        .bind_real(5, geomean_ratio(all, choice->config));
    insert.run();
  }
  {
    Cursor insert(db, "INSERT INTO choice_sets (family, match_key, configs, totals) VALUES (?1, ?2, ?3, ?4)");
    insert.bind(1, family).bind(2, match_key).bind_blob(3, encode_texts(sorted)).bind_blob(4, encode_totals(totals));
    insert.run();
  }
  {
    Cursor insert(db, "INSERT INTO choice_pairs (problem_id, device_id, measurements) VALUES (?1, ?2, ?3)");
    for (const Pair& pair : pairs) {
      insert.bind(1, pair.problem_id).bind(2, pair.device_id).bind_blob(3, encode_measurements(pair.measurements));
      insert.run();
    }
  }

  // Levels 1 and 2: per size, the pairs of each device, each device name and each compute capability.
  std::map<std::int64_t, std::vector<const Pair*>> by_size;
  for (const Pair* pair : all) by_size[pair->size].push_back(pair);
  Cursor insert(db, R"sql(
    INSERT INTO choices (family, match_key, rule, devices, size, config, result_id, pairs, geomean_ratio)
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9))sql");
  for (const auto& [size, at_size] : by_size) {
    for (const auto rule : {DeviceSet::Rule::uuid, DeviceSet::Rule::name, DeviceSet::Rule::compute_capability}) {
      std::map<std::string, std::vector<const Pair*>> groups;
      for (const Pair* pair : at_size) {
        const auto device = devices.find(pair->device_id);
        if (device == devices.end()) continue;
        const DeviceRow& d = device->second;
        groups[rule == DeviceSet::Rule::uuid   ? d.uuid
               : rule == DeviceSet::Rule::name ? d.name
                                               : cc_text(d.cc_major, d.cc_minor)]
            .push_back(pair);
      }
      for (const auto& [key, group] : groups) {
        Scores scores;
        scores.resize(configs.size());
        for (const Pair* pair : group) scores.add(*pair);
        const auto choice = choose(scores, configs);
        if (!choice) continue;
        insert.bind(1, family)
            .bind(2, match_key)
            .bind(3, static_cast<std::int64_t>(rule))
            .bind(4, key)
            .bind(5, size)
            .bind(6, configs.text(choice->config))
            .bind(7, fastest(group, choice->config)->result_id)
            .bind(8, std::int64_t{choice->pairs})
            .bind_real(9, geomean_ratio(group, choice->config));
        insert.run();
      }
    }
  }
}

std::int64_t meta_value(sql::Database& db, const char* key, std::int64_t otherwise) {
  Cursor s(db, "SELECT value FROM meta WHERE key = ?1");
  s.bind(1, std::string_view(key));
  return s.step() ? s.integer(0) : otherwise;
}

}  // namespace

void compute_choices(sql::Database& db, bool all) {
  const bool full = all || meta_value(db, "choices_valid", 0) != 1;
  const auto devices = read_devices(db);
  std::vector<std::pair<std::string, std::string>> keys;
  {
    Cursor s(
        db,
        full ? "SELECT DISTINCT family, match_key FROM problems WHERE size > 0"
             : "SELECT DISTINCT p.family, p.match_key FROM changed_results c JOIN problems p ON p.id = c.problem_id");
    while (s.step()) keys.emplace_back(std::string(s.text(0)), std::string(s.text(1)));
  }
  if (full) {
    db.exec("DELETE FROM choices; DELETE FROM choice_sets; DELETE FROM choice_pairs; DELETE FROM family_defaults");
  } else {
    Cursor choices(db, "DELETE FROM choices WHERE family = ?1 AND match_key = ?2");
    Cursor sets(db, "DELETE FROM choice_sets WHERE family = ?1 AND match_key = ?2");
    Cursor defaults(db, "DELETE FROM family_defaults WHERE family = ?1 AND match_key = ?2");
    Cursor pairs(
        db,
        "DELETE FROM choice_pairs WHERE problem_id IN (SELECT id FROM problems WHERE family = ?1 AND match_key = ?2)");
    for (const auto& [family, match_key] : keys)
      for (Cursor* s : {&choices, &sets, &defaults, &pairs}) {
        s->bind(1, family).bind(2, match_key);
        s->run();
      }
  }
  for (const auto& [family, match_key] : keys) compute_key(db, devices, family, match_key);
  db.exec("DELETE FROM changed_results; UPDATE meta SET value = 1 WHERE key = 'choices_valid'");
}

void refresh_family_defaults(sql::Database& db) {
  sql::Transaction transaction(db);
  compute_choices(db, false);
  transaction.commit();
}

// ---- the reader ---------------------------------------------------------------------------------

struct ChoiceReader::Impl {
  sql::Database& db;
  int schema_version;
  std::string family, match_key;
  bool precomputed = false;

  // The pairs of the match key whose results changed since the refresh, with how many changes
  // (counting a result that changed twice twice).
  struct Changed {
    std::int64_t problem_id, device_id, size;
    std::int64_t changes;  // counted up to stored / kPatchShare + 1
    std::int64_t stored;   // measurements precomputed for the pair
  };
  std::vector<Changed> changed;
  std::optional<std::unordered_map<std::int64_t, DeviceRow>> devices;

  // Loaded when something changed: the dictionary (its storage, which the views point into)
  // and the scores over every pair as precomputed.
  std::string dictionary_bytes;
  std::optional<ConfigList> configs;
  Scores totals;
  std::map<std::pair<std::int64_t, std::int64_t>, Pair> stored, current;  // changed pairs, as precomputed and now

  Impl(sql::Database& d, int version, std::string f, std::string k)
      : db(d), schema_version(version), family(std::move(f)), match_key(std::move(k)) {
    precomputed = schema_version >= 6 && meta_value(db, "choices_valid", 0) == 1;
    if (!precomputed) return;
    // The changed pairs, found by seeking from device to device in each problem's changes (a
    // tuning run that has not refreshed yet may have left a hundred thousand), and counted only as
    // far as current_pair() needs to choose between patching and reading the pair again.
    Cursor problems(db, "SELECT id, size FROM problems WHERE family = ?1 AND match_key = ?2 AND size > 0 ORDER BY id");
    problems.bind(1, family).bind(2, match_key);
    Cursor next_device(db, R"sql(
      SELECT device_id FROM changed_results WHERE problem_id = ?1 AND device_id > ?2 ORDER BY device_id LIMIT 1)sql");
    Cursor stored_count(db, "SELECT length(measurements) FROM choice_pairs WHERE problem_id = ?1 AND device_id = ?2");
    Cursor count(
        db, "SELECT COUNT(*) FROM (SELECT 1 FROM changed_results WHERE problem_id = ?1 AND device_id = ?2 LIMIT ?3)");
    while (problems.step()) {
      const std::int64_t problem_id = problems.integer(0), size = problems.integer(1);
      for (std::int64_t device_id = -1;;) {
        next_device.bind(1, problem_id).bind(2, device_id);
        const bool found = next_device.step();
        if (found) device_id = next_device.integer(0);
        next_device.reset();
        if (!found) break;
        stored_count.bind(1, problem_id).bind(2, device_id);
        const std::int64_t stored_rows =
            stored_count.step() ? stored_count.integer(0) / static_cast<std::int64_t>(kMeasurementBytes) : 0;
        stored_count.reset();
        count.bind(1, problem_id).bind(2, device_id).bind(3, stored_rows / kPatchShare + 1);
        count.step();
        changed.push_back({problem_id, device_id, size, count.integer(0), stored_rows});
        count.reset();
      }
    }
  }

  const DeviceRow* device(std::int64_t id) {
    if (!devices) devices = read_devices(db);
    const auto it = devices->find(id);
    return it == devices->end() ? nullptr : &it->second;
  }

  void load_set() {
    if (configs) return;
    Cursor s(db, "SELECT configs, totals FROM choice_sets WHERE family = ?1 AND match_key = ?2");
    s.bind(1, family).bind(2, match_key);
    if (s.step()) {
      dictionary_bytes = s.blob(0);
      totals = decode_totals(s.blob(1));
    }
    configs.emplace(decode_texts(dictionary_bytes));
    totals.resize(configs->size());
  }

  const Pair& stored_pair(const Changed& c) {
    const auto [it, fresh] = stored.try_emplace({c.problem_id, c.device_id});
    Pair& pair = it->second;
    if (!fresh) return pair;
    pair.problem_id = c.problem_id;
    pair.device_id = c.device_id;
    pair.size = c.size;
    Cursor s(db, "SELECT measurements FROM choice_pairs WHERE problem_id = ?1 AND device_id = ?2");
    s.bind(1, c.problem_id).bind(2, c.device_id);
    if (s.step()) pair.measurements = decode_measurements(s.blob(0));
    return pair;
  }

  // A changed pair as it is now: its stored measurements with the changed results replaced, or,
  // when many changed, read again whole (in config order, which the dictionary look-up favours).
  const Pair& current_pair(const Changed& c) {
    load_set();
    const auto [it, fresh] = current.try_emplace({c.problem_id, c.device_id});
    Pair& pair = it->second;
    if (!fresh) return pair;
    const Pair& before = stored_pair(c);
    pair.problem_id = c.problem_id;
    pair.device_id = c.device_id;
    pair.size = c.size;
    if (c.changes > c.stored / kPatchShare) {
      Cursor s(db, R"sql(
        SELECT config, time_ms_median, id FROM results INDEXED BY results_by_pair
        WHERE problem_id = ?1 AND device_id = ?2 AND status = 'ok' AND time_ms_median > 0 ORDER BY config)sql");
      s.bind(1, c.problem_id).bind(2, c.device_id);
      while (s.step())
        pair.measurements.push_back({configs->index_of(s.text(0)), quantised_log(s.real(1)), s.integer(2), s.real(1)});
    } else {
      Cursor s(db, R"sql(
        SELECT c.result_id, r.config, r.time_ms_median FROM changed_results c
        LEFT JOIN results r ON r.id = c.result_id AND r.problem_id = c.problem_id AND r.device_id = c.device_id
          AND r.status = 'ok' AND r.time_ms_median > 0
        WHERE c.problem_id = ?1 AND c.device_id = ?2)sql");
      s.bind(1, c.problem_id).bind(2, c.device_id);
      std::unordered_set<std::int64_t> replaced;
      while (s.step())  // a result that changed twice is listed twice
        if (replaced.insert(s.integer(0)).second && !s.null(1))
          pair.measurements.push_back(
              {configs->index_of(s.text(1)), quantised_log(s.real(2)), s.integer(0), s.real(2)});
      for (const Measurement& m : before.measurements)
        if (!replaced.count(m.result_id)) pair.measurements.push_back(m);
    }
    sort_measurements(pair.measurements);
    return pair;
  }

  // The rule's choice over a single pair, read through the index of its fastest results rather
  // than from all of them (a device's run stored again holds thousands per pair): over one pair
  // every config's coverage is one, so the smallest log time wins; among equal quantised times the
  // smaller config text, and of that config its first result in (log time, result id) order.
  std::int64_t fastest_result(const Changed& c) {
    Cursor s(db, R"sql(
      SELECT id, config, time_ms_median FROM results INDEXED BY results_ok_by_problem
      WHERE problem_id = ?1 AND device_id = ?2 AND status = 'ok' AND time_ms_median > 0
      ORDER BY time_ms_median)sql");
    s.bind(1, c.problem_id).bind(2, c.device_id);
    std::int64_t chosen = 0, fastest = 0;
    std::string chosen_config;
    while (s.step()) {
      const std::int64_t log_ms = quantised_log(s.real(2));
      if (chosen && log_ms != fastest) break;  // quantised times rise with the order: past the tie
      const std::string_view config = s.text(1);
      if (!chosen || config < chosen_config || (config == chosen_config && s.integer(0) < chosen)) {
        chosen = s.integer(0);
        chosen_config = config;
        fastest = log_ms;
      }
    }
    return chosen;
  }

  std::vector<SizeChoice> precomputed_sizes(const DeviceSet& wanted) {
    std::map<std::int64_t, std::int64_t> by_size;
    {
      Cursor s(
          db,
          "SELECT size, result_id FROM choices WHERE family = ?1 AND match_key = ?2 AND rule = ?3 AND devices = ?4");
      s.bind(1, family).bind(2, match_key).bind(3, static_cast<std::int64_t>(wanted.rule)).bind(4, devices_key(wanted));
      while (s.step()) by_size[s.integer(0)] = s.integer(1);
    }
    // Sizes where a pair of these devices changed: chosen again over the size's pairs as they are now.
    std::map<std::int64_t, std::vector<const Changed*>> stale;
    for (const Changed& c : changed)
      if (const DeviceRow* d = device(c.device_id); d && member(*d, wanted)) stale[c.size].push_back(&c);
    for (const auto& [size, changed_here] : stale) {
      std::vector<Pair> unchanged;
      {
        Cursor s(db, R"sql(
          SELECT c.problem_id, c.device_id, c.measurements FROM problems p JOIN choice_pairs c ON c.problem_id = p.id
          WHERE p.family = ?1 AND p.match_key = ?2 AND p.size = ?3)sql");
        s.bind(1, family).bind(2, match_key).bind(3, size);
        while (s.step()) {
          const std::int64_t problem_id = s.integer(0), device_id = s.integer(1);
          const DeviceRow* d = device(device_id);
          if (!d || !member(*d, wanted)) continue;
          if (std::any_of(changed_here.begin(), changed_here.end(),
                          [&](const Changed* c) { return c->problem_id == problem_id && c->device_id == device_id; }))
            continue;
          unchanged.push_back({problem_id, device_id, size, decode_measurements(s.blob(2))});
        }
      }
      std::int64_t result = 0;
      if (unchanged.empty() && changed_here.size() == 1) {
        result = fastest_result(*changed_here.front());
      } else {
        load_set();
        std::vector<const Pair*> group = pointers(unchanged);
        for (const Changed* c : changed_here) group.push_back(&current_pair(*c));
        result = chosen_result(group, *configs);
      }
      if (result)
        by_size[size] = result;
      else
        by_size.erase(size);
    }
    std::vector<SizeChoice> out;
    for (const auto& [size, result] : by_size) out.push_back({size, result});
    return out;
  }
};

ChoiceReader::ChoiceReader(sql::Database& db, int schema_version, std::string family, std::string match_key)
    : impl_(std::make_unique<Impl>(db, schema_version, std::move(family), std::move(match_key))) {}

ChoiceReader::~ChoiceReader() = default;

bool ChoiceReader::precomputed() const { return impl_->precomputed; }

std::vector<SizeChoice> ChoiceReader::sizes(const DeviceSet& devices) {
  if (impl_->precomputed) return impl_->precomputed_sizes(devices);
  static const std::string sql = with_devices(R"sql(
    SELECT DISTINCT p.size FROM problems p
    WHERE p.family = ?1 AND p.match_key = ?2 AND p.size > 0 AND EXISTS (
      SELECT 1 FROM results r WHERE r.problem_id = p.id AND r.status = 'ok' AND r.time_ms_median > 0
        AND r.device_id IN )sql",
                                              ") ORDER BY p.size");
  Cursor s(impl_->db, sql);
  bind_selection(s, impl_->family, impl_->match_key, devices);
  std::vector<SizeChoice> out;
  while (s.step()) out.push_back({s.integer(0), 0});
  return out;
}

std::optional<std::string> ChoiceReader::family_default() {
  Impl& d = *impl_;
  if (d.precomputed && d.changed.empty()) {
    Cursor s(d.db, "SELECT config FROM family_defaults WHERE family = ?1 AND match_key = ?2");
    s.bind(1, d.family).bind(2, d.match_key);
    if (!s.step()) return std::nullopt;
    return std::string(s.text(0));
  }
  if (d.precomputed) {
    // The precomputed scores, less what the changed pairs gave them then, plus what they give now.
    d.load_set();
    Scores scores = d.totals;
    for (const Impl::Changed& c : d.changed) {
      scores.remove(d.stored_pair(c));
      scores.add(d.current_pair(c));
    }
    const auto choice = choose(scores, *d.configs);
    if (!choice) return std::nullopt;
    return std::string(d.configs->text(choice->config));
  }
  if (d.schema_version < 6) {
    // Versions 4 and 5 keep the family defaults fresh as a whole: any change of results makes them stale.
    Cursor s(d.db, R"sql(
      SELECT (SELECT value FROM meta WHERE key = 'results_version') =
               (SELECT value FROM meta WHERE key = 'family_defaults_version'),
             (SELECT config FROM family_defaults WHERE family = ?1 AND match_key = ?2))sql");
    s.bind(1, d.family).bind(2, d.match_key);
    if (s.step() && s.integer(0) == 1) {
      if (s.null(1)) return std::nullopt;
      return std::string(s.text(1));
    }
  }
  ConfigList configs;
  const std::vector<Pair> pairs = scored_pairs(d.db, d.family, d.match_key, DeviceSet{}, 0, configs);
  Scores scores;
  scores.resize(configs.size());
  for (const Pair& pair : pairs) scores.add(pair);
  const auto choice = choose(scores, configs);
  if (!choice) return std::nullopt;
  return std::string(configs.text(choice->config));
}

std::int64_t scored_choice(sql::Database& db, const std::string& family, const std::string& match_key,
                           const DeviceSet& devices, std::int64_t size) {
  ConfigList configs;
  const std::vector<Pair> pairs = scored_pairs(db, family, match_key, devices, size, configs);
  return chosen_result(pointers(pairs), configs);
}

std::optional<EnergyChoice> lowest_energy_choice(sql::Database& db, std::int64_t problem_id, std::int64_t device_id,
                                                 double within_fraction) {
  Cursor s(db, R"sql(
    SELECT id, time_ms_median, energy_j, config FROM results INDEXED BY results_ok_by_problem
    WHERE problem_id = ?1 AND device_id = ?2 AND status = 'ok' AND time_ms_median > 0
    ORDER BY time_ms_median)sql");
  s.bind(1, problem_id).bind(2, device_id);
  std::vector<EnergyCandidate> window;
  double limit = 0;
  while (s.step()) {
    const double ms = s.real(1);
    if (window.empty())
      limit = ms * (1 + within_fraction);  // the first row is the fastest
    else if (ms > limit)
      break;
    window.push_back(
        {s.integer(0), ms, s.null(2) ? std::nullopt : std::optional<double>(s.real(2)), std::string(s.text(3))});
  }
  if (window.empty()) return std::nullopt;
  const EnergyCandidate* chosen = lowest_energy(window, within_fraction);
  return EnergyChoice{fastest_ms(window), chosen ? chosen->result_id : 0};
}

}  // namespace cutune::db
