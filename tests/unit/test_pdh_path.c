/*
 * test_pdh_path.c - the names of extra PDH series: cutting paths into object, instance and
 * counter (machine prefixes, parentheses inside instances, malformed paths), joining them back,
 * recognising perflog's own counters, and naming the expansions of wildcard paths.
 */
#include "collectors/model/pdh_path.h"
#include "testlib.h"

#include <errno.h>
#include <string.h>

static void check_split(const char *path, const char *obj, const char *inst, const char *ctr)
{
    struct pdh_path_parts p;
    char back[PDH_PATH_MAX];

    CHECK_INT(pdh_path_split(path, &p), 0);
    CHECK_STR(p.object, obj);
    CHECK_STR(p.instance, inst);
    CHECK_STR(p.counter, ctr);
    CHECK_INT(pdh_path_join(&p, back, sizeof(back)), 0);
    /* joined back it is the path without its machine prefix */
    CHECK_STR(back, path[1] == '\\' ? strchr(path + 2, '\\') : path);
}

static void test_split(void)
{
    struct pdh_path_parts p;
    char big[PDH_PATH_MAX + 8];

    check_split("\\System\\System Up Time", "System", "", "System Up Time");
    check_split("\\LogicalDisk(C:)\\% Free Space", "LogicalDisk", "C:", "% Free Space");
    check_split("\\\\WIN-7QH1\\LogicalDisk(_Total)\\Free Megabytes", "LogicalDisk", "_Total",
                "Free Megabytes");
    /* an instance with parentheses of its own, and one with a parent part */
    check_split("\\Network Adapter(Intel(R) Ethernet (2))\\Bytes Total/sec", "Network Adapter",
                "Intel(R) Ethernet (2)", "Bytes Total/sec");
    check_split("\\Thread(explorer/12#1)\\% Processor Time", "Thread", "explorer/12#1",
                "% Processor Time");
    check_split("\\Memory\\Pages/sec", "Memory", "", "Pages/sec");

    CHECK_INT(pdh_path_split("System\\Up", &p), -EINVAL);         /* no leading '\' */
    CHECK_INT(pdh_path_split("\\System", &p), -EINVAL);           /* no counter */
    CHECK_INT(pdh_path_split("\\System\\", &p), -EINVAL);         /* empty counter */
    CHECK_INT(pdh_path_split("\\\\HOST", &p), -EINVAL);           /* a machine alone */
    CHECK_INT(pdh_path_split("\\\\\\C", &p), -EINVAL);            /* empty object */
    CHECK_INT(pdh_path_split("\\Disk()\\Reads", &p), -EINVAL);    /* empty instance */
    CHECK_INT(pdh_path_split("\\Disk(C:\\Reads", &p), -EINVAL);   /* instance not closed */
    CHECK_INT(pdh_path_split("\\Disk(C:)x\\Reads", &p), -EINVAL); /* junk after ')' */
    CHECK_INT(pdh_path_split("\\A\\B\\C", &p), -EINVAL);          /* '\' inside the object */
    memset(big, 'x', sizeof(big) - 1);
    big[0] = '\\';
    big[sizeof(big) - 1] = '\0';
    big[2] = '\\';
    CHECK_INT(pdh_path_split(big, &p), -EINVAL); /* a counter of PDH_PATH_MAX bytes */
}

static void test_join_too_long(void)
{
    struct pdh_path_parts p;
    char out[16];

    memset(&p, 0, sizeof(p));
    strcpy(p.object, "LogicalDisk");
    strcpy(p.instance, "C:");
    strcpy(p.counter, "% Free Space");
    CHECK_INT(pdh_path_join(&p, out, sizeof(out)), -ENAMETOOLONG);
    CHECK_STR(out, "");
}

static void test_builtin(void)
{
    CHECK_INT(pdh_path_builtin("Processor", "% Processor Time"), 1);
    CHECK_INT(pdh_path_builtin("processor", "% PROCESSOR TIME"), 1); /* PDH ignores case */
    CHECK_INT(pdh_path_builtin("Memory", "Available Bytes"), 1);
    CHECK_INT(pdh_path_builtin("PhysicalDisk", "Disk Bytes/sec"), 1);
    CHECK_INT(pdh_path_builtin("Memory", "Committed Bytes"), 0);  /* not one of ours */
    CHECK_INT(pdh_path_builtin("LogicalDisk", "% Idle Time"), 0); /* ours is PhysicalDisk's */
    CHECK_INT(pdh_path_builtin("System", "System Up Time"), 0);
}

static void test_name(void)
{
    char out[PDH_PATH_MAX];

    /* an instance wildcard: PDH's instance, the configured (English) object and counter, even
     * when PDH listed them in another language */
    CHECK_INT(pdh_path_name("\\LogicalDisk(*)\\% Free Space",
                            "\\\\PC\\Logischer Datenträger(C:)\\% freier Speicherplatz", out,
                            sizeof(out)),
              0);
    CHECK_STR(out, "\\LogicalDisk(C:)\\% Free Space");
    /* a counter wildcard: PDH's counter names */
    CHECK_INT(pdh_path_name("\\System\\*", "\\\\PC\\System\\Processes", out, sizeof(out)), 0);
    CHECK_STR(out, "\\System\\Processes");
    /* a concrete instance stays as configured */
    CHECK_INT(pdh_path_name("\\LogicalDisk(c:)\\*", "\\LogicalDisk(C:)\\Free Megabytes", out,
                            sizeof(out)),
              0);
    CHECK_STR(out, "\\LogicalDisk(c:)\\Free Megabytes");
    CHECK_INT(pdh_path_name("\\LogicalDisk(*)\\*", "garbage", out, sizeof(out)), -EINVAL);
    CHECK_INT(pdh_path_name("\\LogicalDisk(*)\\% Free Space", "\\LogicalDisk(C:)\\X", out, 8),
              -ENAMETOOLONG);
    CHECK_INT(pdh_path_has_wildcard("\\LogicalDisk(*)\\X"), 1);
    CHECK_INT(pdh_path_has_wildcard("\\LogicalDisk(C:)\\X"), 0);
}

int main(void)
{
    test_split();
    test_join_too_long();
    test_builtin();
    test_name();
    return tl_done();
}
