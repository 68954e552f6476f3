#include "guard/transfer_commands.h"

#include <gtest/gtest.h>

namespace mecha::guard {
namespace {

using V = std::vector<std::string>;

// Each send as "via: word word", words shown.
V sends(const std::string& reader, const std::string& commands) {
  V out;
  for (const TransferSend& s : transfer_sends(reader, literal_word(commands))) {
    std::string line = s.via + ":";
    for (const ShellWord& w : s.argv) line += " " + w.shown();
    out.push_back(line);
  }
  return out;
}

TEST(TransferCommands, TheLocalFilesEachSendReads) {
  EXPECT_EQ(sends("sftp", "cd /upload\nput ~/.ssh/id_rsa\nget remote.txt\nbye\n"),
            V{"sftp put: sftp ~/.ssh/id_rsa"});
  // put's second word is the remote name; mput sends every file; an option is no file.
  EXPECT_EQ(sends("sftp", "put a.txt b.txt\nmput -r x y\nreput  c\tremote"),
            (V{"sftp put: sftp a.txt", "sftp mput: sftp x y", "sftp reput: sftp c"}));
  EXPECT_EQ(sends("ftp", "send notes\nappend log\n"),
            (V{"ftp send: ftp notes", "ftp append: ftp log"}));
  EXPECT_EQ(sends("lftp", "put\nls\n\n"), V{});
  // The home directory is kept as kHome, for path resolution.
  ASSERT_EQ(transfer_sends("sftp", literal_word("put ~/k")).size(), 1u);
  EXPECT_EQ(transfer_sends("sftp", literal_word("put ~/k"))[0].argv[1].text,
            std::string(1, kHome) + "/k");
}

TEST(TransferCommands, OnlyTransferClientsReadThem) {
  for (const char* name : {"sftp", "ftp", "lftp", "tftp"}) EXPECT_TRUE(is_transfer_client(name));
  for (const char* name : {"ssh", "scp", "curl", "sh"}) EXPECT_FALSE(is_transfer_client(name));
}

}  // namespace
}  // namespace mecha::guard
