// PgCluster: a throwaway PostgreSQL cluster for tests and benches. Debian's server binaries
// (initdb, pg_ctl) make it in a temp folder, where it listens on a Unix socket only
// (listen_addresses ''), with no password anywhere (trust), and it is stopped and removed
// with the object. initdb refuses to run as root, so as root the cluster runs as `nobody`.
//
// Roles, as README's "Sessions in PostgreSQL" sets them up: the superuser `postgres`;
// `mecha_owner`, who owns each store's tables; `mecha_writer` (no login), the rights mecha
// needs (postgres_backend.h, invariant 1); and `mecha`, a login role in mecha_writer.
//
// The first cluster of a build makes a data folder with initdb and keeps it beside the build
// (<build>/pg-template); later ones copy it, which takes a tenth of the time.
//
// Thread-safety: none; one thread starts, uses and stops a cluster.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "base/result.h"

namespace mecha::store::testing {

class PgCluster {
 public:
  struct Options {
    // fsync off makes tests faster; a bench measures with it on. Default: false.
    bool fsync = false;
  };

  // Why no cluster can start on this machine, in one line, or "" when one can.
  static std::string unavailable();
  static Result<std::unique_ptr<PgCluster>> start(Options options);
  // One cluster for the whole process, started on first use (nullptr with `*why` set when it
  // cannot be), stopped when the process exits.
  static PgCluster* shared(std::string* why);

  ~PgCluster();
  PgCluster(const PgCluster&) = delete;
  PgCluster& operator=(const PgCluster&) = delete;

  // A URL to the database `postgres` as `role` (with `password`, which trust ignores, when
  // given), whose search_path is `schema` when given.
  std::string url(std::string_view role, std::string_view schema = "",
                  std::string_view password = "") const;
  // Runs `sql` as the superuser.
  Status admin(std::string_view sql);
  // A new schema owned by mecha_owner, its store's tables made by mecha_owner (as the first
  // open of a store does): the URL mecha connects with, as `mecha`, to that store.
  Result<std::string> fresh_store();
  const std::filesystem::path& socket_dir() const { return dir_; }

 private:
  explicit PgCluster(std::filesystem::path dir) : dir_(std::move(dir)) {}
  Status stop();

  std::filesystem::path dir_;  // the socket; data/ and the log inside
  bool running_ = false;
  int schemas_ = 0;
};

}  // namespace mecha::store::testing
