/*
 * fuzz_request.c - libFuzzer target for the whole request path behind the sockets: the input is
 * an HTTP request as a client writes it (request line, headers, blank line, body), split the way
 * web/http.c splits it (path, raw query, Authorization, body) and handed to api_handle, the router
 * and every handler behind it, on a real SQLite database of 120 ticks made at start, with a live
 * store of the newest ticks and a fixed clock. A streamed answer is pulled to its end. Checks that
 * every answer has a status from 200 to 599 and a content type, that a JSON 4xx/5xx is an error
 * object, and (through the sanitizers) that nothing leaks or overruns.
 *
 * A header "X-Remote: 1" marks the client as remote; "X-Token: 1" configures a token ("s3cret").
 */
#include "storage/db.h"
#include "web/api_internal.h"

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define T0        1795968000000LL /* 2026-11-29T16:00:00Z */
#define NTICKS    120
#define LIVE_CAP  8
#define MAX_PULLS 4096 /* stream calls per answer: a bound, so a runaway stream is a timeout */

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct reader *rd;
static struct live *live;
static char dir[] = "/tmp/perflog-fuzz-request-XXXXXX";
static char db_file[300];

/* The database is the run's own: removed at exit, whatever the run found. */
static void remove_db(void)
{
    char path[320];

    reader_close(rd);
    rd = NULL;
    live_free(live);
    live = NULL;
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof(path), "%s%s", db_file, (const char *[]){"", "-wal", "-shm"}[i]);
        unlink(path);
    }
    rmdir(dir);
}

static int64_t fixed_clock(void)
{
    return T0 + NTICKS * 1000LL;
}

static void fill(struct tick_row *row, const char *name, int i)
{
    snprintf(row->name, sizeof(row->name), "%s", name);
    for (size_t f = 0; f < sizeof(row->v) / sizeof(row->v[0]); f++)
        row->v[f] = (uint64_t)(i * 7 + (int)f) % 1000u;
}

static struct tick *mk_tick(int i)
{
    static const int objs[] = {OBJ_PROCESSOR, OBJ_DISK, OBJ_NET, OBJ_MEMORY};
    static const char *const names[] = {"0", "vda", "eth0", ""};
    struct tick *t = calloc(1, sizeof(*t));

    if (!t)
        abort();
    t->refs = 1;
    t->wall_ms = T0 + i * 1000LL;
    t->interval_ms = i ? 1000 : 0;
    for (size_t k = 0; k < sizeof(objs) / sizeof(objs[0]); k++) {
        t->obj[objs[k]].rows = calloc(1, sizeof(struct tick_row));
        if (!t->obj[objs[k]].rows)
            abort();
        t->obj[objs[k]].n = 1;
        fill(&t->obj[objs[k]].rows[0], names[k], i);
    }
    return t;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    struct tick *all[NTICKS];
    char err[512];
    struct db *d;

    (void)argc;
    (void)argv;
    if (!mkdtemp(dir))
        abort();
    snprintf(db_file, sizeof(db_file), "%s/fuzz.db", dir);
    atexit(remove_db);
    for (int i = 0; i < NTICKS; i++)
        all[i] = mk_tick(i);
    if (db_open(db_file, "fuzzhost", &d, err, sizeof(err)) < 0 ||
        db_write_ticks(d, all, NTICKS) < 0) {
        fprintf(stderr, "fuzz_request: %s\n", err);
        abort();
    }
    db_close(d);
    if (reader_open(db_file, &rd, err, sizeof(err)) < 0) {
        fprintf(stderr, "fuzz_request: %s\n", err);
        abort();
    }
    live = live_new(LIVE_CAP);
    for (int i = 0; i < NTICKS; i++) {
        live_publish_ref(live, all[i]); /* the store takes its own reference of the newest */
        tick_free(all[i]);
    }
    return 0;
}

/* The next line of [*p, end) as a NUL-terminated copy without its CR LF; NULL at the end. */
static char *next_line(const char **p, const char *end)
{
    const char *nl = memchr(*p, '\n', (size_t)(end - *p));
    size_t n = nl ? (size_t)(nl - *p) : (size_t)(end - *p);
    char *s;

    if (*p >= end)
        return NULL;
    s = malloc(n + 1);
    if (!s)
        abort();
    memcpy(s, *p, n);
    s[n] = '\0';
    if (n && s[n - 1] == '\r')
        s[n - 1] = '\0';
    *p = nl ? nl + 1 : end;
    return s;
}

static void check_answer(struct api_response *out)
{
    static char buf[65536];
    int pulls = 0;
    ssize_t n;

    if (out->status < 200 || out->status > 599 || !out->content_type)
        __builtin_trap();
    if (out->stream) {
        while ((n = out->stream(out->stream_ctx, buf, sizeof(buf))) > 0 && ++pulls < MAX_PULLS)
            if ((size_t)n > sizeof(buf))
                __builtin_trap();
        out->stream_free(out->stream_ctx);
        return;
    }
    if (out->status >= 400 && !strncmp(out->content_type, "application/json", 16)) {
        json_t *j = json_loadb(out->body, out->body_len, 0, NULL);

        if (!j || !json_is_string(json_object_get(json_object_get(j, "error"), "code")))
            __builtin_trap();
        json_decref(j);
    }
    free(out->body);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *p = (const char *)data, *end = p + size;
    char *line = next_line(&p, end), *h, *target, *q, *auth = NULL;
    struct api_env env = {.host = "fuzzhost",
                          .version = "0",
                          .db_path = db_file,
                          .interval_ms = 1000,
                          .start_wall_ms = T0,
                          .max_points = 100000,
                          .live = live,
                          .now_ms = fixed_clock};
    struct api_request rq = {0};
    struct api_response out;

    if (!line)
        return 0;
    /* "METHOD TARGET [VERSION]" */
    target = strchr(line, ' ');
    if (!target)
        goto out;
    *target++ = '\0';
    if ((h = strchr(target, ' ')))
        *h = '\0';
    while ((h = next_line(&p, end))) {
        int last = !h[0];

        if (!strncmp(h, "Authorization: ", 15) && !auth)
            auth = strdup(h + 15);
        else if (!strcmp(h, "X-Remote: 1"))
            rq.remote = 1;
        else if (!strcmp(h, "X-Token: 1"))
            env.auth_token = "s3cret";
        free(h);
        if (last)
            break;
    }
    q = strchr(target, '?');
    if (q)
        *q++ = '\0';
    rq.method = line;
    rq.path = target;
    rq.query = q ? q : "";
    rq.query_len = q ? strlen(q) : 0;
    rq.authorization = auth;
    rq.body = p;
    rq.body_len = (size_t)(end - p);
    if (api_handle(&env, rd, &rq, &out) == 0)
        check_answer(&out);
out:
    free(auth);
    free(line);
    return 0;
}
