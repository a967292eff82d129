/*
 * fuzz_netfs.c - libFuzzer targets for the network file system parsers (linux_netfs.h):
 * FUZZ_cifs_stats or FUZZ_mountstats selects one at build time (tests/fuzz/CMakeLists.txt). Beyond
 * "no crash, no UB, no leak", each checks what the header promises for every input: a count or
 * -ENOMEM, no more rows than the shares or mounts counted, each row's name terminated and unique
 * (storage keys a tick's rows by name), present bits only for the object's fields, every row in
 * _Total, no more bad lines than lines.
 */
#include "counters.h"
#include "linux_netfs.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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

static void fuzz_one(const char *s, size_t n, enum object_id obj,
                     int (*parse)(const char *, size_t, struct raw_object *, struct parse_status *))
{
    uint64_t mask = (UINT64_C(1) << counter_objects[obj].nfields) - 1;
    struct raw_object o = {0};
    struct parse_status st = {0, 0};
    int rc = parse(s, n, &o, &st);

    CHECK(rc >= 0 || rc == -ENOMEM);
    if (rc >= 0)
        CHECK(o.n <= (size_t)rc);
    for (size_t i = 0; i < o.n; i++) {
        CHECK(memchr(o.rows[i].name, '\0', COUNTER_NAME_MAX) != NULL);
        CHECK(o.rows[i].name[0] != '\0');
        CHECK((o.rows[i].present & ~mask) == 0);
        CHECK(o.rows[i].flags == RAW_IN_TOTAL);
        for (size_t j = 0; j < i; j++)
            CHECK(strcmp(o.rows[i].name, o.rows[j].name) != 0);
    }
    CHECK(st.bad_lines <= count_lines(s, n));
    CHECK((st.bad_lines == 0) == (st.first_bad == 0));
    free(o.rows);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;

#if defined(FUZZ_cifs_stats)
    fuzz_one(s, size, OBJ_SMB, netfs_parse_cifs_stats);
#elif defined(FUZZ_mountstats)
    fuzz_one(s, size, OBJ_NFS, netfs_parse_mountstats);
#else
#error "define FUZZ_cifs_stats or FUZZ_mountstats"
#endif
    return 0;
}
