/*
 * test_pattern.c - counter path patterns: the three parts, a \\HOST prefix, parentheses inside
 * instance names, the errors, case-insensitive globbing that stays fast on hostile patterns, and
 * the path formatter.
 */
#include "collectors/model/pattern.h"
#include "testlib.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>

static int pp(const char *s, struct pattern *p)
{
    const char *why = NULL;
    int rc = pattern_parse(s, strlen(s), p, &why);

    if (rc < 0)
        CHECK(why != NULL && why[0] != '\0');
    return rc;
}

/* pre + n 'x' + post, parsed. */
static int with_run(const char *pre, size_t n, const char *post, struct pattern *p,
                    const char **why)
{
    char buf[6000];
    size_t a = strlen(pre), b = strlen(post);

    memcpy(buf, pre, a);
    memset(buf + a, 'x', n);
    memcpy(buf + a + n, post, b);
    return pattern_parse(buf, a + n + b, p, why);
}

static void test_parse(void)
{
    struct pattern p;

    CHECK_INT(pp("\\Memory\\Available Bytes", &p), 0);
    CHECK_STR(p.host, "");
    CHECK_STR(p.object, "Memory");
    CHECK_INT(p.has_instance, 0);
    CHECK_STR(p.counter, "Available Bytes");

    CHECK_INT(pp("\\PhysicalDisk(*)\\Disk Bytes/sec", &p), 0);
    CHECK_STR(p.object, "PhysicalDisk");
    CHECK_INT(p.has_instance, 1);
    CHECK_STR(p.instance, "*");
    CHECK_STR(p.counter, "Disk Bytes/sec");

    CHECK_INT(pp("\\Processor(_Total)\\% * Time", &p), 0);
    CHECK_STR(p.instance, "_Total");
    CHECK_STR(p.counter, "% * Time");

    CHECK_INT(pp("\\\\HOST\\Memory\\*", &p), 0);
    CHECK_STR(p.host, "HOST");
    CHECK_STR(p.object, "Memory");
    CHECK_STR(p.counter, "*");
    CHECK_INT(pp("\\\\web-01.example.com\\Process(nginx)\\% Processor Time", &p), 0);
    CHECK_STR(p.host, "web-01.example.com");
    CHECK_STR(p.instance, "nginx");

    /* Parentheses inside instance names: the instance runs to the `)` ending the object part. */
    CHECK_INT(pp("\\Process(svchost(1234))\\Working Set", &p), 0);
    CHECK_STR(p.object, "Process");
    CHECK_STR(p.instance, "svchost(1234)");
    CHECK_INT(pp("\\Thread(a(b)c(d(e)))\\Context Switches/sec", &p), 0);
    CHECK_STR(p.instance, "a(b)c(d(e))");
    CHECK_INT(pp("\\Network Interface(Intel(R) Ethernet (2))\\Bytes Total/sec", &p), 0);
    CHECK_STR(p.object, "Network Interface");
    CHECK_STR(p.instance, "Intel(R) Ethernet (2)");
    /* A backslash inside the instance: the counter is still what follows the last one. */
    CHECK_INT(pp("\\LogicalDisk(C:\\)\\Free Megabytes", &p), 0);
    CHECK_STR(p.instance, "C:\\");
    CHECK_STR(p.counter, "Free Megabytes");
    /* Parentheses in the counter are the counter's. */
    CHECK_INT(pp("\\Memory\\Pool (Paged) Bytes", &p), 0);
    CHECK_STR(p.counter, "Pool (Paged) Bytes");
    /* UTF-8 is fine. */
    CHECK_INT(pp("\\Prozessor(_Total)\\Prozessorzeit (%) \xc3\xa4", &p), 0);

    /* Only len bytes are read. */
    CHECK_INT(pattern_parse("\\Memory\\Cached BytesXYZ", 20, &p, NULL), 0);
    CHECK_STR(p.counter, "Cached Bytes");
}

static void test_parse_errors(void)
{
    struct pattern p;
    const char *why = NULL;

    memset(&p, 0x5a, sizeof(p));
    CHECK_INT(pp("", &p), -EINVAL);
    CHECK_INT(pp("Memory\\Available Bytes", &p), -EINVAL); /* no leading backslash */
    CHECK_INT(pp("/Memory/Available Bytes", &p), -EINVAL);
    CHECK_INT(pp("\\", &p), -EINVAL);
    CHECK_INT(pp("\\Memory", &p), -EINVAL);
    CHECK_INT(pp("\\Memory\\", &p), -EINVAL);
    CHECK_INT(pp("\\\\Memory", &p), -EINVAL);
    CHECK_INT(pp("\\\\", &p), -EINVAL);
    CHECK_INT(pp("\\\\\\Memory\\X", &p), -EINVAL); /* empty host */
    CHECK_INT(pp("\\\\HOST\\Memory", &p), -EINVAL);
    CHECK_INT(pp("\\\\HOST\\", &p), -EINVAL);
    CHECK_INT(pp("\\\\HOST\\\\X", &p), -EINVAL);
    CHECK_INT(pp("\\\\Available Bytes", &p), -EINVAL);
    CHECK_INT(pp("\\(x)\\Counter", &p), -EINVAL);
    CHECK_INT(pp("\\\\HOST\\\\Memory\\X", &p), -EINVAL); /* empty part after the host */
    CHECK_INT(pp("\\Memory\\\\X", &p), -EINVAL);         /* empty part before the counter */
    CHECK_INT(pp("\\Mem\\ory\\X", &p), -EINVAL);         /* no backslash in objects */
    CHECK_INT(pp("\\Mem\\ory(x)\\X", &p), -EINVAL);
    CHECK_INT(pp("\\Process()\\Counter", &p), -EINVAL);
    CHECK_INT(pp("\\Process(\\Counter", &p), -EINVAL);
    CHECK_INT(pp("\\Process(a\\Counter", &p), -EINVAL);
    CHECK_INT(pp("\\Process)\\Counter", &p), -EINVAL);
    CHECK_INT(pp("\\Process(a))\\Counter", &p), -EINVAL);
    CHECK_INT(pp("\\Process((a)\\Counter", &p), -EINVAL);
    CHECK_INT(pp("\\Process(a)(b\\Counter", &p), -EINVAL);
    CHECK_INT(pp("\\Process(a)x\\Counter", &p), -EINVAL);
    CHECK_INT(pp("\\Process(a)(b)\\Counter", &p), -EINVAL); /* instance "a)(b" */
    CHECK_INT(pp("\\Pro)cess(a)\\Counter", &p), -EINVAL);
    CHECK_INT(pp("\\Memory\\Avail\tBytes", &p), -EINVAL);
    CHECK_INT(pp("\\Memory\\Avail\x7f", &p), -EINVAL);
    CHECK_INT(pattern_parse("\\Memory\\A\0B", 11, &p, NULL), -EINVAL);

    /* Parts of up to 127 bytes, not 128. */
    CHECK_INT(with_run("\\", 127, "\\C", &p, &why), 0);
    CHECK_INT(strlen(p.object), 127);
    CHECK_INT(with_run("\\", 128, "\\C", &p, &why), -ENAMETOOLONG);
    CHECK_STR(why, "object or instance name too long");
    CHECK_INT(with_run("\\O(", 127, ")\\C", &p, &why), 0);
    CHECK_INT(strlen(p.instance), 127);
    CHECK_INT(with_run("\\O(", 128, ")\\C", &p, &why), -ENAMETOOLONG);
    CHECK_INT(with_run("\\M\\", 127, "", &p, &why), 0);
    CHECK_INT(strlen(p.counter), 127);
    CHECK_INT(with_run("\\M\\", 128, "", &p, &why), -ENAMETOOLONG);
    CHECK_STR(why, "counter name too long");
    CHECK_INT(with_run("\\\\", 127, "\\M\\C", &p, &why), 0);
    CHECK_INT(strlen(p.host), 127);
    CHECK_INT(with_run("\\\\", 128, "\\M\\C", &p, &why), -ENAMETOOLONG);
    CHECK_STR(why, "host name too long");
    CHECK_INT(with_run("\\", 5000, "\\C", &p, &why), -ENAMETOOLONG);

    /* *out is untouched on failure. */
    memset(&p, 0x5a, sizeof(p));
    CHECK_INT(pp("\\Process(\\Counter", &p), -EINVAL);
    CHECK_INT((unsigned char)p.object[0], 0x5a);
    CHECK_INT((unsigned char)p.host[0], 0x5a);
}

static void test_glob(void)
{
    char *as;
    clock_t t0;
    double secs;

    CHECK_INT(pattern_glob("", ""), 1);
    CHECK_INT(pattern_glob("", "a"), 0);
    CHECK_INT(pattern_glob("*", ""), 1);
    CHECK_INT(pattern_glob("**", ""), 1);
    CHECK_INT(pattern_glob("?", ""), 0);
    CHECK_INT(pattern_glob("?", "a"), 1);
    CHECK_INT(pattern_glob("??", "a"), 0);
    CHECK_INT(pattern_glob("*", "anything at all"), 1);
    CHECK_INT(pattern_glob("abc", "ABC"), 1);
    CHECK_INT(pattern_glob("% Processor Time", "% processor time"), 1);
    CHECK_INT(pattern_glob("% * Time", "% Processor Time"), 1);
    CHECK_INT(pattern_glob("% * Time", "% Privileged Time"), 1);
    CHECK_INT(pattern_glob("% * Time", "% Processor Timer"), 0);
    CHECK_INT(pattern_glob("Disk*sec", "Disk Bytes/sec"), 1);
    CHECK_INT(pattern_glob("Disk*sec", "Disk Bytes/secs"), 0);
    CHECK_INT(pattern_glob("*sec", "sec"), 1);
    CHECK_INT(pattern_glob("?*", ""), 0);
    CHECK_INT(pattern_glob("*?", "a"), 1);
    CHECK_INT(pattern_glob("*?*", ""), 0);
    CHECK_INT(pattern_glob("a?c", "abc"), 1);
    CHECK_INT(pattern_glob("a?c", "ac"), 0);
    CHECK_INT(pattern_glob("a*b*c", "aXbYbZc"), 1);
    CHECK_INT(pattern_glob("a*b*c", "aXbYbZ"), 0);
    CHECK_INT(pattern_glob("*ab", "aab"), 1);
    CHECK_INT(pattern_glob("*aab", "aaab"), 1);
    CHECK_INT(pattern_glob("sd?", "sda"), 1);
    CHECK_INT(pattern_glob("sd?", "sda1"), 0);
    CHECK_INT(pattern_glob("sd*", "sda1"), 1);
    CHECK_INT(pattern_glob("[a]", "a"), 0); /* no bracket classes: literal */
    CHECK_INT(pattern_glob("[a]", "[A]"), 1);
    CHECK_INT(pattern_glob("\xc3\xa4", "\xc3\xa4"), 1);
    CHECK_INT(pattern_glob("\xc3\xa4", "\xc3\x84"), 0); /* ASCII only */

    /* The pathological case of a backtracking matcher: must stay O(n*m). */
    as = malloc(10001);
    memset(as, 'a', 10000);
    as[10000] = '\0';
    t0 = clock();
    CHECK_INT(pattern_glob("*a*a*a*a*a*a*b", as), 0);
    CHECK_INT(pattern_glob("*a*a*a*a*a*a*a", as), 1);
    CHECK_INT(pattern_glob("*?*?*?*?*?*?*?*?*b", as), 0);
    CHECK_INT(pattern_glob("a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*ab", as), 0);
    secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
    CHECK(secs < 0.5);
    free(as);
}

static void test_match(void)
{
    struct pattern p;

    CHECK_INT(pp("\\PhysicalDisk(*)\\Disk Bytes/sec", &p), 0);
    CHECK_INT(pattern_match(&p, "PhysicalDisk", "sda", "Disk Bytes/sec"), 1);
    CHECK_INT(pattern_match(&p, "physicaldisk", "sda", "DISK BYTES/SEC"), 1);
    CHECK_INT(pattern_match(&p, "PhysicalDisk", "", "Disk Bytes/sec"), 0); /* (*) needs one */
    CHECK_INT(pattern_match(&p, "LogicalDisk", "sda", "Disk Bytes/sec"), 0);
    CHECK_INT(pattern_match(&p, "PhysicalDisk", "sda", "Disk Reads/sec"), 0);

    CHECK_INT(pp("\\Memory\\*", &p), 0);
    CHECK_INT(pattern_match(&p, "Memory", "", "Available Bytes"), 1);
    CHECK_INT(pattern_match(&p, "Memory", "node0", "Available Bytes"), 0);

    CHECK_INT(pp("\\Processor(_Total)\\% * Time", &p), 0);
    CHECK_INT(pattern_match(&p, "Processor", "_Total", "% User Time"), 1);
    CHECK_INT(pattern_match(&p, "Processor", "_total", "% User Time"), 1);
    CHECK_INT(pattern_match(&p, "Processor", "0", "% User Time"), 0);

    CHECK_INT(pp("\\Process(svchost(?*))\\*", &p), 0);
    CHECK_INT(pattern_match(&p, "Process", "svchost(1234)", "Working Set"), 1);
    CHECK_INT(pattern_match(&p, "Process", "svchost()", "Working Set"), 0);
    CHECK_INT(pattern_match(&p, "Process", "svchost", "Working Set"), 0);

    CHECK_INT(pp("\\*(*)\\*", &p), 0);
    CHECK_INT(pattern_match(&p, "Network Interface", "eth0", "Bytes Total/sec"), 1);
    CHECK_INT(pattern_match(&p, "Memory", "", "Available Bytes"), 0);
}

static void test_format(void)
{
    char buf[64], small[8];
    struct pattern p;

    CHECK_INT(pattern_format_path(buf, sizeof(buf), "Memory", "", "Available Bytes"), 23);
    CHECK_STR(buf, "\\Memory\\Available Bytes");
    CHECK_INT(pattern_format_path(buf, sizeof(buf), "Process", "svchost(1)", "Working Set"), 32);
    CHECK_STR(buf, "\\Process(svchost(1))\\Working Set");
    CHECK_INT(pp(buf, &p), 0);
    CHECK_INT(pattern_match(&p, "Process", "svchost(1)", "Working Set"), 1);
    CHECK_INT(pattern_format_path(small, sizeof(small), "Memory", "", "Available Bytes"), 23);
    CHECK_STR(small, "\\Memory");
    CHECK_INT(pattern_format_path(NULL, 0, "Memory", "", "Available Bytes"), 23);
}

int main(void)
{
    test_parse();
    test_parse_errors();
    test_glob();
    test_match();
    test_format();
    return tl_done();
}
