/*
 * test_metrics.c - the /metrics renderer: exact sample lines, _Total and raw_mask, scaling and
 * number formatting, label escaping, family layout (HELP/TYPE once, before and around contiguous
 * samples), self metrics, extra PDH series, a grammar check of every line, and `promtool check
 * metrics` on a realistic tick and on extras.
 */
#include "storage/query/metrics.h"
#include "testlib.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define PROMTOOL "/usr/bin/promtool"

static struct tick *mk_tick(void)
{
    struct tick *t = calloc(1, sizeof(*t));

    t->refs = 1;
    t->wall_ms = 1700000000000;
    t->interval_ms = 1000;
    return t;
}

/* Append a row; the pointer is valid until the next add_row on the same object. */
static struct tick_row *add_row(struct tick *t, enum object_id obj, const char *name)
{
    struct tick_object *o = &t->obj[obj];
    struct tick_row *r;

    o->rows = realloc(o->rows, (o->n + 1) * sizeof(*o->rows));
    r = &o->rows[o->n++];
    memset(r, 0, sizeof(*r));
    snprintf(r->name, sizeof(r->name), "%s", name);
    return r;
}

static void set(struct tick_row *r, unsigned field, uint64_t v)
{
    r->raw[field] = v;
    r->raw_mask |= 1ull << field;
}

/* Every field of the object set to base + field index. */
static void set_all(struct tick_row *r, unsigned nfields, uint64_t base)
{
    for (unsigned f = 0; f < nfields; f++)
        set(r, f, base + f);
}

static struct metrics_self mk_self(void)
{
    struct metrics_self s = {
        .version = "0.1.0",
        .host = "web-1",
        .clk_tck = 100,
        .ticks = 42,
        .missed = 1,
        .dropped = 2,
        .written = 40,
        .write_failures = 3,
        .queued = 2,
        .db_bytes = -1,
        .start_wall_ms = 1700000000000,
        .last_tick_wall_ms = 0,
        .last_collect_ns = 1234567,
    };
    return s;
}

static char *render(const struct tick *t, const struct metrics_self *self)
{
    struct sbuf b = {0};

    CHECK_INT(metrics_render(t, self, &b), 0);
    return sbuf_take(&b);
}

/* 1 when `line` is a whole line of `text`. */
static int has_line(const char *text, const char *line)
{
    size_t n = strlen(line);

    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        if (strncmp(p, line, n) == 0 && p[n] == '\n')
            return 1;
    return 0;
}

/* Number of lines of `text` that start with `prefix`. */
static int count_prefix(const char *text, const char *prefix)
{
    size_t n = strlen(prefix);
    int c = 0;

    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        if (strncmp(p, prefix, n) == 0)
            c++;
    return c;
}

/*
 * The exposition grammar, strictly as this renderer should write it
 * (https://prometheus.io/docs/instrumenting/exposition_formats/#text-format-details):
 *   # HELP name text       (once per family, before its samples)
 *   # TYPE name counter|gauge   (once per family, before its samples)
 *   name[{label="value",...}] value   (samples of a family contiguous, no series twice)
 * Returns 0, or -1 after printing the offending line.
 */
#define V_MAX_FAM    128
#define V_MAX_SERIES 2048
#define V_NAME_MAX   128

struct v_family {
    char name[V_NAME_MAX];
    int help, type, samples, closed;
};

struct v_state {
    struct v_family fam[V_MAX_FAM];
    size_t nfam;
    char *series[V_MAX_SERIES];
    size_t nseries;
    struct v_family *cur; /* family of the previous sample */
};

static int v_name_start(int c)
{
    return isalpha(c) || c == '_' || c == ':';
}

static int v_name_char(int c)
{
    return isalnum(c) || c == '_' || c == ':';
}

/* Length of the metric (or, without ':', label) name at p; 0 when there is none. */
static size_t v_name(const char *p, int label)
{
    size_t n = 0;

    if (!v_name_start((unsigned char)p[0]) || (label && p[0] == ':'))
        return 0;
    while (v_name_char((unsigned char)p[n]) && !(label && p[n] == ':'))
        n++;
    return n < V_NAME_MAX ? n : 0;
}

static struct v_family *v_family(struct v_state *v, const char *name, size_t n)
{
    for (size_t i = 0; i < v->nfam; i++)
        if (strlen(v->fam[i].name) == n && strncmp(v->fam[i].name, name, n) == 0)
            return &v->fam[i];
    if (v->nfam == V_MAX_FAM)
        return NULL;
    memcpy(v->fam[v->nfam].name, name, n);
    v->fam[v->nfam].name[n] = '\0';
    return &v->fam[v->nfam++];
}

static int v_value(const char *p, const char *end)
{
    char buf[64], *e;
    size_t n = (size_t)(end - p);

    if (n == 0 || n >= sizeof(buf))
        return 0;
    memcpy(buf, p, n);
    buf[n] = '\0';
    if (!strcmp(buf, "+Inf") || !strcmp(buf, "-Inf") || !strcmp(buf, "NaN"))
        return 1;
    if (!isdigit((unsigned char)buf[0]) && buf[0] != '-')
        return 0;
    strtod(buf, &e);
    return *e == '\0';
}

static const char *v_comment(struct v_state *v, const char *p)
{
    int help = strncmp(p, "# HELP ", 7) == 0, type = strncmp(p, "# TYPE ", 7) == 0;
    struct v_family *f;
    size_t n;

    if (!help && !type)
        return "comment is neither HELP nor TYPE";
    p += 7;
    if (!(n = v_name(p, 0)) || p[n] != ' ' || !(f = v_family(v, p, n)))
        return "bad family name";
    if (f->samples)
        return "HELP/TYPE after the family's samples";
    if ((help && f->help++) || (type && f->type++))
        return "HELP or TYPE twice";
    if (v->cur && v->cur != f)
        v->cur->closed = 1; /* another family begins */
    v->cur = f;
    p += n + 1;
    if (type && strcmp(p, "counter") && strcmp(p, "gauge"))
        return "unknown type";
    if (help && (!*p || strchr(p, '\n')))
        return "empty HELP";
    for (const char *q = p; help && *q; q++)
        if (*q == '\\' && q[1] != '\\' && q[1] != 'n')
            return "bad escape in HELP";
        else if (*q == '\\')
            q++;
    return NULL;
}

/* Labels from p (just after '{'); returns the position after '}' or NULL. */
static const char *v_labels(const char *p)
{
    for (;;) {
        size_t n = v_name(p, 1);

        if (!n || p[n] != '=' || p[n + 1] != '"')
            return NULL;
        for (p += n + 2; *p != '"'; p++) {
            if (*p == '\0' || *p == '\n')
                return NULL;
            if (*p == '\\' && p[1] != '\\' && p[1] != '"' && p[1] != 'n')
                return NULL;
            if (*p == '\\')
                p++;
        }
        p++;
        if (*p == '}')
            return p + 1;
        if (*p != ',')
            return NULL;
        p++;
    }
}

static const char *v_sample(struct v_state *v, const char *line)
{
    size_t n = v_name(line, 0);
    const char *p = line + n, *sp;
    struct v_family *f;

    if (!n)
        return "bad metric name";
    if (*p == '{' && !(p = v_labels(p + 1)))
        return "bad labels";
    if (*p != ' ' || !v_value(p + 1, p + strlen(p)))
        return "bad value";
    if (!(f = v_family(v, line, n)) || !f->help || !f->type)
        return "sample without HELP and TYPE";
    if (f->closed)
        return "samples of a family not contiguous";
    if (v->cur && v->cur != f)
        v->cur->closed = 1;
    v->cur = f;
    f->samples++;
    sp = p;
    for (size_t i = 0; i < v->nseries; i++)
        if (strlen(v->series[i]) == (size_t)(sp - line) &&
            strncmp(v->series[i], line, (size_t)(sp - line)) == 0)
            return "series twice";
    if (v->nseries == V_MAX_SERIES)
        return "too many series for the validator";
    v->series[v->nseries++] = strndup(line, (size_t)(sp - line));
    return NULL;
}

static int validate_ex(const char *text, int verbose)
{
    struct v_state *v = calloc(1, sizeof(*v));
    const char *why = NULL;
    char *copy = strdup(text), *line = copy, *nl;

    if (*text && text[strlen(text) - 1] != '\n')
        why = "no newline at the end";
    while (!why && *line) {
        nl = strchr(line, '\n');
        *nl = '\0';
        why = *line == '#' ? v_comment(v, line) : v_sample(v, line);
        if (!why)
            line = nl + 1;
    }
    for (size_t i = 0; !why && i < v->nfam; i++)
        if (!v->fam[i].samples)
            why = "family without samples";
    if (why && verbose)
        fprintf(stderr, "validate: %s: [%s]\n", why, *line ? line : "(end)");
    for (size_t i = 0; i < v->nseries; i++)
        free(v->series[i]);
    free(v);
    free(copy);
    return why ? -1 : 0;
}

static int validate(const char *text)
{
    return validate_ex(text, 1);
}

/* The validator itself rejects what it should, or its passes above would mean nothing. */
static void test_validator(void)
{
    static const char *const bad[] = {
        "x_total 1\n",
        "# HELP a x\n# TYPE a gauge\na 1",
        "# HELP a x\n# TYPE a gauge\na 1\n# HELP b y\n# TYPE b gauge\nb 1\na 2\n",
        "# HELP a x\n# TYPE a gauge\na 1\n# HELP a x\n",
        "# HELP a x\n# TYPE a gauge\na{d=\"\\q\"} 1\n",
        "# HELP a x\n# TYPE a gauge\na{d=\"v\"} 1\na{d=\"v\"} 2\n",
        "# HELP a x\n# TYPE a gauge\na{d=\"v\",} 1\n",
        "# HELP a x\n# TYPE a gauge\na 1,5\n",
        "# HELP a x\n# TYPE a summary\na 1\n",
        "# HELP a x\n# TYPE a gauge\n",
    };
    const char *good = "# HELP a x \\\\ y\n# TYPE a gauge\na{d=\"\\\"\\n\\\\\",e=\"\"} -1.5e+20\n"
                       "# TYPE b counter\n# HELP b z\nb NaN\n";

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        CHECK_INT(validate_ex(bad[i], 0), -1);
    CHECK_INT(validate(good), 0);
}

/* Each family of `names` has its HELP and TYPE exactly once and before its first sample. */
static void check_headers(const char *text, const char *const *names, size_t n)
{
    char help[160], type[160], sample[160];

    for (size_t i = 0; i < n; i++) {
        snprintf(help, sizeof(help), "# HELP %s ", names[i]);
        snprintf(type, sizeof(type), "# TYPE %s ", names[i]);
        snprintf(sample, sizeof(sample), "\n%s", names[i]);
        CHECK_INT(count_prefix(text, help), 1);
        CHECK_INT(count_prefix(text, type), 1);
        CHECK(strstr(text, help) && strstr(text, sample) &&
              strstr(text, help) < strstr(text, type) && strstr(text, type) < strstr(text, sample));
    }
}

static void test_disk(void)
{
    struct metrics_self self = mk_self();
    struct tick *t = mk_tick();
    struct tick_row *r;
    char *s;

    r = add_row(t, OBJ_DISK, "vda");
    set(r, DISK_RD_IOS, 100);
    set(r, DISK_RD_MERGES, 7);
    set(r, DISK_RD_SECTORS, 2048);
    set(r, DISK_RD_MS, 1500);
    set(r, DISK_WR_IOS, 200);
    set(r, DISK_WR_MERGES, 0);
    set(r, DISK_WR_SECTORS, 4096);
    set(r, DISK_WR_MS, 4000);
    set(r, DISK_IN_FLIGHT, 3);
    set(r, DISK_IO_MS, 12345);
    set(r, DISK_QUEUE_MS, 7);
    /* vdb: no write sectors read this tick. */
    r = add_row(t, OBJ_DISK, "vdb");
    set_all(r, DISK_NFIELDS, 1);
    r->raw_mask &= ~(1ull << DISK_WR_SECTORS);
    /* The collector's _Total: skipped by name even if it had raw values. */
    r = add_row(t, OBJ_DISK, "_Total");
    set_all(r, DISK_NFIELDS, 1000);

    s = render(t, &self);
    CHECK(has_line(s, "perflog_disk_reads_completed_total{device=\"vda\"} 100"));
    CHECK(has_line(s, "perflog_disk_reads_merged_total{device=\"vda\"} 7"));
    CHECK(has_line(s, "perflog_disk_read_bytes_total{device=\"vda\"} 1048576"));
    CHECK(has_line(s, "perflog_disk_read_time_seconds_total{device=\"vda\"} 1.5"));
    CHECK(has_line(s, "perflog_disk_writes_completed_total{device=\"vda\"} 200"));
    CHECK(has_line(s, "perflog_disk_writes_merged_total{device=\"vda\"} 0"));
    CHECK(has_line(s, "perflog_disk_written_bytes_total{device=\"vda\"} 2097152"));
    CHECK(has_line(s, "perflog_disk_write_time_seconds_total{device=\"vda\"} 4"));
    CHECK(has_line(s, "perflog_disk_io_now{device=\"vda\"} 3"));
    CHECK(has_line(s, "perflog_disk_io_time_seconds_total{device=\"vda\"} 12.345"));
    CHECK(has_line(s, "perflog_disk_io_time_weighted_seconds_total{device=\"vda\"} 0.007"));
    CHECK(has_line(s, "# TYPE perflog_disk_io_now gauge"));
    CHECK(has_line(s, "# TYPE perflog_disk_read_bytes_total counter"));
    /* raw_mask: vdb has every sample but the written bytes. */
    CHECK(has_line(s, "perflog_disk_read_bytes_total{device=\"vdb\"} 1536"));
    CHECK_INT(count_prefix(s, "perflog_disk_written_bytes_total{device=\"vdb\"}"), 0);
    CHECK_INT(count_prefix(s, "perflog_disk_written_bytes_total"), 1);
    CHECK_INT(count_prefix(s, "perflog_disk_reads_completed_total"), 2);
    CHECK(strstr(s, "_Total") == NULL);
    CHECK_INT(count_prefix(s, "perflog_disk_"), 2 * 11 - 1);
    /* No other object in the tick: their families are left out, HELP and TYPE included. */
    CHECK(strstr(s, "perflog_cpu") == NULL);
    CHECK(strstr(s, "perflog_network") == NULL);
    CHECK(strstr(s, "perflog_memory") == NULL);
    CHECK(strstr(s, "perflog_tcp") == NULL);
    CHECK_INT(validate(s), 0);
    free(s);

    /* A family whose bit no row has disappears entirely. */
    for (size_t i = 0; i < t->obj[OBJ_DISK].n; i++)
        t->obj[OBJ_DISK].rows[i].raw_mask &= ~(1ull << DISK_IN_FLIGHT);
    s = render(t, &self);
    CHECK(strstr(s, "perflog_disk_io_now") == NULL);
    CHECK_INT(validate(s), 0);
    free(s);
    tick_free(t);
}

static void test_big_numbers(void)
{
    struct metrics_self self = mk_self();
    struct tick *t = mk_tick();
    struct tick_row *r = add_row(t, OBJ_DISK, "sda");
    char line[160], *s, *p;
    double x;

    /* Past 2^53 the product is still printed exactly. */
    set(r, DISK_RD_SECTORS, (1ull << 53) + 1);
    snprintf(line, sizeof(line), "perflog_disk_read_bytes_total{device=\"sda\"} %" PRIu64,
             (uint64_t)((1ull << 53) + 1) * 512);
    /* A product past 2^64 falls back to a double, never a wrapped integer. */
    set(r, DISK_WR_SECTORS, UINT64_MAX / 256);
    set(r, DISK_IO_MS, UINT64_MAX);
    s = render(t, &self);
    CHECK(has_line(s, line));
    p = strstr(s, "perflog_disk_written_bytes_total{device=\"sda\"} ");
    CHECK(p != NULL);
    if (p) {
        x = strtod(strchr(p, '}') + 2, NULL);
        CHECK_DBL(x / ((double)(UINT64_MAX / 256) * 512.0), 1.0, 1e-15);
    }
    CHECK(has_line(s, "perflog_disk_io_time_seconds_total{device=\"sda\"} 18446744073709551.615"));
    CHECK_INT(validate(s), 0);
    free(s);
    tick_free(t);
}

static void test_cpu(void)
{
    static const char *const modes[] = {"user",   "nice", "system",  "idle",
                                        "iowait", "irq",  "softirq", "steal"};
    struct metrics_self self = mk_self();
    struct tick *t = mk_tick();
    struct tick_row *r;
    char line[160], *s;

    r = add_row(t, OBJ_PROCESSOR, "_Total"); /* /proc/stat's "cpu" line, raw values and all */
    set_all(r, CPU_NFIELDS, 5000);
    r = add_row(t, OBJ_PROCESSOR, "0");
    set_all(r, CPU_NFIELDS, 0);
    set(r, CPU_USER, 12345);
    set(r, CPU_IDLE, 100);
    r = add_row(t, OBJ_PROCESSOR, "1");
    set_all(r, CPU_NFIELDS, 0);
    set(r, CPU_SYSTEM, 7);
    r->raw_mask &= ~(1ull << CPU_STEAL);

    s = render(t, &self);
    CHECK(has_line(s, "# TYPE perflog_cpu_seconds_total counter"));
    CHECK(has_line(s, "perflog_cpu_seconds_total{cpu=\"0\",mode=\"user\"} 123.45"));
    CHECK(has_line(s, "perflog_cpu_seconds_total{cpu=\"0\",mode=\"idle\"} 1"));
    CHECK(has_line(s, "perflog_cpu_seconds_total{cpu=\"0\",mode=\"nice\"} 0.01"));
    CHECK(has_line(s, "perflog_cpu_seconds_total{cpu=\"1\",mode=\"system\"} 0.07"));
    CHECK(has_line(s, "perflog_cpu_seconds_total{cpu=\"1\",mode=\"steal\"} 0.07") == 0);
    CHECK_INT(count_prefix(s, "perflog_cpu_seconds_total{cpu=\"1\""), 7);
    for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
        snprintf(line, sizeof(line), "perflog_cpu_seconds_total{cpu=\"0\",mode=\"%s\"}", modes[i]);
        CHECK_INT(count_prefix(s, line), 1);
    }
    CHECK_INT(count_prefix(s, "perflog_cpu_seconds_total"), 15);
    CHECK_INT(count_prefix(s, "# HELP perflog_cpu_seconds_total "), 1);
    CHECK(strstr(s, "_Total") == NULL);
    CHECK_INT(validate(s), 0);
    free(s);

    /* USER_HZ that is not a power of ten (alpha: 1024) goes through a double. */
    self.clk_tck = 1024;
    s = render(t, &self);
    CHECK(has_line(s, "perflog_cpu_seconds_total{cpu=\"0\",mode=\"idle\"} 0.09765625"));
    CHECK_INT(validate(s), 0);
    free(s);

    /* Without USER_HZ jiffies cannot be turned into seconds: no CPU family at all. */
    self.clk_tck = 0;
    s = render(t, &self);
    CHECK(strstr(s, "perflog_cpu") == NULL);
    CHECK_INT(validate(s), 0);
    free(s);
    tick_free(t);
}

static void test_net_escaping(void)
{
    struct metrics_self self = mk_self();
    struct tick *t = mk_tick();
    struct tick_row *r;
    char *s;

    r = add_row(t, OBJ_NET, "eth0");
    set_all(r, NET_NFIELDS, 10);
    set(r, NET_SPEED_MBPS, 1000);
    set(r, NET_MTU, 1500);
    r = add_row(t, OBJ_NET, "a\"b\\c\nd");
    set(r, NET_RX_BYTES, 7);
    r = add_row(t, OBJ_NET, "bad\xff\xc0utf8\xe2\x82\xac"); /* two bad bytes, then a euro sign */
    set(r, NET_TX_BYTES, 9);
    r = add_row(t, OBJ_NET, "_Total");
    set_all(r, NET_NFIELDS, 1);

    s = render(t, &self);
    CHECK(has_line(s, "perflog_network_receive_bytes_total{device=\"a\\\"b\\\\c\\nd\"} 7"));
    CHECK(has_line(s, "perflog_network_transmit_bytes_total{device=\"bad\xef\xbf\xbd\xef\xbf\xbd"
                      "utf8\xe2\x82\xac\"} 9"));
    CHECK(has_line(s, "perflog_network_receive_bytes_total{device=\"eth0\"} 10"));
    CHECK(has_line(s, "perflog_network_receive_packets_total{device=\"eth0\"} 11"));
    CHECK(has_line(s, "perflog_network_receive_errs_total{device=\"eth0\"} 12"));
    CHECK(has_line(s, "perflog_network_receive_drop_total{device=\"eth0\"} 13"));
    CHECK(has_line(s, "perflog_network_transmit_bytes_total{device=\"eth0\"} 14"));
    CHECK(has_line(s, "perflog_network_transmit_packets_total{device=\"eth0\"} 15"));
    CHECK(has_line(s, "perflog_network_transmit_errs_total{device=\"eth0\"} 16"));
    CHECK(has_line(s, "perflog_network_transmit_drop_total{device=\"eth0\"} 17"));
    CHECK(has_line(s, "perflog_network_speed_bytes{device=\"eth0\"} 125000000"));
    CHECK(has_line(s, "perflog_network_mtu_bytes{device=\"eth0\"} 1500"));
    CHECK(has_line(s, "# TYPE perflog_network_receive_errs_total counter"));
    CHECK(has_line(s, "# TYPE perflog_network_speed_bytes gauge"));
    CHECK(has_line(s, "# TYPE perflog_network_mtu_bytes gauge"));
    CHECK(strstr(s, "_Total") == NULL);
    CHECK_INT(validate(s), 0);
    free(s);
    tick_free(t);
}

static void test_single(void)
{
    static const char *const mem[] = {
        "perflog_memory_available_bytes 1073741824",
        "perflog_memory_cached_bytes 1024",
        "perflog_memory_buffers_bytes 2048",
        "perflog_memory_dirty_bytes 3072",
        "perflog_memory_writeback_bytes 4096",
        "perflog_memory_dirtied_bytes_total 5120",
        "perflog_memory_written_back_bytes_total 6144",
        "perflog_memory_page_in_bytes_total 7168",
        "perflog_memory_page_out_bytes_total 8192",
        "perflog_memory_page_faults_total 9",
        "perflog_memory_major_page_faults_total 10",
        "perflog_tcp_segments_received_total 100",
        "perflog_tcp_segments_sent_total 101",
        "perflog_tcp_segments_retransmitted_total 102",
        "perflog_tcp_connections_established 103",
    };
    struct metrics_self self = mk_self();
    struct tick *t = mk_tick();
    struct tick_row *r;
    char *s;

    r = add_row(t, OBJ_MEMORY, "");
    set_all(r, MEM_NFIELDS, 0);
    set(r, MEM_AVAILABLE_KB, 1048576);
    for (unsigned f = MEM_CACHED_KB; f <= MEM_PGPGOUT_KB; f++)
        set(r, f, f);
    r = add_row(t, OBJ_TCP, "");
    set_all(r, TCP_NFIELDS, 100);
    s = render(t, &self);
    for (size_t i = 0; i < sizeof(mem) / sizeof(mem[0]); i++)
        CHECK(has_line(s, mem[i]));
    for (const char *p = strstr(s, "\nperflog_memory_"); p; p = strstr(p + 1, "\nperflog_memory_"))
        CHECK(strcspn(p + 1, "{\n") == strcspn(p + 1, "\n"));
    for (const char *p = strstr(s, "\nperflog_tcp_"); p; p = strstr(p + 1, "\nperflog_tcp_"))
        CHECK(strcspn(p + 1, "{\n") == strcspn(p + 1, "\n"));
    CHECK(has_line(s, "# TYPE perflog_memory_dirty_bytes gauge"));
    CHECK(has_line(s, "# TYPE perflog_memory_page_faults_total counter"));
    CHECK(has_line(s, "# TYPE perflog_tcp_connections_established gauge"));
    CHECK_INT(count_prefix(s, "perflog_memory_"), 11);
    CHECK_INT(count_prefix(s, "perflog_tcp_"), 4);
    CHECK_INT(validate(s), 0);
    free(s);

    /* A second row of a single-instance object must not repeat a series. */
    r = add_row(t, OBJ_TCP, "");
    set_all(r, TCP_NFIELDS, 200);
    s = render(t, &self);
    CHECK_INT(count_prefix(s, "perflog_tcp_"), 4);
    CHECK(has_line(s, "perflog_tcp_segments_received_total 100"));
    CHECK_INT(validate(s), 0);
    free(s);
    tick_free(t);
}

static const char *const self_names[] = {
    "perflog_build_info",
    "perflog_sampler_ticks_total",
    "perflog_sampler_missed_ticks_total",
    "perflog_dropped_ticks_total",
    "perflog_written_ticks_total",
    "perflog_write_failures_total",
    "perflog_queued_ticks",
    "perflog_start_time_seconds",
    "perflog_collect_duration_seconds",
};

static void test_self(void)
{
    struct metrics_self self = mk_self();
    struct sbuf b = {0};
    char *s;

    /* No tick yet: only the self metrics, without the optional two. */
    s = render(NULL, &self);
    CHECK(has_line(s, "perflog_build_info{version=\"0.1.0\",host=\"web-1\"} 1"));
    CHECK(has_line(s, "# TYPE perflog_build_info gauge"));
    CHECK(has_line(s, "perflog_sampler_ticks_total 42"));
    CHECK(has_line(s, "perflog_sampler_missed_ticks_total 1"));
    CHECK(has_line(s, "perflog_dropped_ticks_total 2"));
    CHECK(has_line(s, "perflog_written_ticks_total 40"));
    CHECK(has_line(s, "perflog_write_failures_total 3"));
    CHECK(has_line(s, "perflog_queued_ticks 2"));
    CHECK(has_line(s, "perflog_start_time_seconds 1700000000"));
    CHECK(has_line(s, "perflog_collect_duration_seconds 0.001234567"));
    CHECK(has_line(s, "# TYPE perflog_sampler_ticks_total counter"));
    CHECK(has_line(s, "# TYPE perflog_queued_ticks gauge"));
    CHECK(has_line(s, "# TYPE perflog_start_time_seconds gauge"));
    CHECK(strstr(s, "perflog_database_size_bytes") == NULL);
    CHECK(strstr(s, "perflog_last_tick_timestamp_seconds") == NULL);
    check_headers(s, self_names, sizeof(self_names) / sizeof(self_names[0]));
    CHECK_INT(count_prefix(s, "perflog_"), 9);
    CHECK_INT(count_prefix(s, "# HELP "), 9);
    CHECK_INT(validate(s), 0);
    free(s);

    /* The optional ones, odd strings in build_info, and a negative time. */
    self.db_bytes = 0;
    self.last_tick_wall_ms = 1700000000123;
    self.start_wall_ms = -1500;
    self.version = "1.0 \"rc\"\\";
    self.host = NULL;
    s = render(NULL, &self);
    CHECK(has_line(s, "perflog_database_size_bytes 0"));
    CHECK(has_line(s, "perflog_last_tick_timestamp_seconds 1700000000.123"));
    CHECK(has_line(s, "perflog_start_time_seconds -1.5"));
    CHECK(has_line(s, "perflog_build_info{version=\"1.0 \\\"rc\\\"\\\\\",host=\"\"} 1"));
    CHECK_INT(validate(s), 0);
    free(s);

    /* metrics_render appends. */
    sbuf_printf(&b, "# HELP x_total an existing family\n# TYPE x_total counter\nx_total 1\n");
    CHECK_INT(metrics_render(NULL, &self, &b), 0);
    s = sbuf_take(&b);
    CHECK(strncmp(s, "# HELP x_total an existing family\n", 34) == 0);
    CHECK(has_line(s, "perflog_sampler_ticks_total 42"));
    CHECK_INT(validate(s), 0);
    free(s);
}

/* Several disks (nvme0n1, dm-0), interfaces (lo, eth0, a weird name), 2 CPUs, memory, TCP. */
static struct tick *mk_realistic(void)
{
    static const char *const disks[] = {"vda", "nvme0n1", "dm-0", "sdb"};
    static const char *const nets[] = {"lo", "eth0", "we\"ird\\if\nname\xff", "wlp3s0"};
    struct tick *t = mk_tick();
    struct tick_row *r;

    r = add_row(t, OBJ_PROCESSOR, "_Total");
    set_all(r, CPU_NFIELDS, 90000);
    for (int i = 0; i < 2; i++)
        set_all(add_row(t, OBJ_PROCESSOR, i ? "1" : "0"), CPU_NFIELDS, 45000 + 13 * (uint64_t)i);
    for (size_t i = 0; i < sizeof(disks) / sizeof(disks[0]); i++)
        set_all(add_row(t, OBJ_DISK, disks[i]), DISK_NFIELDS, 123456789 * (i + 1));
    set_all(add_row(t, OBJ_DISK, "_Total"), DISK_NFIELDS, 1);
    for (size_t i = 0; i < sizeof(nets) / sizeof(nets[0]); i++) {
        r = add_row(t, OBJ_NET, nets[i]);
        set_all(r, NET_NFIELDS, 987654321 * (i + 1));
        set(r, NET_SPEED_MBPS, 10000);
        set(r, NET_MTU, i ? 1500 : 65536);
        if (i == 0)
            r->raw_mask &= ~(1ull << NET_SPEED_MBPS); /* lo has no speed */
    }
    set_all(add_row(t, OBJ_MEMORY, ""), MEM_NFIELDS, 1ull << 40);
    set_all(add_row(t, OBJ_TCP, ""), TCP_NFIELDS, 5555);
    return t;
}

/* The reference parser, when it is installed (packaging/build-deps.txt lists it). */
static void promtool_check(const char *s)
{
    char path[] = "/tmp/perflog_metrics_XXXXXX", cmd[128];
    int fd, rc;

    if (access(PROMTOOL, X_OK) != 0) {
        fprintf(stderr, "%s not found: apt-get install prometheus\n", PROMTOOL);
        CHECK(!"promtool installed");
    } else if ((fd = mkstemp(path)) < 0) {
        CHECK(!"mkstemp");
    } else {
        CHECK_INT(write(fd, s, strlen(s)), (long long)strlen(s));
        close(fd);
        snprintf(cmd, sizeof(cmd), PROMTOOL " check metrics < %s", path);
        rc = system(cmd);
        CHECK(rc != -1 && WIFEXITED(rc) && WEXITSTATUS(rc) == 0);
        if (!(rc != -1 && WIFEXITED(rc) && WEXITSTATUS(rc) == 0))
            fprintf(stderr, "promtool rejected %s (kept)\n", path);
        else
            unlink(path);
    }
}

static void test_realistic(void)
{
    static const char *const families[] = {
        "perflog_cpu_seconds_total",
        "perflog_disk_reads_completed_total",
        "perflog_disk_reads_merged_total",
        "perflog_disk_read_bytes_total",
        "perflog_disk_read_time_seconds_total",
        "perflog_disk_writes_completed_total",
        "perflog_disk_writes_merged_total",
        "perflog_disk_written_bytes_total",
        "perflog_disk_write_time_seconds_total",
        "perflog_disk_io_now",
        "perflog_disk_io_time_seconds_total",
        "perflog_disk_io_time_weighted_seconds_total",
        "perflog_network_receive_bytes_total",
        "perflog_network_receive_packets_total",
        "perflog_network_receive_errs_total",
        "perflog_network_receive_drop_total",
        "perflog_network_transmit_bytes_total",
        "perflog_network_transmit_packets_total",
        "perflog_network_transmit_errs_total",
        "perflog_network_transmit_drop_total",
        "perflog_network_speed_bytes",
        "perflog_network_mtu_bytes",
        "perflog_memory_available_bytes",
        "perflog_memory_cached_bytes",
        "perflog_memory_buffers_bytes",
        "perflog_memory_dirty_bytes",
        "perflog_memory_writeback_bytes",
        "perflog_memory_dirtied_bytes_total",
        "perflog_memory_written_back_bytes_total",
        "perflog_memory_page_in_bytes_total",
        "perflog_memory_page_out_bytes_total",
        "perflog_memory_page_faults_total",
        "perflog_memory_major_page_faults_total",
        "perflog_tcp_segments_received_total",
        "perflog_tcp_segments_sent_total",
        "perflog_tcp_segments_retransmitted_total",
        "perflog_tcp_connections_established",
        "perflog_database_size_bytes",
        "perflog_last_tick_timestamp_seconds",
    };
    struct metrics_self self = mk_self();
    struct tick *t = mk_realistic();
    char *s;

    self.db_bytes = 123456789;
    self.last_tick_wall_ms = t->wall_ms;
    s = render(t, &self);
    CHECK_INT(validate(s), 0);
    check_headers(s, families, sizeof(families) / sizeof(families[0]));
    check_headers(s, self_names, sizeof(self_names) / sizeof(self_names[0]));
    CHECK_INT(count_prefix(s, "# TYPE "), (int)(sizeof(families) / sizeof(families[0]) +
                                                sizeof(self_names) / sizeof(self_names[0])));
    CHECK_INT(count_prefix(s, "perflog_cpu_seconds_total"), 16);
    CHECK_INT(count_prefix(s, "perflog_disk_"), 4 * 11);
    CHECK_INT(count_prefix(s, "perflog_network_"), 4 * 10 - 1);
    CHECK(has_line(s, "perflog_memory_available_bytes 1125899906842624"));
    CHECK(strstr(s, "_Total") == NULL);

    promtool_check(s);
    free(s);
    tick_free(t);
}

/* The extra PDH series of a Windows config: one gauge family, labels object, pdh_instance (when
 * the object has instances) and counter, escaped; a series without a value is left out. */
static void test_pdh_extras(void)
{
    struct raw_extra e[4] = {
        {.path = "\\System\\System Up Time", .value = 1183.5, .valid = 1},
        {.path = "\\LogicalDisk(C:)\\% Free Space", .value = 12.0, .valid = 0},
        {.path = "\\Network Adapter(Intel(R) \"Pro\")\\Bytes Total/sec",
         .value = 1.0 / 3.0,
         .valid = 1},
        {.path = "\\Memory\\Committed Bytes", .value = 4294967296.0, .valid = 1},
    };
    struct metrics_self self = mk_self();
    struct tick *t = mk_tick();
    char *s;

    CHECK_INT(tick_set_extras(t, e, 4, NULL), 0);
    s = render(t, &self);
    CHECK(has_line(s, "# TYPE perflog_pdh_value gauge"));
    CHECK(has_line(s, "perflog_pdh_value{object=\"System\",counter=\"System Up Time\"} 1183.5"));
    CHECK(has_line(s, "perflog_pdh_value{object=\"Network Adapter\",pdh_instance=\"Intel(R) "
                      "\\\"Pro\\\"\",counter=\"Bytes Total/sec\"} 0.3333333333333333"));
    CHECK(has_line(s, "perflog_pdh_value{object=\"Memory\",counter=\"Committed Bytes\"} "
                      "4294967296"));
    CHECK_INT(count_prefix(s, "perflog_pdh_value{"), 3); /* the gap is left out */
    CHECK_INT(count_prefix(s, "# TYPE perflog_pdh_value "), 1);
    CHECK_INT(validate(s), 0);
    promtool_check(s);
    free(s);
    tick_free(t);
}

int main(void)
{
    test_validator();
    test_disk();
    test_big_numbers();
    test_cpu();
    test_net_escaping();
    test_single();
    test_self();
    test_realistic();
    test_pdh_extras();
    return tl_done();
}
