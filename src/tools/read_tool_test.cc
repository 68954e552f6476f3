#include "tools/read_tool.h"

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "tools/testing/temp_tree.h"

namespace mecha::tools {
namespace {

using testing::TempTree;

std::string numbered_lines(int first, int last, const std::string& stem) {
  std::string out;
  for (int i = first; i <= last; ++i) out += fmt::format("{:>6}\t{}{}\n", i, stem, i);
  return out;
}

std::string lines_file(int n, const std::string& stem) {
  std::string out;
  for (int i = 1; i <= n; ++i) out += fmt::format("{}{}\n", stem, i);
  return out;
}

struct ReadCase {
  std::string name;
  std::string file;  // written under this name unless empty
  std::string content;
  Json input;
  bool is_error;
  std::string expected;  // {root} stands for the work tree
};

TEST(ReadTool, Table) {
  TempTree t;
  const std::vector<ReadCase> cases = {
      {"two lines", "a.txt", "a\nb\n", {{"file_path", "a.txt"}}, false, "     1\ta\n     2\tb\n"},
      {"no final newline",
       "b.txt",
       "a\nb",
       {{"file_path", "b.txt"}},
       false,
       "     1\ta\n     2\tb\n"},
      {"CRLF",
       "crlf.txt",
       "one\r\ntwo\r\n",
       {{"file_path", "crlf.txt"}},
       false,
       "     1\tone\n     2\ttwo\n"},
      {"empty",
       "empty.txt",
       "",
       {{"file_path", "empty.txt"}},
       false,
       "(empty.txt is empty: 0 bytes)"},
      {"unicode name and text",
       "données/日本語.txt",
       "héllo wörld 日本\n",
       {{"file_path", "données/日本語.txt"}},
       false,
       "     1\théllo wörld 日本\n"},
      {"invalid UTF-8 is replaced",
       "latin1.txt",
       "caf\xe9\n",
       {{"file_path", "latin1.txt"}},
       false,
       "     1\tcaf\xef\xbf\xbd\n"},
      {"offset and limit",
       "ten.txt",
       lines_file(10, "line "),
       {{"file_path", "ten.txt"}, {"offset", 3}, {"limit", 2}},
       false,
       numbered_lines(3, 4, "line ") +
           "[Lines 3-4 of 10 shown; 6 more lines (43 bytes) not shown. To read more, call Read "
           "with offset=5 and limit=2.]\n"},
      {"limit to the end",
       "",
       "",
       {{"file_path", "ten.txt"}, {"offset", 9}, {"limit", 5}},
       false,
       numbered_lines(9, 10, "line ")},
      {"offset past the end",
       "",
       "",
       {{"file_path", "ten.txt"}, {"offset", 20}},
       true,
       "ten.txt has 10 lines; offset 20 is past the end"},
      {"offset past the end, no final newline",
       "",
       "",
       {{"file_path", "b.txt"}, {"offset", 5}},
       true,
       "b.txt has 2 lines; offset 5 is past the end"},
      {"default cap of 2000 lines",
       "long.txt",
       lines_file(2500, "l"),
       {{"file_path", "long.txt"}},
       false,
       numbered_lines(1, 2000, "l") +
           "[Lines 1-2000 of 2500 shown; 500 more lines (2.9 KB) not shown. To read more, call "
           "Read with offset=2001.]\n"},
      {"long line is cut",
       "wide.txt",
       std::string(2500, 'x') + "\n",
       {{"file_path", "wide.txt"}},
       false,
       "     1\t" + std::string(2000, 'x') + " [... line cut: 500 more bytes]\n"},
      {"PNG refused",
       "img.png",
       std::string("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16),
       {{"file_path", "img.png"}},
       true,
       "img.png is not a text file: it looks like a PNG image (16 bytes; first bytes 89 50 4e 47 "
       "0d 0a 1a 0a). Read shows text files only."},
      {"NUL bytes refused",
       "data.bin",
       std::string("ab\0cd", 5),
       {{"file_path", "data.bin"}},
       true,
       "data.bin is not a text file: it looks like binary data (it contains NUL bytes) (5 bytes; "
       "first bytes 61 62 00 63 64). Read shows text files only."},
      {"directory",
       "dir/x",
       "",
       {{"file_path", "dir"}},
       true,
       "{root}/dir is a directory; Read reads files (use Glob to list what is in it)"},
      {"missing", "", "", {{"file_path", "nope.txt"}}, true, "{root}/nope.txt does not exist"},
      {"absolute path",
       "",
       "",
       {{"file_path", t.root().string() + "/a.txt"}},
       false,
       "     1\ta\n     2\tb\n"},
  };
  ReadTool tool;
  for (const ReadCase& c : cases) {
    if (!c.file.empty()) t.write(c.file, c.content);
    ToolOutput out = tool.call(c.input, t.ctx());
    std::string expected = c.expected;
    if (auto pos = expected.find("{root}"); pos != std::string::npos) {
      expected.replace(pos, 6, t.root().string());
    }
    EXPECT_EQ(out.is_error, c.is_error) << c.name;
    EXPECT_EQ(out.content, expected) << c.name;
    EXPECT_FALSE(out.refusal_rule) << c.name;
  }
  EXPECT_TRUE(t.ctx().files_read.count((t.root() / "a.txt").string()));
  EXPECT_TRUE(t.ctx().files_read.count((t.root() / "données/日本語.txt").string()));
  EXPECT_FALSE(t.ctx().files_read.count((t.root() / "img.png").string()));
  EXPECT_FALSE(t.ctx().files_read.count((t.root() / "nope.txt").string()));
}

TEST(ReadTool, ByteCapStopsAtWholeLines) {
  TempTree t;
  std::string content;
  for (int i = 1; i <= 300; ++i) content += std::string(1500, 'a' + i % 26) + "\n";
  t.write("big.txt", content);
  ToolOutput out = ReadTool().call({{"file_path", "big.txt"}}, t.ctx());
  ASSERT_FALSE(out.is_error);
  // Each numbered line is 6 + 1 + 1500 + 1 bytes; 173 fit in 256 KB.
  const size_t shown = 173;
  EXPECT_EQ(out.content.find("[Lines 1-173 of 300 shown (the output reached its 256 KB cap); 127 "
                             "more lines (186.2 KB) not shown. To read more, call Read with "
                             "offset=174.]\n"),
            shown * 1508);
}

TEST(ReadTool, RefusesPathsOutsideTheTree) {
  TempTree t;
  t.write_outside("secret.txt", "secret\n");
  ToolOutput out = ReadTool().call({{"file_path", "../secret.txt"}}, t.ctx());
  EXPECT_TRUE(out.is_error);
  EXPECT_EQ(out.refusal_rule, "confinement");
  EXPECT_EQ(out.content, fmt::format("refused: '../secret.txt' resolves to {}/secret.txt, outside "
                                     "the work tree {}; the file tools only reach files inside "
                                     "the work tree",
                                     t.base().string(), t.root().string()));
}

// 1 GiB, sparse: four blocks of 1000 text lines at 0, 256, 512 and 768 MiB, holes between.
TEST(ReadTool, OneGigabyteSparseFileAtAnOffset) {
  TempTree t;
  const off_t kMiB = 1 << 20;
  {
    int fd = ::open((t.root() / "sparse.log").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::ftruncate(fd, 1024 * kMiB), 0);
    for (int k = 0; k < 4; ++k) {
      std::string block = k == 0 ? "" : "\n";
      for (int i = 0; i < 1000; ++i) block += fmt::format("block {} line {}\n", k, i);
      ASSERT_EQ(::pwrite(fd, block.data(), block.size(), k * 256 * kMiB),
                static_cast<ssize_t>(block.size()));
    }
    ::close(fd);
  }
  // Lines: block 0 is 1-1000, a line of zeros up to block 1's leading newline is 1001,
  // block 1 is 1002-2001, 2002 is zeros, block 2 is 2003-3002 ... and a last line of zeros.
  ToolOutput out =
      ReadTool().call({{"file_path", "sparse.log"}, {"offset", 2003}, {"limit", 3}}, t.ctx());
  ASSERT_FALSE(out.is_error) << out.content;
  EXPECT_EQ(out.content,
            "  2003\tblock 2 line 0\n  2004\tblock 2 line 1\n  2005\tblock 2 line 2\n"
            "[Lines 2003-2005 of 4004 shown; 1999 more lines (512.0 MB) not shown. To read "
            "more, call Read with offset=2006 and limit=3.]\n");
}

TEST(ReadTool, BinaryKinds) {
  const std::pair<std::string, std::string> cases[] = {
      {"\x7f"
       "ELF\x02\x01",
       "an ELF executable or library"},
      {"%PDF-1.7\n", "a PDF document"},
      {"PK\x03\x04", "a zip archive (or a jar, docx, xlsx...)"},
      {"\x1f\x8b\x08", "gzip-compressed data"},
      {std::string("SQLite format 3\0", 16), "an SQLite database"},
      {"\xff\xfeh\0i\0", "UTF-16 text (little-endian), which Read does not decode"},
      {"plain text\n", ""},
      {"\xef\xbb\xbftext with a BOM\n", ""},
  };
  for (const auto& [head, kind] : cases) EXPECT_EQ(binary_kind(head), kind) << head;
}

}  // namespace
}  // namespace mecha::tools
