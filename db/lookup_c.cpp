// The C API over cutune::lookup. Exceptions never cross it: each entry point turns them into a
// status and this thread's last-error message.
#include <cctype>
#include <cmath>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <type_traits>
#include <limits>
#include <new>
#include <optional>
#include <string>
#include <variant>

#include "cutune_lookup.h"
#include "lookup.hpp"

struct cutune_db {
  cutune::lookup::Database database;
};

struct cutune_match {
  std::shared_ptr<const cutune::lookup::Match> match;
};

struct cutune_cubin {
  cutune::lookup::Cubin cubin;
};

namespace {

thread_local std::string g_last_error;

cutune_status fail(cutune_status status, std::string message) {
  g_last_error = std::move(message);
  return status;
}

// Runs `body`, turning any exception into CUTUNE_ERROR with its message.
template <class F>
cutune_status guarded(F&& body) {
  try {
    g_last_error.clear();
    return body();
  } catch (const std::bad_alloc&) {
    return fail(CUTUNE_ERROR, "out of memory");
  } catch (const std::exception& e) {
    return fail(CUTUNE_ERROR, e.what());
  }
}

const char* text_or_empty(const char* text) { return text ? text : ""; }

// The caller's struct must hold at least this library's layout of it: the first layout is the
// smallest there will ever be, and a later, larger one is read only as far as this library knows.
void check_struct_size(const std::string& what, size_t given, size_t known) {
  if (given < known) {
    std::string macro = what.substr(what.find('_') + 1);
    for (char& c : macro) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    throw std::invalid_argument(what + ".struct_size is " + std::to_string(given) + ", less than the " +
                                std::to_string(known) + " bytes this library reads: start from CUTUNE_" + macro +
                                "_INIT");
  }
}

cutune::lookup::Query query_of(const cutune_query& q) {
  check_struct_size("cutune_query", q.struct_size, sizeof(cutune_query));
  cutune::lookup::Query query{text_or_empty(q.family),
                              {text_or_empty(q.device_uuid), text_or_empty(q.device_name), q.cc_major, q.cc_minor},
                              {q.size, text_or_empty(q.dtype), {}}};
  if (q.field_count > 0 && !q.fields) throw std::invalid_argument("cutune_query.fields is NULL with field_count > 0");
  for (size_t i = 0; i < q.field_count; ++i) {
    if (!q.fields[i].name || !q.fields[i].value)
      throw std::invalid_argument("cutune_query.fields[" + std::to_string(i) + "] has a NULL name or value");
    query.problem.fields.push_back({q.fields[i].name, q.fields[i].value});
  }
  return query;
}

// Writes `value` into the caller's struct, as far as both layouts reach.
template <class T>
void write_versioned(T* out, const T& value) {
  check_struct_size(std::is_same_v<T, cutune_step> ? "cutune_step" : "cutune_launch", out->struct_size, sizeof(T));
  const size_t keep = out->struct_size;
  std::memcpy(out, &value, sizeof(T));
  out->struct_size = keep;
}

// NOT_FOUND for an index past a list's end: "step 2 of 2".
cutune_status past_the_end(const char* what, size_t index, size_t count) {
  return fail(CUTUNE_NOT_FOUND, std::string(what) + " " + std::to_string(index) + " of " + std::to_string(count));
}

cutune_launch c_launch(const cutune::lookup::Launch& l) {
  cutune_launch launch{};
  launch.struct_size = sizeof(cutune_launch);
  launch.kernel = l.kernel.c_str();
  for (int i = 0; i < 3; ++i) {
    launch.grid[i] = l.grid[i];
    launch.block[i] = l.block[i];
  }
  launch.dynamic_shared_bytes = l.dynamic_shared_bytes;
  return launch;
}

double value_or_nan(const std::optional<double>& value) {
  return value ? *value : std::numeric_limits<double>::quiet_NaN();
}

cutune_status find_cubin(const char* function, cutune_db* db, const cutune_query* query, const char* arch,
                         const cutune::lookup::Objective& objective, cutune_cubin** cubin) {
  return guarded([&] {
    if (!db || !query || !arch || !cubin)
      return fail(CUTUNE_ERROR, std::string(function) + ": arguments must not be NULL");
    *cubin = nullptr;
    auto found = db->database.cubin(query_of(*query), arch, objective);
    if (!found) return fail(CUTUNE_NOT_FOUND, found.reason);
    *cubin = new cutune_cubin{std::move(found)};
    return CUTUNE_OK;
  });
}

}  // namespace

extern "C" {

const char* cutune_last_error(void) { return g_last_error.c_str(); }

int cutune_lookup_abi_version(void) { return CUTUNE_LOOKUP_ABI_VERSION; }

cutune_status cutune_db_open(const char* path, cutune_db** db) {
  return guarded([&] {
    if (!path || !db) return fail(CUTUNE_ERROR, "cutune_db_open: path and db must not be NULL");
    *db = new cutune_db{cutune::lookup::Database(path)};
    return CUTUNE_OK;
  });
}

void cutune_db_close(cutune_db* db) { delete db; }

cutune_status cutune_find(cutune_db* db, const cutune_query* query, cutune_match** match) {
  return guarded([&] {
    if (!db || !query || !match) return fail(CUTUNE_ERROR, "cutune_find: db, query and match must not be NULL");
    *match = new cutune_match{db->database.find(query_of(*query))};
    return CUTUNE_OK;
  });
}

cutune_status cutune_find_lowest_energy(cutune_db* db, const cutune_query* query, double within_fraction,
                                        cutune_match** match) {
  return guarded([&] {
    if (!db || !query || !match)
      return fail(CUTUNE_ERROR, "cutune_find_lowest_energy: db, query and match must not be NULL");
    *match = new cutune_match{
        db->database.find(query_of(*query), cutune::lookup::Objective::lowest_energy(within_fraction))};
    return CUTUNE_OK;
  });
}

void cutune_match_free(cutune_match* match) { delete match; }

int cutune_match_level(const cutune_match* m) { return static_cast<int>(m->match->level); }
const char* cutune_match_level_name(const cutune_match* m) { return cutune::lookup::to_string(m->match->level); }
const char* cutune_match_basis(const cutune_match* m) { return m->match->basis.c_str(); }
const char* cutune_match_config(const cutune_match* m) { return m->match->config.c_str(); }
size_t cutune_match_parameter_count(const cutune_match* m) { return m->match->parameters.size(); }

const char* cutune_match_parameter_name(const cutune_match* m, size_t index) {
  return index < m->match->parameters.size() ? m->match->parameters[index].name.c_str() : nullptr;
}

const char* cutune_match_parameter_value(const cutune_match* m, size_t index) {
  return index < m->match->parameters.size() ? m->match->parameters[index].value.c_str() : nullptr;
}

cutune_status cutune_match_integer(const cutune_match* m, const char* name, int64_t* value) {
  return guarded([&] {
    if (!m || !name || !value) return fail(CUTUNE_ERROR, "cutune_match_integer: arguments must not be NULL");
    const auto* p = m->match->parameter(name);
    if (!p || !p->integer)
      return fail(CUTUNE_NOT_FOUND, "config '" + m->match->config + "' has no integer parameter '" + name + "'");
    *value = *p->integer;
    return CUTUNE_OK;
  });
}

size_t cutune_match_launch_count(const cutune_match* m) { return m->match->launches.size(); }

cutune_status cutune_match_launch(const cutune_match* m, size_t index, cutune_launch* launch) {
  return guarded([&] {
    if (!m || !launch) return fail(CUTUNE_ERROR, "cutune_match_launch: arguments must not be NULL");
    if (index >= m->match->launches.size()) return past_the_end("launch", index, m->match->launches.size());
    write_versioned(launch, c_launch(m->match->launches[index]));
    return CUTUNE_OK;
  });
}

size_t cutune_match_step_count(const cutune_match* m) { return m->match->steps.size(); }

cutune_status cutune_match_step(const cutune_match* m, size_t index, cutune_step* step) {
  return guarded([&] {
    if (!m || !step) return fail(CUTUNE_ERROR, "cutune_match_step: arguments must not be NULL");
    if (index >= m->match->steps.size()) return past_the_end("step", index, m->match->steps.size());
    cutune_step out{};
    out.struct_size = sizeof(cutune_step);
    out.launch.struct_size = sizeof(cutune_launch);
    if (const auto* launch = std::get_if<cutune::lookup::Launch>(&m->match->steps[index])) {
      out.kind = CUTUNE_STEP_LAUNCH;
      out.launch = c_launch(*launch);
    } else {
      const auto& memset = std::get<cutune::lookup::Memset>(m->match->steps[index]);
      out.kind = CUTUNE_STEP_MEMSET;
      out.memset = {memset.buffer.c_str(), memset.word, memset.bytes, memset.byte_offset, memset.stream_write ? 1 : 0};
    }
    write_versioned(step, out);
    return CUTUNE_OK;
  });
}

namespace {
// A launch's flag through the C API: 1 or 0 (0 for memsets too), -1 past the last step.
int launch_flag(const cutune_match* m, size_t index, bool cutune::lookup::Launch::*flag) {
  if (!m || index >= m->match->steps.size()) return -1;
  const auto* launch = std::get_if<cutune::lookup::Launch>(&m->match->steps[index]);
  return launch && launch->*flag ? 1 : 0;
}
}  // namespace

int cutune_match_step_fills_device(const cutune_match* m, size_t index) {
  return launch_flag(m, index, &cutune::lookup::Launch::fill_device);
}

int cutune_match_step_programmatic(const cutune_match* m, size_t index) {
  return launch_flag(m, index, &cutune::lookup::Launch::programmatic);
}

int64_t cutune_match_matched_size(const cutune_match* m) { return m->match->matched_size; }
const char* cutune_match_matched_problem(const cutune_match* m) { return m->match->matched_problem.c_str(); }
const char* cutune_match_match_key(const cutune_match* m) { return m->match->match_key.c_str(); }
int cutune_match_verified(const cutune_match* m) { return m->match->verified ? 1 : 0; }
double cutune_match_size_distance(const cutune_match* m) { return m->match->size_distance; }

double cutune_match_time_ms(const cutune_match* m) { return value_or_nan(m->match->time_ms); }
double cutune_match_energy_j(const cutune_match* m) { return value_or_nan(m->match->energy_j); }
double cutune_match_power_w(const cutune_match* m) { return value_or_nan(m->match->power_w); }
int cutune_match_chosen_by(const cutune_match* m) { return static_cast<int>(m->match->chosen_by); }
double cutune_match_fastest_time_ms(const cutune_match* m) { return value_or_nan(m->match->fastest_time_ms); }
const char* cutune_match_objective_note(const cutune_match* m) { return m->match->objective_note.c_str(); }

cutune_status cutune_arch_of(int cc_major, int cc_minor, char* arch, size_t size) {
  return guarded([&] {
    if (!arch) return fail(CUTUNE_ERROR, "cutune_arch_of: arch must not be NULL");
    const std::string name = cutune::lookup::arch_of(cc_major, cc_minor);
    if (name.size() >= size)
      return fail(CUTUNE_ERROR, "cutune_arch_of: " + std::to_string(size) + " bytes cannot hold \"" + name + "\"");
    std::memcpy(arch, name.c_str(), name.size() + 1);
    return CUTUNE_OK;
  });
}

cutune_status cutune_find_cubin(cutune_db* db, const cutune_query* query, const char* arch, cutune_cubin** cubin) {
  return find_cubin("cutune_find_cubin", db, query, arch, cutune::lookup::Objective::fastest(), cubin);
}

cutune_status cutune_find_cubin_lowest_energy(cutune_db* db, const cutune_query* query, double within_fraction,
                                              const char* arch, cutune_cubin** cubin) {
  return find_cubin("cutune_find_cubin_lowest_energy", db, query, arch,
                    cutune::lookup::Objective::lowest_energy(within_fraction), cubin);
}

const void* cutune_cubin_data(const cutune_cubin* c, size_t* bytes) {
  if (bytes) *bytes = c->cubin.image.size();
  return c->cubin.image.data();
}

const char* cutune_cubin_arch(const cutune_cubin* c) { return c->cubin.arch.c_str(); }

void cutune_cubin_free(cutune_cubin* cubin) { delete cubin; }

}  // extern "C"
