/*
 * fuzz_timeparse.c - libFuzzer target for timeparse.c. Beyond "no crash, no UB", it checks what
 * must hold for every input: only documented errors, *out untouched on failure, results inside
 * 1970..9999, durations inside (0, 10 years], and that a parsed time formats to an RFC 3339 string
 * that parses back to the same millisecond. tp_parse_time_local, in zones with fixed offsets (also
 * absurd ones) and one whose offset changes, keeps the same promises.
 */
#include "collectors/model/timeparse.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#define MAX_MS       INT64_C(253402300799999)
#define DURATION_MAX (INT64_C(3653) * 86400000)
#define SENTINEL     INT64_C(-424242)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_time(const char *s, size_t len, int64_t now_ms)
{
    int64_t ms = SENTINEL, again = SENTINEL;
    char buf[32];
    int rc = tp_parse_time(s, len, now_ms, &ms);

    if (rc != 0) {
        if ((rc != -EINVAL && rc != -ERANGE) || ms != SENTINEL)
            __builtin_trap();
        return;
    }
    if (ms < 0 || ms > MAX_MS)
        __builtin_trap();
    tp_format_utc(ms, buf, sizeof(buf));
    if (strlen(buf) != 24)
        __builtin_trap();
    if (tp_parse_time(buf, strlen(buf), 0, &again) != 0 || again != ms)
        __builtin_trap();
}

static int fixed_offset(int64_t utc_ms, void *arg)
{
    (void)utc_ms;
    return *(const int *)arg;
}

/* +60 before an instant, +120 from it: a DST change. */
static int changing_offset(int64_t utc_ms, void *arg)
{
    (void)arg;
    return utc_ms < INT64_C(1782694800000) ? 60 : 120;
}

static void check_local(const char *s, size_t len, int64_t now_ms)
{
    static int offsets[] = {0, 60, -480, 330, 100000, -100000};
    int64_t ms;

    for (size_t i = 0; i <= sizeof(offsets) / sizeof(offsets[0]); i++) {
        struct tp_zone z = {fixed_offset, &offsets[i % 6]};
        int rc;

        if (i == sizeof(offsets) / sizeof(offsets[0]))
            z.offset_min = changing_offset;
        ms = SENTINEL;
        rc = tp_parse_time_local(s, len, now_ms, &z, &ms);
        if (rc != 0 && ((rc != -EINVAL && rc != -ERANGE) || ms != SENTINEL))
            __builtin_trap();
        if (rc == 0 && (ms < 0 || ms > MAX_MS))
            __builtin_trap();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const int64_t nows[] = {INT64_C(1795975200000), 0, MAX_MS, INT64_MIN, INT64_MAX, -1};
    const char *s = (const char *)data;
    int64_t ms = SENTINEL;
    int rc;

    for (size_t i = 0; i < sizeof(nows) / sizeof(nows[0]); i++) {
        check_time(s, size, nows[i]);
        check_local(s, size, nows[i]);
    }

    rc = tp_parse_duration(s, size, &ms);
    if (rc == 0 && (ms <= 0 || ms > DURATION_MAX))
        __builtin_trap();
    if (rc != 0 && ((rc != -EINVAL && rc != -ERANGE) || ms != SENTINEL))
        __builtin_trap();

    /* The formatter on any 8 bytes as a time, even far outside the parser's range. */
    if (size >= 8) {
        char buf[40];
        int64_t any;

        memcpy(&any, data, sizeof(any));
        tp_format_utc(any, buf, sizeof(buf));
        if (memchr(buf, '\0', sizeof(buf)) == NULL)
            __builtin_trap();
        tp_format_utc(any, buf, 1 + data[0] % 30);
    }
    return 0;
}
