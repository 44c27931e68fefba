/* An application written in C: compiled as C, so the header is checked as C too. */
#include <stdio.h>

#include "cutune_lookup.h"

/* Describes the best scan config for (uuid, n, int32) in `out`; returns the status of the first failing call. */
int c_client_describe(const char* path, const char* uuid, int64_t n, char* out, size_t out_size) {
  cutune_db* db = NULL;
  cutune_match* match = NULL;
  cutune_launch launch = CUTUNE_LAUNCH_INIT;
  int64_t block = 0;
  cutune_query query = CUTUNE_QUERY_INIT;
  cutune_status status;
  query.family = "scan";
  query.device_uuid = uuid;
  query.size = n;
  query.dtype = "int32";
  status = cutune_db_open(path, &db);
  if (status != CUTUNE_OK) return status;
  status = cutune_find(db, &query, &match);
  if (status == CUTUNE_OK) status = cutune_match_integer(match, "block", &block);
  if (status == CUTUNE_OK) status = cutune_match_launch(match, 0, &launch);
  if (status == CUTUNE_OK)
    snprintf(out, out_size, "level=%d %s config=%s block=%lld launches=%zu kernel=%s grid=%u",
             cutune_match_level(match), cutune_match_level_name(match), cutune_match_config(match), (long long)block,
             cutune_match_launch_count(match), launch.kernel, launch.grid[0]);
  cutune_match_free(match);
  cutune_db_close(db);
  return status;
}

/* Describes the lowest-energy scan config within `within_fraction` of the fastest for (uuid, n,
 * int32) in `out`, and the fastest's energy; returns the status of the first failing call. */
int c_client_lowest_energy(const char* path, const char* uuid, int64_t n, double within_fraction, char* out,
                           size_t out_size) {
  cutune_db* db = NULL;
  cutune_match* fastest = NULL;
  cutune_match* frugal = NULL;
  cutune_query query = CUTUNE_QUERY_INIT;
  cutune_status status;
  query.family = "scan";
  query.device_uuid = uuid;
  query.size = n;
  query.dtype = "int32";
  status = cutune_db_open(path, &db);
  if (status != CUTUNE_OK) return status;
  status = cutune_find(db, &query, &fastest);
  if (status == CUTUNE_OK) status = cutune_find_lowest_energy(db, &query, within_fraction, &frugal);
  if (status == CUTUNE_OK)
    snprintf(out, out_size, "fastest=%s %.3g J; chosen_by=%d config=%s %.3g J %.3g W %.3g ms of %.3g ms note=%s",
             cutune_match_config(fastest), cutune_match_energy_j(fastest), cutune_match_chosen_by(frugal),
             cutune_match_config(frugal), cutune_match_energy_j(frugal), cutune_match_power_w(frugal),
             cutune_match_time_ms(frugal), cutune_match_fastest_time_ms(frugal), cutune_match_objective_note(frugal));
  cutune_match_free(frugal);
  cutune_match_free(fastest);
  cutune_db_close(db);
  return status;
}
