/*
 * cli_time.c - the --from/--to arguments of the client: read in the client's own time zone (TZ,
 * else the system's), so `perflog data --from 19:50` means 19:50 where the user sits whatever zone
 * the daemon runs in, and the server gets an absolute time. Errors show times as ISO 8601 with
 * the offset of the zone the user typed them in (that of an RFC 3339 time, else the command's:
 * local, or UTC with --utc / --tz utc).
 */
#include "cli.h"
#include "csv_zone.h"
#include "timeparse.h"
#include "tz.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* local = UTC + offset; csv_local_zone knows the zone on every platform. */
static int local_offset_min(int64_t utc_ms, void *arg)
{
    struct csv_local z;
    int64_t s = utc_ms >= 0 ? utc_ms / 1000 : -((-utc_ms + 999) / 1000);

    (void)arg;
    return csv_local_zone((time_t)s, &z) == 0 ? -z.bias_min : 0;
}

static int utc_offset_min(int64_t utc_ms, void *arg)
{
    (void)utc_ms;
    (void)arg;
    return 0;
}

/* The zone the command reads and writes times in: a named one, else UTC or the client's. */
struct cmd_zone {
    int utc;
    const struct tz_zone *tz;
};

static int cmd_offset_min(int64_t utc_ms, void *arg)
{
    const struct cmd_zone *z = arg;
    int64_t s = utc_ms >= 0 ? utc_ms / 1000 : -((-utc_ms + 999) / 1000);

    if (z->tz)
        return (int)(tz_offset_at(z->tz, s, NULL) / 60);
    return z->utc ? utc_offset_min(utc_ms, NULL) : local_offset_min(utc_ms, NULL);
}

static char *format_in(int64_t ms, const struct cmd_zone *z, char *buf, size_t cap)
{
    return tp_format_offset(ms, cmd_offset_min(ms, (void *)z), z->utc && !z->tz, buf, cap);
}

char *cli_format_iso(int64_t ms, int utc, char *buf, size_t cap)
{
    struct cmd_zone z = {utc, NULL};

    return format_in(ms, &z, buf, cap);
}

static int parse_in(const char *cmd, const char *opt, const char *s, int64_t now_ms,
                    const struct cmd_zone *cz, int64_t *out_ms)
{
    struct tp_zone zone = {cmd_offset_min, (void *)cz};
    int rc = tp_parse_time_local(s, strlen(s), now_ms, &zone, out_ms);

    if (rc == 0)
        return 0;
    fprintf(stderr,
            "perflog %s: %s: cannot read '%s' as a time (%s); e.g. '2026-12-01 19:55', 19:50, "
            "today, 'yesterday 19:00' (%s), 2026-12-01T18:55:00Z, -10m, now-1h, 1795974000\n",
            cmd, opt, s, rc == -ERANGE ? "out of range" : "not a time form",
            cz->tz    ? tz_name(cz->tz)
            : cz->utc ? "UTC"
                      : "local time");
    return -1;
}

int cli_parse_time(const char *cmd, const char *opt, const char *s, int64_t now_ms, int utc,
                   int64_t *out_ms)
{
    struct cmd_zone z = {utc, NULL};

    return parse_in(cmd, opt, s, now_ms, &z, out_ms);
}

/* ms in ISO 8601 in the zone the user typed: the offset of an RFC 3339 time ("Z", "+01:00"),
 * else the command's zone (local, or UTC when utc). */
static char *format_as_typed(int64_t ms, const char *typed, const struct cmd_zone *z, char *buf,
                             size_t cap)
{
    size_t n = strlen(typed);
    const char *o = n >= 6 ? typed + n - 6 : NULL;

    if (n > 19 && typed[4] == '-' && (typed[n - 1] == 'Z' || typed[n - 1] == 'z'))
        return tp_format_offset(ms, 0, 1, buf, cap);
    if (n > 19 && typed[4] == '-' && o && (o[0] == '+' || o[0] == '-') && o[3] == ':') {
        int off = ((o[1] - '0') * 10 + (o[2] - '0')) * 60 + (o[4] - '0') * 10 + (o[5] - '0');
        return tp_format_offset(ms, o[0] == '-' ? -off : off, 0, buf, cap);
    }
    return format_in(ms, z, buf, cap);
}

int cli_time_range_in(const char *cmd, const char *from, const char *to, int utc,
                      const struct tz_zone *zone, int64_t *from_ms, int64_t *to_ms)
{
    struct cmd_zone z = {utc, zone};
    int64_t now = cli_now_ms();
    char a[40], b[40];

    if (parse_in(cmd, "--from", from, now, &z, from_ms) < 0 ||
        parse_in(cmd, "--to", to, now, &z, to_ms) < 0)
        return CLI_EXIT_USAGE;
    if (*from_ms > *to_ms) {
        fprintf(stderr, "perflog %s: --from %s (%s) is after --to %s (%s)\n", cmd, from,
                format_as_typed(*from_ms, from, &z, a, sizeof(a)), to,
                format_as_typed(*to_ms, to, &z, b, sizeof(b)));
        return CLI_EXIT_USAGE;
    }
    return 0;
}

int cli_time_range(const char *cmd, const char *from, const char *to, int utc, int64_t *from_ms,
                   int64_t *to_ms)
{
    return cli_time_range_in(cmd, from, to, utc, NULL, from_ms, to_ms);
}

int cli_query_time(char **target, const char *name, const char *typed, int64_t ms)
{
    char buf[32];

    /* "now" and offsets mean the same to the server; anything else is sent as the instant */
    if (typed[0] == 'n' || typed[0] == '+' || typed[0] == '-')
        return cli_query_add(target, name, typed);
    snprintf(buf, sizeof(buf), "%lld.%03d", (long long)(ms / 1000), (int)(ms % 1000));
    return cli_query_add(target, name, buf);
}
