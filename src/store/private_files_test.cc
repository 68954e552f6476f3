#include "store/private_files.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "store/testing/temp_dir.h"

namespace mecha::store {
namespace {

namespace fs = std::filesystem;

mode_t private_mode_of(const fs::path& p) {
  struct stat st {};
  EXPECT_EQ(::lstat(p.c_str(), &st), 0) << p;
  return st.st_mode & 0777;
}

TEST(PrivateFiles, AMissingDatabaseIsCreatedForItsOwnerAlone) {
  testing::TempDir dir;
  const fs::path db = dir.path() / "outbox.db";
  ASSERT_TRUE(make_private_files(db).ok());
  EXPECT_TRUE(fs::is_regular_file(db));
  EXPECT_EQ(private_mode_of(db), 0600u);
}

TEST(PrivateFiles, LooserFilesAndSideFilesAreTightened) {
  testing::TempDir dir;
  const fs::path db = dir.path() / "notes.db";
  for (const char* name : {"notes.db", "notes.db-wal"}) {
    std::ofstream(dir.path() / name) << "x";
    fs::permissions(dir.path() / name, fs::perms(0644));
  }
  ASSERT_TRUE(make_private_files(db).ok());
  EXPECT_EQ(private_mode_of(db), 0600u);
  EXPECT_EQ(private_mode_of(dir.path() / "notes.db-wal"), 0600u);
}

TEST(PrivateFiles, ASymlinkIsRefusedAndNothingIsWrittenThroughIt) {
  testing::TempDir dir;
  const fs::path db = dir.path() / "notes.db";
  fs::create_symlink(dir.path() / "elsewhere.db", db);
  Status s = make_private_files(db);
  EXPECT_EQ(s.message(), db.string() +
                             " is a symbolic link; mecha keeps its state only in a "
                             "regular file of yours");
  EXPECT_FALSE(fs::exists(dir.path() / "elsewhere.db"));

  const fs::path db2 = dir.path() / "outbox.db";
  std::ofstream(db2) << "";
  fs::create_symlink(dir.path() / "elsewhere-shm", dir.path() / "outbox.db-shm");
  EXPECT_EQ(make_private_files(db2).message(),
            (dir.path() / "outbox.db-shm").string() +
                " is a symbolic link; mecha keeps its state only in a regular file of yours");
}

TEST(PrivateFiles, ADirectoryInItsPlaceIsRefused) {
  testing::TempDir dir;
  fs::create_directory(dir.path() / "notes.db");
  EXPECT_EQ(make_private_files(dir.path() / "notes.db").message(),
            (dir.path() / "notes.db").string() + " is not a file");
}

}  // namespace
}  // namespace mecha::store
