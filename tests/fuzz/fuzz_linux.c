/*
 * fuzz_linux.c - libFuzzer targets for the pure /proc and /sys parsers (linux_parse.h), one
 * executable per parser (and linux_netfs.h's): FUZZ_<name> selects it at build time
 * (tests/fuzz/CMakeLists.txt). Beyond "no crash, no UB, no leak", each checks what the header
 * promises for every input: only the documented errors, instance names terminated and within
 * COUNTER_NAME_MAX, present bits only for the object's fields, no more bad lines than lines, and
 * outputs untouched on -EINVAL.
 */
#include "collectors/linux/linux_netfs.h"
#include "collectors/linux/linux_parse.h"
#include "collectors/model/counters.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Each executable calls one of the fuzz_ functions below. */
#define UNUSED_IN_SOME __attribute__((unused))

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            __builtin_trap();                                                                      \
    } while (0)

static size_t count_lines(const char *s, size_t n)
{
    size_t lines = n > 0 && s[n - 1] != '\n';

    for (size_t i = 0; i < n; i++)
        lines += s[i] == '\n';
    return lines;
}

static void check_rows(const struct raw_object *o, enum object_id obj)
{
    uint64_t fields = counter_objects[obj].nfields;
    uint64_t mask = fields >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << fields) - 1;

    CHECK(o->n <= o->cap);
    for (size_t i = 0; i < o->n; i++) {
        CHECK(memchr(o->rows[i].name, '\0', COUNTER_NAME_MAX) != NULL);
        CHECK((o->rows[i].present & ~mask) == 0);
    }
}

static void check_status(const struct linux_parse_status *st, const char *s, size_t n)
{
    CHECK(st->bad_lines <= count_lines(s, n));
    CHECK((st->bad_lines == 0) == (st->first_bad == 0));
    CHECK(st->first_bad <= count_lines(s, n));
}

/* A row hook that keeps some rows, drops others, and stops the parse at the 200th call. */
struct hook_state {
    size_t calls;
};

UNUSED_IN_SOME static int hook(void *ctx, struct raw_row *row)
{
    struct hook_state *h = ctx;

    if (++h->calls == 200)
        return -E2BIG;
    CHECK(memchr(row->name, '\0', COUNTER_NAME_MAX) != NULL);
    return (row->name[0] & 1) == 0;
}

UNUSED_IN_SOME static void fuzz_object(const char *s, size_t n, enum object_id obj,
                                       int (*parse)(const char *, size_t, struct raw_object *,
                                                    struct linux_parse_status *))
{
    struct raw_object o = {0};
    struct linux_parse_status st = {0};
    int rc = parse(s, n, &o, &st);

    CHECK(rc == 0 || rc == -ENOMEM);
    check_rows(&o, obj);
    check_status(&st, s, n);
    free(o.rows);
}

UNUSED_IN_SOME static void fuzz_device(const char *s, size_t n, enum object_id obj,
                                       int (*parse)(const char *, size_t, struct raw_object *,
                                                    linux_parse_row_hook, void *,
                                                    struct linux_parse_status *))
{
    struct raw_object o = {0}, all = {0};
    struct linux_parse_status st = {0}, st_all = {0};
    struct hook_state h = {0};
    int rc = parse(s, n, &o, hook, &h, &st);

    CHECK(rc == 0 || rc == -ENOMEM || rc == -E2BIG);
    check_rows(&o, obj);
    check_status(&st, s, n);
    rc = parse(s, n, &all, NULL, NULL, &st_all);
    CHECK(rc == 0 || rc == -ENOMEM);
    check_rows(&all, obj);
    check_status(&st_all, s, n);
    CHECK(o.n <= all.n); /* the hook only drops */
    free(o.rows);
    free(all.rows);
}

UNUSED_IN_SOME static int vmstat_4k(const char *s, size_t n, struct raw_object *o,
                                    struct linux_parse_status *st)
{
    return linux_parse_vmstat(s, n, 4096, o, st);
}

UNUSED_IN_SOME static void fuzz_vmstat(const char *s, size_t n)
{
    struct raw_object o = {0};
    struct linux_parse_status st = {0};

    fuzz_object(s, n, OBJ_MEMORY, vmstat_4k);
    CHECK(linux_parse_vmstat(s, n, 1000, &o, &st) == -EINVAL); /* not a multiple of 1024 */
    free(o.rows);
}

/* All three files' layouts, and an unknown resource refused without touching the output. */
UNUSED_IN_SOME static void fuzz_pressure(const char *s, size_t n)
{
    struct raw_object o = {0};
    struct linux_parse_status st = {0};

    for (int r = 0; r < PSI_NRESOURCES; r++) {
        int rc = parse_pressure(s, n, (enum psi_resource)r, &o, &st);

        CHECK(rc == 0 || rc == -ENOMEM);
        check_rows(&o, OBJ_PRESSURE);
        CHECK(o.n <= 1);
    }
    CHECK(parse_pressure(s, n, PSI_NRESOURCES, &o, &st) == -EINVAL);
    free(o.rows);
}

UNUSED_IN_SOME static void fuzz_pid(const char *s, size_t n)
{
    struct pid_stat ps, before;
    struct raw_row row = {0};
    struct linux_parse_status st = {0};
    int rc;

    memset(&ps, 0x5a, sizeof(ps));
    before = ps;
    rc = linux_parse_pid_stat(s, n, &ps);
    CHECK(rc == 0 || rc == -EINVAL);
    if (rc == 0)
        CHECK(memchr(ps.comm, '\0', sizeof(ps.comm)) != NULL);
    else
        CHECK(memcmp(&ps, &before, sizeof(ps)) == 0);
    CHECK(linux_parse_pid_io(s, n, &row, &st) == 0);
    CHECK((row.present & ~((UINT64_C(1) << PROC_NFIELDS) - 1)) == 0);
    check_status(&st, s, n);
}

UNUSED_IN_SOME static void fuzz_sysfs(const char *s, size_t n)
{
    int64_t v = INT64_C(-424242);
    int rc = linux_parse_sysfs_int(s, n, &v);

    CHECK(rc == 0 || (rc == -EINVAL && v == INT64_C(-424242)));
}

/* The network file system parsers (linux_netfs.h) return a count of shares or mounts: no more
 * rows than that, each named (not "") uniquely, since storage keys a tick's rows by name, and in
 * _Total. */
UNUSED_IN_SOME static void fuzz_netfs(const char *s, size_t n, enum object_id obj,
                                      int (*parse)(const char *, size_t, struct raw_object *,
                                                   struct linux_parse_status *))
{
    struct raw_object o = {0};
    struct linux_parse_status st = {0};
    int rc = parse(s, n, &o, &st);

    CHECK(rc >= 0 || rc == -ENOMEM);
    CHECK(rc < 0 || o.n <= (size_t)rc);
    check_rows(&o, obj);
    check_status(&st, s, n);
    for (size_t i = 0; i < o.n; i++) {
        CHECK(o.rows[i].name[0] != '\0' && o.rows[i].flags == RAW_IN_TOTAL);
        for (size_t j = 0; j < i; j++)
            CHECK(strcmp(o.rows[i].name, o.rows[j].name) != 0);
    }
    free(o.rows);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* a copy of exactly size bytes, so ASan sees any read past the end */
    char *s = malloc(size ? size : 1);

    if (!s)
        return 0;
    memcpy(s, data, size);
#if defined(FUZZ_proc_stat)
    fuzz_object(s, size, OBJ_PROCESSOR, linux_parse_proc_stat);
#elif defined(FUZZ_diskstats)
    fuzz_device(s, size, OBJ_DISK, linux_parse_diskstats);
#elif defined(FUZZ_net_dev)
    fuzz_device(s, size, OBJ_NET, linux_parse_net_dev);
#elif defined(FUZZ_meminfo)
    fuzz_object(s, size, OBJ_MEMORY, linux_parse_meminfo);
#elif defined(FUZZ_vmstat)
    fuzz_vmstat(s, size);
#elif defined(FUZZ_net_snmp)
    fuzz_object(s, size, OBJ_TCP, linux_parse_net_snmp);
#elif defined(FUZZ_netstat)
    fuzz_object(s, size, OBJ_TCP, parse_net_netstat);
#elif defined(FUZZ_softirqs)
    fuzz_object(s, size, OBJ_PROCESSOR, parse_softirqs);
#elif defined(FUZZ_softnet)
    fuzz_object(s, size, OBJ_PROCESSOR, parse_softnet_stat);
#elif defined(FUZZ_pressure)
    fuzz_pressure(s, size);
#elif defined(FUZZ_pid)
    fuzz_pid(s, size);
#elif defined(FUZZ_sysfs)
    fuzz_sysfs(s, size);
#elif defined(FUZZ_cifs_stats)
    fuzz_netfs(s, size, OBJ_SMB, netfs_parse_cifs_stats);
#elif defined(FUZZ_mountstats)
    fuzz_netfs(s, size, OBJ_NFS, netfs_parse_mountstats);
#else
#error "define FUZZ_<parser> (tests/fuzz/CMakeLists.txt)"
#endif
    free(s);
    return 0;
}
