// fmt's compiled half, built into mecha instead of linked from libfmt.so.
//
// Debian ships fmt as a shared library only, and a shared C++ library drags libstdc++.so
// into every start of the binary (see bench/startup_bench). Header-only fmt costs seconds
// of compile time in each of the seventy files that format; this one file holds the
// out-of-line definitions instead, and the rest include <fmt/format.h> as usual. The
// template instantiations below are the ones the compiled library exports for `char`.
#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {

template auto dragonbox::to_decimal(float x) noexcept -> dragonbox::decimal_fp<float>;
template auto dragonbox::to_decimal(double x) noexcept -> dragonbox::decimal_fp<double>;
template locale_ref::locale_ref(const std::locale& loc);
template auto locale_ref::get<std::locale>() const -> std::locale;
template auto thousands_sep_impl(locale_ref) -> thousands_sep_result<char>;
template auto decimal_point_impl(locale_ref) -> char;
template void buffer<char>::append(const char*, const char*);
template void vformat_to(buffer<char>&, string_view, basic_format_args<FMT_BUFFER_CONTEXT(char)>,
                         locale_ref);

}  // namespace detail
FMT_END_NAMESPACE
