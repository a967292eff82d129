# build/perflog_chunk.so: chunk_encode() and chunk_points() (storage/chunk_sql.h) for any SQLite
# that loads extensions, e.g. `sqlite3 perflog.db` then `.load build/perflog_chunk`. Not on
# Windows, where perflogd has the functions built in and no shell is assumed.
if(NOT WIN32)
  add_library(perflog_chunk MODULE ${CMAKE_CURRENT_LIST_DIR}/chunk_sql.c
    ${CMAKE_CURRENT_LIST_DIR}/chunk.c)
  set_target_properties(perflog_chunk PROPERTIES PREFIX "" LIBRARY_OUTPUT_DIRECTORY
    ${CMAKE_BINARY_DIR})
  target_compile_definitions(perflog_chunk PRIVATE PERFLOG_SQLITE_EXTENSION)
  target_include_directories(perflog_chunk PRIVATE ${CMAKE_CURRENT_LIST_DIR})
  target_include_directories(perflog_chunk PRIVATE
    $<TARGET_PROPERTY:PkgConfig::SQLITE3,INTERFACE_INCLUDE_DIRECTORIES>)
endif()
# The stock shell is not built with a sanitizer, so a sanitized module would not load in it
# ("ASan runtime does not come first"): the module is always plain. The same code is sanitized
# inside perflogd and the unit tests (test_chunk, test_chunk_sql) and fuzzed (fuzz_chunk).
if(TARGET perflog_chunk AND (PERFLOG_SANITIZE OR PERFLOG_TSAN))
  target_compile_options(perflog_chunk PRIVATE -fno-sanitize=all)
  target_link_options(perflog_chunk PRIVATE -fno-sanitize=all)
endif()
