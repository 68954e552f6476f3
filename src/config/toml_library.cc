// toml++'s implementation, compiled once into mecha instead of linked from
// libtomlplusplus.so (a shared C++ library costs every start of the binary; see
// bench/startup_bench). Every other file includes <toml++/toml.h> with
// TOML_HEADER_ONLY=0, set by the build, and gets declarations only.
#define TOML_IMPLEMENTATION 1
#include <toml++/toml.h>
