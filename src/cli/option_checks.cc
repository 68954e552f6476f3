#include "cli/option_checks.h"

#include <charconv>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "config/permission_settings.h"

namespace mecha::cli {

CLI::Validator whole_number_at_least(int min) {
  return CLI::Validator(
      [min](std::string& value) -> std::string {
        int n = 0;
        const char* end = value.data() + value.size();
        auto [ptr, ec] = std::from_chars(value.data(), end, n);
        // from_chars takes a leading '-'; a sign is not part of a whole number here.
        bool ok = !value.empty() && value[0] != '-' && ec == std::errc() && ptr == end && n >= min;
        if (ok) return "";
        return fmt::format("expected a whole number of at least {}, got '{}'", min, value);
      },
      fmt::format("INT>={}", min));
}

CLI::Validator positive_number() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        double x = 0;
        const char* end = value.data() + value.size();
        auto [ptr, ec] = std::from_chars(value.data(), end, x);
        if (!value.empty() && ec == std::errc() && ptr == end && std::isfinite(x) && x > 0) {
          return "";
        }
        return fmt::format("expected a number greater than 0, got '{}'", value);
      },
      "NUMBER>0");
}

CLI::Validator permission_mode_name() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        auto mode = config::parse_permission_mode(value);
        return mode ? std::string() : mode.status().message();
      },
      "MODE", "permission mode");
}

}  // namespace mecha::cli
