/*
 * fuzz_claims.c - libFuzzer target for claims.c. The input is a tool's output of `size` bytes,
 * not NUL-terminated (ASan catches a read past it). Checks that claims_parse returns 0 or 1,
 * leaves *out untouched on 0, and on 1 names a known tool in a NUL-terminated name with figures
 * that are either "not printed" (< 0) or finite; and that a NUL-terminated copy of the same bytes
 * gives the same claim (the length, not a NUL, ends the text). Seeds: tests/fixtures/claims.
 */
#include "daemon/runs/claims.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int known(const char *name)
{
    static const char *const names[] = {"robocopy", "dd",      "rsync",    "fio",
                                        "pv",       "diskspd", "smbclient"};

    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strcmp(name, names[i]) == 0)
            return 1;
    return 0;
}

static int figure_ok(double x)
{
    return isfinite(x) && (x >= 0 || x == -1.0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct tool_claim c, d, before;
    char *copy;
    int rc;

    memset(&c, 0x5a, sizeof(c));
    before = c;
    rc = claims_parse((const char *)data, size, &c);
    if (rc != 0 && rc != 1)
        __builtin_trap();
    if (rc == 0) {
        if (memcmp(&c, &before, sizeof(c)) != 0)
            __builtin_trap();
        return 0;
    }
    if (!memchr(c.name, '\0', sizeof(c.name)) || !known(c.name))
        __builtin_trap();
    if (!figure_ok(c.claimed_bytes_per_s) || !figure_ok(c.claimed_seconds) || c.claimed_bytes < -1)
        __builtin_trap();

    copy = malloc(size + 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    copy[size] = '\0';
    if (claims_parse(copy, size, &d) != 1 || strcmp(c.name, d.name) != 0 ||
        c.claimed_bytes != d.claimed_bytes ||
        memcmp(&c.claimed_bytes_per_s, &d.claimed_bytes_per_s, sizeof(double)) != 0 ||
        memcmp(&c.claimed_seconds, &d.claimed_seconds, sizeof(double)) != 0)
        __builtin_trap();
    free(copy);
    return 0;
}
