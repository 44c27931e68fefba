// cutune's own JSON document: every row of a database, or of a selection of it, by natural keys
// (device uuid, template family + hash, problem family + key) instead of row ids, so that it can
// be imported into any database.
#include <filesystem>
#include <map>
#include <set>

#include "compressed_file.hpp"
#include "core/error.hpp"
#include "interchange_rows.hpp"
#include "problem_identity.hpp"
#include "schema.hpp"

namespace cutune::db {
namespace {

using interchange::Json;

constexpr const char* kFormat = "cutune-results";
constexpr int kFormatVersion = 1;

struct TemplateKey {
  std::string family, hash;
  auto operator<=>(const TemplateKey&) const = default;
};

// Reads the selection from any database this code understands (a merge reads older ones as they
// are: version 1 has no cubins).
Json export_document(sql::Database& db, const Selection& selection) {
  const int version = schema_version(db);
  if (version == 0) throw InterchangeError("'" + db.path() + "' is not a cutune database");
  if (version > kSchemaVersion)
    throw InterchangeError("'" + db.path() + "' has schema version " + std::to_string(version) +
                           ", newer than this cutune understands");
  sql::Transaction snapshot(db, sql::Transaction::Kind::read);
  Json document{{"format", kFormat}, {"format_version", kFormatVersion}, {"exported_at", utc_now()},
                {"selection", {{"family", selection.family}, {"device", selection.device}, {"problem", selection.problem}}}};

  std::map<std::int64_t, std::string> uuid_of_device;
  std::set<std::string> archs;
  Json& devices = document["devices"] = Json::array();
  for (const auto& d : interchange::selected_devices(db, selection)) {
    uuid_of_device[d.id] = d.uuid;
    archs.insert("sm_" + std::to_string(d.cc_major) + std::to_string(d.cc_minor));
    devices.push_back(interchange::device_json(d));
  }
  std::map<std::int64_t, std::string> key_of_problem;
  std::set<std::string> problem_families;
  Json& problems = document["problems"] = Json::array();
  for (const auto& p : interchange::selected_problems(db, selection)) {
    key_of_problem[p.id] = p.key;
    problem_families.insert(p.family);
    problems.push_back(interchange::problem_json(p));
  }
  // The declarations the problems derive from (a database older than version 4 has none stored:
  // its built-in families' are the frozen ones its migration would store).
  Json& schemas = document["problem_schemas"] = Json::array();
  for (const std::string& family : problem_families) {
    std::optional<Json> fields;
    if (version >= 4) {
      if (const auto stored = stored_problem_schema(db, family)) fields = stored->to_json();
    } else if (const char* frozen = frozen_v3_problem_schema(family)) {
      fields = Json::parse(frozen);
    }
    if (fields) schemas.push_back({{"family", family}, {"fields", *fields}});
  }
  std::map<std::int64_t, TemplateKey> template_of;
  Json& templates = document["templates"] = Json::array();
  auto t = db.prepare("SELECT id, family, source_hash, source, created_at FROM templates WHERE ?1 = '' OR family = ?1 ORDER BY id");
  t.bind(1, selection.family);
  while (t.step()) {
    template_of[t.column_int(0)] = {t.column_text(1), t.column_text(2)};
    templates.push_back({{"family", t.column_text(1)}, {"source_hash", t.column_text(2)}, {"source", t.column_text(3)},
                         {"created_at", t.column_text(4)}});
  }

  Json& runs = document["runs"] = Json::array();
  auto r = db.prepare(R"sql(
    SELECT id, family, device_id, template_id, strategy, seed, budget, command, tool_version, started_at,
           COALESCE(finished_at, ''), status FROM runs WHERE ?1 = '' OR family = ?1 ORDER BY id)sql");
  r.bind(1, selection.family);
  while (r.step()) {
    if (!uuid_of_device.count(r.column_int(2))) continue;
    runs.push_back({{"id", r.column_int(0)}, {"family", r.column_text(1)}, {"device_uuid", uuid_of_device.at(r.column_int(2))},
                    {"template_hash", template_of.at(r.column_int(3)).hash}, {"strategy", r.column_text(4)},
                    {"seed", r.column_int(5)}, {"budget", r.column_text(6)}, {"command", r.column_text(7)},
                    {"tool_version", r.column_text(8)}, {"started_at", r.column_text(9)},
                    {"finished_at", r.column_text(10)}, {"status", r.column_text(11)}});
  }

  Json& results = document["results"] = Json::array();
  for (const auto& result : interchange::selected_results(db, selection)) {
    const TemplateKey& tk = template_of.at(result.template_id);
    Json row{{"run", result.run_id}, {"device_uuid", uuid_of_device.at(result.device_id)}, {"family", tk.family},
             {"template_hash", tk.hash}, {"problem_key", key_of_problem.at(result.problem_id)}};
    row.update(interchange::measurement_json(result));
    results.push_back(std::move(row));
  }

  Json& cubins = document["cubins"] = Json::array();
  if (version < 2) return document;
  auto c = db.prepare(R"sql(
    SELECT arch, template_id, problem_id, config, cubin, launch_json, compile_options, nvrtc_version, created_at
    FROM cubins ORDER BY id)sql");
  while (c.step()) {
    const auto problem = key_of_problem.find(c.column_int(2));
    const std::string arch = c.column_text(0);
    // With a device filter, the cubins of those devices' architectures only.
    if (problem == key_of_problem.end() || (!selection.device.empty() && !archs.count(arch))) continue;
    const TemplateKey& tk = template_of.at(c.column_int(1));
    cubins.push_back({{"family", tk.family}, {"template_hash", tk.hash}, {"problem_key", problem->second},
                      {"arch", arch}, {"config", c.column_text(3)}, {"cubin_base64", interchange::base64_encode(c.column_blob(4))},
                      {"launch", interchange::parse_json_text_column(c.column_text(5))},
                      {"compile_options", interchange::parse_json_text_column(c.column_text(6))},
                      {"nvrtc_version", c.column_text(7)}, {"created_at", c.column_text(8)}});
  }
  return document;
}

ImportSummary import_document(Store& store, const Json& document, const std::string& source) {
  if (!document.is_object() || document.value("format", "") != kFormat)
    throw InterchangeError("'" + source + "' is not a cutune results document (no \"format\": \"" + kFormat + "\")");
  if (document.value("format_version", 0) > kFormatVersion)
    throw InterchangeError("'" + source + "' has format version " + std::to_string(document.value("format_version", 0)) +
                           ", newer than this cutune reads");
  return interchange::import_in_transaction(store, source, [&](ImportSummary& summary, std::string& where) {
    const auto section = [&](const char* name) -> const Json& {
      static const Json empty = Json::array();
      if (!document.contains(name)) return empty;
      if (!document.at(name).is_array()) throw InterchangeError(std::string("\"") + name + "\" is not an array");
      return document.at(name);
    };
    const auto at = [&](const char* name, std::size_t i) { where = std::string(name) + "[" + std::to_string(i) + "]"; };
    const auto lookup_id = [](const auto& ids, const auto& key, const std::string& what) {
      const auto it = ids.find(key);
      if (it == ids.end()) throw InterchangeError("it names " + what + ", which the document does not list");
      return it->second;
    };

    std::map<std::string, std::int64_t> device_id;
    for (std::size_t i = 0; i < section("devices").size(); ++i, ++summary.devices) {
      at("devices", i);
      const DeviceRecord d = interchange::device_from_json(section("devices")[i]);
      device_id[d.uuid] = store.upsert_device(d);
      interchange::keep_copy_bandwidth(store, device_id[d.uuid], d);
    }
    std::map<TemplateKey, std::int64_t> template_id;
    for (std::size_t i = 0; i < section("templates").size(); ++i) {
      at("templates", i);
      const Json& t = section("templates")[i];
      const TemplateKey key{t.at("family").get<std::string>(), t.at("source_hash").get<std::string>()};
      template_id[key] = store.upsert_template(key.family, key.hash, t.value("source", ""));
    }
    for (std::size_t i = 0; i < section("problem_schemas").size(); ++i) {
      at("problem_schemas", i);
      const Json& s = section("problem_schemas")[i];
      try {
        store_problem_schema(store.database(), s.at("family").get<std::string>(), ProblemSchema::from_json(s.at("fields")));
      } catch (const UsageError& e) {
        throw InterchangeError(e.what());
      }
    }
    std::map<std::pair<std::string, std::string>, std::int64_t> problem_id;
    for (std::size_t i = 0; i < section("problems").size(); ++i, ++summary.problems) {
      at("problems", i);
      const ProblemRecord p = interchange::problem_from_json(section("problems")[i]);
      try {
        problem_id[{p.family, p.key}] = store.upsert_problem(p);
      } catch (const UsageError& e) {  // a descriptor its family's schema refuses
        throw InterchangeError(e.what());
      }
    }
    std::map<std::int64_t, std::int64_t> run_id;
    for (std::size_t i = 0; i < section("runs").size(); ++i, ++summary.runs) {
      at("runs", i);
      const Json& r = section("runs")[i];
      RunRecord run;
      run.family = r.at("family").get<std::string>();
      run.device_id = lookup_id(device_id, r.at("device_uuid").get<std::string>(), "device " + r.at("device_uuid").get<std::string>());
      run.template_id = lookup_id(template_id, TemplateKey{run.family, r.at("template_hash").get<std::string>()},
                                  "template " + r.at("template_hash").get<std::string>());
      run.strategy = r.at("strategy").get<std::string>();
      run.seed = r.value("seed", std::int64_t{0});
      run.budget = r.value("budget", "");
      run.command = r.value("command", "");
      run.tool_version = r.value("tool_version", "");
      run.started_at = r.at("started_at").get<std::string>();
      run.finished_at = r.value("finished_at", "");
      run.status = r.value("status", "finished");
      run_id[r.at("id").get<std::int64_t>()] = interchange::find_or_insert_run(store, run);
    }
    for (std::size_t i = 0; i < section("results").size(); ++i, ++summary.results) {
      at("results", i);
      const Json& r = section("results")[i];
      const std::string family = r.at("family").get<std::string>();
      ResultRecord result;
      result.run_id = lookup_id(run_id, r.at("run").get<std::int64_t>(), "run " + r.at("run").dump());
      result.device_id = lookup_id(device_id, r.at("device_uuid").get<std::string>(), "device " + r.at("device_uuid").get<std::string>());
      result.template_id = lookup_id(template_id, TemplateKey{family, r.at("template_hash").get<std::string>()},
                                     "template " + r.at("template_hash").get<std::string>());
      result.problem_id = lookup_id(problem_id, std::pair{family, r.at("problem_key").get<std::string>()},
                                    "problem " + r.at("problem_key").get<std::string>());
      interchange::measurement_from_json(r, result);
      store.insert_result(result);
    }
    for (std::size_t i = 0; i < section("cubins").size(); ++i, ++summary.cubins) {
      at("cubins", i);
      const Json& c = section("cubins")[i];
      const std::string family = c.at("family").get<std::string>();
      CubinRecord cubin;
      cubin.arch = c.at("arch").get<std::string>();
      cubin.template_id = lookup_id(template_id, TemplateKey{family, c.at("template_hash").get<std::string>()},
                                    "template " + c.at("template_hash").get<std::string>());
      cubin.problem_id = lookup_id(problem_id, std::pair{family, c.at("problem_key").get<std::string>()},
                                   "problem " + c.at("problem_key").get<std::string>());
      cubin.config = c.at("config").get<std::string>();
      cubin.cubin = interchange::base64_decode(c.at("cubin_base64").get<std::string>());
      cubin.launch_json = c.contains("launch") ? c.at("launch").dump() : "[]";
      cubin.compile_options = c.contains("compile_options") ? c.at("compile_options").dump() : "[]";
      cubin.nvrtc_version = c.value("nvrtc_version", "");
      cubin.created_at = c.value("created_at", "");
      store.put_cubin(cubin);
    }
    where.clear();
  });
}

}  // namespace

void export_json(Store& store, const Selection& selection, const std::string& path) {
  try {
    write_text_file(path, export_document(store.database(), selection).dump(1) + "\n");
  } catch (const FileError& e) {
    throw InterchangeError(e.what());
  }
}

ImportSummary import_json(Store& store, const std::string& path) {
  std::string text;
  try {
    text = read_text_file(path);
  } catch (const FileError& e) {
    throw InterchangeError(e.what());
  }
  return import_document(store, interchange::parse_json(text, path), path);
}

ImportSummary merge_database(Store& store, const std::string& other_path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(other_path, ec)) throw InterchangeError("no database at '" + other_path + "'");
  if (std::filesystem::equivalent(other_path, store.database().path(), ec))
    throw InterchangeError("'" + other_path + "' is this database; nothing to merge");
  Json document;
  try {
    sql::Database other(other_path, sql::Database::Mode::read_only);
    document = export_document(other, {});
  } catch (const sql::DbError& e) {
    throw InterchangeError("cannot read '" + other_path + "': " + e.what());
  }
  return import_document(store, document, other_path);
}

}  // namespace cutune::db
