#include "base/state_dir.h"

#include <sys/stat.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace mecha {
namespace {

namespace fs = std::filesystem;

TEST(StateDir, FromTheEnvironment) {
  struct Case {
    const char* xdg;
    const char* home;
    const char* want;  // the path, or the error message
  };
  const Case cases[] = {
      {"/x/state", "/home/u", "/x/state/mecha"},
      {"/x/state/", "/home/u", "/x/state/mecha"},
      {"", "/home/u", "/home/u/.local/state/mecha"},
      {"relative/state", "/home/u", "/home/u/.local/state/mecha"},
      {"", "",
       "cannot find the user's state directory: set XDG_STATE_HOME or HOME to an absolute path "
       "(or pass --store PATH for the session store)"},
      {"", "home",
       "cannot find the user's state directory: set XDG_STATE_HOME or HOME to an absolute path "
       "(or pass --store PATH for the session store)"},
  };
  for (const Case& c : cases) {
    auto dir = state_dir_for(c.xdg, c.home);
    EXPECT_EQ(dir.ok() ? dir->string() : dir.message(), c.want) << c.xdg << " " << c.home;
  }
}

class PrivateDir : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "mecha-state-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
  }
  void TearDown() override { fs::remove_all(root_); }
  static unsigned mode_of(const fs::path& p) {
    struct stat st {};
    EXPECT_EQ(::lstat(p.c_str(), &st), 0) << p;
    return st.st_mode & 07777;
  }
  fs::path root_;
};

TEST_F(PrivateDir, CreatesMissingParentsAndItself0700) {
  const fs::path dir = root_ / "state" / "mecha";
  ASSERT_TRUE(make_private_dir(dir).ok());
  EXPECT_EQ(mode_of(root_ / "state"), 0700u);
  EXPECT_EQ(mode_of(dir), 0700u);
}

TEST_F(PrivateDir, TightensALooserDirectory) {
  const fs::path dir = root_ / "mecha";
  fs::create_directory(dir);
  ::chmod(dir.c_str(), 0777);
  ASSERT_TRUE(make_private_dir(dir).ok());
  EXPECT_EQ(mode_of(dir), 0700u);
}

TEST_F(PrivateDir, RefusesASymlinkAndAFile) {
  fs::create_directory(root_ / "elsewhere");
  fs::create_directory_symlink(root_ / "elsewhere", root_ / "link");
  Status s = make_private_dir(root_ / "link");
  EXPECT_EQ(s.message(), (root_ / "link").string() +
                             " is a symbolic link; mecha keeps its state only in a real "
                             "directory of yours");
  std::ofstream(root_ / "file") << "x";
  EXPECT_EQ(make_private_dir(root_ / "file").message(),
            (root_ / "file").string() + " is not a directory");
}

}  // namespace
}  // namespace mecha
