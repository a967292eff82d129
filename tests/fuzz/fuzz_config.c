/*
 * fuzz_config.c - libFuzzer target for the configuration parser (config.c, config_keys.c,
 * json_locate.c, listen.c) on any bytes, loaded over the defaults and over a full configuration.
 * Beyond "no crash, no UB, no leak", it checks what config.h promises: 0 or -1 only; on -1 the
 * struct is untouched (every pointer too), err is terminated, non-empty, at most
 * CFG_MAX_ERRORS + 1 lines, each naming the file; on 0 the values are in their ranges. The first
 * line of the input is also tried as a command-line override of each scalar key.
 */
#include "config/config.h"
#include "config/json_locate.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            __builtin_trap();                                                                      \
    } while (0)

static const char full_text[] = "{\"interval_ms\": 500, \"disks\": {\"include\": [\"sd*\"], "
                                "\"exclude\": [\"loop*\"]}, \"interfaces\": {\"exclude\": "
                                "[\"lo\"]}, \"retention\": {\"raw_days\": 2}, \"listen\": "
                                "\"[::1]:9931\", \"auth_token\": \"t\"}";

static void check_error_text(const char *err, size_t cap)
{
    size_t lines = 1;
    const char *p = err;

    CHECK(memchr(err, '\0', cap) != NULL);
    CHECK(err[0] != '\0');
    for (;;) {
        CHECK(strncmp(p, "fuzz.json", 9) == 0);
        p = strchr(p, '\n');
        if (!p)
            break;
        p++;
        lines++;
    }
    CHECK(lines <= CFG_MAX_ERRORS + 1);
}

static void check_ranges(const struct cfg *c)
{
    CHECK(c->interval_ms >= 100 && c->interval_ms <= 3600000);
    CHECK(c->raw_days >= 1 && c->raw_days <= c->minute_days && c->minute_days <= c->hour_days);
    CHECK(c->listen_port >= 1 && c->listen_port <= 65535);
    CHECK(memchr(c->db, '\0', sizeof(c->db)) && c->db[0] != '\0');
    CHECK(c->n_disk_include <= CFG_MAX_GLOBS && c->n_disk_exclude <= CFG_MAX_GLOBS);
    CHECK(c->n_net_include <= CFG_MAX_GLOBS && c->n_net_exclude <= CFG_MAX_GLOBS);
}

static void load_over(struct cfg *base, const char *buf, size_t len)
{
    struct cfg c = *base, snapshot = *base;
    char err[8192];
    int rc = cfg_load_buffer(&c, "fuzz.json", buf, len, err, sizeof(err));

    CHECK(rc == 0 || rc == -1);
    if (rc == 0) {
        CHECK(err[0] == '\0');
        check_ranges(&c);
        *base = c; /* the old lists were released by the load */
        return;
    }
    CHECK(memcmp(&c, &snapshot, sizeof(c)) == 0);
    check_error_text(err, sizeof(err));
}

static void overrides(struct cfg *c, const char *buf, size_t len)
{
    static const char *const keys[] = {"db",
                                       "listen",
                                       "interval_ms",
                                       "log_level",
                                       "root",
                                       "retention.raw_days",
                                       "auth_token",
                                       "auth_read",
                                       "max_db_bytes",
                                       "disks",
                                       "retention.nosuch",
                                       "a.b.c.d"};
    size_t n = strcspn(buf, "\n");
    char *value = malloc(n + 1), err[1024];

    if (!value)
        return;
    memcpy(value, buf, n);
    value[n] = '\0';
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        struct cfg before = *c;
        int rc = cfg_override(c, keys[i], value, "--fuzz", err, sizeof(err));

        CHECK(rc == 0 || rc == -1);
        if (rc == 0)
            check_ranges(c);
        else
            CHECK(memcmp(c, &before, sizeof(*c)) == 0 && err[0] != '\0');
    }
    free(value);
    (void)len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* exactly size bytes, so ASan sees a read past the end; a NUL-terminated copy for the rest */
    char *buf = malloc(size ? size : 1), *text = malloc(size + 1);
    struct cfg c;
    char err[256];

    if (!buf || !text) {
        free(buf);
        free(text);
        return 0;
    }
    memcpy(buf, data, size);
    memcpy(text, data, size);
    text[size] = '\0';

    cfg_defaults(&c);
    load_over(&c, buf, size);
    cfg_release(&c);

    cfg_defaults(&c);
    CHECK(cfg_load_buffer(&c, "full.json", full_text, sizeof(full_text) - 1, err, sizeof(err)) ==
          0);
    load_over(&c, buf, size);
    overrides(&c, text, size);
    cfg_release(&c);

    free(buf);
    free(text);
    return 0;
}
