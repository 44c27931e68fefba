#pragma once
// Thin RAII over the SQLite C API: one Database per connection, prepared Statements only.
// Every error carries the SQL (or what was being done) and SQLite's own message.
#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <utility>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace cutune::sql {

struct DbError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Statement;

class Database {
 public:
  enum class Mode { read_only, read_write_create };
  Database(const std::string& path, Mode mode);
  ~Database();
  // A connection is a single owner of its sqlite3 handle; copying would double-close it.
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  Database(Database&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)), path_(std::move(other.path_)) {}

  void exec(std::string_view sql);  // for DDL and pragmas; no parameters
  Statement prepare(std::string_view sql);
  std::int64_t last_insert_rowid() const { return sqlite3_last_insert_rowid(handle_); }
  int changes() const { return sqlite3_changes(handle_); }
  const std::string& path() const { return path_; }
  sqlite3* handle() const { return handle_; }

 private:
  sqlite3* handle_ = nullptr;
  std::string path_;
};

// BEGIN IMMEDIATE … COMMIT, rolled back if the scope is left by an exception. A reader asks for
// a deferred one instead: it takes no write lock, and every statement in it sees one snapshot.
class Transaction {
 public:
  enum class Kind { write, read };
  explicit Transaction(Database& db, Kind kind = Kind::write);
  ~Transaction();
  Transaction(const Transaction&) = delete;  // one scope owns the open transaction
  Transaction& operator=(const Transaction&) = delete;
  void commit();

 private:
  Database& db_;
  bool open_ = true;
};

class Statement {
 public:
  Statement(sqlite3* db, std::string_view sql);
  ~Statement();
  Statement(const Statement&) = delete;  // owns the sqlite3_stmt
  Statement& operator=(const Statement&) = delete;
  Statement(Statement&& other) noexcept
      : db_(other.db_), stmt_(std::exchange(other.stmt_, nullptr)), sql_(std::move(other.sql_)) {}

  // Parameters are 1-based, as in SQLite.
  Statement& bind(int index, std::int64_t value);
  Statement& bind(int index, int value) { return bind(index, static_cast<std::int64_t>(value)); }
  Statement& bind(int index, double value);
  Statement& bind(int index, std::string_view text);
  Statement& bind(int index, const char* text) { return bind(index, std::string_view(text)); }
  Statement& bind(int index, const std::string& text) { return bind(index, std::string_view(text)); }
  Statement& bind_blob(int index, const void* data, std::size_t bytes);
  Statement& bind_null(int index);
  template <class T>
  Statement& bind(int index, const std::optional<T>& value) {
    return value ? bind(index, *value) : bind_null(index);
  }

  bool step();   // true while a row is available
  void run();    // step once, expecting no row
  void reset();  // ready for new bindings

  bool is_null(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }
  std::int64_t column_int(int column) const { return sqlite3_column_int64(stmt_, column); }
  double column_double(int column) const { return sqlite3_column_double(stmt_, column); }
  std::string column_text(int column) const;
  std::vector<unsigned char> column_blob(int column) const;
  std::optional<double> column_optional_double(int column) const {
    return is_null(column) ? std::nullopt : std::optional<double>(column_double(column));
  }
  std::optional<std::int64_t> column_optional_int(int column) const {
    return is_null(column) ? std::nullopt : std::optional<std::int64_t>(column_int(column));
  }

 private:
  [[noreturn]] void fail(const char* doing) const;
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  std::string sql_;
};

}  // namespace cutune::sql
