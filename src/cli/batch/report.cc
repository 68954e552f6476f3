#include "cli/batch/report.h"

#include <algorithm>
#include <map>
#include <numeric>

#include <fmt/format.h>

#include "base/text.h"

namespace mecha::batch {
namespace {

std::string first_line(std::string_view s, size_t max) {
  s = s.substr(0, s.find('\n'));
  if (s.size() > max) return std::string(s.substr(0, max)) + "…";
  return std::string(s);
}

std::string seconds_text(double ms) {
  double s = ms / 1000;
  return s < 100 ? fmt::format("{:.1f}s", s) : fmt::format("{:.0f}s", s);
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

// The statuses in a fixed, meaningful order; unknown ones after, by name.
std::vector<std::pair<std::string, int64_t>> status_counts(const std::vector<TaskResult>& rs) {
  static const std::vector<std::string> order = {"completed", "limits_exceeded", "stuck", "error",
                                                 "cancelled"};
  std::map<std::string, int64_t> counts;
  for (const auto& r : rs) ++counts[r.status];
  std::vector<std::pair<std::string, int64_t>> out;
  for (const auto& s : order)
    if (auto it = counts.find(s); it != counts.end()) {
      out.emplace_back(s, it->second);
      counts.erase(it);
    }
  for (auto& [s, n] : counts) out.emplace_back(s, n);
  return out;
}

// One panel of bars: labels under them, counts above.
std::string bars(double x, double y, double w, double h, const std::string& title,
                 const std::vector<std::string>& labels, const std::vector<int64_t>& counts,
                 const std::string& colour) {
  std::string s = fmt::format(
      "<g><text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"15\" font-weight=\"bold\">{}</text>\n", x,
      y - 8, escape_markup(title));
  int64_t top =
      counts.empty() ? 1 : std::max<int64_t>(1, *std::max_element(counts.begin(), counts.end()));
  double plot_h = h - 40;
  s += fmt::format(
      "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#888\"/>\n", x,
      y + plot_h, x + w, y + plot_h);
  if (counts.empty()) {
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" fill=\"#888\">no data</text></g>\n", x + 10,
                     y + plot_h / 2);
    return s;
  }
  double slot = w / static_cast<double>(counts.size());
  for (size_t i = 0; i < counts.size(); ++i) {
    double bh = plot_h * static_cast<double>(counts[i]) / static_cast<double>(top);
    double bx = x + slot * static_cast<double>(i) + slot * 0.1;
    s += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\"/>\n", bx,
        y + plot_h - bh, slot * 0.8, bh, colour);
    s += fmt::format(
        "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" text-anchor=\"middle\">{}</text>\n",
        bx + slot * 0.4, y + plot_h - bh - 3, counts[i]);
    s += fmt::format(
        "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"10\" text-anchor=\"middle\">{}</text>\n",
        bx + slot * 0.4,
        y + plot_h + 14 + (counts.size() > 6 ? 12.0 * static_cast<double>(i % 2) : 0.0),
        escape_markup(labels[i]));
  }
  return s + "</g>\n";
}

std::vector<std::string> bin_labels(const Histogram& h, const std::string& unit) {
  std::vector<std::string> out;
  for (size_t i = 0; i < h.counts.size(); ++i)
    out.push_back(unit == "$" ? fmt::format("${:.3g}", h.edges[i])
                              : fmt::format("{:.3g}", h.edges[i]));
  return out;
}

}  // namespace

Histogram histogram(const std::vector<double>& values, int bins) {
  Histogram h;
  if (values.empty() || bins < 1) return h;
  auto [lo_it, hi_it] = std::minmax_element(values.begin(), values.end());
  double lo = *lo_it, hi = *hi_it;
  if (hi == lo) {
    h.counts = {static_cast<int64_t>(values.size())};
    h.edges = {lo, hi};
    return h;
  }
  h.counts.assign(static_cast<size_t>(bins), 0);
  double width = (hi - lo) / bins;
  for (int i = 0; i <= bins; ++i) h.edges.push_back(lo + width * i);
  for (double v : values) {
    auto i = static_cast<size_t>((v - lo) / width);
    ++h.counts[std::min(i, h.counts.size() - 1)];
  }
  return h;
}

std::string report_text(const std::vector<TaskResult>& rs, int64_t unreadable) {
  std::string s;
  size_t n = rs.size();
  s += fmt::format("{} task{}\n\n", n, n == 1 ? "" : "s");
  s += fmt::format("  {:<18} {:>7} {:>7}\n", "status", "tasks", "share");
  for (const auto& [status, count] : status_counts(rs))
    s += fmt::format(
        "  {:<18} {:>7} {:>6.1f}%\n", first_line(status, 18), count,
        100.0 * static_cast<double>(count) / static_cast<double>(std::max<size_t>(n, 1)));
  int64_t turns = 0, in = 0, out = 0, untrusted = 0, changed = 0, unpriced = 0;
  double cost = 0, max_cost = 0;
  std::vector<double> durations;
  for (const auto& r : rs) {
    turns += r.turns;
    in += r.tokens.input_tokens;
    out += r.tokens.output_tokens;
    if (r.cost_usd) {
      cost += *r.cost_usd;
      max_cost = std::max(max_cost, *r.cost_usd);
    } else {
      ++unpriced;
    }
    untrusted += r.untrusted;
    changed += !r.diff.empty();
    durations.push_back(static_cast<double>(r.duration_ms));
  }
  auto per = [&](double total) { return n ? total / static_cast<double>(n) : 0.0; };
  s += "\n";
  s += fmt::format("  turns       {} in all, {:.1f} per task\n", turns,
                   per(static_cast<double>(turns)));
  s += fmt::format("  tokens      {} in, {} out\n", in, out);
  s += fmt::format("  cost        ${:.4f} in all, ${:.4f} per task, ${:.4f} at most", cost,
                   per(cost), max_cost);
  s += unpriced ? fmt::format(" ({} without a price)\n", unpriced) : "\n";
  s += fmt::format("  time        {} per task at the median, {} at p90\n",
                   seconds_text(percentile(durations, 0.5)),
                   seconds_text(percentile(durations, 0.9)));
  s += fmt::format("  changed     {} task{} left a diff\n", changed, changed == 1 ? "" : "s");
  s += fmt::format("  untrusted   {} task{} read untrusted content\n", untrusted,
                   untrusted == 1 ? "" : "s");
  if (unreadable)
    s += fmt::format("  unreadable  {} line{} of results.jsonl skipped\n", unreadable,
                     unreadable == 1 ? "" : "s");
  std::vector<const TaskResult*> failed;
  for (const auto& r : rs)
    if (r.status != "completed") failed.push_back(&r);
  if (!failed.empty()) {
    s += "\nnot completed:\n";
    for (size_t i = 0; i < failed.size() && i < 20; ++i) {
      const TaskResult& r = *failed[i];
      std::string why = r.error.empty() ? r.text : r.error;
      s += fmt::format("  {:<24} {:<16} {}\n", first_line(r.id, 24), first_line(r.status, 16),
                       first_line(why, 100));
    }
    if (failed.size() > 20) s += fmt::format("  ... and {} more\n", failed.size() - 20);
  }
  return s;
}

std::string report_svg(const std::vector<TaskResult>& rs) {
  const double panel_w = 300, panel_h = 300, gap = 40, top = 60;
  std::string s = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" height=\"{1:.0f}\" "
      "viewBox=\"0 0 {0:.0f} {1:.0f}\" font-family=\"sans-serif\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{2:.0f}\" y=\"28\" font-size=\"18\">mecha batch: {3} tasks</text>\n",
      gap + 3 * (panel_w + gap), top + panel_h + 40, gap, rs.size());
  std::vector<std::string> labels;
  std::vector<int64_t> counts;
  for (const auto& [status, count] : status_counts(rs)) {
    labels.push_back(first_line(status, 16));
    counts.push_back(count);
  }
  s += bars(gap, top, panel_w, panel_h, "tasks by status", labels, counts, "#4e79a7");
  std::vector<double> costs, turns;
  for (const auto& r : rs) {
    if (r.cost_usd) costs.push_back(*r.cost_usd);
    turns.push_back(static_cast<double>(r.turns));
  }
  Histogram hc = histogram(costs, 10);
  s += bars(gap + panel_w + gap, top, panel_w, panel_h, "cost per task (USD)", bin_labels(hc, "$"),
            hc.counts, "#f28e2b");
  Histogram ht = histogram(turns, 10);
  s += bars(gap + 2 * (panel_w + gap), top, panel_w, panel_h, "turns per task", bin_labels(ht, ""),
            ht.counts, "#59a14f");
  return s + "</svg>\n";
}

}  // namespace mecha::batch
