/*
 * api.c - calling perflogd's HTTP API for the subcommands: the request with the token, and the
 * policy of what to tell the user when it fails (docs/design.md §5: errors are
 * {"error": {"code", "message"}} with a 4xx/5xx status).
 */
#include "base/term_escape.h"
#include "cli/cli.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ERR_BODY_SHOWN 200 /* bytes of a non-JSON error body quoted to the user */

static void print_transport_error(const struct cli *c, int code, const char *err)
{
    char shown[1024];

    /* the message may quote what the server sent */
    fprintf(stderr, "perflog: %s", term_escape(err, shown, sizeof(shown)));
    if (code == HTTPC_ECONNECT)
        fprintf(stderr, " — is perflogd running? (start it with ./scripts/run.sh, "
                        "or set --server / PERFLOG_SERVER)");
    else if (code == HTTPC_ERESOLVE)
        fprintf(stderr, " (check --server / PERFLOG_SERVER, now %s)", c->server);
    fputc('\n', stderr);
}

/* The server's {"error": {"code", "message"}}, or the start of whatever else it sent. */
void cli_print_http_error(const struct cli *c, const struct http_response *r)
{
    json_t *root = json_loadb(r->body, r->body_len, 0, NULL);
    const json_t *e = json_object_get(root, "error");
    const char *msg = cli_json_str(e, "message"), *code = cli_json_str(e, "code");
    char m[1024], k[128];

    if (msg)
        fprintf(stderr, "perflog: %s (HTTP %d%s%s)\n", term_escape(msg, m, sizeof(m)), r->status,
                code ? ", " : "", code ? term_escape(code, k, sizeof(k)) : "");
    else {
        fprintf(stderr, "perflog: %s answered HTTP %d: ", c->server, r->status);
        term_escape_write(
            r->body ? r->body : "",
            r->body ? (r->body_len < ERR_BODY_SHOWN ? r->body_len : ERR_BODY_SHOWN) : 0, 0, stderr);
        fputc('\n', stderr);
    }
    if (r->status == 401 && c->token)
        fprintf(stderr, "perflog: the token was refused: check PERFLOG_TOKEN (or --token) "
                        "against the daemon's auth_token\n");
    else if (r->status == 401)
        fprintf(stderr, "perflog: the daemon requires a token: set PERFLOG_TOKEN (or pass "
                        "--token) to its auth_token\n");
    json_decref(root);
}

/* One request; the body to on_body when it is set (streaming), else collected. */
static int request(const struct cli *c, const char *method, const char *target, const char *body,
                   size_t body_len, httpc_body_fn on_body, void *arg, struct http_response *resp)
{
    char auth[1024], err[1024];
    const char *headers[] = {"Accept: application/json", NULL, NULL, NULL};
    struct http_request req = {.method = method,
                               .target = target,
                               .headers = headers,
                               .body = body,
                               .body_len = body_len,
                               .read_timeout_ms = c->read_timeout_ms};
    struct http_response r;
    int ret, h = 1;

    if (body)
        headers[h++] = "Content-Type: application/json";
    if (c->token) {
        snprintf(auth, sizeof(auth), "Authorization: Bearer %s", c->token);
        headers[h++] = auth;
    }
    ret = on_body ? httpc_request_stream(&c->url, &req, on_body, arg, &r, err, sizeof(err))
                  : httpc_request(&c->url, &req, &r, err, sizeof(err));
    if (ret == HTTPC_EABORT)
        return CLI_EXIT_FAIL; /* the receiver has said why */
    if (ret < 0) {
        print_transport_error(c, ret, err);
        return CLI_EXIT_FAIL;
    }
    *resp = r;
    return 0;
}

static int get(const struct cli *c, const char *target, httpc_body_fn on_body, void *arg,
               struct http_response *resp)
{
    return request(c, "GET", target, NULL, 0, on_body, arg, resp);
}

int cli_request(const struct cli *c, const char *method, const char *target, const json_t *body,
                struct http_response *resp)
{
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    struct http_response r;
    int ret;

    if (body && !text) {
        fprintf(stderr, "perflog: out of memory\n");
        return CLI_EXIT_FAIL;
    }
    ret = request(c, method, target, text, text ? strlen(text) : 0, NULL, NULL, &r);
    free(text);
    if (ret)
        return ret;
    if (r.status < 200 || r.status > 299) {
        cli_print_http_error(c, &r);
        httpc_response_free(&r);
        return CLI_EXIT_FAIL;
    }
    *resp = r;
    return 0;
}

int cli_get_quiet(const struct cli *c, const char *target, struct http_response *resp)
{
    char auth[1024], err[256];
    const char *headers[] = {"Accept: application/json", NULL, NULL};
    struct http_request req = {.method = "GET",
                               .target = target,
                               .headers = headers,
                               .read_timeout_ms = c->read_timeout_ms};
    struct http_response r;

    if (c->token) {
        snprintf(auth, sizeof(auth), "Authorization: Bearer %s", c->token);
        headers[1] = auth;
    }
    if (httpc_request(&c->url, &req, &r, err, sizeof(err)) < 0)
        return CLI_EXIT_FAIL;
    if (r.status < 200 || r.status > 299) {
        httpc_response_free(&r);
        return CLI_EXIT_FAIL;
    }
    *resp = r;
    return 0;
}

int cli_get_any(const struct cli *c, const char *target, struct http_response *resp)
{
    return get(c, target, NULL, NULL, resp);
}

int cli_get(const struct cli *c, const char *target, struct http_response *resp)
{
    struct http_response r;
    int ret = get(c, target, NULL, NULL, &r);

    if (ret)
        return ret;
    if (r.status < 200 || r.status > 299) {
        cli_print_http_error(c, &r);
        httpc_response_free(&r);
        return CLI_EXIT_FAIL;
    }
    *resp = r;
    return 0;
}

int cli_get_stream(const struct cli *c, const char *target, httpc_body_fn on_body, void *arg)
{
    struct http_response r;
    int ret = get(c, target, on_body, arg, &r);

    if (ret)
        return ret;
    if (r.status < 200 || r.status > 299) {
        cli_print_http_error(c, &r);
        ret = CLI_EXIT_FAIL;
    }
    httpc_response_free(&r);
    return ret;
}

int cli_query_add(char **target, const char *name, const char *value)
{
    size_t old = *target ? strlen(*target) : 0;
    size_t vlen = httpc_pct_encode(value, NULL, 0);
    size_t need = old + 1 + strlen(name) + 1 + vlen + 1;
    const char *sep = *target && strchr(*target, '?') ? "&" : "?";
    char *t = realloc(*target, need);

    if (!t)
        return -ENOMEM;
    snprintf(t + old, need - old, "%s%s=", sep, name);
    httpc_pct_encode(value, t + strlen(t), vlen + 1);
    *target = t;
    return 0;
}

void cli_print_body(const struct http_response *r)
{
    fwrite(r->body, 1, r->body_len, stdout);
    if (r->body_len == 0 || r->body[r->body_len - 1] != '\n')
        putchar('\n');
}

void cli_print_help(int err, const char *text)
{
    fputs(text, err ? stderr : stdout);
}

const char *cli_json_str(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(obj, key));
}

double cli_json_num(const json_t *obj, const char *key)
{
    const json_t *v = json_object_get(obj, key);

    return json_is_number(v) ? json_number_value(v) : NAN;
}
