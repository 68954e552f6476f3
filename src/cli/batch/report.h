// `mecha batch report DIR`: what a batch came to, as a table for the terminal and as plots a
// person can open (report.svg: the tasks by status, and histograms of cost and of turns per
// task). Both are made from results.jsonl alone, so a report can be taken while shards are
// still running, and on any machine the folder is copied to.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cli/batch/results.h"

namespace mecha::batch {

// The summary: counts by status, totals and means of turns, tokens, cost and time, how
// many tasks read untrusted content and how many changed their tree, then the tasks that
// did not complete with why (at most 20). `unreadable` lines of the file are named.
std::string report_text(const std::vector<TaskResult>& results, int64_t unreadable);

// A standalone SVG document with the three plots. Text in it is escaped.
std::string report_svg(const std::vector<TaskResult>& results);

// Equal-width bins over [min, max] of `values`: counts per bin and the bins' edges
// (bins + 1 of them). One bin when every value is the same; none when there are none.
struct Histogram {
  std::vector<int64_t> counts;
  std::vector<double> edges;
};
Histogram histogram(const std::vector<double>& values, int bins);

}  // namespace mecha::batch
