/*
 * test_run_edges.c - a run's edges: the /proc/PID/io walk, the cgroup v2 io.stat and v1 blkio
 * parsers and walks (tests/fixtures/edges/, README there), the edge JSON of run_edges.c, and the
 * own/others sections of report_io.c on hand-made edges.
 */
#include "collectors/collector.h"
#include "collectors/linux/linux_others.h"
#include "daemon/runs/report_io.h"
#include "daemon/runs/run_edges.h"
#include "testlib.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FIX FIXTURES_DIR "/edges"

static const struct collector_proc_io *proc_of(const struct collector_edge_reading *r, int pid)
{
    for (size_t i = 0; i < r->nprocs; i++)
        if (r->procs[i].pid == pid)
            return &r->procs[i];
    return NULL;
}

static const struct collector_cgroup_io *group_of(const struct collector_edge_reading *r,
                                                  const char *name)
{
    for (size_t i = 0; i < r->ncgroups; i++)
        if (!strcmp(r->cgroups[i].name, name))
            return &r->cgroups[i];
    return NULL;
}

static void test_parsers(void)
{
    const char *v2 = "8:0 rbytes=10 wbytes=20 rios=1 wios=2 dbytes=0 dios=0\n"
                     "254:16 rbytes=5 wbytes=7 rios=1 wios=1 newkey=3"; /* no final newline */
    const char *v1 = "8:0 Read 100\n8:0 Write 200\n8:0 Sync 50\n8:0 Async 250\n8:0 Total 300\n"
                     "8:16 Read 1\n8:16 Write 2\nTotal 303\n";
    uint64_t r = 99, w = 99, v = 0;

    CHECK_INT(others_parse_io_stat(v2, strlen(v2), &r, &w), 0);
    CHECK_INT(r, 15); /* summed over devices */
    CHECK_INT(w, 27);
    CHECK_INT(others_parse_io_stat("", 0, &r, &w), 0); /* a group that did no I/O */
    CHECK_INT(r, 0);
    r = w = 99;
    CHECK_INT(others_parse_io_stat("8:0 rbytes=x wbytes=1\n", 21, &r, &w), -EINVAL);
    CHECK_INT(r, 99); /* untouched on error */
    CHECK_INT(others_parse_blkio_bytes(v1, strlen(v1), &r, &w), 0);
    CHECK_INT(r, 101); /* Read lines only; Sync/Async/Total are the same bytes again */
    CHECK_INT(w, 202);
    CHECK_INT(others_parse_blkio_bytes("8:0 Read\n", 9, &r, &w), -EINVAL);
    CHECK_INT(others_parse_key("nr_dirty 5\nnr_dirty_threshold 77\n", 33, "nr_dirty_threshold", &v),
              0);
    CHECK_INT(v, 77);
    CHECK_INT(others_parse_key("nr_dirty_thresholdx 5\n", 22, "nr_dirty_threshold", &v), -ENOENT);
}

static void test_scan_procs(void)
{
    struct collector_edge_reading rd = {0};
    const struct collector_proc_io *p;

    CHECK_INT(others_scan_procs(FIX "/t1/proc", &rd), 3); /* 100, 200, 300; not self-not-a-pid */
    p = proc_of(&rd, 100);
    CHECK(p && p->have_io);
    if (p) {
        CHECK_STR(p->name, "perflog");
        CHECK_INT(p->ppid, 1);
        CHECK_INT(p->start_ticks, 5000);
        CHECK_INT(p->read_bytes, 1048576);
        CHECK_INT(p->write_bytes, 2097152);
        CHECK_INT(p->wchar, 8192);
        CHECK_INT(p->cpu_ms, 200 * 1000 / sysconf(_SC_CLK_TCK));
    }
    p = proc_of(&rd, 200);
    CHECK(p && !p->have_io); /* no io file: not root, or gone */
    p = proc_of(&rd, 300);
    CHECK(p && p->have_io);
    if (p) {
        CHECK_STR(p->name, "my (odd) cp");
        CHECK_INT(p->ppid, 100);
        CHECK_INT(p->write_bytes, 4096);
    }
    CHECK_INT(others_scan_procs(FIX "/no-such-dir", &rd), 0);
    collector_edge_reading_free(&rd);
}

static void test_scan_cgroups(void)
{
    struct collector_edge_reading rd = {0};
    const struct collector_cgroup_io *g;

    /* v2 at the top: idle.slice did nothing and is left out; the root has no io.stat */
    CHECK_INT(others_scan_cgroups(FIX "/v2/sys/fs/cgroup", &rd), 3);
    g = group_of(&rd, "system.slice/smbd.service");
    CHECK(g && g->write_bytes == 1073741824 && g->read_bytes == 0);
    g = group_of(&rd, "system.slice");
    CHECK(g && g->read_bytes == 2024 && g->write_bytes == 6096);
    g = group_of(&rd, "user.slice");
    CHECK(g && g->read_bytes == 5 && g->write_bytes == 7);
    CHECK(!group_of(&rd, "idle.slice"));
    collector_edge_reading_free(&rd);

    /* hybrid: unified/ without io.stat files, v1 blkio with the root and one child */
    memset(&rd, 0, sizeof(rd));
    CHECK_INT(others_scan_cgroups(FIX "/v1/sys/fs/cgroup", &rd), 2);
    g = group_of(&rd, "blkio:/");
    CHECK(g && g->read_bytes == 4097 && g->write_bytes == 8194);
    g = group_of(&rd, "blkio:user.slice");
    CHECK(g && g->read_bytes == 0 && g->write_bytes == 65536);
    collector_edge_reading_free(&rd);
}

static void test_edge_json(void)
{
    struct collector_config cfg = {.root = FIX "/t1"};
    struct run_edges *re = run_edges_new(&cfg);
    json_t *kernel = NULL, *e, *vda, *procs;
    char why[160] = "";
    long hz = collector_cpu_ticks_per_s();

    CHECK(re != NULL);
    if (!re)
        return;
    e = run_edges_take(re, 100, 1, &kernel, why, sizeof(why));
    CHECK(e != NULL);
    vda = json_object_get(json_object_get(e, "disks"), "vda");
    /* vda of base/: 34560 reads of 3123634 sectors, 3135 writes of 450304, io_ms 4416 */
    CHECK_INT(json_integer_value(json_object_get(vda, "read_bytes")), 3123634LL * 512);
    CHECK_INT(json_integer_value(json_object_get(vda, "write_bytes")), 450304LL * 512);
    CHECK_INT(json_integer_value(json_object_get(vda, "read_ops")), 34560);
    CHECK_INT(json_integer_value(json_object_get(vda, "write_ops")), 3135);
    CHECK_INT(json_integer_value(json_object_get(vda, "busy_ms")), 4416);
    CHECK_INT(json_integer_value(json_object_get(vda, "queue_ms")), 15511);
    CHECK_INT(json_integer_value(json_object_get(vda, "in_total")), 1);
    CHECK(!json_object_get(json_object_get(e, "disks"), "loop0")); /* no /sys/block entry here */
    CHECK_INT(report_io_disk_delta(e, e, "write_bytes"), 0);
    /* cpu 1881 0 1279 139315 327 0 35 8 in USER_HZ */
    CHECK_INT(json_integer_value(json_object_get(json_object_get(e, "cpu"), "user_ms")),
              1881LL * 1000 / hz);
    CHECK_INT(json_array_size(json_object_get(json_object_get(e, "cpu"), "cores")), 2);
    CHECK_INT(
        json_integer_value(json_object_get(json_object_get(e, "mem"), "dirty_threshold_bytes")),
        1219546LL * sysconf(_SC_PAGESIZE));
    CHECK(json_object_get(json_object_get(json_object_get(e, "nics"), "eth0"), "rx_bytes"));
    procs = json_object_get(e, "procs");
    CHECK_INT(json_object_size(procs), 2); /* 100 and its child 300, not 200 */
    CHECK(json_object_get(procs, "300") && !json_object_get(procs, "200"));
    CHECK_STR(json_string_value(json_object_get(json_object_get(procs, "300"), "name")),
              "my (odd) cp");
    CHECK(json_integer_value(json_object_get(e, "t_ms")) > 0);
    CHECK(json_object_get(json_object_get(e, "io_scan"), "procs"));
    CHECK_INT(json_integer_value(json_object_get(kernel, "dirty_expire_centisecs")), 3000);
    CHECK_INT(json_integer_value(json_object_get(kernel, "dirty_ratio")), 20);
    CHECK_INT(json_integer_value(json_object_get(kernel, "dirty_background_threshold_bytes")),
              609028LL * sysconf(_SC_PAGESIZE));
    json_decref(e);
    json_decref(kernel);
    run_edges_free(re);
}

/* An edge with one disk and the given io_scan and followed processes. */
static json_t *edge(int64_t t_ms, int64_t disk_w, json_t *procs, json_t *scan_procs,
                    json_t *scan_groups)
{
    return json_pack("{s:I, s:{s:{s:I, s:I, s:i}}, s:o, s:{s:o, s:o}}", "t_ms", (json_int_t)t_ms,
                     "disks", "vda", "write_bytes", (json_int_t)disk_w, "read_bytes", (json_int_t)0,
                     "in_total", 1, "procs", procs, "io_scan", "procs", scan_procs, "cgroups",
                     scan_groups);
}

static void test_report_io(void)
{
    const int64_t MiB = 1 << 20;
    json_t *edges = json_object(), *r = json_object(), *own, *others, *top, *t0, *amp;
    struct report_run run = {.id = 1,
                             .pid = 100,
                             .payload_bytes = 10 * MiB,
                             .storage_read_bytes = 0,
                             .storage_write_bytes = 10 * MiB};

    /* start: the run (100), a neighbour 500, a process 600 that will exit and its pid reused */
    json_object_set_new(edges, "start",
                        edge(1000, 1000 * MiB,
                             json_pack("{s:{s:I}}", "100", "write_bytes", (json_int_t)0),
                             json_pack("{s:[I,I,I,s], s:[I,I,I,s]}", "500", 50, 0, (json_int_t)MiB,
                                       "dd", "600", 60, 0, (json_int_t)(5 * MiB), "old"),
                             json_pack("{s:[I,I]}", "system.slice", 0, (json_int_t)MiB)));
    json_object_set_new(
        edges, "end",
        edge(2000, 1100 * MiB, json_pack("{s:{s:I}}", "100", "write_bytes", (json_int_t)(10 * MiB)),
             json_pack("{s:[I,I,I,s], s:[I,I,I,s], s:[I,I,I,s]}", "100", 1, 0,
                       (json_int_t)(10 * MiB), "perflog", "500", 50, 0, (json_int_t)(81 * MiB),
                       "dd", "600", 61, 0, (json_int_t)(2 * MiB), "new"),
             json_pack("{s:[I,I], s:[I,I]}", "system.slice", 0, (json_int_t)(3 * MiB), "blkio:/",
                       (json_int_t)MiB, 0)));
    run.edges = edges;
    report_io_add(r, &run);
    CHECK(json_is_null(json_object_get(json_object_get(r, "settle"), "capped"))); /* not settled */
    own = json_object_get(r, "own");
    CHECK_INT(json_integer_value(json_object_get(own, "write_bytes")), 10 * MiB);
    CHECK_STR(json_string_value(json_object_get(own, "source")), "client");
    others = json_object_get(r, "others");
    CHECK_INT(json_integer_value(json_object_get(others, "write_bytes")), 90 * MiB);
    top = json_object_get(others, "top");
    CHECK_INT(json_array_size(top), 4); /* dd, the new 600, system.slice, blkio:/; not 100 */
    t0 = json_array_get(top, 0);
    CHECK_STR(json_string_value(json_object_get(t0, "name")), "dd:500");
    CHECK_STR(json_string_value(json_object_get(t0, "kind")), "process");
    CHECK_INT(json_integer_value(json_object_get(t0, "write_bytes")), 80 * MiB);
    /* pid 600 started anew (another start time): its bytes count from zero, not as a drop */
    CHECK_STR(json_string_value(json_object_get(json_array_get(top, 1), "name")), "new:600");
    CHECK_INT(json_integer_value(json_object_get(json_array_get(top, 1), "write_bytes")), 2 * MiB);
    CHECK_STR(json_string_value(json_object_get(json_array_get(top, 2), "kind")), "cgroup");
    CHECK_INT(json_integer_value(json_object_get(json_array_get(top, 2), "write_bytes")), 2 * MiB);
    amp = json_object_get(r, "write_amplification");
    CHECK_DBL(json_real_value(json_object_get(amp, "ratio")), 10.0, 1e-9);
    CHECK_INT(json_integer_value(json_object_get(amp, "others_excess_bytes")), 90 * MiB);
    CHECK_INT(json_integer_value(json_object_get(amp, "own_excess_bytes")), 0);
    CHECK(!json_object_get(json_object_get(json_object_get(r, "edges"), "start"), "io_scan"));
    CHECK(json_object_get(json_object_get(json_object_get(r, "edges"), "start"), "disks"));
    json_decref(r);

    /* without the client's totals: the followed processes between the edges */
    run.storage_read_bytes = run.storage_write_bytes = -1;
    r = json_object();
    report_io_add(r, &run);
    own = json_object_get(r, "own");
    CHECK_INT(json_integer_value(json_object_get(own, "write_bytes")), 10 * MiB);
    CHECK_STR(json_string_value(json_object_get(own, "source")), "followed");
    json_decref(r);

    /* a settle edge is the last one; the cap ended the wait: capped */
    {
        json_t *settle = json_deep_copy(json_object_get(edges, "end"));

        json_object_set_new(json_object_get(settle, "disks"), "vda",
                            json_pack("{s:I, s:I, s:i}", "write_bytes", (json_int_t)(1200 * MiB),
                                      "read_bytes", (json_int_t)0, "in_total", 1));
        json_object_set_new(settle, "ended_by", json_string("timeout"));
        json_object_set_new(edges, "settle", settle);
    }
    r = json_object();
    report_io_add(r, &run);
    CHECK(json_is_true(json_object_get(json_object_get(r, "settle"), "capped")));
    CHECK_STR(json_string_value(json_object_get(json_object_get(r, "settle"), "ended_by")),
              "timeout");
    CHECK_INT(json_integer_value(json_object_get(json_object_get(r, "others"), "write_bytes")),
              190 * MiB); /* device 200 MiB over run + tail, own 10 MiB */
    json_decref(r);

    /* no edges at all: said so, nothing made up */
    run.edges = NULL;
    r = json_object();
    report_io_add(r, &run);
    CHECK(json_is_null(json_object_get(r, "edges")));
    CHECK(json_is_string(json_object_get(r, "edges_note")));
    CHECK(json_is_null(json_object_get(json_object_get(r, "others"), "write_bytes")));
    json_decref(r);
    json_decref(edges);
}

/* A child alive at the start edge and reaped before the end: its parent's counters then hold the
 * child's whole I/O, and only the part after the start is the parent's growth in the window. */
static void test_reaped_child(void)
{
    const int64_t MiB = 1 << 20;
    json_t *edges = json_object(), *r = json_object(), *top;
    struct report_run run = {.id = 2,
                             .pid = 100,
                             .storage_read_bytes = 0,
                             .storage_write_bytes = 0,
                             .payload_bytes = -1};

    json_object_set_new(
        edges, "start",
        edge(1000, 0, json_object(),
             json_pack("{s:[I,I,I,s,i]}", "701", 71, 0, (json_int_t)(900 * MiB), "cp", 700),
             json_object()));
    json_object_set_new(
        edges, "end",
        edge(2000, 60 * MiB, json_object(),
             json_pack("{s:[I,I,I,s,i]}", "700", 70, 0, (json_int_t)(950 * MiB), "bash", 1),
             json_object()));
    /* a disk that appeared during the run brings its whole cumulative count: not the run's */
    json_object_set_new(json_object_get(json_object_get(edges, "end"), "disks"), "sdz",
                        json_pack("{s:I, s:I, s:i}", "write_bytes", (json_int_t)(5000 * MiB),
                                  "read_bytes", (json_int_t)0, "in_total", 1));
    run.edges = edges;
    report_io_add(r, &run);
    CHECK_INT(json_integer_value(json_object_get(json_object_get(r, "others"), "write_bytes")),
              60 * MiB);
    top = json_object_get(json_object_get(r, "others"), "top");
    CHECK_INT(json_array_size(top), 1);
    CHECK_STR(json_string_value(json_object_get(json_array_get(top, 0), "name")), "bash:700");
    CHECK_INT(json_integer_value(json_object_get(json_array_get(top, 0), "write_bytes")),
              50 * MiB); /* not 950: 900 of it the child did before the start */
    json_decref(r);
    json_decref(edges);
}

int main(void)
{
    test_parsers();
    test_scan_procs();
    test_scan_cgroups();
    test_edge_json();
    test_report_io();
    test_reaped_child();
    return tl_done();
}
