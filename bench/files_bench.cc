// The Read tool alone (no process start): a read at an offset in the middle of a 1 GiB
// sparse file, and, for comparison, in the middle of a 256 MiB dense text file, where the
// lines before the offset have to be scanned. bench/files_bench.sh measures whole runs.
#include <fcntl.h>
#include <unistd.h>

#include <filesystem>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "tools/read_tool.h"
#include "tools/testing/temp_tree.h"

namespace mecha::tools {
namespace {

void BM_ReadSparseGigabyteMiddle(benchmark::State& state) {
  testing::TempTree t;
  const off_t kMiB = 1 << 20;
  int fd = ::open((t.root() / "big").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (::ftruncate(fd, 1024 * kMiB) != 0) state.SkipWithError("ftruncate");
  for (int k = 0; k < 4; ++k) {
    std::string block = k == 0 ? "" : "\n";
    for (int i = 0; i < 1000; ++i) block += fmt::format("block {} line {}\n", k, i);
    if (::pwrite(fd, block.data(), block.size(), k * 256 * kMiB) < 0) state.SkipWithError("pwrite");
  }
  ::close(fd);
  ReadTool tool;
  const Json input{{"file_path", "big"}, {"offset", 2003}, {"limit", 100}};
  for (auto _ : state) {
    ToolOutput out = tool.call(input, t.ctx());
    if (out.is_error) state.SkipWithError(out.content.c_str());
    benchmark::DoNotOptimize(out);
  }
}
BENCHMARK(BM_ReadSparseGigabyteMiddle)->Unit(benchmark::kMillisecond);

void BM_ReadDense256MiBMiddle(benchmark::State& state) {
  testing::TempTree t;
  {
    std::string chunk;
    for (int i = 0; i < 1 << 16; ++i)
      chunk += "a line of text, sixty-four bytes long, for the dense benchmark\n";
    int fd = ::open((t.root() / "dense").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    for (int i = 0; i < 64; ++i) {
      if (::write(fd, chunk.data(), chunk.size()) < 0) state.SkipWithError("write");
    }
    ::close(fd);
  }
  ReadTool tool;
  const Json input{{"file_path", "dense"}, {"offset", 2 << 20}, {"limit", 100}};
  for (auto _ : state) {
    ToolOutput out = tool.call(input, t.ctx());
    if (out.is_error) state.SkipWithError(out.content.c_str());
    benchmark::DoNotOptimize(out);
  }
}
BENCHMARK(BM_ReadDense256MiBMiddle)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace mecha::tools

BENCHMARK_MAIN();
