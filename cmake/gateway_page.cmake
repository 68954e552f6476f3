# The gateway's page (src/cli/gateway/page/) is compiled into the binary: a generated source
# holds each file's bytes (cli/gateway/page_assets.h), rebuilt whenever one of them changes.
file(GLOB MECHA_PAGE_FILES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/cli/gateway/page/*)
string(REPLACE ";" "|" MECHA_PAGE_LIST "${MECHA_PAGE_FILES}")
set(MECHA_PAGE_SOURCE ${CMAKE_BINARY_DIR}/generated/gateway_page_assets.cc)
add_custom_command(
  OUTPUT ${MECHA_PAGE_SOURCE}
  COMMAND ${CMAKE_COMMAND} -DOUT=${MECHA_PAGE_SOURCE} "-DFILES=${MECHA_PAGE_LIST}"
          -P ${PROJECT_SOURCE_DIR}/cmake/embed_page.cmake
  DEPENDS ${PROJECT_SOURCE_DIR}/cmake/embed_page.cmake ${MECHA_PAGE_FILES}
  COMMENT "Embedding the gateway's page" VERBATIM)
target_sources(mecha_gateway PRIVATE ${MECHA_PAGE_SOURCE})
set_source_files_properties(${MECHA_PAGE_SOURCE} PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
