// The whole command line of the binary: parses argv, runs the chosen subcommand and returns
// its exit code. main() is this and nothing else, so a program built on the library (the
// end-to-end test binary, with tools of its own) has the same command line.
#pragma once

namespace mecha::cli {

int run_app(int argc, char** argv);

}  // namespace mecha::cli
