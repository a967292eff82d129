/*
 * test_collector_config.c - the one deep copy of a collector configuration: every list (the PDH
 * paths too), the root, the cap on a list's length, and a copy that outlives its source, as the
 * sampler's does across a reload.
 */
#include "collectors/model/collector_config.h"
#include "testlib.h"

#include <stdlib.h>
#include <string.h>

static char *heap(const char *s)
{
    char *d = malloc(strlen(s) + 1);

    return d ? strcpy(d, s) : NULL;
}

int main(void)
{
    struct collector_config src = {0}, copy, empty = {0};
    char *strs[6];

    strs[0] = heap("/fixture/root");
    strs[1] = heap("sd*");
    strs[2] = heap("loop*");
    strs[3] = heap("eth*");
    strs[4] = heap("lo");
    strs[5] = heap("\\LogicalDisk(C:)\\% Free Space");
    src.root = strs[0];
    src.disk_include[0] = strs[1];
    src.n_disk_include = 1;
    src.disk_exclude[0] = strs[2];
    src.n_disk_exclude = 1;
    src.net_include[0] = strs[3];
    src.n_net_include = 1;
    src.net_exclude[0] = strs[4];
    src.n_net_exclude = 1;
    src.pdh_counters[0] = strs[5];
    src.n_pdh_counters = 1;

    CHECK_INT(collector_config_copy(&copy, &src), 0);
    /* The source goes away, as a reloaded config does: the copy keeps its own strings. */
    for (int i = 0; i < 6; i++) {
        memset(strs[i], 'X', strlen(strs[i]));
        free(strs[i]);
    }
    CHECK_STR(copy.root, "/fixture/root");
    CHECK_INT(copy.n_disk_include, 1);
    CHECK_STR(copy.disk_include[0], "sd*");
    CHECK_STR(copy.disk_exclude[0], "loop*");
    CHECK_STR(copy.net_include[0], "eth*");
    CHECK_STR(copy.net_exclude[0], "lo");
    CHECK_INT(copy.n_pdh_counters, 1);
    CHECK_STR(copy.pdh_counters[0], "\\LogicalDisk(C:)\\% Free Space");
    collector_config_free(&copy);
    CHECK(copy.root == NULL && copy.n_disk_include == 0 && copy.n_pdh_counters == 0);
    collector_config_free(&copy); /* an emptied copy frees again harmlessly */
    collector_config_free(NULL);

    /* No root stays no root; a list longer than the cap is cut at it. */
    memset(&src, 0, sizeof(src));
    src.n_net_exclude = COLLECTOR_MAX_GLOBS + 5;
    for (size_t i = 0; i < COLLECTOR_MAX_GLOBS; i++)
        src.net_exclude[i] = "veth*";
    CHECK_INT(collector_config_copy(&copy, &src), 0);
    CHECK(copy.root == NULL);
    CHECK_INT(copy.n_net_exclude, COLLECTOR_MAX_GLOBS);
    CHECK(copy.net_exclude[0] != src.net_exclude[0]);
    CHECK_STR(copy.net_exclude[COLLECTOR_MAX_GLOBS - 1], "veth*");
    collector_config_free(&copy);

    CHECK_INT(collector_config_copy(&copy, &empty), 0);
    CHECK(copy.root == NULL && copy.n_disk_include == 0);
    collector_config_free(&copy);
    return tl_done();
}
