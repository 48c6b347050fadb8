# Packages of the Qt explorer (app/explorer), looked up once at the top level so that every
# directory (the explorer, its tests, the benchmarks) sees the same imported targets. All optional:
# without them the explorer is not built and the rest of the project is unaffected.
find_package(Qt6 QUIET COMPONENTS Widgets PrintSupport Svg)
find_package(QCustomPlotQt6 QUIET)
if(NOT TARGET QCustomPlotQt6::QCustomPlotQt6)
  # Older packages ship the library and header without a CMake package.
  find_path(CFP_QCUSTOMPLOT_INCLUDE qcustomplot.h)
  find_library(CFP_QCUSTOMPLOT_LIBRARY NAMES QCustomPlotQt6 qcustomplot-qt6 qcustomplotqt6)
  if(CFP_QCUSTOMPLOT_INCLUDE AND CFP_QCUSTOMPLOT_LIBRARY AND TARGET Qt6::Widgets)
    add_library(QCustomPlotQt6::QCustomPlotQt6 UNKNOWN IMPORTED)
    set_target_properties(QCustomPlotQt6::QCustomPlotQt6 PROPERTIES
      IMPORTED_LOCATION "${CFP_QCUSTOMPLOT_LIBRARY}"
      INTERFACE_INCLUDE_DIRECTORIES "${CFP_QCUSTOMPLOT_INCLUDE}"
      INTERFACE_LINK_LIBRARIES "Qt6::Widgets;Qt6::PrintSupport")
  endif()
endif()

find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(CFP_GRAPHVIZ QUIET IMPORTED_TARGET libgvc libcgraph)
endif()

