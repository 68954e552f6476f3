#include "store/libpq.h"

#include <dlfcn.h>

#include <mutex>

#include <fmt/format.h>

#include "base/shared_library.h"

namespace mecha::store {
namespace {

constexpr const char* kSoname = "libpq.so.5";
constexpr const char* kPackage = "libpq5 (apt-get install libpq5)";

template <class Fn>
Status resolve(void* handle, const char* file, const char* name, Fn& slot) {
  return resolve_symbol(handle, file, name, "libpq", slot);
}

}  // namespace

Result<Libpq> load_libpq(const char* file) {
  void* handle = dlopen(file, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return Status::error(fmt::format("cannot load {} ({}); a PostgreSQL session store needs {}",
                                     file, why != nullptr ? why : "unknown reason", kPackage));
  }
  Libpq lib{};
  // clang-format off
  for (Status st : {
           resolve(handle, file, "PQconnectdb", lib.connectdb),
           resolve(handle, file, "PQstatus", lib.status),
           resolve(handle, file, "PQerrorMessage", lib.error_message),
           resolve(handle, file, "PQfinish", lib.finish),
           resolve(handle, file, "PQsetNoticeReceiver", lib.set_notice_receiver),
           resolve(handle, file, "PQexec", lib.exec),
           resolve(handle, file, "PQexecParams", lib.exec_params),
           resolve(handle, file, "PQprepare", lib.prepare),
           resolve(handle, file, "PQexecPrepared", lib.exec_prepared),
           resolve(handle, file, "PQresultStatus", lib.result_status),
           resolve(handle, file, "PQresultErrorField", lib.result_error_field),
           resolve(handle, file, "PQresultErrorMessage", lib.result_error_message),
           resolve(handle, file, "PQclear", lib.clear),
           resolve(handle, file, "PQntuples", lib.ntuples),
           resolve(handle, file, "PQgetvalue", lib.getvalue),
           resolve(handle, file, "PQgetlength", lib.getlength),
           resolve(handle, file, "PQgetisnull", lib.getisnull),
           resolve(handle, file, "PQcmdTuples", lib.cmd_tuples),
           resolve(handle, file, "PQconninfoParse", lib.conninfo_parse),
           resolve(handle, file, "PQconninfoFree", lib.conninfo_free),
           resolve(handle, file, "PQfreemem", lib.freemem),
       }) {
    // clang-format on
    if (!st.ok()) {
      dlclose(handle);
      return st;
    }
  }
  return lib;
}

Result<const Libpq*> libpq() {
  static std::once_flag once;
  static Result<Libpq> loaded = Status::error("libpq not loaded");
  std::call_once(once, [] { loaded = load_libpq(kSoname); });
  if (!loaded.ok()) return loaded.status();
  return &*loaded;
}

}  // namespace mecha::store
