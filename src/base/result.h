// Status and Result<T>: expected failures as values.
//
// A failure carries a message for a person: what went wrong, with what input, and what to
// do. Exceptions never cross a module boundary; code that calls a throwing library catches
// at the edge and returns one of these.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace mecha {

// What kind of failure, where a caller must tell them apart (the CLI maps them to exit codes).
enum class ErrorKind {
  kError,      // provider, config, internal: exit 1
  kUsage,      // the command line was wrong: exit 2
  kCancelled,  // the run was cancelled: exit 130
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  static Status error(std::string message, ErrorKind kind = ErrorKind::kError) {
    Status s;
    s.failed_ = true;
    s.kind_ = kind;
    s.message_ = std::move(message);
    return s;
  }
  static Status usage(std::string message) { return error(std::move(message), ErrorKind::kUsage); }
  static Status cancelled(std::string message = "cancelled") {
    return error(std::move(message), ErrorKind::kCancelled);
  }

  bool ok() const { return !failed_; }
  explicit operator bool() const { return ok(); }
  ErrorKind kind() const { return kind_; }
  // REQUIRES: !ok()
  const std::string& message() const { return message_; }

  // The same failure with context put in front: "reading config.toml: <message>".
  Status prefixed(const std::string& context) const {
    if (ok()) return *this;
    return error(context + ": " + message_, kind_);
  }

 private:
  bool failed_ = false;
  ErrorKind kind_ = ErrorKind::kError;
  std::string message_;
};

inline Status ok_status() { return Status(); }

// A failed system call as an error: "<what>: <strerror(errno)>". Reads errno.
Status errno_status(const std::string& what);

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}        // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {  // NOLINT: implicit by design
    assert(!std::get<Status>(v_).ok());
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return ok(); }

  // REQUIRES: ok()
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  // The failure; an ok Status when there is a value.
  Status status() const { return ok() ? Status() : std::get<Status>(v_); }
  // REQUIRES: !ok()
  const std::string& message() const { return std::get<Status>(v_).message(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace mecha

// Returns from the enclosing function when a Status-returning expression fails.
#define MECHA_RETURN_IF_ERROR(expr)      \
  do {                                   \
    ::mecha::Status _mecha_s = (expr);   \
    if (!_mecha_s.ok()) return _mecha_s; \
  } while (0)
