/*
 * test_config.c - the config module.
 *
 * Data-driven suites in the Jansson style: every tests/fixtures/config/valid/<case>/input.json
 * must load, and its values are checked by the function of the same name below (a case without
 * one fails); every tests/fixtures/config/invalid/<case>/input.json must fail with a message
 * containing its `expected` file, and leave the struct untouched. Then overrides, file errors,
 * the listen parser, the JSON locator, and the example file and documentation kept in step.
 */
#include "base/log.h"
#include "collectors/collector.h"
#include "config/config.h"
#include "config/json_locate.h"
#include "testlib.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define CFG_FIXTURES FIXTURES_DIR "/config"
#define SOURCE_DIR   FIXTURES_DIR "/../.."

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    long n;

    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
        buf = malloc((size_t)n + 1);
        if (buf && fread(buf, 1, (size_t)n, f) == (size_t)n) {
            buf[n] = '\0';
            *len = (size_t)n;
        } else {
            free(buf);
            buf = NULL;
        }
    }
    fclose(f);
    return buf;
}

static int is_case_dir(const struct dirent *d)
{
    return d->d_name[0] != '.';
}

/* Case names under dir, sorted; the caller frees with free_cases. */
static int list_cases(const char *dir, struct dirent ***out)
{
    return scandir(dir, out, is_case_dir, alphasort);
}

static void free_cases(struct dirent **names, int n)
{
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

static int lists_equal(char *const *a, size_t na, char *const *b, size_t nb)
{
    if (na != nb)
        return 0;
    for (size_t i = 0; i < na; i++)
        if (strcmp(a[i], b[i]) != 0)
            return 0;
    return 1;
}

/* Same values in every field (glob lists compared as strings). */
static int cfg_same(const struct cfg *a, const struct cfg *b)
{
    return strcmp(a->db, b->db) == 0 && strcmp(a->listen_addr, b->listen_addr) == 0 &&
           a->listen_port == b->listen_port && a->interval_ms == b->interval_ms &&
           a->log_level == b->log_level && strcmp(a->root, b->root) == 0 &&
           lists_equal(a->disk_include, a->n_disk_include, b->disk_include, b->n_disk_include) &&
           lists_equal(a->disk_exclude, a->n_disk_exclude, b->disk_exclude, b->n_disk_exclude) &&
           lists_equal(a->net_include, a->n_net_include, b->net_include, b->n_net_include) &&
           lists_equal(a->net_exclude, a->n_net_exclude, b->net_exclude, b->n_net_exclude) &&
           a->raw_days == b->raw_days && a->minute_days == b->minute_days &&
           a->hour_days == b->hour_days && a->chunk_after_minutes == b->chunk_after_minutes &&
           a->commit_interval_ms == b->commit_interval_ms &&
           a->max_held_ticks == b->max_held_ticks &&
           a->sampler_rt_priority == b->sampler_rt_priority;
}

/* A cfg with every field away from its default, globs on the heap. */
static void load_full(struct cfg *c)
{
    char err[1024];

    cfg_defaults(c);
    CHECK_INT(cfg_load_file(c, CFG_FIXTURES "/valid/full/input.json", err, sizeof(err)), 0);
}

static void check_is_default(const struct cfg *c)
{
    CHECK_STR(c->db, "./perflog.db");
    CHECK_STR(c->listen_addr, "127.0.0.1:9931");
    CHECK_INT(c->listen_port, 9931);
    CHECK_INT(c->interval_ms, 1000);
    CHECK_INT(c->log_level, LOG_LVL_INFO);
    CHECK_STR(c->root, "/");
    CHECK_INT(c->n_disk_include, 0);
    CHECK_INT(c->n_disk_exclude, 3);
    if (c->n_disk_exclude == 3) {
        CHECK_STR(c->disk_exclude[0], "loop*");
        CHECK_STR(c->disk_exclude[1], "ram*");
        CHECK_STR(c->disk_exclude[2], "zram*");
    }
    CHECK_INT(c->n_net_include, 0);
    CHECK_INT(c->n_net_exclude, 0);
    CHECK_INT(c->raw_days, 7);
    CHECK_INT(c->minute_days, 90);
    CHECK_INT(c->hour_days, 1825);
    CHECK_INT(c->chunk_after_minutes, 1);
    CHECK_INT(c->commit_interval_ms, 2000);
    CHECK_INT(c->max_held_ticks, 3600);
    CHECK_INT(c->sampler_rt_priority, 1);
    CHECK_STR(c->auth_token, "");
    CHECK_INT(c->auth_read, 0);
    CHECK_INT(c->http_threads, 2);
    CHECK_INT(c->max_connections, 256);
    CHECK_INT(c->connection_timeout_s, 10);
    CHECK_INT(c->request_timeout_s, 60);
    CHECK_INT(c->header_timeout_s, 10);
    CHECK_INT(c->max_per_ip, 32);
    CHECK_INT(c->max_body_bytes, 65536);
    CHECK_INT(c->max_url_bytes, 8192);
    CHECK_INT(c->max_points, 100000);
    CHECK(c->max_db_bytes == 4294967296LL);
}

/* ---- valid cases: one function per directory ---- */

static void valid_minimal(const struct cfg *c)
{
    check_is_default(c);
}

static void valid_full(const struct cfg *c)
{
    CHECK_STR(c->db, "/var/lib/perflog/perflog.db");
    CHECK_STR(c->listen_addr, "0.0.0.0:8080");
    CHECK_INT(c->listen_port, 8080);
    CHECK_INT(c->interval_ms, 250);
    CHECK_INT(c->log_level, LOG_LVL_DEBUG);
    CHECK_STR(c->root, "/srv/fixtures/host1");
    CHECK_INT(c->n_disk_include, 2);
    CHECK_STR(c->disk_include[0], "sd*");
    CHECK_STR(c->disk_include[1], "nvme*n1");
    CHECK_INT(c->n_disk_exclude, 1);
    CHECK_STR(c->disk_exclude[0], "sda");
    CHECK(c->disk_exclude[1] == NULL);
    CHECK_INT(c->n_net_include, 2);
    CHECK_STR(c->net_include[1], "en[!o]*");
    CHECK_INT(c->n_net_exclude, 3);
    CHECK_STR(c->net_exclude[2], "veth*");
    CHECK_INT(c->raw_days, 3);
    CHECK_INT(c->minute_days, 30);
    CHECK_INT(c->hour_days, 365);
    CHECK_INT(c->commit_interval_ms, 0);
    CHECK_INT(c->max_held_ticks, 7200);
    CHECK_INT(c->sampler_rt_priority, 0);
    CHECK_STR(c->auth_token, "s3cr3t-T0ken_~");
    CHECK_INT(c->auth_read, 1);
    CHECK_INT(c->http_threads, 4);
    CHECK_INT(c->max_connections, 64);
    CHECK_INT(c->connection_timeout_s, 30);
    CHECK_INT(c->max_body_bytes, 1024);
    CHECK_INT(c->max_url_bytes, 256);
    CHECK_INT(c->max_points, 500);
}

static void valid_partial_retention(const struct cfg *c)
{
    CHECK_INT(c->raw_days, 14);
    CHECK_INT(c->minute_days, 90);
    CHECK_INT(c->hour_days, 1825);
    CHECK_INT(c->interval_ms, 1000);
}

static void valid_listen_ipv6(const struct cfg *c)
{
    CHECK_STR(c->listen_addr, "[::1]:8080");
    CHECK_INT(c->listen_port, 8080);
}

static void valid_listen_ipv6_v4tail(const struct cfg *c)
{
    CHECK_STR(c->listen_addr, "[::ffff:10.0.0.1]:9931");
    CHECK_INT(c->listen_port, 9931);
}

static void valid_listen_hostname(const struct cfg *c)
{
    CHECK_STR(c->listen_addr, "localhost:1");
    CHECK_INT(c->listen_port, 1);
}

static void valid_listen_any(const struct cfg *c)
{
    CHECK_INT(c->listen_port, 65535);
}

static void valid_escapes(const struct cfg *c)
{
    CHECK_STR(c->db, "/data/perflog \"x\".db");
    CHECK_STR(c->root, "/srv/\xc3\xa9t\xc3\xa9/\xf0\x9f\x98\x80");
}

static void valid_empty_lists(const struct cfg *c)
{
    CHECK_INT(c->n_disk_include, 0);
    CHECK_INT(c->n_disk_exclude, 0);
    CHECK(c->disk_exclude[0] == NULL);
    CHECK_INT(c->n_net_exclude, 0);
}

static void valid_max_globs(const struct cfg *c)
{
    CHECK_INT(c->n_disk_include, CFG_MAX_GLOBS);
    CHECK_STR(c->disk_include[1], "sd[[:digit:]]");
    CHECK_STR(c->disk_include[3], "sd[]ab]");
    CHECK_STR(c->disk_include[4], "sdx\\*");
    CHECK_STR(c->disk_include[CFG_MAX_GLOBS - 1], "sdn25");
    CHECK_INT(c->n_disk_exclude, 3); /* untouched: only include was given */
}

static void valid_bounds_min(const struct cfg *c)
{
    CHECK_INT(c->interval_ms, 100);
    CHECK_INT(c->commit_interval_ms, 0);
    CHECK_INT(c->max_held_ticks, 10);
    CHECK_INT(c->sampler_rt_priority, 0);
    CHECK_INT(c->raw_days + c->minute_days + c->hour_days, 3);
}

static void valid_bounds_max(const struct cfg *c)
{
    CHECK_INT(c->interval_ms, 3600000);
    CHECK_INT(c->commit_interval_ms, 2000);
    CHECK_INT(c->max_held_ticks, 1000000);
    CHECK_INT(c->sampler_rt_priority, 99);
    CHECK_INT(c->hour_days, 36500);
}

static void valid_log_level_warning(const struct cfg *c)
{
    CHECK_INT(c->log_level, LOG_LVL_WARN);
}

static void valid_bom_crlf_tabs(const struct cfg *c)
{
    CHECK_STR(c->db, "./bom.db");
    CHECK_INT(c->log_level, LOG_LVL_ERROR);
}

static const struct valid_case {
    const char *name;
    void (*check)(const struct cfg *c);
} valid_cases[] = {
    {"bom_crlf_tabs", valid_bom_crlf_tabs},
    {"bounds_max", valid_bounds_max},
    {"bounds_min", valid_bounds_min},
    {"empty_lists", valid_empty_lists},
    {"escapes", valid_escapes},
    {"full", valid_full},
    {"listen_any", valid_listen_any},
    {"listen_hostname", valid_listen_hostname},
    {"listen_ipv6", valid_listen_ipv6},
    {"listen_ipv6_v4tail", valid_listen_ipv6_v4tail},
    {"log_level_warning", valid_log_level_warning},
    {"max_globs", valid_max_globs},
    {"minimal", valid_minimal},
    {"partial_retention", valid_partial_retention},
};

#define N_VALID (sizeof(valid_cases) / sizeof(valid_cases[0]))

static void test_valid_suite(void)
{
    struct dirent **names;
    int n = list_cases(CFG_FIXTURES "/valid", &names), seen = 0;

    CHECK(n > 0);
    for (int i = 0; i < n; i++) {
        const struct valid_case *vc = NULL;
        char path[1024], err[1024];
        struct cfg c;
        size_t len;
        char *buf;

        for (size_t k = 0; k < N_VALID; k++)
            if (strcmp(valid_cases[k].name, names[i]->d_name) == 0)
                vc = &valid_cases[k];
        if (!vc) {
            fprintf(stderr, "valid/%s: no check function in test_config.c\n", names[i]->d_name);
            CHECK(vc != NULL);
            continue;
        }
        seen++;
        snprintf(path, sizeof(path), CFG_FIXTURES "/valid/%s/input.json", vc->name);
        cfg_defaults(&c);
        if (cfg_load_file(&c, path, err, sizeof(err)) != 0)
            fprintf(stderr, "valid/%s: %s\n", vc->name, err);
        CHECK_STR(err, "");
        vc->check(&c);
        cfg_release(&c);

        buf = read_all(path, &len);
        CHECK(buf != NULL);
        cfg_defaults(&c);
        CHECK_INT(cfg_load_buffer(&c, "input.json", buf, len, err, sizeof(err)), 0);
        vc->check(&c);
        cfg_release(&c);
        free(buf);
    }
    CHECK_INT(seen, N_VALID); /* every check function has its directory */
    free_cases(names, n);
}

/* a and b say the same, line for line, but that a's lines start with name_a and b's with name_b. */
static int same_but_name(const char *a, const char *name_a, const char *b, const char *name_b)
{
    size_t la = strlen(name_a), lb = strlen(name_b);

    for (;;) {
        const char *ea, *eb;

        if (strncmp(a, name_a, la) != 0 || strncmp(b, name_b, lb) != 0)
            return 0;
        a += la;
        b += lb;
        ea = a + strcspn(a, "\n");
        eb = b + strcspn(b, "\n");
        if (ea - a != eb - b || memcmp(a, b, (size_t)(ea - a)) != 0)
            return 0;
        if (!*ea || !*eb)
            return !*ea && !*eb;
        a = ea + 1;
        b = eb + 1;
    }
}

/*
 * Run one invalid case over `base`: it must fail and leave base as it was, pointers included.
 * With `message`, the error must also contain the case's `expected` text (base is then the
 * defaults, so an expected message reads as the file does on its own).
 */
static void run_invalid(const char *name, const struct cfg *base, int message)
{
    char path[1024], expected_path[1024], err[16384], ferr[20480];
    char *buf, *expected;
    size_t len, elen;
    struct cfg c = *base; /* shallow: the load must not free or replace anything of base's */

    snprintf(path, sizeof(path), CFG_FIXTURES "/invalid/%s/input.json", name);
    snprintf(expected_path, sizeof(expected_path), CFG_FIXTURES "/invalid/%s/expected", name);
    buf = read_all(path, &len);
    expected = read_all(expected_path, &elen);
    CHECK(buf != NULL && expected != NULL);
    if (!buf || !expected) {
        free(buf);
        free(expected);
        return;
    }
    while (elen > 0 && (expected[elen - 1] == '\n' || expected[elen - 1] == '\r'))
        expected[--elen] = '\0';

    CHECK_INT(cfg_load_buffer(&c, "input.json", buf, len, err, sizeof(err)), -1);
    CHECK(memcmp(&c, base, sizeof(c)) == 0);
    if (message) {
        if (!strstr(err, expected) || elen == 0)
            fprintf(stderr, "invalid/%s:\n  expected: %s\n  got:      %s\n", name, expected, err);
        CHECK(elen > 0 && strstr(err, expected) != NULL);
        CHECK(strncmp(err, "input.json:", 11) == 0);
    }

    /* the file path gives the same message, with the path for FILE */
    CHECK_INT(cfg_load_file(&c, path, ferr, sizeof(ferr)), -1);
    CHECK(same_but_name(ferr, path, err, "input.json"));
    CHECK(memcmp(&c, base, sizeof(c)) == 0);
    free(buf);
    free(expected);
}

static void test_invalid_suite(void)
{
    struct dirent **names;
    int n = list_cases(CFG_FIXTURES "/invalid", &names);
    struct cfg defaults, full;

    CHECK(n >= 40);
    cfg_defaults(&defaults);
    load_full(&full);
    for (int i = 0; i < n; i++) {
        run_invalid(names[i]->d_name, &defaults, 1);
        run_invalid(names[i]->d_name, &full, 0);
    }
    cfg_release(&defaults);
    cfg_release(&full);
    free_cases(names, n);
}

/* ---- overrides ---- */

static void expect_override_error(const char *key, const char *value, const char *origin,
                                  const char *want)
{
    struct cfg c, before;
    char err[1024];

    load_full(&c);
    before = c;
    CHECK_INT(cfg_override(&c, key, value, origin, err, sizeof(err)), -1);
    if (!strstr(err, want))
        fprintf(stderr, "override %s=%s:\n  expected: %s\n  got:      %s\n", key, value, want, err);
    CHECK(strstr(err, want) != NULL);
    CHECK(memcmp(&c, &before, sizeof(c)) == 0);
    cfg_release(&c);
}

static void test_overrides(void)
{
    static const char *const bad_ints[] = {"",
                                           "abc",
                                           "1e3",
                                           " 500",
                                           "500 ",
                                           "+500",
                                           "500ms",
                                           "0x100",
                                           "99",
                                           "3600001",
                                           "-5",
                                           "1000.0",
                                           "99999999999999999999"};
    struct cfg c;
    char err[1024];

    cfg_defaults(&c);
    CHECK_INT(cfg_override(&c, "db", "/tmp/x.db", "--db", err, sizeof(err)), 0);
    CHECK_STR(c.db, "/tmp/x.db");
    CHECK_INT(cfg_override(&c, "listen", "[::1]:1234", "--listen", err, sizeof(err)), 0);
    CHECK_STR(c.listen_addr, "[::1]:1234");
    CHECK_INT(c.listen_port, 1234);
    CHECK_INT(cfg_override(&c, "listen", "localhost:80", "--listen", err, sizeof(err)), 0);
    CHECK_INT(c.listen_port, 80);
    CHECK_INT(cfg_override(&c, "interval_ms", "500", "--interval", err, sizeof(err)), 0);
    CHECK_INT(c.interval_ms, 500);
    CHECK_INT(cfg_override(&c, "interval_ms", "100", "--interval", err, sizeof(err)), 0);
    CHECK_INT(cfg_override(&c, "interval_ms", "3600000", "--interval", err, sizeof(err)), 0);
    CHECK_INT(c.interval_ms, 3600000);
    CHECK_INT(cfg_override(&c, "log_level", "debug", "--log-level", err, sizeof(err)), 0);
    CHECK_INT(c.log_level, LOG_LVL_DEBUG);
    CHECK_INT(cfg_override(&c, "log_level", "error", "--log-level", err, sizeof(err)), 0);
    CHECK_INT(c.log_level, LOG_LVL_ERROR);
    CHECK_INT(cfg_override(&c, "root", "/srv/fixture", "--root", err, sizeof(err)), 0);
    CHECK_STR(c.root, "/srv/fixture");
    CHECK_INT(cfg_override(&c, "retention.raw_days", "14", NULL, err, sizeof(err)), 0);
    CHECK_INT(c.raw_days, 14);
    CHECK_INT(cfg_override(&c, "commit_interval_ms", "0", NULL, err, sizeof(err)), 0);
    CHECK_INT(c.commit_interval_ms, 0);
    CHECK_INT(cfg_override(&c, "sampler_rt_priority", "99", NULL, err, sizeof(err)), 0);
    CHECK_INT(c.sampler_rt_priority, 99);
    CHECK_STR(err, "");
    cfg_release(&c);

    expect_override_error("interval_ms", "abc", "--interval",
                          "--interval: expected an integer from 100 to 3600000, got \"abc\"");
    for (size_t i = 0; i < sizeof(bad_ints) / sizeof(bad_ints[0]); i++)
        expect_override_error("interval_ms", bad_ints[i], "--interval",
                              "--interval: expected an integer from 100 to 3600000, got \"");
    expect_override_error("interval_ms", "50", NULL,
                          "key 'interval_ms': expected an integer from 100 to 3600000, got \"50\"");
    expect_override_error("log_level", "verbose", "--log-level",
                          "--log-level: expected one of \"error\", \"warn\", \"info\", \"debug\", "
                          "got \"verbose\"");
    expect_override_error("listen", "localhost", "--listen",
                          "--listen: invalid address \"localhost\": the ':PORT' part is missing");
    expect_override_error("listen", "10.0.0.1:http", "--listen",
                          "--listen: invalid address \"10.0.0.1:http\": the port must be");
    expect_override_error("listen", "::1:80", "--listen", "must be written in brackets");
    expect_override_error("db", "", "--db", "--db: expected a path (a non-empty string), got \"\"");
    expect_override_error("root", "", "--root",
                          "--root: expected a path (a non-empty string), got \"\"");
    expect_override_error("bogus", "1", "--bogus",
                          "--bogus: unknown key 'bogus' (known keys: db, ");
    expect_override_error("interval", "1", "--interval",
                          "unknown key 'interval'; did you mean 'interval_ms'?");
    expect_override_error("retention.days", "1", NULL,
                          "unknown key 'retention.days' (known keys in 'retention': ");
    expect_override_error("db.x", "1", NULL, "unknown key 'db.x'");
    expect_override_error("retention.raw_days.x", "1", NULL, "unknown key");
    expect_override_error(
        "disks.exclude", "loop*", "--exclude",
        "--exclude: a list or an object can only be set in the configuration file");
    expect_override_error("retention", "7", NULL,
                          "key 'retention': a list or an object can only be set in the "
                          "configuration file");
    expect_override_error("retention.raw_days", "100", NULL,
                          "key 'retention.raw_days': expected at most retention.minute_days (30), "
                          "got 100");
    expect_override_error("retention.minute_days", "2", NULL,
                          "key 'retention.minute_days': expected at least retention.raw_days (3), "
                          "got 2");
    expect_override_error("retention.hour_days", "29", "--hours",
                          "--hours: expected at least retention.minute_days (30), got 29");

    /* a long value is cut in the message; no buffer, or a small one, is fine */
    {
        char big[5000];

        memset(big, 'x', sizeof(big) - 1);
        big[sizeof(big) - 1] = '\0';
        expect_override_error("db", big, "--db",
                              "--db: the path is 4999 bytes long, at most 4095 are allowed");
        expect_override_error("interval_ms", big, "--interval",
                              "got \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...\"");
    }
    /* Command-line text is not UTF-8 checked: a run of stray continuation bytes once wrote past
     * the message buffer (found by fuzz_config); bytes outside UTF-8 are shown as \xNN. */
    {
        char odd[200];

        memset(odd, 0x95, sizeof(odd) - 1);
        odd[sizeof(odd) - 1] = '\0';
        expect_override_error("listen", odd, "--listen", "\"\\x95\\x95\\x95");
        expect_override_error("interval_ms",
                              "1\x9b"
                              "2J\xc3\xa9\xe2\x82",
                              "--interval", "got \"1\\x9b2J\xc3\xa9\\xe2\\x82\"");
    }
    cfg_defaults(&c);
    CHECK_INT(cfg_override(&c, "interval_ms", "x", "--interval", NULL, 0), -1);
    CHECK_INT(cfg_override(&c, "interval_ms", "x", "--interval", err, 12), -1);
    CHECK_STR(err, "--interval:");
    cfg_release(&c);
}

/* ---- files that cannot be read ---- */

static void expect_file_error(const char *path, const char *want)
{
    struct cfg c;
    char err[2048];

    cfg_defaults(&c);
    CHECK_INT(cfg_load_file(&c, path, err, sizeof(err)), -1);
    if (!strstr(err, want))
        fprintf(stderr, "file %s:\n  expected: %s\n  got:      %s\n", path, want, err);
    CHECK(strstr(err, want) != NULL);
    check_is_default(&c);
    cfg_release(&c);
}

static void test_file_errors(void)
{
    char dir[] = "/tmp/perflog-test-config-XXXXXX", path[256], want[512];
    FILE *f;

    expect_file_error("/nonexistent/perflogd.json",
                      "/nonexistent/perflogd.json: cannot open: No such file or directory");
    expect_file_error(CFG_FIXTURES, CFG_FIXTURES ": is a directory, not a JSON file");

    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof(path), "%s/big.json", dir);
    f = fopen(path, "wb");
    CHECK(f != NULL);
    if (f) {
        fputc('{', f);
        for (int i = 0; i < 1024 * 1024; i++)
            fputc(' ', f);
        fputc('}', f);
        fclose(f);
        snprintf(want, sizeof(want), "%s: larger than 1048576 bytes", path);
        expect_file_error(path, want);
    }
    unlink(path);

    snprintf(path, sizeof(path), "%s/unreadable.json", dir);
    f = fopen(path, "wb");
    CHECK(f != NULL);
    if (f) {
        fputs("{}", f);
        fclose(f);
        chmod(path, 0);
        /* root reads it anyway; then it must simply load */
        if (geteuid() != 0) {
            snprintf(want, sizeof(want), "%s: cannot open: Permission denied", path);
            expect_file_error(path, want);
        }
    }
    unlink(path);

    /* not a regular file: refused at once, a FIFO without waiting for a writer */
    snprintf(path, sizeof(path), "%s/fifo.json", dir);
    CHECK_INT(mkfifo(path, 0600), 0);
    snprintf(want, sizeof(want), "%s: is a FIFO, not a JSON file", path);
    expect_file_error(path, want);
    unlink(path);
    rmdir(dir);
}

/* Every error of a file is listed, one a line, up to CFG_MAX_ERRORS, then how many more. */
static void test_error_list(void)
{
    char text[2048], err[16384];
    size_t n = 0, lines = 1;
    struct cfg c;

    n += (size_t)snprintf(text + n, sizeof(text) - n, "{\n");
    for (int i = 0; i < CFG_MAX_ERRORS + 3; i++)
        n += (size_t)snprintf(text + n, sizeof(text) - n, "  \"interval_ms_%d\": 1,\n", i);
    n += (size_t)snprintf(text + n, sizeof(text) - n, "  \"max_points\": 5e2\n}\n");
    cfg_defaults(&c);
    CHECK_INT(cfg_load_buffer(&c, "x.json", text, n, err, sizeof(err)), -1);
    for (const char *p = err; *p; p++)
        lines += *p == '\n';
    CHECK_INT(lines, CFG_MAX_ERRORS + 1);
    CHECK(strstr(err, "x.json:2:3: unknown key 'interval_ms_0'") == err);
    CHECK(strstr(err, "\nx.json:21:3: unknown key 'interval_ms_19'") != NULL);
    CHECK(strstr(err, "interval_ms_20") == NULL);
    CHECK(strstr(err, "\nx.json: 4 more errors not shown") != NULL);
    CHECK(err[strlen(err) - 1] != '\n');

    /* a small buffer: whole lines only after the first, and the rest counted */
    CHECK_INT(cfg_load_buffer(&c, "x.json", text, n, err, 600), -1);
    CHECK(strstr(err, "x.json:2:3:") == err);
    CHECK(strstr(err, " more errors not shown") != NULL);
    CHECK(strlen(err) < 600);

    /* three errors of different kinds, in file order; the good key after them is not one */
    snprintf(text, sizeof(text),
             "{\"interval_ms\": 5e2, \"disks\": {\"exclude\": [\"a/b\", 7E0]},\n"
             " \"retention\": {\"raw_days\": 0}, \"root\": \"/\"}");
    CHECK_INT(cfg_load_buffer(&c, "y.json", text, strlen(text), err, sizeof(err)), -1);
    CHECK_STR(err,
              "y.json:1:2: key 'interval_ms': expected an integer from 100 to 3600000, got 5e2\n"
              "y.json:1:44: key 'disks.exclude[0]': bad glob \"a/b\": device and interface "
              "names never contain '/'\n"
              "y.json:1:51: key 'disks.exclude[1]': expected a glob string, got 7E0\n"
              "y.json:2:16: key 'retention.raw_days': expected an integer from 1 to 36500, got 0");
    cfg_release(&c);
}

/* ---- the listen parser ---- */

static void test_listen_parse(void)
{
    static const struct {
        const char *addr, *host;
        int port;
    } good[] = {
        {"127.0.0.1:9931", "127.0.0.1", 9931},
        {"0.0.0.0:65535", "0.0.0.0", 65535},
        {"localhost:1", "localhost", 1},
        {"a:80", "a", 80},
        {"my-host.example.org:8080", "my-host.example.org", 8080},
        {"host_1:80", "host_1", 80},
        {"[::1]:9931", "::1", 9931},
        {"[::]:80", "::", 80},
        {"[2001:db8::1]:443", "2001:db8::1", 443},
        {"[::ffff:192.0.2.1]:8080", "::ffff:192.0.2.1", 8080},
        {"[1:2:3:4:5:6:7:8]:1", "1:2:3:4:5:6:7:8", 1},
        {"[1:2:3:4:5:6:7::]:1", "1:2:3:4:5:6:7::", 1},
        {"[fe80::1:2]:09931", "fe80::1:2", 9931},
    };
    static const char *const bad[] = {
        "",
        "127.0.0.1",
        "127.0.0.1:",
        "127.0.0.1:0",
        "127.0.0.1:65536",
        "127.0.0.1:999999",
        "127.0.0.1:+80",
        "127.0.0.1:80 ",
        " 127.0.0.1:80",
        "127.0.0.1:-1",
        ":80",
        "::1:80",
        "[::1]",
        "[::1]80",
        "[::1:80",
        "[]:80",
        "[:1]:80",
        "[1::2::3]:80",
        "[1:2:3:4:5:6:7:8:9]:80",
        "[1:2:3:4:5:6:7]:80",
        "[12345::]:80",
        "[::1:]:80",
        "[fe80::1%eth0]:80",
        "[127.0.0.1]:80",
        "1.2.3:80",
        "01.2.3.4:80",
        "256.0.0.1:80",
        "1.2.3.4.5:80",
        "-a:80",
        "a-:80",
        "a..b:80",
        "a-.b:80",
        "[1:2:3:4:5:6:7:1.2.3.4]:80",
        ".a:80",
        "a.:80",
        "exa mple:80",
        "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx.com:80",
    };
    char host[256];
    const char *why;
    int port;

    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        port = -7;
        why = NULL;
        if (cfg_listen_parse(good[i].addr, host, sizeof(host), &port, &why) != 0)
            fprintf(stderr, "listen %s: %s\n", good[i].addr, why);
        CHECK_STR(host, good[i].host);
        CHECK_INT(port, good[i].port);
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        strcpy(host, "untouched");
        port = -7;
        why = NULL;
        if (cfg_listen_parse(bad[i], host, sizeof(host), &port, &why) != -EINVAL)
            fprintf(stderr, "listen \"%s\" was accepted\n", bad[i]);
        CHECK(why != NULL);
        CHECK_STR(host, "untouched");
        CHECK_INT(port, -7);
    }
    CHECK_INT(cfg_listen_parse("localhost:80", host, 5, &port, &why), -EINVAL);
    CHECK_STR(why, "the host name is too long");
    CHECK_INT(cfg_listen_parse("localhost:80", NULL, 0, &port, &why), 0);
    CHECK_INT(port, 80);
}

/* ---- the JSON locator ---- */

static const char tricky[] = "{\n"
                             "  \"s\": \"\\\"a\\\": {\\\"b\\\": 1}\",\n"
                             "  \"a\": {\n"
                             "    \"a\": {\"a\": 1, \"b\": [10, {\"a\": 2}, [3, \"x\\\\\"]]},\n"
                             "    \"b\\\\\": 5,\n"
                             "    \"b\": 6\n"
                             "  },\n"
                             "  \"\\u0062\": \"the key is b\",\n"
                             "  \"\xc3\xa9\": {\"k\": true}\n"
                             "}\n";

static void expect_at(const char *buf, const char *const *path, size_t depth, int line, int col)
{
    int l = -1, c = -1;

    CHECK_INT(cfg_json_locate(buf, strlen(buf), path, depth, &l, &c), 0);
    if (l != line || c != col)
        fprintf(stderr, "locate %s (depth %zu): %d:%d, expected %d:%d\n", path[depth - 1], depth, l,
                c, line, col);
    CHECK_INT(l, line);
    CHECK_INT(c, col);
}

static void expect_nowhere(const char *buf, const char *const *path, size_t depth)
{
    int l = -1, c = -1;

    CHECK_INT(cfg_json_locate(buf, strlen(buf), path, depth, &l, &c), -1);
    CHECK(l == -1 && c == -1);
}

#define AT(buf, line, col, ...)                                                                    \
    do {                                                                                           \
        const char *const p_[] = {__VA_ARGS__};                                                    \
        expect_at(buf, p_, sizeof(p_) / sizeof(p_[0]), line, col);                                 \
    } while (0)

#define NOWHERE(buf, ...)                                                                          \
    do {                                                                                           \
        const char *const p_[] = {__VA_ARGS__};                                                    \
        expect_nowhere(buf, p_, sizeof(p_) / sizeof(p_[0]));                                       \
    } while (0)

/* The bytes a value is written with, for messages that quote a number as written. */
static void test_value_span(void)
{
    static const char text[] =
        "{\"a\" :\n -1.5E+3 , \"b\": [7, 0.10, {\"c\": true}], \"d\": \"x\\\"y\"}";
    const char *const a[] = {"a"}, *const b1[] = {"b", "[1]"}, *const b2[] = {"b", "[2]"};
    const char *const bc[] = {"b", "[2]", "c"}, *const d[] = {"d"}, *const no[] = {"e"};
    size_t start, n;

    CHECK_INT(cfg_json_value_span(text, strlen(text), a, 1, &start, &n), 0);
    CHECK(n == 7 && memcmp(text + start, "-1.5E+3", 7) == 0);
    CHECK_INT(cfg_json_value_span(text, strlen(text), b1, 2, &start, &n), 0);
    CHECK(n == 4 && memcmp(text + start, "0.10", 4) == 0);
    CHECK_INT(cfg_json_value_span(text, strlen(text), b2, 2, &start, &n), 0);
    CHECK(n == 1 && text[start] == '{');
    CHECK_INT(cfg_json_value_span(text, strlen(text), bc, 3, &start, &n), 0);
    CHECK(n == 4 && memcmp(text + start, "true", 4) == 0);
    CHECK_INT(cfg_json_value_span(text, strlen(text), d, 1, &start, &n), 0);
    CHECK(n == 6 && memcmp(text + start, "\"x\\\"y\"", 6) == 0);
    start = n = 99;
    CHECK_INT(cfg_json_value_span(text, strlen(text), no, 1, &start, &n), -1);
    CHECK_INT(cfg_json_value_span("{\"a\":", 5, a, 1, &start, &n), -1);
    CHECK_INT(cfg_json_value_span("{\"a\" 1}", 7, a, 1, &start, &n), -1);
    CHECK(start == 99 && n == 99);
}

static void test_locate(void)
{
    char deep[300];
    const char *const first[] = {"[0]"};
    int l, c;

    AT(tricky, 2, 3, "s");
    AT(tricky, 3, 3, "a"); /* not the "a" written inside the string on line 2 */
    AT(tricky, 4, 5, "a", "a");
    AT(tricky, 4, 11, "a", "a", "a");
    AT(tricky, 4, 19, "a", "a", "b");
    AT(tricky, 4, 25, "a", "a", "b", "[0]");
    AT(tricky, 4, 29, "a", "a", "b", "[1]");
    AT(tricky, 4, 30, "a", "a", "b", "[1]", "a");
    AT(tricky, 4, 39, "a", "a", "b", "[2]");
    AT(tricky, 4, 43, "a", "a", "b", "[2]", "[1]");
    AT(tricky, 5, 5, "a", "b\\"); /* the key is b and a backslash */
    AT(tricky, 6, 5, "a", "b");
    AT(tricky, 8, 3, "b"); /* written as "\u0062" */
    AT(tricky, 9, 3, "\xc3\xa9");
    AT(tricky, 9, 9, "\xc3\xa9", "k"); /* columns count characters: é is one */
    NOWHERE(tricky, "zz");
    NOWHERE(tricky, "a", "c");
    NOWHERE(tricky, "s", "a");             /* "s" is a string, not an object */
    NOWHERE(tricky, "a", "a", "b", "[3]"); /* past the end of the array */
    NOWHERE(tricky, "a", "a", "b", "a");   /* a key asked of an array */
    NOWHERE(tricky, "a", "a", "[0]");      /* an index asked of an object */
    NOWHERE(tricky, "a", "a", "b", "[x]");
    CHECK_INT(cfg_json_locate(tricky, strlen(tricky), first, 0, &l, &c), -1);

    /* the first of two copies; keys that are also values; tabs and CRLF */
    AT("{\"k\": 1, \"k\": 2}", 1, 2, "k");
    AT("{\"a\": \"b\", \"b\": \"a\"}", 1, 12, "b");
    AT("{\r\n\t\"k\":\t{\"j\": 1}}", 2, 8, "k", "j");
    AT("{\"\\ud83d\\ude00\": {\"x\": 0}}", 1, 19, "\xf0\x9f\x98\x80", "x");
    AT("[{\"a\": 1}, {\"a\": 2}]", 1, 13, "[1]", "a");
    AT("{\"x\": 0, \"\\u00e9\\b\\f\\n\\r\\t\\/\": 1}", 1, 10, "\xc3\xa9\b\f\n\r\t/");
    AT("{\"\\ud800x\": 1, \"\\udc00\": 2}", 1, 16, "\xef\xbf\xbd"); /* lone surrogates */
    AT("{\"\\ud800\\u0041\": 1, \"\\u12\": 2}", 1, 2,
       "\xef\xbf\xbd"
       "A");
    AT("{\"\\ud800\\u0041\": 1, \"\\u12\": 2}", 1, 21,
       "\xef\xbf\xbd"
       "12"); /* an escape with too few hex digits */

    /* text that is cut, broken or too deep: no crash, no position */
    for (size_t n = 0; n < sizeof(tricky) - 1; n++) {
        const char *const path[] = {"\xc3\xa9", "k"};
        size_t k_end = (size_t)(strstr(tricky, "\"k\"") - tricky) + 3;
        struct cfg_json_member m;
        int rc;

        l = c = -1;
        rc = cfg_json_locate(tricky, n, path, 2, &l, &c);
        CHECK(n >= k_end ? rc == 0 && l == 9 && c == 9 : rc == -1 && l == -1);
        (void)cfg_json_member_at(tricky, n, n, &m);
    }
    NOWHERE("{\"a\" 1, \"b\": 2}", "b");
    NOWHERE("{\"a\": 1,, \"b\": 2}", "b");
    NOWHERE("{\"a\": [1}, \"b\": 2}", "b");
    NOWHERE("{\"a\": \"unterminated, \"b\": 2", "b");
    memset(deep, '[', sizeof(deep) - 1);
    deep[sizeof(deep) - 1] = '\0';
    AT(deep, 1, 2, "[0]");
    NOWHERE(deep, "[1]");
}

/* A tiny generator of JSON-ish garbage: every function must cope with any bytes. */
static void test_locate_garbage(void)
{
    static const char alphabet[] = "{}[]:,\"\\ u0123abc\n\t-.e\xc3\xa9\xff";
    const char *const path[] = {"a", "[1]", "b"};
    uint32_t seed = 12345;
    char buf[64];

    for (int round = 0; round < 20000; round++) {
        size_t len = (size_t)(seed % sizeof(buf)), bad;
        struct cfg_json_member m;
        int l, c;

        for (size_t i = 0; i < len; i++) {
            seed = seed * 1103515245u + 12345u;
            buf[i] = alphabet[(seed >> 16) % (sizeof(alphabet) - 1)];
        }
        seed = seed * 1103515245u + 12345u;
        (void)cfg_json_locate(buf, len, path, 1 + round % 3, &l, &c);
        (void)cfg_json_member_at(buf, len, len / 2, &m);
        (void)cfg_json_check_utf8(buf, len, &bad);
    }
    CHECK(1);
}

static void test_member_at(void)
{
    const char *two = strstr(tricky, "{\"a\": 2}");
    struct cfg_json_member m;
    size_t off = (size_t)(two - tricky) + 6; /* the 2 */

    CHECK_INT(cfg_json_member_at(tricky, strlen(tricky), off, &m), 0);
    CHECK_INT(m.depth, 5);
    CHECK_STR(m.comp[0], "a");
    CHECK_STR(m.comp[2], "b");
    CHECK_STR(m.comp[3], "[1]");
    CHECK_STR(m.comp[4], "a");
    CHECK_INT(m.line, 4);
    CHECK_INT(m.col, 30);
    CHECK_INT(m.value_done, 0);
    CHECK_INT(m.truncated, 0);

    CHECK_INT(cfg_json_member_at(tricky, strlen(tricky), off + 1, &m), 0); /* after the 2 */
    CHECK_INT(m.depth, 5);
    CHECK_INT(m.value_done, 1);

    off = (size_t)(strstr(tricky, "\\u0062") - tricky) + 7; /* end of the key "\u0062" */
    CHECK_INT(cfg_json_member_at(tricky, strlen(tricky), off, &m), 0);
    CHECK_INT(m.depth, 1);
    CHECK_STR(m.comp[0], "b");
    CHECK_INT(m.line, 8);
    CHECK_INT(m.value_done, 0);

    /* inside an open object nothing is read yet: the member is the key holding it */
    CHECK_INT(cfg_json_member_at("{\"x\": {", 7, 7, &m), 0);
    CHECK_INT(m.depth, 1);
    CHECK_STR(m.comp[0], "x");
    CHECK_INT(m.value_done, 0);

    /* deeper than kept, or a key longer than kept: the path is cut and says so */
    {
        static const char deep[] =
            "{\"a\":{\"b\":{\"c\":{\"d\":{\"e\":{\"f\":{\"g\":{\"h\":{\"i\": 1";
        char longkey[200];

        CHECK_INT(cfg_json_member_at(deep, strlen(deep), strlen(deep), &m), 0);
        CHECK_INT(m.depth, CFG_JSON_MAX_DEPTH);
        CHECK_INT(m.truncated, 1);
        CHECK_STR(m.comp[7], "h");
        snprintf(longkey, sizeof(longkey), "{\"%0100d\\u0001\": ", 0);
        CHECK_INT(cfg_json_member_at(longkey, strlen(longkey), strlen(longkey), &m), 0);
        CHECK_INT(m.truncated, 1);
        CHECK_INT(strlen(m.comp[0]), CFG_JSON_COMP_MAX - 1);
        snprintf(longkey, sizeof(longkey), "{\"\\u0001x\": ");
        CHECK_INT(cfg_json_member_at(longkey, strlen(longkey), strlen(longkey), &m), 0);
        CHECK_STR(m.comp[0], "?x"); /* control characters are not copied into messages */
    }

    CHECK_INT(cfg_json_member_at(tricky, strlen(tricky), strlen(tricky), &m), -1); /* all closed */
    CHECK_INT(cfg_json_member_at("{", 1, 1, &m), -1);
    CHECK_INT(cfg_json_member_at("", 0, 0, &m), -1);
}

static void test_position_and_utf8(void)
{
    static const struct {
        const char *s;
        size_t len;
        int ok;
        size_t bad;
    } cases[] = {
        {"plain", 5, 1, 0},
        {"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 9, 1, 0},
        {"\xc0\xaf", 2, 0, 0},             /* overlong '/' */
        {"a\xed\xa0\x80", 4, 0, 1},        /* a UTF-16 surrogate */
        {"\xf4\x90\x80\x80", 4, 0, 0},     /* past U+10FFFF */
        {"ab\xe2\x82", 4, 0, 2},           /* cut short */
        {"\x80", 1, 0, 0},                 /* a stray continuation byte */
        {"a\0b", 3, 0, 1},                 /* NUL */
        {"\xf8\x88\x80\x80\x80", 5, 0, 0}, /* five-byte form */
        {"\xe0\x80\x80", 3, 0, 0},         /* overlong three-byte */
    };
    int l, c;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        size_t bad = 999;
        int rc = cfg_json_check_utf8(cases[i].s, cases[i].len, &bad);

        CHECK_INT(rc, cases[i].ok ? 0 : -1);
        CHECK_INT(bad, cases[i].ok ? 999 : cases[i].bad);
    }
    cfg_json_position("ab\ncd", 5, 4, &l, &c);
    CHECK(l == 2 && c == 2);
    cfg_json_position("ab\ncd", 5, 5, &l, &c);
    CHECK(l == 2 && c == 3);
    cfg_json_position("\xc3\xa9x", 3, 2, &l, &c);
    CHECK(l == 1 && c == 2);
    cfg_json_position("x", 1, 99, &l, &c);
    CHECK(l == 1 && c == 2);
}

/* ---- life cycle, all-or-nothing loads, collector config ---- */

static void test_lifecycle(void)
{
    struct cfg c, before;
    struct collector_config cc;
    char err[1024];
    static const char bad_late[] = "{\"interval_ms\": 200, \"disks\": {\"exclude\": [\"x*\"]}, "
                                   "\"retention\": {\"raw_days\": 365}}";
    static const char includes[] = "{\"disks\": {\"include\": [\"sd*\", \"vd*\"]}}";
    static const char db_only[] = "{\"db\": \"/tmp/y.db\"}";

    cfg_defaults(&c);
    check_is_default(&c);
    cfg_release(&c);
    cfg_release(&c);
    CHECK_INT(c.n_disk_exclude, 0);
    cfg_release(NULL);
    cfg_defaults(&c);
    check_is_default(&c);

    /* a failure late in the file leaves the earlier keys and the lists as they were */
    before = c;
    CHECK_INT(cfg_load_buffer(&c, "late.json", bad_late, strlen(bad_late), err, sizeof(err)), -1);
    CHECK(strstr(err, "late.json:1:66: key 'retention.raw_days': expected at most") != NULL);
    CHECK(memcmp(&c, &before, sizeof(c)) == 0);

    /* loads stack: keys a file does not name keep what an earlier file set */
    CHECK_INT(cfg_load_buffer(&c, "a.json", includes, strlen(includes), err, sizeof(err)), 0);
    CHECK_INT(cfg_load_buffer(&c, "b.json", db_only, strlen(db_only), err, sizeof(err)), 0);
    CHECK_INT(c.n_disk_include, 2);
    CHECK_STR(c.disk_include[1], "vd*");
    CHECK_STR(c.db, "/tmp/y.db");
    CHECK_INT(c.n_disk_exclude, 3);

    /* a list in the file replaces the whole list (the old strings are freed: ASan checks) */
    CHECK_INT(cfg_load_buffer(&c, "c.json", includes, strlen(includes), err, sizeof(err)), 0);
    CHECK_INT(c.n_disk_include, 2);

    cfg_collector_config(&c, &cc);
    CHECK(cc.root == c.root);
    CHECK_INT(cc.n_disk_include, 2);
    CHECK(cc.disk_include[0] == c.disk_include[0]);
    CHECK(cc.disk_include[2] == NULL);
    CHECK_INT(cc.n_disk_exclude, 3);
    CHECK_STR(cc.disk_exclude[2], "zram*");
    CHECK_INT(cc.n_net_include + cc.n_net_exclude, 0);
    CHECK_INT(collector_name_selected("sda", cc.disk_include, cc.n_disk_include, cc.disk_exclude,
                                      cc.n_disk_exclude),
              1);
    CHECK_INT(collector_name_selected("loop0", cc.disk_include, cc.n_disk_include, cc.disk_exclude,
                                      cc.n_disk_exclude),
              0);
    cfg_release(&c);

    /* a message that does not fit is cut, and terminated */
    cfg_defaults(&c);
    CHECK_INT(cfg_load_buffer(&c, "x.json", "[]", 2, err, 10), -1);
    CHECK_STR(err, "x.json:1:");
    CHECK_INT(cfg_load_buffer(&c, "x.json", "[]", 2, NULL, 0), -1);
    cfg_release(&c);
}

/* ---- the example file and the documentation stay complete ---- */

static void doc_mentions(const char *doc, const char *key, json_t *value)
{
    char needle[160];

    snprintf(needle, sizeof(needle), "`%s`", key);
    if (!strstr(doc, needle))
        fprintf(stderr, "docs/configuration.md does not document %s\n", needle);
    CHECK(strstr(doc, needle) != NULL);
    if (json_is_object(value)) {
        const char *sub;
        json_t *v;

        json_object_foreach(value, sub, v)
        {
            char dotted[160];

            snprintf(dotted, sizeof(dotted), "%s.%s", key, sub);
            doc_mentions(doc, dotted, v);
        }
    }
}

static void test_example_and_docs(void)
{
    const char *example = SOURCE_DIR "/config/perflogd.example.json";
    struct cfg c, d;
    char err[1024], *doc;
    json_t *root;
    size_t len;

    /* loaded over a cfg where every field differs, the example gives back every default: so it
     * sets every key, each to its default */
    load_full(&c);
    cfg_defaults(&d);
    CHECK(!cfg_same(&c, &d));
    if (cfg_load_file(&c, example, err, sizeof(err)) != 0)
        fprintf(stderr, "%s\n", err);
    CHECK_STR(err, "");
    check_is_default(&c);
    CHECK(cfg_same(&c, &d));
    cfg_release(&c);
    cfg_release(&d);

    doc = read_all(SOURCE_DIR "/docs/configuration.md", &len);
    root = json_load_file(example, 0, NULL);
    CHECK(doc != NULL && root != NULL);
    if (doc && root) {
        const char *key;
        json_t *v;

        json_object_foreach(root, key, v) doc_mentions(doc, key, v);
        CHECK(strstr(doc, "`--db`") && strstr(doc, "`--listen`") && strstr(doc, "`--interval`") &&
              strstr(doc, "`--log-level`") && strstr(doc, "`--root`"));
    }
    json_decref(root);
    free(doc);
}

int main(void)
{
    test_valid_suite();
    test_invalid_suite();
    test_overrides();
    test_file_errors();
    test_error_list();
    test_listen_parse();
    test_locate();
    test_value_span();
    test_locate_garbage();
    test_member_at();
    test_position_and_utf8();
    test_lifecycle();
    test_example_and_docs();
    return tl_done();
}
