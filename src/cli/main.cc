// mecha: an agent runtime. The command line is cli/app.h; main adds nothing to it.
#include "cli/app.h"

int main(int argc, char** argv) { return mecha::cli::run_app(argc, argv); }
