/*
 * fmt.c - how the CLI shows times, durations, sizes and sample values. Pure apart from the clock
 * read of cli_now_ms and the time zone of localtime_r.
 */
#include "cli/cli.h"

#include <math.h>
#include <stdio.h>
#include <time.h>

char *cli_format_time(int64_t ms, int utc, int with_ms, char *buf, size_t cap)
{
    int64_t sec = ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000);
    int frac = (int)(ms - sec * 1000);
    time_t t = (time_t)sec;
    struct tm tm;
    char day[32];

    if (!(utc ? gmtime_r(&t, &tm) : localtime_r(&t, &tm)) ||
        strftime(day, sizeof(day), "%Y-%m-%d %H:%M:%S", &tm) == 0) {
        snprintf(buf, cap, "%lld ms", (long long)ms);
        return buf;
    }
    if (with_ms)
        snprintf(buf, cap, "%s.%03d", day, frac);
    else
        snprintf(buf, cap, "%s", day);
    return buf;
}

char *cli_format_duration(double s, char *buf, size_t cap)
{
    long long t = (long long)llround(s);

    if (!isfinite(s))
        snprintf(buf, cap, "-");
    else if (s < 60)
        snprintf(buf, cap, "%.1f s", s);
    else if (t < 3600)
        snprintf(buf, cap, "%lld min %02lld s", t / 60, t % 60);
    else if (t < 86400)
        snprintf(buf, cap, "%lld h %02lld min", t / 3600, t / 60 % 60);
    else
        snprintf(buf, cap, "%lld d %02lld h", t / 86400, t / 3600 % 24);
    return buf;
}

char *cli_format_bytes(double bytes, char *buf, size_t cap)
{
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
    double v = bytes;
    int u = -1;

    if (!isfinite(bytes)) {
        snprintf(buf, cap, "-");
        return buf;
    }
    while (fabs(v) >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    if (u < 0)
        snprintf(buf, cap, "%.0f B", bytes);
    else
        snprintf(buf, cap, "%.1f %s", v, units[u]);
    return buf;
}

char *cli_format_value(double v, char *buf, size_t cap)
{
    double a = fabs(v);

    if (isnan(v))
        snprintf(buf, cap, "-");
    else if (a < 1e15 && v == floor(v))
        snprintf(buf, cap, "%.0f", v == 0 ? 0.0 : v); /* no "-0" */
    else if (a >= 1000 && a < 1e15)
        snprintf(buf, cap, "%.1f", v);
    else
        snprintf(buf, cap, "%.6g", v);
    return buf;
}

int64_t cli_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

char *cli_format_rate(double bytes_per_s, char *buf, size_t cap)
{
    char b[32];

    if (isnan(bytes_per_s))
        snprintf(buf, cap, "-");
    else
        snprintf(buf, cap, "%s/s", cli_format_bytes(bytes_per_s, b, sizeof(b)));
    return buf;
}

char *cli_format_pct(double pct, char *buf, size_t cap)
{
    if (isnan(pct))
        snprintf(buf, cap, "-");
    else
        snprintf(buf, cap, "%.0f%%", pct);
    return buf;
}
