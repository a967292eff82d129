/*
 * test_name_map.c - the name -> id map of the writer (storage/name_map.c): lookups of present and
 * absent names, growth past many entries with every id kept, and clear.
 */
#include "storage/name_map.h"
#include "testlib.h"

#include <stdio.h>

int main(void)
{
    struct name_map m = {0};
    char name[32];
    int bad = 0;

    CHECK_INT(name_map_get(&m, "vda"), -1); /* empty */
    CHECK_INT(name_map_put(&m, "vda", 7), 0);
    CHECK_INT(name_map_put(&m, "\\System\\System Up Time", 0), 0);
    CHECK_INT(name_map_get(&m, "vda"), 7);
    CHECK_INT(name_map_get(&m, "\\System\\System Up Time"), 0);
    CHECK_INT(name_map_get(&m, "vdb"), -1);
    CHECK_INT(name_map_get(&m, ""), -1);
    for (int i = 0; i < 5000; i++) { /* many times the first table's 64 slots */
        snprintf(name, sizeof(name), "dev%d", i);
        bad += name_map_put(&m, name, 100 + i) != 0;
    }
    for (int i = 0; i < 5000; i++) {
        snprintf(name, sizeof(name), "dev%d", i);
        bad += name_map_get(&m, name) != 100 + i;
    }
    CHECK_INT(bad, 0);
    CHECK_INT(m.n, 5002);
    CHECK(m.nslots >= 2 * m.n);
    CHECK_INT(name_map_get(&m, "vda"), 7);
    name_map_clear(&m);
    CHECK_INT(m.n, 0);
    CHECK_INT(name_map_get(&m, "vda"), -1);
    CHECK_INT(name_map_put(&m, "vda", 8), 0); /* usable again */
    CHECK_INT(name_map_get(&m, "vda"), 8);
    name_map_clear(&m);
    return tl_done();
}
