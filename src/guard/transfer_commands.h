// The commands fed to a file-transfer client (sftp, ftp, lftp, tftp) on its standard input,
// read for the local files they send: `put LOCAL [REMOTE]`, `reput`, `send`, `append`, and
// `mput LOCAL...`. Each send becomes a command of its own, named after the client, whose
// words are the files it reads, so that the paths are checked like any other command's
// reads (a secret sent to a server is an upload). Other commands (get, ls, cd) send nothing.
// Reentrant.
#pragma once

#include <string>
#include <vector>

#include "guard/shell_word.h"

namespace mecha::guard {

// True for the programs whose standard input is read as transfer commands.
bool is_transfer_client(const std::string& name);

struct TransferSend {
  std::vector<ShellWord> argv;  // the client, then the local files: `sftp a.txt`
  std::string via;              // "sftp put"
};

// The sends in `script` (lines of commands given to `reader`), in order. A leading `~` of a
// file is the home directory; an option word (`-r`) is no file.
// REQUIRES: script is not dynamic.
std::vector<TransferSend> transfer_sends(const std::string& reader, const ShellWord& script);

}  // namespace mecha::guard
