// cutune's own JSON document: every row of a database, or of a selection of it, by natural keys
// (device uuid, template family + hash, problem family + key) instead of row ids, so that it can
// be imported into any database.
#include <filesystem>
#include <limits>
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
  Json document{
      {"format", kFormat},
      {"format_version", kFormatVersion},
      {"exported_at", utc_now()},
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
  auto t = db.prepare(
      "SELECT id, family, source_hash, source, created_at FROM templates WHERE ?1 = '' OR family = ?1 ORDER BY id");
  t.bind(1, selection.family);
  while (t.step()) {
    template_of[t.column_int(0)] = {t.column_text(1), t.column_text(2)};
    templates.push_back({{"family", t.column_text(1)},
                         {"source_hash", t.column_text(2)},
                         {"source", t.column_text(3)},
                         {"created_at", t.column_text(4)}});
  }

  Json& runs = document["runs"] = Json::array();
  auto r = db.prepare(std::string(R"sql(
    SELECT id, family, device_id, template_id, strategy, seed, budget, command, tool_version, started_at,
           COALESCE(finished_at, ''), status, )sql") +
                      (version >= 7 ? "source_header" : "''") + " FROM runs WHERE ?1 = '' OR family = ?1 ORDER BY id");
  r.bind(1, selection.family);
  while (r.step()) {
    if (!uuid_of_device.count(r.column_int(2))) continue;
    runs.push_back({{"id", r.column_int(0)},
                    {"family", r.column_text(1)},
                    {"device_uuid", uuid_of_device.at(r.column_int(2))},
                    {"template_hash", template_of.at(r.column_int(3)).hash},
                    {"strategy", r.column_text(4)},
                    {"seed", r.column_int(5)},
                    {"budget", r.column_text(6)},
                    {"command", r.column_text(7)},
                    {"tool_version", r.column_text(8)},
                    {"started_at", r.column_text(9)},
                    {"finished_at", r.column_text(10)},
                    {"status", r.column_text(11)},
                    {"source_header", interchange::parse_json_text_column(r.column_text(12))}});
  }

  Json& results = document["results"] = Json::array();
  for (const auto& result : interchange::selected_results(db, selection)) {
    const TemplateKey& tk = template_of.at(result.template_id);
    Json row{{"run", result.run_id},
             {"device_uuid", uuid_of_device.at(result.device_id)},
             {"family", tk.family},
             {"template_hash", tk.hash},
             {"problem_key", key_of_problem.at(result.problem_id)}};
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
    cubins.push_back({{"family", tk.family},
                      {"template_hash", tk.hash},
                      {"problem_key", problem->second},
                      {"arch", arch},
                      {"config", c.column_text(3)},
                      {"cubin_base64", interchange::base64_encode(c.column_blob(4))},
                      {"launch", interchange::parse_json_text_column(c.column_text(5))},
                      {"compile_options", interchange::parse_json_text_column(c.column_text(6))},
                      {"nvrtc_version", c.column_text(7)},
                      {"created_at", c.column_text(8)}});
  }
  return document;
}

// Reading a document: every section a list of objects, every row checked as it is read
// (interchange_rows: device_from_json, problem_from_json, measurement_from_json, check_result),
// and the references between sections resolved, all in one transaction.
ImportSummary import_document(Store& store, const Json& document, const std::string& source,
                              const ImportProgress& progress) {
  using namespace interchange;
  const Json* format = document.is_object() ? member(document, "format") : nullptr;
  if (!format || *format != kFormat)
    throw InterchangeError(in_quotes(source, 120) + " is not a cutune results document (no \"format\": \"" + kFormat +
                           "\")");
  try {
    if (const auto version = integer_or(document, "format_version", 0); version > kFormatVersion)
      throw InterchangeError("it has format version " + std::to_string(version) + ", newer than this cutune reads");
    for (const char* name : {"devices", "templates", "problem_schemas", "problems", "runs", "results", "cubins"}) {
      const Json* section = member(document, name);
      if (section && !section->is_array()) refuse_member(name, *section, "a list");
      if (section)
        for (const auto& row : *section)
          if (!row.is_object())
            throw InterchangeError(std::string("\"") + name + "\" holds " + shown(row) + ", not an object");
    }
  } catch (const InterchangeError& e) {
    throw InterchangeError(in_quotes(source, 120) + ": " + e.what());
  }
  return interchange::import_in_transaction(store, source, [&](ImportSummary& summary, std::string& where) {
    const auto section = [&](const char* name) -> const Json& {
      static const Json empty = Json::array();
      const Json* rows = member(document, name);
      return rows ? *rows : empty;
    };
    const auto at = [&](const char* name, std::size_t i) { where = std::string(name) + "[" + std::to_string(i) + "]"; };
    const auto lookup_id = [](const auto& ids, const auto& key, const std::string& what) {
      const auto it = ids.find(key);
      if (it == ids.end()) throw InterchangeError("it names " + what + ", which the document does not list");
      return it->second;
    };

    // Results and cubins are the rows that take the time; the other sections hold a handful each.
    const std::size_t rows = section("results").size() + section("cubins").size();
    std::map<std::string, std::int64_t> device_id;
    for (std::size_t i = 0; i < section("devices").size(); ++i, ++summary.devices) {
      at("devices", i);
      const DeviceRecord d = device_from_json(section("devices")[i]);
      device_id[d.uuid] = store.upsert_device(d);
      keep_copy_bandwidth(store, device_id[d.uuid], d);
    }
    std::map<TemplateKey, std::int64_t> template_id;
    for (std::size_t i = 0; i < section("templates").size(); ++i) {
      at("templates", i);
      const Json& t = section("templates")[i];
      const TemplateKey key{text_at(t, "family", Text::name), text_at(t, "source_hash", Text::name)};
      template_id[key] = store.upsert_template(key.family, key.hash, text_or(t, "source", ""));
    }
    for (std::size_t i = 0; i < section("problem_schemas").size(); ++i) {
      at("problem_schemas", i);
      const Json& s = section("problem_schemas")[i];
      store_problem_schema(store.database(), text_at(s, "family", Text::name),
                           ProblemSchema::from_json(required(s, "fields")));
    }
    std::map<std::pair<std::string, std::string>, std::int64_t> problem_id;
    for (std::size_t i = 0; i < section("problems").size(); ++i, ++summary.problems) {
      at("problems", i);
      const ProblemRecord p = problem_from_json(section("problems")[i]);
      problem_id[{p.family, p.key}] = store.upsert_problem(p);  // a descriptor its family's schema refuses: UsageError
    }
    std::map<std::int64_t, std::int64_t> run_id;
    for (std::size_t i = 0; i < section("runs").size(); ++i, ++summary.runs) {
      at("runs", i);
      const Json& r = section("runs")[i];
      RunRecord run;
      run.family = text_at(r, "family", Text::name);
      const std::string device = text_at(r, "device_uuid", Text::name), hash = text_at(r, "template_hash", Text::name);
      run.device_id = lookup_id(device_id, device, "device " + in_quotes(device));
      run.template_id = lookup_id(template_id, TemplateKey{run.family, hash}, "template " + in_quotes(hash));
      run.strategy = text_at(r, "strategy", Text::label);
      run.seed = integer_or(r, "seed", 0, std::numeric_limits<std::int64_t>::min());
      run.budget = text_or(r, "budget", "");
      run.command = text_or(r, "command", "");
      run.tool_version = text_or(r, "tool_version", "", Text::label);
      run.started_at = text_at(r, "started_at", Text::label);
      run.finished_at = text_or(r, "finished_at", "", Text::label);
      run.status = text_or(r, "status", "finished");
      if (run.status != "running" && run.status != "finished" && run.status != "interrupted" && run.status != "failed")
        throw InterchangeError("unknown run status " + in_quotes(run.status) +
                               " (known: running, finished, interrupted, failed)");
      run.source_header = source_object_text(r, "source_header");
      run_id[integer_at(r, "id", std::numeric_limits<std::int64_t>::min())] = find_or_insert_run(store, run);
    }
    for (std::size_t i = 0; i < section("results").size(); ++i, ++summary.results) {
      at("results", i);
      const Json& r = section("results")[i];
      const std::string family = text_at(r, "family", Text::name), device = text_at(r, "device_uuid", Text::name);
      const std::string hash = text_at(r, "template_hash", Text::name), problem = text_at(r, "problem_key", Text::name);
      const std::int64_t run = integer_at(r, "run", std::numeric_limits<std::int64_t>::min());
      ResultRecord result;
      result.run_id = lookup_id(run_id, run, "run " + std::to_string(run));
      result.device_id = lookup_id(device_id, device, "device " + in_quotes(device));
      result.template_id = lookup_id(template_id, TemplateKey{family, hash}, "template " + in_quotes(hash));
      result.problem_id = lookup_id(problem_id, std::pair{family, problem}, "problem " + in_quotes(problem));
      if (!member(r, "config")) missing_member("config");
      if (!member(r, "status")) missing_member("status");
      measurement_from_json(r, result);
      check_result(result);
      store.insert_result(result);
      report_progress(progress, i + 1, rows);
    }
    for (std::size_t i = 0; i < section("cubins").size(); ++i, ++summary.cubins) {
      at("cubins", i);
      const Json& c = section("cubins")[i];
      const std::string family = text_at(c, "family", Text::name), hash = text_at(c, "template_hash", Text::name);
      const std::string problem = text_at(c, "problem_key", Text::name);
      CubinRecord cubin;
      cubin.arch = text_at(c, "arch", Text::name);
      cubin.template_id = lookup_id(template_id, TemplateKey{family, hash}, "template " + in_quotes(hash));
      cubin.problem_id = lookup_id(problem_id, std::pair{family, problem}, "problem " + in_quotes(problem));
      cubin.config = text_at(c, "config", Text::name);
      cubin.cubin = base64_decode(text_at(c, "cubin_base64"));
      const Json* launch = member(c, "launch");
      if (launch) check_launch_plan(*launch);
      cubin.launch_json = launch ? launch->dump() : "[]";
      const Json* options = member(c, "compile_options");
      if (options && !options->is_array()) refuse_member("compile_options", *options, "a list of NVRTC options");
      if (options)
        for (const auto& option : *options) text_value("compile_options", option);
      cubin.compile_options = options ? options->dump() : "[]";
      cubin.nvrtc_version = text_or(c, "nvrtc_version", "", Text::label);
      cubin.created_at = text_or(c, "created_at", "", Text::label);
      store.put_cubin(cubin);
      report_progress(progress, section("results").size() + i + 1, rows);
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

ImportSummary import_json(Store& store, const std::string& path, const ImportProgress& progress) {
  std::string text;
  try {
    text = read_text_file(path);
  } catch (const FileError& e) {
    throw InterchangeError(e.what());
  }
  return import_document(store, interchange::parse_json(text, path), path, progress);
}

ImportSummary merge_database(Store& store, const std::string& other_path, const ImportProgress& progress) {
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
  return import_document(store, document, other_path, progress);
}

}  // namespace cutune::db
