/*
 * dashboard_assets.h - the dashboard's files (web/dashboard/), embedded at build time: CMake runs
 * web/dashboard/embed.cmake, which writes dashboard_assets.c into the build directory. Nothing of
 * it is committed. uPlot is among the files only when web/dashboard/node_modules held it at build
 * time (npm ci); the page then says that the charts are unavailable.
 */
#ifndef PERFLOG_DASHBOARD_ASSETS_H
#define PERFLOG_DASHBOARD_ASSETS_H

#include <stddef.h>

struct dashboard_asset {
    const char *name; /* "index.html", "app.js", "uPlot.iife.min.js", ... */
    const unsigned char *data;
    size_t len;
};

extern const struct dashboard_asset dashboard_assets[];
extern const size_t dashboard_nassets;
/* A hash of every file's content: the page asks for its files with ?v=VERSION, so a browser may
 * keep them for good, and a new build is a new URL. */
extern const char dashboard_version[];
extern const int dashboard_has_uplot;

#endif
