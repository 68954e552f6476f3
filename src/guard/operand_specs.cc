#include "guard/operand_specs.h"

// The table gives each OperandSpec only the fields that matter for that command.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace mecha::guard {

const std::map<std::string, OperandSpec>& operand_specs() {
  static const std::map<std::string, OperandSpec> table = [] {
    std::map<std::string, OperandSpec> t;
    OperandSpec write_all{OperandMode::kWriteAll};
    for (const char* n : {"rm", "rmdir", "unlink", "touch", "mkdir", "shred", "tee", "sponge"})
      t[n] = write_all;
    t["touch"].value_short = "dtr";
    t["mkdir"].value_short = "m";
    t["shred"].value_short = "ns";
    t["truncate"] = OperandSpec{OperandMode::kWriteAll, "sr", {"--size", "--reference"}};
    t["chmod"] = OperandSpec{OperandMode::kWriteAll, "", {"--reference"}, "", {}, 1};
    t["chown"] = OperandSpec{OperandMode::kWriteAll, "", {"--reference", "--from"}, "", {}, 1};
    t["chgrp"] = t["chown"];
    t["setfacl"] = OperandSpec{OperandMode::kWriteAll, "mMxX", {}, "", {}, 0};
    t["cp"] = OperandSpec{OperandMode::kWriteLast,
                          "tS",
                          {"--target-directory", "--suffix"},
                          "t",
                          {"--target-directory"},
                          0,
                          "t"};
    t["install"] = OperandSpec{OperandMode::kWriteLast,
                               "tmogS",
                               {"--target-directory", "--mode", "--owner", "--group"},
                               "t",
                               {"--target-directory"},
                               0,
                               "t"};
    t["mv"] = OperandSpec{OperandMode::kWriteAll,
                          "tS",
                          {"--target-directory", "--suffix"},
                          "t",
                          {"--target-directory"},
                          0,
                          "t"};
    t["ln"] = OperandSpec{OperandMode::kWriteLast,
                          "tS",
                          {"--target-directory", "--suffix"},
                          "t",
                          {"--target-directory"},
                          0,
                          "t"};
    t["rsync"] =
        OperandSpec{OperandMode::kWriteLast, "ef", {"--rsh", "--filter", "--exclude", "--include"}};
    t["scp"] = OperandSpec{OperandMode::kWriteLast, "cFiJloPS"};
    t["sort"] = OperandSpec{OperandMode::kReadAll,
                            "koStT",
                            {"--key", "--output", "--field-separator"},
                            "o",
                            {"--output"}};
    t["split"] = OperandSpec{OperandMode::kWriteLast, "abClnt"};
    t["csplit"] = OperandSpec{OperandMode::kReadAll, "bfn", {"--prefix"}, "f", {"--prefix"}};
    t["patch"] = OperandSpec{OperandMode::kWriteAll,
                             "iopDrFBVYzd",
                             {"--input", "--output", "--directory", "--reject-file"},
                             "odr",
                             {"--output", "--directory", "--reject-file"}};
    for (const char* cc : {"gcc", "g++", "cc", "c++", "clang", "clang++", "ld", "as"})
      t[cc] = OperandSpec{OperandMode::kReadAll, "oIDLlUxe", {}, "o", {}};
    t["curl"] = OperandSpec{OperandMode::kReadAll,
                            "oXdHuAeEFKTwxyzbcrmCYD",
                            {"--output",      "--output-dir",     "--data",
                             "--header",      "--config",         "--upload-file",
                             "--cookie-jar",  "--dump-header",    "--trace",
                             "--trace-ascii", "--stderr",         "--data-binary",
                             "--data-raw",    "--data-urlencode", "--data-ascii",
                             "--form",        "--form-string",    "--json",
                             "--user",        "--user-agent",     "--request",
                             "--referer",     "--max-time",       "--connect-timeout",
                             "--retry",       "--proxy",          "--cert",
                             "--key",         "--cacert",         "--url",
                             "--libcurl",     "--netrc-file",     "--variable"},
                            "ocD",
                            {"--output", "--output-dir", "--cookie-jar", "--dump-header", "--trace",
                             "--trace-ascii", "--stderr", "--libcurl"}};
    t["wget"] = OperandSpec{
        OperandMode::kReadAll,
        "OPoaiUeTt",
        {"--output-document", "--directory-prefix", "--output-file", "--append-output",
         "--input-file"},
        "OPoa",
        {"--output-document", "--directory-prefix", "--output-file", "--append-output"}};
    t["unzip"] = OperandSpec{OperandMode::kReadAll, "dxP", {}, "d", {}};
    t["strace"] =
        OperandSpec{OperandMode::kReadAll, "oepusEPabIOSXADFlnx", {"--output"}, "o", {"--output"}};
    t["ltrace"] = t["strace"];
    t["valgrind"] = OperandSpec{OperandMode::kReadAll,
                                "",
                                {"--log-file", "--xml-file", "--massif-out-file",
                                 "--callgrind-out-file", "--cachegrind-out-file"},
                                "",
                                {"--log-file", "--xml-file", "--massif-out-file",
                                 "--callgrind-out-file", "--cachegrind-out-file"}};
    t["time"] =
        OperandSpec{OperandMode::kReadAll, "fo", {"--format", "--output"}, "o", {"--output"}};
    for (const char* z :
         {"gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "zstd", "unzstd", "lzma"})
      t[z] = OperandSpec{OperandMode::kWriteAll, "S", {"--suffix"}};
    t["zstd"].write_short = "o";
    t["zstd"].value_short = "o";
    for (const char* x :
         {"echo",  "printf", "let",   "expr",    "test",     "[",     "true",     "false",  ":",
          "alias", "export", "local", "declare", "readonly", "unset", "shift",    "return", "exit",
          "read",  "mktemp", "sleep", "seq",     "yes",      "date",  "basename", "dirname"})
      t[x] = OperandSpec{OperandMode::kText};
    for (const char* g : {"grep", "egrep", "fgrep", "zgrep"})
      t[g] = OperandSpec{OperandMode::kReadAll,
                         "efmABCdD",
                         {"--regexp", "--file", "--max-count", "--context", "--include",
                          "--exclude", "--exclude-dir", "--label"},
                         "",
                         {},
                         1};
    t["rg"] =
        OperandSpec{OperandMode::kReadAll,
                    "efmABCgtTrjMEd",
                    {"--regexp", "--file", "--glob", "--type", "--replace", "--pre", "--pre-glob",
                     "--type-add", "--max-count", "--context", "--iglob", "--max-depth"},
                    "",
                    {},
                    1};
    t["jq"] = OperandSpec{OperandMode::kReadAll,
                          "L",
                          {"--arg", "--argjson", "--slurpfile", "--rawfile", "--indent"},
                          "",
                          {},
                          1};
    return t;
  }();
  return table;
}

}  // namespace mecha::guard
