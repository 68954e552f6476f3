# The tree-sitter runtime and the bash grammar, compiled from the pinned npm sources that
# scripts/setup installs under third_party/node_modules. They are C, third-party, and built
# without our warning flags.
set(TS_ROOT ${PROJECT_SOURCE_DIR}/third_party/node_modules)
set(TS_RUNTIME ${TS_ROOT}/tree-sitter/vendor/tree-sitter/lib)
set(TS_BASH ${TS_ROOT}/tree-sitter-bash/src)
if(NOT EXISTS ${TS_RUNTIME}/src/lib.c OR NOT EXISTS ${TS_BASH}/parser.c)
  message(FATAL_ERROR "tree-sitter sources are missing under ${TS_ROOT}: run scripts/setup")
endif()
add_library(mecha_tree_sitter STATIC ${TS_RUNTIME}/src/lib.c ${TS_BASH}/parser.c ${TS_BASH}/scanner.c)
target_include_directories(mecha_tree_sitter SYSTEM PUBLIC ${TS_RUNTIME}/include)
target_include_directories(mecha_tree_sitter PRIVATE ${TS_RUNTIME}/src ${TS_BASH})
set_target_properties(mecha_tree_sitter PROPERTIES C_STANDARD 11 POSITION_INDEPENDENT_CODE ON)
target_compile_options(mecha_tree_sitter PRIVATE -w)
target_compile_definitions(mecha_tree_sitter PRIVATE _POSIX_C_SOURCE=200112L _DEFAULT_SOURCE)
