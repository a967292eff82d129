/*
 * fuzz_post_bodies.c - libFuzzer target for the JSON bodies of every POST endpoint, through the
 * real request handler (api_handle, no sockets) with a real run manager on a database in a
 * temporary directory:
 *   POST /api/v1/runs            (start a run)       with the input as its body, then
 *   POST /api/v1/runs/{id}/end   (end a run)         with the same body, on the run just made
 *                                                    (or on run 1 when the start was refused).
 * Every answer must be a status the API documents for these routes with a JSON body that
 * parses: an object with "error" {"code", "message"} for a 4xx/5xx, else one with "id". A run
 * that was made is deleted again, so the table stays small however long the run.
 */
#include "base/log.h"
#include "daemon/runs/runs.h"
#include "storage/db.h"
#include "storage/query/live.h"
#include "web/api.h"

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct api_env env;
static char dir[64], db_file[128];

static int64_t fixed_now(void)
{
    return 1796000000000LL;
}

static void cleanup(void)
{
    char path[128];

    runs_stop(env.runs);
    live_free(env.live);
    for (const char *const *s = (const char *const[]){"", "-wal", "-shm", NULL}; *s; s++) {
        snprintf(path, sizeof(path), "%s/fuzz.db%s", dir, *s);
        unlink(path);
    }
    rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    char err[256];
    struct db *db = NULL;

    (void)argc;
    (void)argv;
    log_set_level(LOG_LVL_ERROR); /* the run manager's notes on every run are not findings */
    snprintf(dir, sizeof(dir), "%s", "/tmp/perflog-fuzz-XXXXXX");
    if (!mkdtemp(dir))
        abort();
    snprintf(db_file, sizeof(db_file), "%s/fuzz.db", dir);
    if (db_open(db_file, "fuzz", &db, err, sizeof(err)) < 0) {
        fprintf(stderr, "fuzz_post_bodies: %s\n", err);
        abort();
    }
    db_close(db);
    env.host = "fuzz";
    env.version = "fuzz";
    env.db_path = db_file;
    env.interval_ms = 1000;
    env.max_points = 1000;
    env.now_ms = fixed_now;
    env.live = live_new(4);
    env.runs = runs_start(db_file, env.live, NULL, NULL, 1000, fixed_now(), err, sizeof(err));
    if (!env.live || !env.runs) {
        fprintf(stderr, "fuzz_post_bodies: %s\n", err);
        abort();
    }
    atexit(cleanup);
    return 0;
}

/* The answer must be one the routes document, as JSON; returns the run id of a 201, else 0. */
static int64_t check_answer(const struct api_response *out, int created_ok)
{
    json_t *j, *e;
    int64_t id = 0;

    if (out->stream || !out->body)
        __builtin_trap();
    j = json_loadb(out->body, out->body_len, 0, NULL);
    if (!j || !json_is_object(j))
        __builtin_trap();
    e = json_object_get(j, "error");
    switch (out->status) {
    case 200:
    case 201:
        if (e || !json_is_integer(json_object_get(j, "id")) || (out->status == 201 && !created_ok))
            __builtin_trap();
        if (out->status == 201)
            id = json_integer_value(json_object_get(j, "id"));
        break;
    case 400:
    case 404:
    case 409:
    case 413:
    case 503:
        if (!json_is_string(json_object_get(e, "code")) ||
            !json_is_string(json_object_get(e, "message")))
            __builtin_trap();
        break;
    default:
        __builtin_trap();
    }
    json_decref(j);
    return id;
}

static int64_t post(const char *path, const uint8_t *data, size_t size, int created_ok)
{
    struct api_request rq = {
        .method = "POST", .path = path, .query = "", .body = (const char *)data, .body_len = size};
    struct api_response out;
    int64_t id;

    if (api_handle(&env, NULL, &rq, &out) < 0)
        return 0; /* out of memory: nothing to check */
    id = check_answer(&out, created_ok);
    free(out.body);
    return id;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    int64_t id = post("/api/v1/runs", data, size, 1);

    snprintf(path, sizeof(path), "/api/v1/runs/%lld/end", (long long)(id ? id : 1));
    post(path, data, size, 0);
    if (id) {
        struct api_request rq = {.method = "DELETE", .path = path, .query = ""};
        struct api_response out;

        snprintf(path, sizeof(path), "/api/v1/runs/%lld", (long long)id);
        if (api_handle(&env, NULL, &rq, &out) == 0)
            free(out.body);
    }
    return 0;
}
