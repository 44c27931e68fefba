#include "sqlite.hpp"

#include <utility>

namespace cutune::sql {

namespace {

// A file: URI for `path` (RFC 3986 percent-encoding of what SQLite's URI parser treats specially).
std::string file_uri(const std::string& path) {
  std::string uri = "file:";
  for (const unsigned char c : path) {
    if (c == '%' || c == '?' || c == '#' || c <= ' ' || c >= 0x7f) {
      static const char* hex = "0123456789ABCDEF";
      uri += '%';
      uri += hex[c >> 4];
      uri += hex[c & 15];
    } else {
      uri += static_cast<char>(c);
    }
  }
  return uri;
}

sqlite3* open_connection(const std::string& name, int flags, const std::string& path) {
  sqlite3* handle = nullptr;
  const int rc = sqlite3_open_v2(name.c_str(), &handle, flags | SQLITE_OPEN_FULLMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = handle ? sqlite3_errmsg(handle) : sqlite3_errstr(rc);
    sqlite3_close(handle);
    throw DbError("cannot open database '" + path + "': " + message);
  }
  sqlite3_extended_result_codes(handle, 1);
  // Several processes may read while one tuner writes; wait for locks rather than fail at once.
  sqlite3_busy_timeout(handle, 10000);
  return handle;
}

}  // namespace

Database::Database(const std::string& path, Mode mode) : path_(path) {
  if (mode == Mode::read_write_create) {
    handle_ = open_connection(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, path);
    return;
  }
  handle_ = open_connection(path, SQLITE_OPEN_READONLY, path);
  // A database in WAL mode needs its -shm file to be read, and a reader creates it when it is
  // missing. Where it cannot (a deployed database in a folder the application may not write),
  // every read fails with SQLITE_READONLY_CANTINIT or similar. Such a file is package data that
  // nothing writes while it is read: open it as immutable, without locks or shared memory.
  const int probe = sqlite3_exec(handle_, "SELECT count(*) FROM sqlite_master", nullptr, nullptr, nullptr);
  if ((probe & 0xff) == SQLITE_READONLY || (probe & 0xff) == SQLITE_CANTOPEN) {
    sqlite3_close_v2(handle_);
    handle_ = nullptr;
    handle_ = open_connection(file_uri(path) + "?immutable=1", SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, path);
  }
}

Database::~Database() {
  if (handle_) sqlite3_close_v2(handle_);
}

void Database::exec(std::string_view sql) {
  char* error = nullptr;
  const std::string text(sql);
  if (sqlite3_exec(handle_, text.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
    std::string message = error ? error : sqlite3_errmsg(handle_);
    sqlite3_free(error);
    throw DbError("database '" + path_ + "': " + message + " (in: " + text.substr(0, 80) + ")");
  }
}

Statement Database::prepare(std::string_view sql) { return Statement(handle_, sql); }

Transaction::Transaction(Database& db, Kind kind) : db_(db) {
  db_.exec(kind == Kind::write ? "BEGIN IMMEDIATE" : "BEGIN");
}

Transaction::~Transaction() {
  if (open_) {
    try {
      db_.exec("ROLLBACK");
    } catch (...) {
      // Destructors must not throw; SQLite rolls back an unfinished transaction on close anyway.
    }
  }
}

void Transaction::commit() {
  db_.exec("COMMIT");
  open_ = false;
}

Statement::Statement(sqlite3* db, std::string_view sql) : db_(db), sql_(sql) {
  if (sqlite3_prepare_v2(db_, sql_.data(), static_cast<int>(sql_.size()), &stmt_, nullptr) != SQLITE_OK)
    fail("prepare");
}

Statement::~Statement() {
  if (stmt_) sqlite3_finalize(stmt_);
}

void Statement::fail(const char* doing) const {
  throw DbError(std::string("sqlite ") + doing + " failed: " + sqlite3_errmsg(db_) + " (in: " + sql_.substr(0, 120) +
                ")");
}

Statement& Statement::bind(int index, std::int64_t value) {
  if (sqlite3_bind_int64(stmt_, index, value) != SQLITE_OK) fail("bind");
  return *this;
}
Statement& Statement::bind(int index, double value) {
  if (sqlite3_bind_double(stmt_, index, value) != SQLITE_OK) fail("bind");
  return *this;
}
Statement& Statement::bind(int index, std::string_view text) {
  if (sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT) != SQLITE_OK)
    fail("bind");
  return *this;
}
Statement& Statement::bind_blob(int index, const void* data, std::size_t bytes) {
  if (sqlite3_bind_blob64(stmt_, index, data, bytes, SQLITE_TRANSIENT) != SQLITE_OK) fail("bind");
  return *this;
}
Statement& Statement::bind_null(int index) {
  if (sqlite3_bind_null(stmt_, index) != SQLITE_OK) fail("bind");
  return *this;
}

bool Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  fail("step");
}

void Statement::run() {
  step();
  reset();
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

std::string Statement::column_text(int column) const {
  const auto* text = sqlite3_column_text(stmt_, column);
  return text ? std::string(reinterpret_cast<const char*>(text), sqlite3_column_bytes(stmt_, column)) : std::string();
}

std::vector<unsigned char> Statement::column_blob(int column) const {
  const auto* data = static_cast<const unsigned char*>(sqlite3_column_blob(stmt_, column));
  return data ? std::vector<unsigned char>(data, data + sqlite3_column_bytes(stmt_, column))
              : std::vector<unsigned char>();
}

}  // namespace cutune::sql
