#include "guard/transfer_commands.h"

namespace mecha::guard {

bool is_transfer_client(const std::string& name) {
  return name == "sftp" || name == "ftp" || name == "lftp" || name == "tftp";
}

std::vector<TransferSend> transfer_sends(const std::string& reader, const ShellWord& script) {
  std::vector<TransferSend> out;
  size_t from = 0;
  while (from < script.text.size()) {
    size_t end = script.text.find('\n', from);
    std::string line =
        script.text.substr(from, end == std::string::npos ? std::string::npos : end - from);
    from = end == std::string::npos ? script.text.size() : end + 1;
    std::vector<ShellWord> words;
    for (size_t at = 0; at < line.size();) {
      size_t s = line.find_first_not_of(" \t", at);
      if (s == std::string::npos) break;
      size_t e = line.find_first_of(" \t", s);
      words.push_back(literal_word(
          line.substr(s, e == std::string::npos ? std::string::npos : e - s), script.offset));
      at = e == std::string::npos ? line.size() : e;
    }
    if (words.size() < 2) continue;
    const std::string& verb = words[0].text;
    if (verb != "put" && verb != "mput" && verb != "reput" && verb != "send" && verb != "append")
      continue;
    std::vector<ShellWord> sent{literal_word(reader, script.offset)};
    for (size_t k = 1; k < words.size() && (verb == "mput" || k == 1); ++k)
      if (words[k].text[0] != '-') sent.push_back(words[k]);
    for (ShellWord& w : sent)
      if (!w.text.empty() && w.text[0] == '~') w.text[0] = kHome;
    out.push_back({std::move(sent), reader + " " + verb});
  }
  return out;
}

}  // namespace mecha::guard
