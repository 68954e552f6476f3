#include "base/file_text.h"

#include <filesystem>

#include <gtest/gtest.h>

namespace mecha {
namespace {

namespace fs = std::filesystem;

TEST(FileText, WritesWholeAndReadsBackWithoutATemporaryLeft) {
  fs::path dir = fs::temp_directory_path() / ("file-text-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::path f = dir / "a.txt";
  ASSERT_TRUE(write_file_atomically(f, std::string("one\0two", 7)).ok());
  ASSERT_TRUE(write_file_atomically(f, "three\n").ok());
  auto text = read_file_text(f);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "three\n");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
  auto missing = read_file_text(dir / "nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(), "reading " + (dir / "nope").string() + ": cannot open");
  auto nowhere = write_file_atomically(dir / "no/such/dir/x", "x");
  ASSERT_FALSE(nowhere.ok());
  EXPECT_NE(nowhere.message().find("no/such/dir/x"), std::string::npos);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace mecha
