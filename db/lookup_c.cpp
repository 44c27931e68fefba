// The C API over cutune::lookup. Exceptions never cross it: each entry point turns them into a
// status and this thread's last-error message.
#include <cmath>
#include <exception>
#include <limits>
#include <new>
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

cutune::lookup::Query query_of(const cutune_query& q) {
  return {text_or_empty(q.family),
          {text_or_empty(q.device_uuid), text_or_empty(q.device_name), q.cc_major, q.cc_minor},
          {q.size, text_or_empty(q.dtype)}};
}

// NOT_FOUND for an index past a list's end: "step 2 of 2".
cutune_status past_the_end(const char* what, size_t index, size_t count) {
  return fail(CUTUNE_NOT_FOUND, std::string(what) + " " + std::to_string(index) + " of " + std::to_string(count));
}

cutune_launch c_launch(const cutune::lookup::Launch& l) {
  cutune_launch launch{};
  launch.kernel = l.kernel.c_str();
  for (int i = 0; i < 3; ++i) {
    launch.grid[i] = l.grid[i];
    launch.block[i] = l.block[i];
  }
  launch.dynamic_shared_bytes = l.dynamic_shared_bytes;
  return launch;
}

}  // namespace

extern "C" {

const char* cutune_last_error(void) { return g_last_error.c_str(); }

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
  if (!m || !launch) return fail(CUTUNE_ERROR, "cutune_match_launch: arguments must not be NULL");
  if (index >= m->match->launches.size()) return past_the_end("launch", index, m->match->launches.size());
  *launch = c_launch(m->match->launches[index]);
  return CUTUNE_OK;
}

size_t cutune_match_step_count(const cutune_match* m) { return m->match->steps.size(); }

cutune_status cutune_match_step(const cutune_match* m, size_t index, cutune_step* step) {
  if (!m || !step) return fail(CUTUNE_ERROR, "cutune_match_step: arguments must not be NULL");
  if (index >= m->match->steps.size()) return past_the_end("step", index, m->match->steps.size());
  *step = cutune_step{};
  if (const auto* launch = std::get_if<cutune::lookup::Launch>(&m->match->steps[index])) {
    step->kind = CUTUNE_STEP_LAUNCH;
    step->launch = c_launch(*launch);
  } else {
    const auto& memset = std::get<cutune::lookup::Memset>(m->match->steps[index]);
    step->kind = CUTUNE_STEP_MEMSET;
    step->memset = {memset.buffer.c_str(), memset.word, memset.bytes, memset.byte_offset, memset.stream_write ? 1 : 0};
  }
  return CUTUNE_OK;
}

int64_t cutune_match_matched_size(const cutune_match* m) { return m->match->matched_size; }
const char* cutune_match_matched_problem(const cutune_match* m) { return m->match->matched_problem.c_str(); }
double cutune_match_size_distance(const cutune_match* m) { return m->match->size_distance; }

double cutune_match_time_ms(const cutune_match* m) {
  return m->match->time_ms ? *m->match->time_ms : std::numeric_limits<double>::quiet_NaN();
}

cutune_status cutune_find_cubin(cutune_db* db, const cutune_query* query, const char* arch, cutune_cubin** cubin) {
  return guarded([&] {
    if (!db || !query || !arch || !cubin) return fail(CUTUNE_ERROR, "cutune_find_cubin: arguments must not be NULL");
    *cubin = nullptr;
    auto found = db->database.cubin(query_of(*query), arch);
    if (!found) return fail(CUTUNE_NOT_FOUND, found.reason);
    *cubin = new cutune_cubin{std::move(found)};
    return CUTUNE_OK;
  });
}

const void* cutune_cubin_data(const cutune_cubin* c, size_t* bytes) {
  if (bytes) *bytes = c->cubin.image.size();
  return c->cubin.image.data();
}

const char* cutune_cubin_arch(const cutune_cubin* c) { return c->cubin.arch.c_str(); }

void cutune_cubin_free(cutune_cubin* cubin) { delete cubin; }

}  // extern "C"
