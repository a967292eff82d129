/*
 * dashboard.c - GET / and GET /ui/{name}: the web dashboard's page, scripts and styles, from the
 * copies embedded at build time (dashboard_assets.h). They hold no data (the page reads the API
 * like any client), so they need no token; the page asks for one when the API answers 401.
 */
#include "web/api_internal.h"
#include "web/dashboard_assets.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The page may only load its own files and talk to its own server; uPlot sets inline styles on its
 * elements, hence 'unsafe-inline' for styles (never for scripts). */
#define PAGE_CSP                                                                                   \
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' "     \
    "data: blob:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

/* The page itself is fetched again every time (it names the current files), a file asked for
 * with the current version is kept for a year, and one asked for without it (or with an old one)
 * is revalidated. */
#define CACHE_PAGE    "no-cache"
#define CACHE_FOREVER "public, max-age=31536000, immutable"

static const struct {
    const char *ext, *type;
} content_types[] = {
    {".html", "text/html; charset=utf-8"}, {".js", "text/javascript; charset=utf-8"},
    {".css", "text/css; charset=utf-8"},   {".svg", "image/svg+xml"},
    {".json", "application/json"},         {".txt", "text/plain; charset=utf-8"},
};

/* The Content-Type of a file name by its extension; NULL for one the dashboard never has. */
static const char *type_of(const char *name)
{
    const char *dot = strrchr(name, '.');

    for (size_t i = 0; dot && i < sizeof(content_types) / sizeof(content_types[0]); i++)
        if (!strcmp(dot, content_types[i].ext))
            return content_types[i].type;
    return NULL;
}

static const struct dashboard_asset *find_asset(const char *name)
{
    for (size_t i = 0; i < dashboard_nassets; i++)
        if (!strcmp(dashboard_assets[i].name, name))
            return &dashboard_assets[i];
    return NULL;
}

/* Answer `a` as a 200 with its own copy of the bytes (http.c frees every body). */
static int reply_asset(const struct dashboard_asset *a, const char *type, const char *cache,
                       struct api_response *out)
{
    char *body = malloc(a->len ? a->len : 1);

    if (!body)
        return -ENOMEM;
    memcpy(body, a->data, a->len);
    out->status = 200;
    out->content_type = type;
    out->body = body;
    out->body_len = a->len;
    out->cache_control = cache;
    return 0;
}

int api_dashboard_page(const struct api_call *c, struct api_response *out)
{
    const struct dashboard_asset *a = find_asset("index.html");
    int rc;

    (void)c;
    if (!a)
        return api_error(out, 404, "not_found", "this perflogd was built without the dashboard");
    rc = reply_asset(a, type_of(a->name), CACHE_PAGE, out);
    if (rc == 0)
        out->csp = PAGE_CSP;
    return rc;
}

int api_dashboard_file(const struct api_call *c, struct api_response *out)
{
    const char *name = strrchr(c->rq->path, '/') + 1; /* the route matched "/ui/{name}" */
    const struct dashboard_asset *a = find_asset(name);
    const char *type = a ? type_of(name) : NULL;
    size_t pos = 0;
    const char *v = query_next(c->q, "v", &pos);
    int fresh = v && !strcmp(v, dashboard_version);

    /* index.html is the page of "/", not a file of /ui/ */
    if (!a || !type || !strcmp(name, "index.html"))
        return api_error(out, 404, "not_found", "the dashboard has no file %.80s", name);
    return reply_asset(a, type, fresh ? CACHE_FOREVER : CACHE_PAGE, out);
}
