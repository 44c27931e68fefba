/* cutune lookup, C API: the best launch configuration of a kernel family for a device and problem,
 * from a cutune results database, for C programs and foreign-function interfaces. It mirrors
 * cutune/lookup.hpp; see there for the fallback levels and the cache (the first lookup of a family,
 * device and problem fields reads what every size needs; later ones, for any size, are answered from
 * memory). The README ("Applications: cutune::lookup") has a complete C program; CI compiles it.
 *
 *   cutune_db* db;
 *   if (cutune_db_open("cutune.db", &db) != CUTUNE_OK) fprintf(stderr, "%s\n", cutune_last_error());
 *   cutune_field op = {"op", "sum"};
 *   cutune_query q = CUTUNE_QUERY_INIT;
 *   q.family = "reduce"; q.device_uuid = uuid; q.cc_major = 9; q.size = n; q.dtype = "float32";
 *   q.fields = &op; q.field_count = 1;
 *   cutune_match* m;
 *   if (cutune_find(db, &q, &m) == CUTUNE_OK) { int64_t block; cutune_match_integer(m, "block", &block); … }
 *   cutune_match_free(m);
 *   if (cutune_find_lowest_energy(db, &q, 0.05, &m) == CUTUNE_OK) { … cutune_match_energy_j(m) … }  (≤ 5 % slower)
 *   cutune_match_free(m);
 *   cutune_db_close(db);
 *
 * Strings returned by the accessors live as long as the handle they come from. Every function is
 * safe to call from several threads on the same cutune_db.
 *
 * Versioning: every struct passed by pointer starts with struct_size, which the caller sets to the
 * sizeof it was compiled with (the *_INIT macros do). A later library that grows a struct reads or
 * writes only that many bytes, so programs built against this header keep working.
 */
#ifndef CUTUNE_LOOKUP_H
#define CUTUNE_LOOKUP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CUTUNE_LOOKUP_C_API __attribute__((visibility("default")))

typedef struct cutune_db cutune_db;
typedef struct cutune_match cutune_match;
typedef struct cutune_cubin cutune_cubin;

typedef enum {
  CUTUNE_OK = 0,
  CUTUNE_ERROR = 1,    /* bad argument, unreadable database, unknown family: see cutune_last_error() */
  CUTUNE_NOT_FOUND = 2 /* no such parameter, launch or cubin: see cutune_last_error() for why */
} cutune_status;

/* Fallback levels, as cutune::lookup::Level. */
enum {
  CUTUNE_LEVEL_EXACT_DEVICE = 1,
  CUTUNE_LEVEL_SAME_COMPUTE_CAPABILITY = 2,
  CUTUNE_LEVEL_FAMILY_DEFAULT = 3,
  CUTUNE_LEVEL_BUILTIN_DEFAULT = 4
};

/* How a match was chosen, as cutune::lookup::Objective::Kind. */
enum { CUTUNE_OBJECTIVE_FASTEST = 0, CUTUNE_OBJECTIVE_LOWEST_ENERGY = 1 };

/* This header's layout of the structs below; cutune_lookup_abi_version() says the library's. */
#define CUTUNE_LOOKUP_ABI_VERSION 1

/* One problem field by name, as text: {"op", "sum"}, {"window", "60"}. */
typedef struct {
  const char* name;
  const char* value;
} cutune_field;

/* The problem: its size (the product of the family's extents; 0 to compute it from extents given
 * as fields), its element type, and the family's other fields. Fields left out take their
 * declared defaults; a lookup never answers from a problem whose fields differ (a sum's query
 * never gets a min's config). See cutune::lookup::ProblemDescriptor. */
typedef struct {
  size_t struct_size; /* sizeof(cutune_query): start from CUTUNE_QUERY_INIT */
  const char* family;
  const char* device_uuid; /* may be NULL or "" */
  const char* device_name; /* may be NULL or "" */
  int cc_major, cc_minor;  /* 0, 0: unknown */
  int64_t size;            /* problem size, elements */
  /* Element type, e.g. "int32". NULL or "": the element-type field in `fields`, else its declared
   * default; for a family stored without a problem schema, the one element type its problems have.
   * Where none of these says it, cutune_find refuses the query (CUTUNE_ERROR) rather than answer
   * with the built-in default. cutune_match_match_key shows the type that answered. */
  const char* dtype;
  const cutune_field* fields;
  size_t field_count;
} cutune_query;
#define CUTUNE_QUERY_INIT \
  { sizeof(cutune_query), NULL, NULL, NULL, 0, 0, 0, NULL, NULL, 0 }

typedef struct {
  size_t struct_size; /* sizeof(cutune_launch): start from CUTUNE_LAUNCH_INIT */
  const char* kernel;
  unsigned grid[3], block[3];
  unsigned dynamic_shared_bytes;
} cutune_launch;
#define CUTUNE_LAUNCH_INIT \
  { sizeof(cutune_launch), NULL, {0, 0, 0}, {0, 0, 0}, 0 }

/* Fills part of one of the family's buffers (named as the kernels' parameter that receives it)
 * with a repeated 32-bit word: cuMemsetD32(buffer + byte_offset, word, bytes / 4). stream_write:
 * it was measured as stream memory writes of the words (cuStreamWriteValue32), same contents. */
typedef struct {
  const char* buffer;
  uint32_t word;
  int64_t bytes, byte_offset;
  int stream_write;
} cutune_memset;

typedef enum { CUTUNE_STEP_LAUNCH = 0, CUTUNE_STEP_MEMSET = 1 } cutune_step_kind;

/* One step of the measured plan: `launch` or `memset`, as `kind` says. */
typedef struct {
  size_t struct_size; /* sizeof(cutune_step): start from CUTUNE_STEP_INIT */
  cutune_step_kind kind;
  cutune_launch launch;
  cutune_memset memset;
} cutune_step;
#define CUTUNE_STEP_INIT                                                              \
  {                                                                                   \
    sizeof(cutune_step), CUTUNE_STEP_LAUNCH, CUTUNE_LAUNCH_INIT, { NULL, 0, 0, 0, 0 } \
  }

/* CUTUNE_LOOKUP_ABI_VERSION of the library as built. */
CUTUNE_LOOKUP_C_API int cutune_lookup_abi_version(void);

/* The message of this thread's last failed call ("" when none). */
CUTUNE_LOOKUP_C_API const char* cutune_last_error(void);

CUTUNE_LOOKUP_C_API cutune_status cutune_db_open(const char* path, cutune_db** db);
CUTUNE_LOOKUP_C_API void cutune_db_close(cutune_db* db);

CUTUNE_LOOKUP_C_API cutune_status cutune_find(cutune_db* db, const cutune_query* query, cutune_match** match);
CUTUNE_LOOKUP_C_API void cutune_match_free(cutune_match* match);

CUTUNE_LOOKUP_C_API int cutune_match_level(const cutune_match* match);
CUTUNE_LOOKUP_C_API const char* cutune_match_level_name(const cutune_match* match);
CUTUNE_LOOKUP_C_API const char* cutune_match_basis(const cutune_match* match);
CUTUNE_LOOKUP_C_API const char* cutune_match_config(const cutune_match* match);
CUTUNE_LOOKUP_C_API size_t cutune_match_parameter_count(const cutune_match* match);
CUTUNE_LOOKUP_C_API const char* cutune_match_parameter_name(const cutune_match* match, size_t index);
CUTUNE_LOOKUP_C_API const char* cutune_match_parameter_value(const cutune_match* match, size_t index);
CUTUNE_LOOKUP_C_API cutune_status cutune_match_integer(const cutune_match* match, const char* name, int64_t* value);
CUTUNE_LOOKUP_C_API size_t cutune_match_launch_count(const cutune_match* match);
CUTUNE_LOOKUP_C_API cutune_status cutune_match_launch(const cutune_match* match, size_t index, cutune_launch* launch);
/* The whole plan in order: the launches and the memsets before or between them. A config whose plan
 * has memsets (an atomic reduction's zeroed output, say) is wrong when only its launches run. */
CUTUNE_LOOKUP_C_API size_t cutune_match_step_count(const cutune_match* match);
CUTUNE_LOOKUP_C_API cutune_status cutune_match_step(const cutune_match* match, size_t index, cutune_step* step);
/* 1 when step `index` is a launch whose kernel shares its work out over however many blocks run
 * (matmul's stream-K): its grid is what the measured device held at once, blocks per SM
 * (cuOccupancyMaxActiveBlocksPerMultiprocessor) times SMs, so size it that way on another GPU.
 * 0 for other launches and for memsets; -1 past the last step. */
CUTUNE_LOOKUP_C_API int cutune_match_step_fills_device(const cutune_match* match, size_t index);
/* 1 when step `index` is a launch measured with programmatic dependent launch (sm_90 and newer):
 * launch it with CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION so that it may start while the
 * launch before it finishes (its kernel waits for that launch's outputs itself); launched without
 * the attribute it computes the same. 0 for other launches and memsets; -1 past the last step. */
CUTUNE_LOOKUP_C_API int cutune_match_step_programmatic(const cutune_match* match, size_t index);
CUTUNE_LOOKUP_C_API int64_t cutune_match_matched_size(const cutune_match* match);
CUTUNE_LOOKUP_C_API const char* cutune_match_matched_problem(const cutune_match* match);
/* The fields the answer matched exactly, e.g. "op=sum,type=float32". */
CUTUNE_LOOKUP_C_API const char* cutune_match_match_key(const cutune_match* match);
CUTUNE_LOOKUP_C_API double cutune_match_size_distance(const cutune_match* match); /* INFINITY for built-in */
CUTUNE_LOOKUP_C_API double cutune_match_time_ms(const cutune_match* match);       /* NAN when not measured */
/* 0 when the result's outputs were never checked against a reference (a kernel spec without one). */
CUTUNE_LOOKUP_C_API int cutune_match_verified(const cutune_match* match);

/* The config with the least energy per run among those at most within_fraction (0.05: 5 %) slower
 * than the fastest, on the problem and device of cutune_find's answer (see
 * cutune::lookup::Objective). Where no energy was measured there, or at the family-default and
 * built-in levels, the answer is cutune_find's, with cutune_match_objective_note saying why.
 * CUTUNE_ERROR as cutune_find, and for a within_fraction that is negative or not finite. */
CUTUNE_LOOKUP_C_API cutune_status cutune_find_lowest_energy(cutune_db* db, const cutune_query* query,
                                                            double within_fraction, cutune_match** match);
/* The energy of one run of the match's plan (joules) and the average power meanwhile (watts), the
 * whole board's; NAN where not measured (databases before schema version 8, tune without --energy). */
CUTUNE_LOOKUP_C_API double cutune_match_energy_j(const cutune_match* match);
CUTUNE_LOOKUP_C_API double cutune_match_power_w(const cutune_match* match);
/* CUTUNE_OBJECTIVE_LOWEST_ENERGY where energies were compared, else CUTUNE_OBJECTIVE_FASTEST. */
CUTUNE_LOOKUP_C_API int cutune_match_chosen_by(const cutune_match* match);
/* Where energies were compared: the fastest time among the results compared (the window's
 * reference); NAN otherwise. */
CUTUNE_LOOKUP_C_API double cutune_match_fastest_time_ms(const cutune_match* match);
/* Why a lowest-energy query was answered with the fastest config; "" when answered as asked. */
CUTUNE_LOOKUP_C_API const char* cutune_match_objective_note(const cutune_match* match);

/* The architecture name of a compute capability, "sm_90" for 9.0, into `arch` (at least 8 bytes).
 * CUTUNE_ERROR for one that no GPU has (0.0, a minor above 9) or a buffer too small. */
CUTUNE_LOOKUP_C_API cutune_status cutune_arch_of(int cc_major, int cc_minor, char* arch, size_t size);

/* The stored cubin of the query's best config for `arch` ("sm_90"), or CUTUNE_NOT_FOUND with the
 * reason in cutune_last_error(), so the caller can compile the template instead. */
CUTUNE_LOOKUP_C_API cutune_status cutune_find_cubin(cutune_db* db, const cutune_query* query, const char* arch,
                                                    cutune_cubin** cubin);
/* The same for cutune_find_lowest_energy's config. */
CUTUNE_LOOKUP_C_API cutune_status cutune_find_cubin_lowest_energy(cutune_db* db, const cutune_query* query,
                                                                  double within_fraction, const char* arch,
                                                                  cutune_cubin** cubin);
CUTUNE_LOOKUP_C_API const void* cutune_cubin_data(const cutune_cubin* cubin, size_t* bytes);
CUTUNE_LOOKUP_C_API const char* cutune_cubin_arch(const cutune_cubin* cubin);
CUTUNE_LOOKUP_C_API void cutune_cubin_free(cutune_cubin* cubin);

#ifdef __cplusplus
}
#endif

#endif /* CUTUNE_LOOKUP_H */
