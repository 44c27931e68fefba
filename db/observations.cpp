#include "observations.hpp"

#include <stdexcept>

#include <nlohmann/json.hpp>

#include "core/overloaded.hpp"

namespace cutune::db {

nlohmann::json to_json(const Observations& o) {
  nlohmann::json j = nlohmann::json::object();
  for (const ObservationField& field : kObservationFields)
    std::visit(Overloaded{[&](std::optional<double> Observations::*m) {
                            if (o.*m) j[field.name] = *(o.*m);
                          },
                          [&](std::optional<std::int64_t> Observations::*m) {
                            if (o.*m) j[field.name] = *(o.*m);
                          },
                          [&](std::string Observations::*m) {
                            if (!(o.*m).empty()) j[field.name] = o.*m;
                          },
                          [&](bool Observations::*m) {
                            if (o.*m) j[field.name] = true;
                          }},
               field.member);
  return j;
}

Observations observations_from_json(const nlohmann::json& j) {
  Observations o;
  if (!j.is_object()) throw std::invalid_argument("observations must be a JSON object");
  for (const ObservationField& field : kObservationFields) {
    const auto it = j.find(field.name);
    if (it == j.end() || it->is_null()) continue;
    const auto wrong = [&](const char* want) {
      return std::invalid_argument(std::string("observation '") + field.name + "' must be " + want + ", not " +
                                   it->dump());
    };
    std::visit(Overloaded{[&](std::optional<double> Observations::*m) {
                            if (!it->is_number()) throw wrong("a number");
                            o.*m = it->get<double>();
                          },
                          [&](std::optional<std::int64_t> Observations::*m) {
                            if (!it->is_number_integer()) throw wrong("an integer");
                            o.*m = it->get<std::int64_t>();
                          },
                          [&](std::string Observations::*m) {
                            if (!it->is_string()) throw wrong("a string");
                            o.*m = it->get<std::string>();
                          },
                          [&](bool Observations::*m) {
                            if (!it->is_boolean()) throw wrong("true or false");
                            o.*m = it->get<bool>();
                          }},
               field.member);
  }
  return o;
}

std::string observation_columns() {
  std::string columns;
  for (const ObservationField& field : kObservationFields) {
    if (!columns.empty()) columns += ", ";
    columns += field.name;
  }
  return columns;
}

}  // namespace cutune::db
