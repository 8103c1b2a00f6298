# blis_sdk_add_plugin(<target> SOURCES <src>... [LIBS <lib>...])
#
# A blis plugin: a MODULE library lib<target>.so built against blis::sdk. Only
# the entry point (BLIS_PLUGIN_EXPORT) is exported; everything else is hidden,
# so two plugins never clash and the library can be unloaded. `-z defs` makes
# an unresolved symbol a link error here rather than a load error in blis: the
# host exports nothing for plugins to link against.
#
# Shared by blis's own plugins and vendors' (installed with the blis-sdk
# package). C++ sources need C++17 or later.
function(blis_sdk_add_plugin target)
  cmake_parse_arguments(P "" "" "SOURCES;LIBS" ${ARGN})
  if(NOT P_SOURCES)
    message(FATAL_ERROR "blis_sdk_add_plugin(${target}): give SOURCES")
  endif()
  add_library(${target} MODULE ${P_SOURCES})
  target_link_libraries(${target} PRIVATE blis::sdk ${P_LIBS})
  target_link_options(${target} PRIVATE $<$<PLATFORM_ID:Linux>:LINKER:-z,defs>)
  set_target_properties(${target} PROPERTIES
    PREFIX "lib"
    CXX_VISIBILITY_PRESET hidden
    C_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
endfunction()
