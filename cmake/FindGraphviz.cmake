# FindGraphviz: Graphviz's layout and rendering library (libgvc, with libcgraph),
# which `opspec run --report` uses to draw compiled graphs as SVG. Optional:
# Debian's libgraphviz-dev ships only pkg-config files. Defines Graphviz::gvc.
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(PC_GRAPHVIZ QUIET libgvc libcgraph)
endif()
find_path(Graphviz_INCLUDE_DIR graphviz/gvc.h HINTS ${PC_GRAPHVIZ_INCLUDE_DIRS})
find_library(Graphviz_GVC_LIBRARY NAMES gvc HINTS ${PC_GRAPHVIZ_LIBRARY_DIRS})
find_library(Graphviz_CGRAPH_LIBRARY NAMES cgraph HINTS ${PC_GRAPHVIZ_LIBRARY_DIRS})
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Graphviz REQUIRED_VARS Graphviz_GVC_LIBRARY Graphviz_CGRAPH_LIBRARY Graphviz_INCLUDE_DIR)
if(Graphviz_FOUND AND NOT TARGET Graphviz::gvc)
  add_library(Graphviz::gvc UNKNOWN IMPORTED)
  set_target_properties(Graphviz::gvc PROPERTIES
    IMPORTED_LOCATION "${Graphviz_GVC_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${Graphviz_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES "${Graphviz_CGRAPH_LIBRARY}")
endif()
mark_as_advanced(Graphviz_INCLUDE_DIR Graphviz_GVC_LIBRARY Graphviz_CGRAPH_LIBRARY)
