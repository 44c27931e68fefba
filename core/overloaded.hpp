#pragma once
// The usual helper for std::visit with one lambda per alternative:
//   std::visit(Overloaded{[](int) {…}, [](const std::string&) {…}}, value);
// Header-only, so that identity/ and db/ use it too.
namespace cutune {

template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

}  // namespace cutune
