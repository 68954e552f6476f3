#include "guard/operand_specs.h"

// The table gives each OperandSpec only the fields that matter for that command.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace mecha::guard {
namespace {

using Table = std::map<std::string, OperandSpec>;

// Compilers and build systems: the file or the directory their output goes to, and the
// directory they run in.
void add_build_tools(Table& t) {
  for (const char* cc : {"gcc", "g++", "cc", "c++", "clang", "clang++", "ld", "as"})
    t[cc] =
        OperandSpec{.value_short = "oIDLlUxe",
                    .value_long = {"-MF", "-MT", "-MQ", "-include", "-imacros", "-isystem",
                                   "-iquote", "-idirafter", "-Xlinker", "-Xassembler",
                                   "-Xpreprocessor", "-aux-info", "-dumpdir", "-Map", "--output"},
                    .write_short = "o",
                    .write_long = {"-MF", "-aux-info", "-Map", "--output"},
                    .dir_long = {"-dumpdir"},
                    .single_dash_long = true};
  t["rustc"] =
      OperandSpec{.value_short = "oLlCAWDFZ",
                  .value_long = {"--out-dir", "--emit", "--crate-name", "--edition", "--target",
                                 "--crate-type", "--cfg", "--extern", "--sysroot", "--cap-lints",
                                 "--explain", "--print", "--codegen", "--error-format", "--json",
                                 "--color", "--remap-path-prefix", "--check-cfg"},
                  .write_short = "o",
                  .dir_long = {"--out-dir"}};
  t["rustdoc"] = OperandSpec{.value_short = "oLw",
                             .value_long = {"--out-dir", "--output", "--crate-name", "--edition",
                                            "--extern", "--cfg", "--target", "--output-format"},
                             .dir_short = "o",
                             .dir_long = {"--out-dir", "--output"}};
  t["javac"] = OperandSpec{.value_long = {"-d",
                                          "-s",
                                          "-h",
                                          "-cp",
                                          "-classpath",
                                          "--class-path",
                                          "-sourcepath",
                                          "--source-path",
                                          "-encoding",
                                          "-source",
                                          "--source",
                                          "-target",
                                          "--target",
                                          "--release",
                                          "-processorpath",
                                          "--processor-path",
                                          "-p",
                                          "--module-path",
                                          "--module-source-path",
                                          "--upgrade-module-path",
                                          "--system",
                                          "-bootclasspath",
                                          "--boot-class-path",
                                          "-extdirs",
                                          "-endorseddirs",
                                          "-processor",
                                          "--add-modules",
                                          "--limit-modules",
                                          "--module",
                                          "-m",
                                          "--add-exports",
                                          "--add-reads",
                                          "--patch-module",
                                          "-Xmaxerrs",
                                          "-Xmaxwarns"},
                           .dir_long = {"-d", "-s", "-h"},
                           .single_dash_long = true};
  t["kotlinc"] =
      OperandSpec{.value_long = {"-d", "-cp", "-classpath", "-jvm-target", "-module-name",
                                 "-language-version", "-api-version", "-jdk-home", "-kotlin-home"},
                  .write_long = {"-d"},
                  .single_dash_long = true};
  t["tsc"] =
      OperandSpec{.value_short = "ptm",
                  .value_long = {"--outDir", "--outFile", "--out", "--declarationDir", "--rootDir",
                                 "--project", "--target", "--module", "--lib", "--jsx",
                                 "--tsBuildInfoFile", "--baseUrl", "--moduleResolution"},
                  .write_long = {"--outFile", "--out", "--tsBuildInfoFile"},
                  .dir_long = {"--outDir", "--declarationDir"}};
  t["esbuild"] =
      OperandSpec{.write_long = {"--outfile", "--metafile"}, .dir_long = {"--outdir", "--outbase"}};
  t["babel"] = OperandSpec{.value_long = {"--config-file", "--presets", "--plugins"},
                           .write_short = "o",
                           .write_long = {"--out-file"},
                           .dir_short = "d",
                           .dir_long = {"--out-dir"}};
  t["webpack"] = OperandSpec{.value_short = "ce",
                             .value_long = {"--config", "--entry", "--mode", "--name"},
                             .dir_short = "o",
                             .dir_long = {"--output-path"}};
  t["rollup"] = OperandSpec{.value_short = "fin",
                            .value_long = {"--format", "--input", "--name", "--plugin"},
                            .write_short = "o",
                            .write_long = {"--file"},
                            .dir_short = "d",
                            .dir_long = {"--dir"}};
  for (const char* minifier : {"uglifyjs", "terser"})
    t[minifier] = OperandSpec{
        .value_short = "cmbp", .write_short = "o", .write_long = {"--output", "--source-map"}};
  for (const char* css : {"sass", "lessc"})
    t[css] = OperandSpec{OperandMode::kWriteLast, "Is", {"--load-path", "--style"}};
  // Go's options are single-dash names; -o names a file (or, ending in /, a folder).
  t["go"] = OperandSpec{.value_long = {"-o",
                                       "-C",
                                       "-p",
                                       "-modfile",
                                       "-overlay",
                                       "-pkgdir",
                                       "-tags",
                                       "-ldflags",
                                       "-gcflags",
                                       "-asmflags",
                                       "-buildmode",
                                       "-compiler",
                                       "-gccgoflags",
                                       "-installsuffix",
                                       "-mod",
                                       "-pgo",
                                       "-toolexec",
                                       "-exec",
                                       "-run",
                                       "-bench",
                                       "-count",
                                       "-cpu",
                                       "-timeout",
                                       "-coverpkg",
                                       "-covermode",
                                       "-parallel",
                                       "-benchtime",
                                       "-list",
                                       "-skip",
                                       "-fuzz",
                                       "-fuzztime",
                                       "-outputdir",
                                       "-coverprofile",
                                       "-cpuprofile",
                                       "-memprofile",
                                       "-blockprofile",
                                       "-mutexprofile",
                                       "-trace",
                                       "-vettool"},
                        .write_long = {"-o", "-coverprofile", "-cpuprofile", "-memprofile",
                                       "-blockprofile", "-mutexprofile", "-trace"},
                        .dir_long = {"-C", "-pkgdir", "-outputdir"},
                        .single_dash_long = true};
  t["cargo"] = OperandSpec{
      .value_short = "pjFZC",
      .value_long = {"--package",        "--bin",   "--example", "--test",    "--bench",
                     "--features",       "--jobs",  "--target",  "--profile", "--manifest-path",
                     "--message-format", "--color", "--config",  "--version", "--git",
                     "--branch",         "--tag",   "--rev",     "--path",    "--registry",
                     "--index"},
      .dir_short = "C",
      .dir_long = {"--target-dir", "--out-dir", "--artifact-dir", "--root"}};
  t["make"] = OperandSpec{
      .value_short = "fIoWjlE",
      .value_long = {"--file", "--makefile", "--include-dir", "--old-file", "--assume-old",
                     "--what-if", "--new-file", "--assume-new", "--jobs", "--load-average",
                     "--eval"},
      .dir_short = "C",
      .dir_long = {"--directory"},
      .dir_assignments = {"DESTDIR", "PREFIX", "prefix", "O", "BUILD_DIR", "BUILDDIR", "OUTDIR",
                          "INSTALL_DIR", "BINDIR", "bindir", "LIBDIR", "libdir"}};
  t["gmake"] = t["make"];
  t["ninja"] = OperandSpec{.value_short = "fjlkdtw", .value_long = {"--jobs"}, .dir_short = "C"};
  t["meson"] = OperandSpec{.value_long = {"--buildtype", "--backend", "-D"},
                           .dir_short = "C",
                           .dir_long = {"--destdir", "--prefix", "--libdir", "--bindir"}};
  t["cmake"] =
      OperandSpec{.value_short = "SGCDTAUWjP",
                  .value_long = {"--install", "--config", "--target", "--parallel", "--preset",
                                 "--toolchain", "--log-level", "--component", "--graphviz",
                                 "--trace-redirect", "--profiling-output", "--profiling-format"},
                  .write_long = {"--graphviz", "--trace-redirect", "--profiling-output"},
                  .dir_short = "B",
                  .dir_long = {"--build", "--prefix", "--install-prefix"}};
  t["sphinx-build"] = OperandSpec{.mode = OperandMode::kIntoLast,
                                  .value_short = "bcDCjtAw",
                                  .write_short = "w",
                                  .dir_short = "d"};
  t["mkdocs"] = OperandSpec{.value_short = "fa",
                            .value_long = {"--config-file"},
                            .dir_short = "d",
                            .dir_long = {"--site-dir"}};
  t["hugo"] = OperandSpec{.value_short = "scbte",
                          .value_long = {"--source", "--config", "--baseURL", "--theme"},
                          .dir_short = "d",
                          .dir_long = {"--destination"}};
  t["jekyll"] = OperandSpec{.value_short = "sc",
                            .value_long = {"--source", "--config"},
                            .dir_short = "d",
                            .dir_long = {"--destination"}};
  t["pyinstaller"] = OperandSpec{.value_short = "np",
                                 .value_long = {"--name", "--paths", "--icon", "--add-data"},
                                 .dir_long = {"--distpath", "--workpath", "--specpath"}};
  std::vector<std::string> protoc_outputs;
  for (const char* language :
       {"cpp", "python", "pyi", "java", "kotlin", "go", "go-grpc", "js", "ts", "csharp", "objc",
        "php", "ruby", "rust", "dart", "grpc", "grpc_python", "grpc-web"})
    protoc_outputs.push_back(std::string("--") + language + "_out");
  t["protoc"] = OperandSpec{.value_short = "Io",
                            .value_long = {"--proto_path", "--plugin"},
                            .write_short = "o",
                            .write_long = {"--descriptor_set_out", "--dependency_out"},
                            .dir_long = protoc_outputs};
}

// Package installers: where they install, download or unpack.
void add_installers(Table& t) {
  for (const char* pip : {"pip", "pip3"})
    t[pip] = OperandSpec{.value_short = "rceiftdw",
                         .value_long = {"--requirement",
                                        "--constraint",
                                        "--editable",
                                        "--index-url",
                                        "--extra-index-url",
                                        "--find-links",
                                        "--python-version",
                                        "--platform",
                                        "--only-binary",
                                        "--no-binary",
                                        "--trusted-host",
                                        "--proxy",
                                        "--retries",
                                        "--timeout",
                                        "--upgrade-strategy",
                                        "--config-settings",
                                        "--global-option",
                                        "--progress-bar",
                                        "--exists-action",
                                        "--root-user-action",
                                        "--implementation",
                                        "--abi",
                                        "--python"},
                         .write_long = {"--log", "--log-file", "--report"},
                         .dir_short = "tdw",
                         .dir_long = {"--target", "--prefix", "--root", "--src", "--dest",
                                      "--wheel-dir", "--cache-dir"}};
  t["uv"] = OperandSpec{
      .value_short = "prw",
      .value_long = {"--python", "--index-url", "--extra-index-url", "--requirement",
                     "--constraint", "--with"},
      .write_short = "o",
      .write_long = {"--output-file"},
      .dir_long = {"--target", "--prefix", "--directory", "--project", "--cache-dir", "--out-dir"}};
  for (const char* js : {"npm", "pnpm", "yarn", "bun"})
    t[js] = OperandSpec{
        .value_short = "w",
        .value_long = {"--workspace", "--registry", "--tag", "--userconfig", "--globalconfig",
                       "--filter"},
        .dir_short = "C",
        .dir_long = {"--prefix", "--cache", "--pack-destination", "--cwd", "--modules-folder",
                     "--cache-folder", "--dir", "--store-dir", "--modules-dir",
                     "--virtual-store-dir", "--global-folder", "--link-folder"}};
  t["gem"] = OperandSpec{.value_short = "vs",
                         .value_long = {"--version", "--source", "--platform"},
                         .dir_short = "in",
                         .dir_long = {"--install-dir", "--bindir", "--build-root"}};
  t["composer"] =
      OperandSpec{.value_long = {"--working-dir"}, .dir_short = "d", .dir_long = {"--working-dir"}};
  t["conda"] = OperandSpec{.value_short = "nc",
                           .value_long = {"--name", "--channel", "--file"},
                           .dir_short = "p",
                           .dir_long = {"--prefix"}};
  t["virtualenv"] = OperandSpec{
      .mode = OperandMode::kWriteAll, .value_short = "p", .value_long = {"--python", "--prompt"}};
}

// Converters, editors in place, archivers and other programs that write a file they are
// given, by an option or by position.
void add_converters(Table& t) {
  t["zip"] = OperandSpec{.mode = OperandMode::kWriteFirst,
                         .value_short = "tnxiPZs",
                         .value_long = {"--exclude", "--include", "--password", "--split-size"},
                         .write_short = "O",
                         .write_long = {"--out", "--output-file"},
                         .dir_short = "b",
                         .dir_long = {"--temp-path"}};
  t["objcopy"] = OperandSpec{
      .mode = OperandMode::kWriteLast, .value_short = "IOBjRKNGWLbiF", .lone_written = true};
  t["strip"] = OperandSpec{.mode = OperandMode::kWriteAll,
                           .value_short = "FIORKNo",
                           .write_short = "o",
                           .reads_with = {"o"}};
  t["xxd"] = OperandSpec{OperandMode::kWriteLast, "cglosn"};
  t["iconv"] = OperandSpec{.value_short = "ft",
                           .value_long = {"--from-code", "--to-code"},
                           .write_short = "o",
                           .write_long = {"--output"}};
  t["openssl"] = OperandSpec{
      .value_long = {"-out",     "-in",         "-key",     "-inkey",      "-keyout",     "-pass",
                     "-passin",  "-passout",    "-config",  "-subj",       "-days",       "-newkey",
                     "-signkey", "-CA",         "-CAkey",   "-certfile",   "-name",       "-md",
                     "-iter",    "-k",          "-K",       "-iv",         "-S",          "-CAfile",
                     "-connect", "-servername", "-extfile", "-extensions", "-set_serial", "-cipher",
                     "-digest",  "-sigopt",     "-pkeyopt", "-algorithm",  "-outform",    "-inform",
                     "-keyform", "-signature",  "-verify",  "-sign",       "-prverify"},
      .write_long = {"-out", "-keyout"},
      .single_dash_long = true};
  for (const char* gpg : {"gpg", "gpg2"})
    t[gpg] = OperandSpec{
        .value_short = "ruR",
        .value_long = {"--recipient", "--local-user", "--default-key", "--trust-model",
                       "--passphrase", "--passphrase-file", "--keyserver", "--cipher-algo",
                       "--digest-algo", "--compress-algo", "--export-options", "--import-options",
                       "--keyring", "--secret-keyring", "--trustdb-name"},
        .write_short = "o",
        .write_long = {"--output", "--status-file", "--logger-file", "--attribute-file"},
        .dir_long = {"--homedir"}};
  t["pandoc"] = OperandSpec{.value_short = "ftrwMVcAHBdDLF",
                            .value_long = {"--from",
                                           "--to",
                                           "--read",
                                           "--write",
                                           "--metadata",
                                           "--variable",
                                           "--css",
                                           "--template",
                                           "--defaults",
                                           "--filter",
                                           "--lua-filter",
                                           "--resource-path",
                                           "--data-dir",
                                           "--bibliography",
                                           "--csl",
                                           "--reference-doc",
                                           "--include-in-header",
                                           "--include-before-body",
                                           "--include-after-body",
                                           "--pdf-engine",
                                           "--citation-abbreviations",
                                           "--epub-cover-image",
                                           "--epub-metadata",
                                           "--syntax-definition"},
                            .write_short = "o",
                            .write_long = {"--output", "--log"},
                            .dir_long = {"--extract-media"}};
  t["mktemp"] = OperandSpec{.mode = OperandMode::kWriteAll,
                            .value_long = {"--suffix"},
                            .dir_short = "p",
                            .dir_long = {"--tmpdir"},
                            .reads_with = {"t", "u", "dry-run"}};
  for (const char* eol : {"dos2unix", "unix2dos", "mac2unix", "unix2mac"})
    t[eol] = OperandSpec{OperandMode::kWriteAll, "c"};
  // Formatters that write their operands with a flag, or unless told only to check.
  t["clang-format"] =
      OperandSpec{.value_long = {"-style", "-assume-filename", "-lines", "-offset", "-length",
                                 "-fallback-style", "-cursor", "--style"},
                  .single_dash_long = true,
                  .writes_with = {"i"}};
  t["gofmt"] = OperandSpec{.value_short = "r", .writes_with = {"w"}};
  t["goimports"] = OperandSpec{.value_long = {"-local"}, .writes_with = {"w"}};
  t["shfmt"] = OperandSpec{.value_short = "ik", .writes_with = {"w", "write"}};
  t["yq"] = OperandSpec{.value_short = "pPoI",
                        .value_long = {"--input-format", "--output-format", "--indent"},
                        .skip = 1,
                        .writes_with = {"i", "inplace"}};
  t["prettier"] = OperandSpec{
      .value_long = {"--config", "--parser", "--ignore-path", "--plugin", "--log-level"},
      .writes_with = {"w", "write"}};
  for (const char* always : {"black", "isort", "rustfmt", "autopep8", "yapf"})
    t[always] = OperandSpec{
        .mode = OperandMode::kWriteAll,
        .value_short = "l",
        .value_long = {"--line-length", "--config", "--target-version", "--edition", "--style"},
        .reads_with = {"check", "diff", "check-only"}};
  t["autopep8"].mode = OperandMode::kReadAll;
  t["autopep8"].writes_with = {"i", "in-place"};
  t["yapf"].mode = OperandMode::kReadAll;
  t["yapf"].writes_with = {"i", "in-place"};
  t["chattr"] = OperandSpec{.mode = OperandMode::kWriteAll,
                            .value_short = "vp",
                            .skip = 1,
                            .mode_letters = "aAcCdDeFijmPsStTux"};
  t["chcon"] = OperandSpec{.mode = OperandMode::kWriteAll,
                           .value_short = "urtl",
                           .value_long = {"--reference", "--user", "--role", "--type", "--range"},
                           .skip = 1};
  t["setfattr"] = OperandSpec{.mode = OperandMode::kWriteAll,
                              .value_short = "nvx",
                              .value_long = {"--name", "--value", "--remove", "--restore"}};
  t["fallocate"] = OperandSpec{OperandMode::kWriteAll, "lon", {"--length", "--offset"}};
  t["mkfifo"] = OperandSpec{OperandMode::kWriteAll, "mZ", {"--mode", "--context"}};
  t["mknod"] = OperandSpec{OperandMode::kWriteFirst, "mZ", {"--mode", "--context"}};
  t["link"] = OperandSpec{OperandMode::kWriteLast};
  t["rename"] = OperandSpec{OperandMode::kWriteAll, "", {}, "", {}, 1};
  t["sdiff"] = OperandSpec{.value_short = "wI",
                           .value_long = {"--width", "--ignore-matching-lines"},
                           .write_short = "o",
                           .write_long = {"--output"}};
  t["script"] = OperandSpec{.mode = OperandMode::kWriteAll,
                            .value_short = "cE",
                            .value_long = {"--command", "--echo"},
                            .write_short = "IOBT",
                            .write_long = {"--log-in", "--log-out", "--log-io", "--log-timing"}};
  t["ctags"] = OperandSpec{.value_long = {"--languages", "--exclude"}, .write_short = "fo"};
  t["etags"] = OperandSpec{.write_short = "o", .write_long = {"--output"}};
  t["pg_dump"] = OperandSpec{.value_short = "dhpUntTEZjS",
                             .value_long = {"--dbname", "--host", "--port", "--username",
                                            "--schema", "--table", "--format", "--encoding"},
                             .write_short = "f",
                             .write_long = {"--file"}};
  t["aria2c"] =
      OperandSpec{.value_short = "ijsx",
                  .value_long = {"--input-file", "--split", "--max-connection-per-server"},
                  .write_short = "ol",
                  .write_long = {"--out", "--log", "--save-session"},
                  .dir_short = "d",
                  .dir_long = {"--dir"}};
  t["unsquashfs"] =
      OperandSpec{.value_long = {"-d", "-dest", "-ef", "-extract-file", "-p", "-processors"},
                  .dir_long = {"-d", "-dest"},
                  .single_dash_long = true};
}

}  // namespace

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
    t["chmod"].mode_letters = "rwxXstugoa01234567";
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
    for (const char* copier : {"cp", "install", "mv", "ln"}) t[copier].into_by_name = true;
    t["install"].writes_with = {"d", "directory"};
    t["rsync"] =
        OperandSpec{OperandMode::kWriteLast, "ef", {"--rsh", "--filter", "--exclude", "--include"}};
    t["scp"] = OperandSpec{OperandMode::kWriteLast, "cFiJloPS"};
    t["sort"] = OperandSpec{OperandMode::kReadAll,
                            "koStT",
                            {"--key", "--output", "--field-separator"},
                            "o",
                            {"--output"}};
    t["rsync"].into_by_name = true;
    t["rsync"].reads_with = {"n", "dry-run", "list-only"};
    t["scp"].into_by_name = true;
    t["split"] = OperandSpec{OperandMode::kWriteLast, "abClnt"};
    t["csplit"] = OperandSpec{OperandMode::kReadAll, "bfn", {"--prefix"}, "f", {"--prefix"}};
    t["patch"] = OperandSpec{OperandMode::kWriteAll,
                             "iopDrFBVYzd",
                             {"--input", "--output", "--directory", "--reject-file"},
                             "odr",
                             {"--output", "--directory", "--reject-file"}};
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
         {"gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "zstd", "unzstd", "lzma"}) {
      t[z] = OperandSpec{OperandMode::kWriteAll, "S", {"--suffix"}};
      t[z].reads_with = {"c", "stdout", "to-stdout", "t", "test", "l", "list"};
    }
    t["zstd"].write_short = "o";
    t["zstd"].value_short = "o";
    for (const char* x :
         {"echo",  "printf", "let",   "expr",    "test",     "[",        "true",   "false",  ":",
          "alias", "export", "local", "declare", "readonly", "unset",    "shift",  "return", "exit",
          "read",  "sleep",  "seq",   "yes",     "date",     "basename", "dirname"})
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
    add_build_tools(t);
    add_installers(t);
    add_converters(t);
    return t;
  }();
  return table;
}

}  // namespace mecha::guard
