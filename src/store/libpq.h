// Libpq: the libpq entry points the PostgreSQL store calls, resolved with dlopen on first use.
//
// Linking libpq would load it and some twenty libraries of its own (TLS, Kerberos, LDAP) at
// every start of the binary, a SQLite store's runs included (bench/startup_bench); only a
// `--store postgresql://...` pays for them this way. The header is used for its types and
// constants only.
//
// Promises:
//  1. libpq() loads libpq.so.5 once per process; every later call returns the same table, or
//     the same error when loading failed.
//  2. A library that is missing, or lacks one of the entry points, is an error naming the
//     file and the missing symbol, and saying which package provides it.
#pragma once

#include <libpq-fe.h>

#include "base/result.h"

namespace mecha::store {

struct Libpq {
  decltype(&PQconnectdb) connectdb;
  decltype(&PQstatus) status;
  decltype(&PQerrorMessage) error_message;
  decltype(&PQfinish) finish;
  decltype(&PQsetNoticeReceiver) set_notice_receiver;
  decltype(&PQexec) exec;
  decltype(&PQexecParams) exec_params;
  decltype(&PQprepare) prepare;
  decltype(&PQexecPrepared) exec_prepared;
  decltype(&PQresultStatus) result_status;
  decltype(&PQresultErrorField) result_error_field;
  decltype(&PQresultErrorMessage) result_error_message;
  decltype(&PQclear) clear;
  decltype(&PQntuples) ntuples;
  decltype(&PQgetvalue) getvalue;
  decltype(&PQgetlength) getlength;
  decltype(&PQgetisnull) getisnull;
  decltype(&PQcmdTuples) cmd_tuples;
  decltype(&PQconninfoParse) conninfo_parse;
  decltype(&PQconninfoFree) conninfo_free;
  decltype(&PQfreemem) freemem;
};

// The process's libpq (promise 1).
Result<const Libpq*> libpq();

// Loads the named library into a new table, without caching. The library stays loaded for
// the life of the process. For tests of promise 2.
Result<Libpq> load_libpq(const char* file);

}  // namespace mecha::store
