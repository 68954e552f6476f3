// The files of the gateway's page (src/cli/gateway/page/), compiled into the binary at build
// time (cmake/embed_page.cmake), so the gateway serves them without reading the disk.
#pragma once

#include <span>
#include <string_view>

namespace mecha::gateway {

struct PageAsset {
  std::string_view path;  // "/app.js": the file's name under the page's root
  std::string_view content_type;
  std::string_view body;
};

std::span<const PageAsset> page_assets();

}  // namespace mecha::gateway
