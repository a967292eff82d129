/*
 * test_dashboard.c - GET / and GET /ui/{name} through api_handle(), without sockets: the embedded
 * page and its files, their types and cache headers, names that are not files, and that neither
 * needs the token while the API does.
 */
#include "testlib.h"
#include "web/api_internal.h"
#include "web/dashboard_assets.h"

#include <stdlib.h>
#include <string.h>

static int call(const struct api_env *env, const char *method, const char *path, const char *query,
                const char *auth, struct api_response *out)
{
    struct api_request rq = {.method = method,
                             .path = path,
                             .query = query,
                             .query_len = query ? strlen(query) : 0,
                             .authorization = auth};

    return api_handle(env, NULL, &rq, out);
}

/* GET path?query: status, and for a 200 its Content-Type prefix and Cache-Control. */
static void expect(const struct api_env *env, const char *path, const char *query, int status,
                   const char *type, const char *cache)
{
    struct api_response out;

    CHECK_INT(call(env, "GET", path, query, NULL, &out), 0);
    CHECK_INT(out.status, status);
    if (out.status != status)
        fprintf(stderr, "  GET %s?%s: %d %.*s\n", path, query ? query : "", out.status,
                (int)(out.body_len < 200 ? out.body_len : 200), out.body ? out.body : "");
    if (status == 200 && out.status == 200) {
        CHECK(out.content_type && !strncmp(out.content_type, type, strlen(type)));
        CHECK_STR(out.cache_control, cache);
        CHECK(out.body_len > 0);
    }
    if (status != 200)
        CHECK_STR(out.content_type, "application/json");
    free(out.body);
}

static const struct dashboard_asset *asset(const char *name)
{
    for (size_t i = 0; i < dashboard_nassets; i++)
        if (!strcmp(dashboard_assets[i].name, name))
            return &dashboard_assets[i];
    return NULL;
}

static void test_page(const struct api_env *env)
{
    struct api_response out;
    char *page, name[80], v[40], q[60], path[128];
    int files = 0;

    CHECK_INT(call(env, "GET", "/", "", NULL, &out), 0);
    CHECK_INT(out.status, 200);
    CHECK_STR(out.content_type, "text/html; charset=utf-8");
    CHECK_STR(out.cache_control, "no-cache");
    CHECK(out.csp && strstr(out.csp, "script-src 'self'") && !strstr(out.csp, "unsafe-eval"));
    CHECK(out.body_len > 15 && !strncmp(out.body, "<!doctype html>", 15));
    page = out.body ? strndup(out.body, out.body_len) : NULL;
    CHECK(page != NULL);
    free(out.body);
    if (!page)
        return;
    /* Every file the page names is served, with the current version, and kept for good. */
    for (const char *p = strstr(page, "\"/ui/"); p; p = strstr(p + 1, "\"/ui/")) {
        if (sscanf(p, "\"/ui/%79[^?\"]?v=%39[^\"]\"", name, v) != 2) {
            CHECK(!"a /ui/ link of the page has ?v=VERSION");
            continue;
        }
        CHECK_STR(v, dashboard_version);
        snprintf(q, sizeof(q), "v=%s", v);
        snprintf(path, sizeof(path), "/ui/%s", name);
        expect(env, path, q, 200, strstr(name, ".css") ? "text/css" : "text/javascript",
               "public, max-age=31536000, immutable");
        files++;
    }
    CHECK_INT(files, 3); /* boot.js, dashboard.css, dashboard.js */
    CHECK(strstr(page, "@VERSION@") == NULL);
    free(page);

    CHECK_INT(call(env, "HEAD", "/", "", NULL, &out), 0);
    CHECK_INT(out.status, 200);
    free(out.body);
    CHECK_INT(call(env, "POST", "/", "", NULL, &out), 0);
    CHECK_INT(out.status, 405);
    CHECK_STR(out.allow, "GET, HEAD");
    free(out.body);
    expect(env, "/", "x=1", 400, NULL, NULL); /* the page takes no parameters */
}

static void test_files(const struct api_env *env)
{
    const struct dashboard_asset *js = asset("dashboard.js");
    int has = js && memmem(js->data, js->len, "leeoniya/uPlot", 14) != NULL;

    /* without the current version (or with another) a browser must ask again */
    expect(env, "/ui/dashboard.js", "", 200, "text/javascript; charset=utf-8", "no-cache");
    expect(env, "/ui/dashboard.js", "v=0000", 200, "text/javascript; charset=utf-8", "no-cache");
    expect(env, "/ui/dashboard.css", NULL, 200, "text/css; charset=utf-8", "no-cache");
    expect(env, "/ui/boot.js", NULL, 200, "text/javascript; charset=utf-8", "no-cache");
    /* uPlot is in the bundle exactly when the build says so */
    CHECK_INT(has, dashboard_has_uplot);
    if (!dashboard_has_uplot)
        fprintf(stderr, "  note: this build has no uPlot (npm ci --prefix web/dashboard)\n");

    expect(env, "/ui/index.html", NULL, 404, NULL, NULL); /* the page is "/" */
    expect(env, "/ui/nosuch.js", NULL, 404, NULL, NULL);
    expect(env, "/ui/", NULL, 404, NULL, NULL);
    expect(env, "/ui", NULL, 404, NULL, NULL);
    expect(env, "/ui/.hidden.js", NULL, 404, NULL, NULL);
    expect(env, "/ui/..", NULL, 404, NULL, NULL);
    expect(env, "/ui/../api/v1/health", NULL, 404, NULL, NULL);
    expect(env, "/ui/a/boot.js", NULL, 404, NULL, NULL);
    expect(env, "/ui/boot.js/", NULL, 404, NULL, NULL);
    expect(env, "/ui/boot%2ejs", NULL, 404, NULL, NULL);
    expect(env, "/ui/Boot.js", NULL, 404, NULL, NULL);
    expect(env,
           "/ui/"
           "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.js",
           NULL, 404, NULL, NULL);
    expect(env, "/ui/boot.js", "w=1", 400, NULL, NULL);
    expect(env, "/ui/boot.js", "v=%zz", 400, NULL, NULL);
}

static void test_auth(struct api_env env)
{
    struct api_response out;

    /* The page and its files hold no data: they load without the token, and the page asks for
     * it when the API answers 401. */
    env.auth_token = "s3cret";
    env.auth_read = 1;
    expect(&env, "/", NULL, 200, "text/html", "no-cache");
    expect(&env, "/ui/dashboard.js", NULL, 200, "text/javascript", "no-cache");
    CHECK_INT(call(&env, "GET", "/api/v1/health", "", NULL, &out), 0);
    CHECK_INT(out.status, 401);
    free(out.body);
    CHECK_INT(call(&env, "GET", "/", "", "Bearer wrong", &out), 0);
    CHECK_INT(out.status, 200);
    free(out.body);
}

int main(void)
{
    struct api_env env = {.host = "testhost", .version = "9.9.9-test", .interval_ms = 1000};

    CHECK(strlen(dashboard_version) == 16);
    CHECK(asset("index.html") != NULL);
    test_page(&env);
    test_files(&env);
    test_auth(env);
    return tl_done();
}
