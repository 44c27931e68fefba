#include "config_choice.hpp"

#include <cmath>
#include <map>
#include <unordered_map>

#include "sqlite.hpp"

namespace cutune::db {
namespace {

// One SQL text serves every device rule: ?3 picks it, so each query stays one prepared
// statement. The devices table is small.
std::string with_devices(const char* head, const char* tail) {
  return std::string(head) +
         "(SELECT id FROM devices WHERE (?3 = 1 AND uuid = ?4) OR (?3 = 2 AND name = ?4)"
         " OR (?3 = 3 AND cc_major = ?5 AND cc_minor = ?6) OR ?3 = 4)" +
         tail;
}

const std::string& sizes_sql() {
  static const std::string sql = with_devices(R"sql(
    SELECT DISTINCT p.size FROM problems p
    WHERE p.family = ?1 AND p.match_key = ?2 AND p.size > 0 AND EXISTS (
      SELECT 1 FROM results r WHERE r.problem_id = p.id AND r.status = 'ok' AND r.time_ms_median > 0
        AND r.device_id IN )sql",
                                              ")");
  return sql;
}

const std::string& candidates_sql() {
  static const std::string sql = with_devices(R"sql(
    SELECT r.id, r.device_id, r.problem_id, p.size, r.config, r.time_ms_median
    FROM problems p JOIN results r ON r.problem_id = p.id
    WHERE p.family = ?1 AND p.match_key = ?2 AND p.size > 0 AND (?7 = 0 OR p.size = ?7)
      AND r.status = 'ok' AND r.time_ms_median > 0 AND r.device_id IN )sql",
                                              "");
  return sql;
}

// One config's results: the index on (config, problem_id) finds them without reading the others.
const std::string& config_candidates_sql() {
  static const std::string sql = with_devices(R"sql(
    SELECT r.id, r.device_id, r.problem_id, p.size, r.config, r.time_ms_median
    FROM results r JOIN problems p ON p.id = r.problem_id
    WHERE r.config = ?8 AND r.status = 'ok' AND r.time_ms_median > 0 AND p.family = ?1 AND p.match_key = ?2
      AND p.size > 0 AND (?7 = 0 OR p.size = ?7) AND r.device_id IN )sql",
                                              "");
  return sql;
}

void bind_selection(sql::Statement& s, const std::string& family, const std::string& match_key, const DeviceSet& devices) {
  s.bind(1, family).bind(2, match_key).bind(3, static_cast<int>(devices.rule)).bind(4, devices.text)
      .bind(5, devices.cc_major).bind(6, devices.cc_minor);
}

}  // namespace

std::vector<std::int64_t> stored_sizes(sql::Database& db, const std::string& family, const std::string& match_key,
                                       const DeviceSet& devices) {
  auto s = db.prepare(sizes_sql());
  bind_selection(s, family, match_key, devices);
  std::vector<std::int64_t> sizes;
  while (s.step()) sizes.push_back(s.column_int(0));
  return sizes;
}

Candidates candidates(sql::Database& db, const std::string& family, const std::string& match_key,
                      const DeviceSet& devices, std::int64_t size, const std::string& config) {
  auto s = db.prepare(config.empty() ? candidates_sql() : config_candidates_sql());
  bind_selection(s, family, match_key, devices);
  s.bind(7, size);
  if (!config.empty()) s.bind(8, config);
  Candidates c;
  std::unordered_map<std::string, std::size_t> index_of_config;
  while (s.step()) {
    const auto [it, fresh] = index_of_config.try_emplace(s.column_text(4), c.configs.size());
    if (fresh) c.configs.push_back(it->first);
    c.rows.push_back({s.column_int(0), s.column_int(1), s.column_int(2), s.column_int(3), it->second, s.column_double(5)});
  }
  return c;
}

Choice choose_config(const Candidates& candidates) {
  // Dense indices for the (device, problem) pairs, and the fastest time on each.
  std::map<std::pair<std::int64_t, std::int64_t>, std::size_t> index_of_pair;
  std::vector<double> best_of_pair;
  std::vector<std::size_t> pair_of_row(candidates.rows.size());
  for (std::size_t i = 0; i < candidates.rows.size(); ++i) {
    const Candidate& row = candidates.rows[i];
    const auto [it, fresh] = index_of_pair.try_emplace({row.device_id, row.problem_id}, best_of_pair.size());
    if (fresh) best_of_pair.push_back(row.ms);
    best_of_pair[it->second] = std::min(best_of_pair[it->second], row.ms);
    pair_of_row[i] = it->second;
  }
  // A config's fastest time on each pair (a pair holds a config once per template version).
  const std::uint64_t pairs = best_of_pair.size();
  std::unordered_map<std::uint64_t, double> time_of_config_on_pair;
  for (std::size_t i = 0; i < candidates.rows.size(); ++i) {
    const Candidate& row = candidates.rows[i];
    const auto [it, fresh] = time_of_config_on_pair.try_emplace(row.config * pairs + pair_of_row[i], row.ms);
    if (!fresh) it->second = std::min(it->second, row.ms);
  }
  std::vector<std::size_t> coverage(candidates.configs.size(), 0);
  std::vector<double> log_ratio_sum(candidates.configs.size(), 0.0);
  for (const auto& [key, ms] : time_of_config_on_pair) {
    ++coverage[key / pairs];
    log_ratio_sum[key / pairs] += std::log(ms / best_of_pair[key % pairs]);
  }
  const auto mean_log_ratio = [&](std::size_t c) { return log_ratio_sum[c] / static_cast<double>(coverage[c]); };
  const auto better = [&](std::size_t a, std::size_t b) {
    if (coverage[a] != coverage[b]) return coverage[a] > coverage[b];
    if (mean_log_ratio(a) != mean_log_ratio(b)) return mean_log_ratio(a) < mean_log_ratio(b);
    return candidates.configs[a] < candidates.configs[b];
  };
  std::size_t chosen = 0;
  for (std::size_t i = 1; i < candidates.configs.size(); ++i)
    if (better(i, chosen)) chosen = i;
  return {chosen, coverage[chosen], std::exp(mean_log_ratio(chosen))};
}

std::optional<std::string> precomputed_family_default(sql::Database& db, const std::string& family,
                                                      const std::string& match_key) {
  auto s = db.prepare(R"sql(
    SELECT (SELECT value FROM meta WHERE key = 'results_version') =
             (SELECT value FROM meta WHERE key = 'family_defaults_version'),
           (SELECT config FROM family_defaults WHERE family = ?1 AND match_key = ?2))sql");
  s.bind(1, family).bind(2, match_key);
  s.step();
  if (s.column_int(0) == 0) return std::nullopt;
  return s.column_text(1);  // "" when NULL: fresh, and nothing of this type succeeded
}

void refresh_family_defaults(sql::Database& db) {
  sql::Transaction transaction(db);
  db.exec("DELETE FROM family_defaults");
  std::vector<std::pair<std::string, std::string>> kinds;
  auto s = db.prepare(R"sql(
    SELECT DISTINCT p.family, p.match_key FROM problems p WHERE p.size > 0 AND EXISTS (
      SELECT 1 FROM results r WHERE r.problem_id = p.id AND r.status = 'ok' AND r.time_ms_median > 0))sql");
  while (s.step()) kinds.emplace_back(s.column_text(0), s.column_text(1));
  auto insert = db.prepare(
      "INSERT INTO family_defaults (family, match_key, config, pairs, geomean_ratio) VALUES (?1, ?2, ?3, ?4, ?5)");
  for (const auto& [family, match_key] : kinds) {
    const Candidates all = candidates(db, family, match_key, DeviceSet{});
    if (all.rows.empty()) continue;
    const Choice choice = choose_config(all);
    insert.bind(1, family).bind(2, match_key).bind(3, all.configs[choice.config])
        .bind(4, static_cast<std::int64_t>(choice.pairs)).bind(5, choice.geomean_ratio);
    insert.run();
  }
  db.exec(
      "UPDATE meta SET value = (SELECT value FROM meta WHERE key = 'results_version') "
      "WHERE key = 'family_defaults_version'");
  transaction.commit();
}

}  // namespace cutune::db
