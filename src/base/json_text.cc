#include "base/json_text.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <string_view>

namespace mecha {
namespace {

// What a byte asks of the escaper: nothing, an escape, or a check of the UTF-8 it starts.
enum ByteClass : uint8_t { kPlain, kEscape, kMultiByte };

constexpr std::array<ByteClass, 256> make_classes() {
  std::array<ByteClass, 256> c{};
  for (int b = 0; b < 256; ++b) {
    if (b < 0x20 || b == '"' || b == '\\') {
      c[b] = kEscape;
    } else if (b >= 0x80) {
      c[b] = kMultiByte;
    } else {
      c[b] = kPlain;
    }
  }
  return c;
}
constexpr std::array<ByteClass, 256> kClasses = make_classes();

// The length of the well-formed UTF-8 sequence (RFC 3629) at the start of `s`, or 0.
size_t utf8_sequence(std::string_view s) {
  const auto b = [&s](size_t i) { return static_cast<uint8_t>(s[i]); };
  const auto cont = [&](size_t i, uint8_t lo = 0x80, uint8_t hi = 0xBF) {
    return i < s.size() && b(i) >= lo && b(i) <= hi;
  };
  const uint8_t lead = b(0);
  if (lead >= 0xC2 && lead <= 0xDF) return cont(1) ? 2 : 0;
  if (lead >= 0xE0 && lead <= 0xEF) {
    const uint8_t lo = lead == 0xE0 ? 0xA0 : 0x80;
    const uint8_t hi = lead == 0xED ? 0x9F : 0xBF;
    return cont(1, lo, hi) && cont(2) ? 3 : 0;
  }
  if (lead >= 0xF0 && lead <= 0xF4) {
    const uint8_t lo = lead == 0xF0 ? 0x90 : 0x80;
    const uint8_t hi = lead == 0xF4 ? 0x8F : 0xBF;
    return cont(1, lo, hi) && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}

// Writes into a string whose spare room it manages itself: std::string's own push_back is a
// call per byte, and most of JSON text is written a byte or a short run at a time.
class Writer {
 public:
  explicit Writer(std::string& out) : out_(out), used_(out.size()) {}
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;
  ~Writer() { out_.resize(used_); }

  void put(char c) {
    if (used_ == out_.size()) grow(1);
    out_[used_++] = c;
  }
  void put(std::string_view s) {
    if (out_.size() - used_ < s.size()) grow(s.size());
    s.copy(out_.data() + used_, s.size());
    used_ += s.size();
  }
  void truncate(size_t n) { used_ = n; }

  void escape(uint8_t c) {
    switch (c) {
      case '"':
        return put("\\\"");
      case '\\':
        return put("\\\\");
      case '\b':
        return put("\\b");
      case '\f':
        return put("\\f");
      case '\n':
        return put("\\n");
      case '\r':
        return put("\\r");
      case '\t':
        return put("\\t");
      default: {
        constexpr char kHex[] = "0123456789abcdef";
        const char u[] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xF]};
        return put(std::string_view(u, sizeof u));
      }
    }
  }

  // `s` quoted and escaped; false (with nothing written) when `s` is not valid UTF-8, which
  // nlohmann's own replacement then handles.
  bool valid_string(std::string_view s) {
    const size_t start = used_;
    put('"');
    size_t i = 0;
    while (i < s.size()) {
      size_t run = i;
      while (run < s.size() && kClasses[static_cast<uint8_t>(s[run])] == kPlain) ++run;
      put(s.substr(i, run - i));
      i = run;
      if (i == s.size()) break;
      const auto c = static_cast<uint8_t>(s[i]);
      if (kClasses[c] == kEscape) {
        escape(c);
        ++i;
        continue;
      }
      const size_t n = utf8_sequence(s.substr(i));
      if (n == 0) {
        truncate(start);
        return false;
      }
      put(s.substr(i, n));
      i += n;
    }
    put('"');
    return true;
  }

  void string(const std::string& s) {
    if (!valid_string(s)) put(Json(s).dump(-1, ' ', false, Json::error_handler_t::replace));
  }

  void value(const Json& j) {
    switch (j.type()) {
      case Json::value_t::null:
        return put("null");
      case Json::value_t::boolean:
        return put(j.get_ref<const Json::boolean_t&>() ? "true" : "false");
      case Json::value_t::number_integer:
      case Json::value_t::number_unsigned: {
        char buf[24];
        const auto r =
            j.is_number_unsigned()
                ? std::to_chars(buf, buf + sizeof buf, j.get_ref<const Json::number_unsigned_t&>())
                : std::to_chars(buf, buf + sizeof buf, j.get_ref<const Json::number_integer_t&>());
        return put(std::string_view(buf, static_cast<size_t>(r.ptr - buf)));
      }
      case Json::value_t::string:
        return string(j.get_ref<const Json::string_t&>());
      case Json::value_t::array: {
        put('[');
        bool first = true;
        for (const Json& e : j.get_ref<const Json::array_t&>()) {
          if (!first) put(',');
          first = false;
          value(e);
        }
        return put(']');
      }
      case Json::value_t::object: {
        put('{');
        bool first = true;
        for (const auto& [key, v] : j.get_ref<const Json::object_t&>()) {
          if (!first) put(',');
          first = false;
          string(key);
          put(':');
          value(v);
        }
        return put('}');
      }
      default:  // floating point, binary, discarded: rare, and in nlohmann's own format
        return put(j.dump(-1, ' ', false, Json::error_handler_t::replace));
    }
  }

 private:
  // Room for `need` more bytes and a little: the string's own growth doubles its capacity
  // when it must move, and a short value appended to a long text (a body's model name)
  // neither moves nor zero-fills the text's length again.
  void grow(size_t need) { out_.resize(used_ + need + 256); }

  std::string& out_;
  size_t used_;
};

}  // namespace

void append_json(std::string& out, const Json& j) {
  Writer w(out);
  w.value(j);
}

}  // namespace mecha
