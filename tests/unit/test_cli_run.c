/*
 * test_cli_run.c - the pure parts of `perflog run`, `runs` and `report` (cli/run_util.c,
 * cli/report_fmt.c): shell and Windows quoting of the command line, the tail buffer,
 * /proc/PID/io parsing, the live line and the text rendering of a fixed report.
 */
#include "base/term_escape.h"
#include "cli/cli_os.h"
#include "cli/run.h"
#include "daemon/runs/peer_url.h"
#include "testlib.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void check_quote(int argc, const char *const *argv, const char *want)
{
    char *q = run_shell_quote(argc, (char *const *)argv);

    CHECK_STR(q, want);
    free(q);
}

static void test_quote(void)
{
    const char *a[] = {"cp", "-r", "/src/a", "dst:x=1,y@2%+"};
    const char *b[] = {"sh", "-c", "echo hello; exit 3"};
    const char *c[] = {"echo", "it's", ""};
    const char *d[] = {"printf", "$HOME\n*"};

    check_quote(4, a, "cp -r /src/a dst:x=1,y@2%+");
    check_quote(3, b, "sh -c 'echo hello; exit 3'");
    check_quote(3, c, "echo 'it'\\''s' ''");
    check_quote(2, d, "printf '$HOME\n*'");
    check_quote(0, a, "");
}

/*
 * The reference for the Windows quoting: CommandLineToArgvW's splitting as Microsoft documents it
 * ("Parsing C command-line arguments", and CommandLineToArgvW's remarks). The program name runs to
 * the next '"' when it starts with one, else to a space or tab, with no escapes. Then words are
 * split at spaces and tabs outside quotes; 2n backslashes and a '"' give n backslashes and the '"'
 * toggles quoting, 2n+1 backslashes and a '"' give n backslashes and a literal '"', other
 * backslashes are literal; inside quotes, "" is a literal '"'. Returns the number of words (at
 * most max), each malloc'd into out.
 */
static int win_split(const char *p, char **out, int max)
{
    size_t cap = strlen(p) + 1;
    int n = 0;

    if (!*p)
        return 0;
    out[n] = calloc(1, cap);
    if (*p == '"') {
        const char *q = strchr(p + 1, '"');
        size_t len = q ? (size_t)(q - p - 1) : strlen(p + 1);

        memcpy(out[n], p + 1, len);
        p += 1 + len + (q != NULL);
    } else {
        size_t len = strcspn(p, " \t");

        memcpy(out[n], p, len);
        p += len;
    }
    n++;
    for (;;) {
        char *w;
        int inq = 0;

        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p || n == max)
            return n;
        w = out[n++] = calloc(1, cap);
        while (*p && (inq || (*p != ' ' && *p != '\t'))) {
            if (*p == '\\') {
                size_t nbs = strspn(p, "\\");

                if (p[nbs] == '"') {
                    memset(w + strlen(w), '\\', nbs / 2);
                    p += nbs;
                    if (nbs % 2) {
                        strcat(w, "\"");
                        p++;
                    }
                } else {
                    memset(w + strlen(w), '\\', nbs);
                    p += nbs;
                }
            } else if (*p == '"') {
                if (inq && p[1] == '"') {
                    strcat(w, "\"");
                    p += 2;
                } else {
                    inq = !inq;
                    p++;
                }
            } else {
                w[strlen(w)] = *p++;
            }
        }
    }
}

static void check_win_quote(int argc, const char *const *argv, const char *want)
{
    char *q = (char *)"unset";

    CHECK_INT(run_win_quote(argc, (char *const *)argv, &q), 0);
    CHECK_STR(q, want);
    if (strcmp(q, "unset") != 0)
        free(q);
}

/* Quote argv, split it back with the reference: 1 when the same words come back. */
static int win_round_trip(int argc, const char *const *argv)
{
    char *line = NULL, *back[8];
    int ok, n;

    if (run_win_quote(argc, (char *const *)argv, &line) < 0)
        return 0;
    n = win_split(line, back, 8);
    ok = n == argc;
    for (int i = 0; i < n; i++) {
        ok = ok && strcmp(back[i], argv[i]) == 0;
        free(back[i]);
    }
    if (!ok)
        fprintf(stderr, "round trip failed: [%s] -> %s\n", argv[argc - 1], line);
    free(line);
    return ok;
}

static void test_win_quote(void)
{
    const char *a[] = {"robocopy", "C:\\src", "\\\\server\\share\\dst", "/MIR"};
    const char *b[] = {"cmd", "/c", "echo hello & exit 3"};
    const char *c[] = {"C:\\Program Files\\x.exe", "", "a\"b", "tab\there"};
    const char *d[] = {"x", "ends\\", "dir with space\\", "a\\\"b", "a\\b c", "\\\\"};
    const char *e[] = {"x", "é ü", "line\nbreak"};
    const char *bad[] = {"a\"b", "c"};
    const char alphabet[] = {'a', ' ', '"', '\\', '\t'};
    char *out = (char *)"untouched";
    int failed = 0, total = 0;

    check_win_quote(4, a, "robocopy C:\\src \\\\server\\share\\dst /MIR");
    check_win_quote(3, b, "cmd /c \"echo hello & exit 3\"");
    check_win_quote(4, c, "\"C:\\Program Files\\x.exe\" \"\" \"a\\\"b\" \"tab\there\"");
    /* Backslashes double only before a quote: "dir with space\\" would end in a literal '"'. */
    check_win_quote(6, d, "x ends\\ \"dir with space\\\\\" \"a\\\\\\\"b\" \"a\\b c\" \\\\");
    check_win_quote(3, e, "x \"é ü\" \"line\nbreak\"");
    check_win_quote(1, a, "robocopy");
    /* No command line can hold a program name with a '"'; nor is there one without a program. */
    CHECK_INT(run_win_quote(2, (char *const *)bad, &out), -EINVAL);
    CHECK_INT(run_win_quote(0, (char *const *)a, &out), -EINVAL);
    CHECK_STR(out, "untouched");

    CHECK(win_round_trip(4, a));
    CHECK(win_round_trip(3, b));
    CHECK(win_round_trip(4, c));
    CHECK(win_round_trip(6, d));
    CHECK(win_round_trip(3, e));
    /* Every word of up to 5 characters from the ones that matter, between two plain words and
     * after a program name with a space. */
    for (int len = 0; len <= 5; len++) {
        int combos = 1;

        for (int i = 0; i < len; i++)
            combos *= (int)sizeof(alphabet);
        for (int k = 0; k < combos; k++) {
            char word[8];
            const char *argv[] = {"C:\\My Tools\\t.exe", "x", word, "y"};
            int v = k;

            for (int i = 0; i < len; i++, v /= (int)sizeof(alphabet))
                word[i] = alphabet[v % (int)sizeof(alphabet)];
            word[len] = '\0';
            total++;
            failed += !win_round_trip(4, argv);
            argv[3] = word; /* last: no word after it to absorb a stray quote */
            failed += !win_round_trip(4, argv);
        }
    }
    CHECK_INT(failed, 0);
    CHECK_INT(total, 1 + 5 + 25 + 125 + 625 + 3125);
}

static char *tail_str(struct run_tail *t)
{
    return run_tail_text(t, NULL);
}

static void test_tail(void)
{
    struct run_tail t = {0};
    char *s;
    size_t len;

    CHECK_INT(run_tail_init(&t, 8), 0);
    s = tail_str(&t);
    CHECK_STR(s, "");
    free(s);
    run_tail_add(&t, "abc", 3);
    s = tail_str(&t);
    CHECK_STR(s, "abc");
    free(s);
    run_tail_add(&t, "defgh", 5); /* exactly full */
    s = tail_str(&t);
    CHECK_STR(s, "abcdefgh");
    free(s);
    run_tail_add(&t, "ij", 2); /* wraps: the oldest two go */
    s = tail_str(&t);
    CHECK_STR(s, "cdefghij");
    free(s);
    for (int i = 0; i < 5; i++)
        run_tail_add(&t, "0123", 4);
    s = tail_str(&t);
    CHECK_STR(s, "01230123");
    free(s);
    run_tail_add(&t, "0123456789ABCDEF", 16); /* one write larger than the ring */
    s = run_tail_text(&t, &len);
    CHECK_STR(s, "89ABCDEF");
    CHECK_INT(len, 8);
    free(s);
    CHECK_INT(t.total, 3 + 5 + 2 + 20 + 16);
    run_tail_free(&t);
    CHECK(t.buf == NULL);
    run_tail_free(NULL);
}

static void test_tail_utf8(void)
{
    struct run_tail t = {0};
    char *s;

    /* "é" is C3 A9: a ring of 4 bytes cuts the first of two, leaving a lone A9 at the start. */
    CHECK_INT(run_tail_init(&t, 4), 0);
    run_tail_add(&t, "\xC3\xA9", 2);
    run_tail_add(&t, "\xC3\xA9z", 3); /* kept: A9 C3 A9 z: the lone A9 is dropped */
    s = tail_str(&t);
    CHECK_STR(s, "\xC3\xA9z");
    free(s);
    run_tail_free(&t);

    CHECK_INT(run_tail_init(&t, 64), 0);
    run_tail_add(&t,
                 "a\xFF"
                 "b\0c\x1B\t\r\n\xE2\x82",
                 11); /* invalid, NUL, ESC, cut at end */
    s = tail_str(&t);
    CHECK_STR(s, "a?b?c?\t\r\n??");
    free(s);
    run_tail_free(&t);
}

static void test_io(void)
{
    static const char fixture[] = "rchar: 323934931\n"
                                  "wchar: 323929600\n"
                                  "syscr: 632687\n"
                                  "syscw: 632675\n"
                                  "read_bytes: 0\n"
                                  "write_bytes: 323932160\n"
                                  "cancelled_write_bytes: 0\n";
    struct run_io io = {1, 2, 3, 4};

    CHECK_INT(run_parse_io(fixture, strlen(fixture), &io), 0);
    CHECK(io.rchar == 323934931ULL);
    CHECK(io.wchar == 323929600ULL);
    CHECK(io.read_bytes == 0);
    CHECK(io.write_bytes == 323932160ULL);
    /* No final newline, a length that stops mid-file. */
    CHECK_INT(run_parse_io(fixture, strlen(fixture) - 1, &io), 0);
    io = (struct run_io){1, 2, 3, 4};
    CHECK_INT(run_parse_io(fixture, 40, &io), -EINVAL); /* read_bytes, write_bytes missing */
    CHECK(io.rchar == 1 && io.write_bytes == 4);        /* untouched */
    CHECK_INT(run_parse_io("rchar: 1\nwchar: x\nread_bytes: 1\nwrite_bytes: 1\n", 47, &io),
              -EINVAL);
    CHECK_INT(run_parse_io("rchar: 99999999999999999999\nwchar: 1\nread_bytes: 1\nwrite_bytes: "
                           "1\n",
                           66, &io),
              -EINVAL);
    CHECK_INT(run_parse_io("", 0, &io), -EINVAL);
}

static json_t *load(const char *text)
{
    json_error_t e;
    json_t *j = json_loads(text, 0, &e);

    if (!j)
        fprintf(stderr, "fixture JSON: %s at %d\n", e.text, e.position);
    return j;
}

static void test_live_line(void)
{
    json_t *l = load("{\"values\":["
                     "{\"path\":\"\\\\PhysicalDisk(_Total)\\\\Disk Read Bytes/sec\",\"value\":"
                     "125829120},"
                     "{\"path\":\"\\\\PhysicalDisk(_Total)\\\\Disk Write Bytes/sec\",\"value\":"
                     "356515840},"
                     "{\"path\":\"\\\\Network Interface(_Total)\\\\Bytes Received/sec\","
                     "\"value\":0},"
                     "{\"path\":\"\\\\Network Interface(_Total)\\\\Bytes Sent/sec\",\"value\":0},"
                     "{\"path\":\"\\\\Memory\\\\Dirty Bytes\",\"value\":1073741824},"
                     "{\"path\":\"\\\\Memory\\\\Writeback Bytes\",\"value\":214748364.8},"
                     "{\"path\":\"\\\\Processor(_Total)\\\\% Processor Time\",\"value\":35.2},"
                     "{\"path\":\"\\\\Processor(0)\\\\% Processor Time\",\"value\":12},"
                     "{\"path\":\"\\\\Processor(1)\\\\% Processor Time\",\"value\":92.4},"
                     "{\"path\":\"\\\\Processor(2)\\\\% Processor Time\",\"value\":null}]}");
    char buf[512];

    CHECK_STR(run_live_line(l, 12, 5.7, buf, sizeof(buf)),
              "perflog run 12: 00:05  disk r 120.0 MiB/s w 340.0 MiB/s  net rx 0 B/s tx 0 B/s  "
              "dirty 1.2 GiB  cpu 35% (busiest 1: 92%)");
    CHECK_DBL(run_latest_dirty(l), 1288490188.8, 0.01);
    CHECK_STR(run_live_line(NULL, 3, 3725, buf, sizeof(buf)),
              "perflog run 3: 1:02:05  disk r - w -  net rx - tx -  dirty -  cpu -");
    CHECK(isnan(run_latest_dirty(NULL)));
    json_decref(l);
}

static const char report_json[] =
    "{\"id\": 12, \"label\": \"cold\", \"host\": \"h1\", \"command\": \"cat /var/tmp/f\","
    " \"exit_code\": 0, \"start_utc\": \"2026-11-29T18:00:00Z\", \"end_utc\": "
    "\"2026-11-29T18:00:04Z\", \"settled_utc\": \"2026-11-29T18:00:10Z\", \"duration_s\": 4,"
    " \"tail_s\": 6,"
    " \"disks\": [{\"instance\": \"vda\", \"read_bytes\": 268435456, \"write_bytes\": 0,"
    "   \"tail_write_bytes\": 1048576, \"avg_read_bytes_per_s\": 67108864,"
    "   \"peak_read_bytes_per_s\": 134217728, \"avg_write_bytes_per_s\": 0,"
    "   \"peak_write_bytes_per_s\": null, \"busy_pct\": 87.6, \"busy_s\": 3.5,"
    "   \"device_bytes_per_s\": 76994194, \"peak_second_bytes_per_s\": 134217728},"
    "  {\"instance\": \"sdb\", \"read_bytes\": 0, \"write_bytes\": 0, \"tail_write_bytes\": 0}],"
    " \"interfaces\": [{\"instance\": \"eth0\", \"rx_bytes\": 2048, \"tx_bytes\": 0,"
    "   \"rx_packets\": 20, \"tx_packets\": 0, \"rx_bytes_per_packet\": 102.4,"
    "   \"tx_bytes_per_packet\": null, \"peak_rx_bytes_per_s\": 1024, \"peak_tx_bytes_per_s\": 0,"
    "   \"errors\": 0, \"discards\": 1},"
    "  {\"instance\": \"eth1\", \"rx_bytes\": 0, \"tx_bytes\": 0, \"rx_packets\": 0,"
    "   \"tx_packets\": 0, \"errors\": 0, \"discards\": 0}],"
    " \"netfs\": [{\"kind\": \"smb\", \"instance\": \"\\\\\\\\fs1\\\\data\", \"read_bytes\": "
    "268435456,"
    "   \"write_bytes\": 0, \"requests\": 256, \"bytes_per_request\": 1048576,"
    "   \"bytes_per_nic_byte\": 0.97, \"avg_rtt_s\": null, \"avg_execute_s\": null},"
    "  {\"kind\": \"nfs\", \"instance\": \"srv:/x\", \"read_bytes\": 0, \"write_bytes\": 1048576,"
    "   \"requests\": 40, \"bytes_per_request\": 26214.4, \"bytes_per_nic_byte\": 0.01,"
    "   \"avg_rtt_s\": 0.0025, \"avg_execute_s\": 0.003},"
    "  {\"kind\": \"nfs\", \"instance\": \"srv:/idle\", \"read_bytes\": 0, \"write_bytes\": 0,"
    "   \"requests\": 0}],"
    " \"tcp\": {\"retransmitted_segments\": 1, \"sent_segments\": 40},"
    " \"cpu\": {\"avg_pct\": 20.4, \"busiest\": {\"instance\": \"3\", \"avg_pct\": 71.5,"
    "   \"privileged_pct\": 40}},"
    " \"memory\": {\"cache_growth_bytes\": 268435456, \"dirty_bytes_at_end\": 1288490189,"
    "   \"writeback_tail_bytes\": 1073741824},"
    " \"process\": {\"io_read_bytes\": 268435456, \"storage_read_bytes\": 268435456,"
    "   \"cache_served_read_pct\": 0, \"io_write_bytes\": 0, \"storage_write_bytes\": 0},"
    " \"payload\": {\"bytes\": 268435456, \"files\": 1, \"on_disk_at_end_pct\": 35.2,"
    "   \"write_amplification\": null, \"ms_per_file\": 4000, \"packets_per_file\": null},"
    " \"tool\": {\"name\": \"dd\", \"claimed_bytes_per_s\": 70000000},"
    " \"throughput\": {\"claimed\": 70000000, \"returned\": 67108864, \"durable\": null,"
    "   \"durable_ms\": 4000},"
    " \"headline\": {\"kind\": \"device_read\", \"bytes_per_s\": 67108864,"
    "   \"capped_at_peak_second\": false, \"cache_served_read_pct\": 0},"
    " \"disk_read_bytes\": 268435456,"
    " \"peers\": [{\"url\": \"http://b:9931\", \"report\": null}]}";

static const char report_text[] =
    "run 12 \"cold\" on h1: cat /var/tmp/f\n"
    "  2026-11-29T18:00:00Z -> 2026-11-29T18:00:04Z, settled 2026-11-29T18:00:10Z\n"
    "  exit code 0, duration 4.0 s, tail 6.0 s\n"
    "\n"
    "  cat returned after 4.00 s and wrote nothing to a local disk.\n"
    "  The devices read 256.0 MiB at 64.0 MiB/s; 0% of what it read came from the page cache.\n"
    "\n"
    "  throughput    durable -, returned 64.0 MiB/s, claimed 66.8 MiB/s (dd)\n"
    "  cache-served  0% of 256.0 MiB read (256.0 MiB from storage)\n"
    "  dirty at exit 1.2 GiB (change from the start); tail 6.0 s, 1.0 GiB written back after "
    "exit; on disk at exit 35%\n"
    "  busiest core  3: 72% (privileged 40%); all cores 20%\n"
    "\n"
    "hosts side by side      this host                 http://b:9931\n"
    "  host                  h1                        (no report)\n"
    "  run                   12                        (no report)\n"
    "  duration + tail       4.0 s + 6.0 s             (no report)\n"
    "  disk read             256.0 MiB                 (no report)\n"
    "  disk write + tail     0 B + 1.0 MiB             (no report)\n"
    "  net tx                0 B                       (no report)\n"
    "  net tx packets        0                         (no report)\n"
    "  net rx                2.0 KiB                   (no report)\n"
    "  net rx packets        20 (102 B/pkt)            (no report)\n"
    "  smb/nfs read + write  256.0 MiB + 1.0 MiB       (no report)\n"
    "  tcp retransmits       1                         (no report)\n"
    "  cpu avg (busiest)     20% (core 3: 72%)         (no report)\n"
    "  dirty at exit         1.2 GiB                   (no report)\n"
    "  headline throughput   64.0 MiB/s read           (no report)\n"
    "\n"
    "disks\n"
    "  vda        read 256.0 MiB (avg 64.0 MiB/s, peak 128.0 MiB/s)  write 0 B + tail 1.0 "
    "MiB (avg 0 B/s, peak -)  busy 88%\n"
    "             3.50 s busy at 73.4 MiB/s; peak second 128.0 MiB/s\n"
    "  (1 idle device hidden; --all shows them)\n"
    "\n"
    "interfaces\n"
    "  eth0       rx 2.0 KiB (20 pkts, 102 B/pkt, peak 1.0 KiB/s)  tx 0 B (0 pkts, - B/pkt, "
    "peak 0 B/s)  errors 0 discards 1\n"
    "  (1 idle interface hidden; --all shows them)\n"
    "\n"
    "network file systems\n"
    "  smb \\\\fs1\\data           read 256.0 MiB  wrote 0 B  256 requests (1048576 B each)  0.97 "
    "B "
    "per NIC byte  rtt - ms  execute - ms\n"
    "  nfs srv:/x               read 0 B  wrote 1.0 MiB  40 requests (26214 B each)  0.01 B per "
    "NIC byte  rtt 2.50 ms  execute 3.00 ms\n"
    "  (1 idle network file system hidden; --all shows them)\n"
    "\n"
    "  tcp           1 of 40 segments retransmitted\n"
    "  memory        cache growth 256.0 MiB, dirty at end 1.2 GiB (from the start), written "
    "back in tail 1.0 GiB\n"
    "  processes     read 256.0 MiB (storage 256.0 MiB), wrote 0 B (storage 0 B)\n"
    "  payload       256.0 MiB, 1 files, write amplification -, 4000.00 ms/file, - "
    "packets/file\n"
    "\n"
    "peer http://b:9931\n"
    "  (no report)\n";

static void test_report_text(void)
{
    json_t *r = load(report_json);
    char *text = run_report_text(r, 0);

    CHECK(r != NULL);
    CHECK_STR(text, report_text);
    if (text && strcmp(text, report_text) != 0)
        fprintf(stderr, "got:\n%s", text);
    free(text);
    json_decref(r);

    /* A run whose processes were not followed says so in one line; a followed one says nothing. */
    r = load("{\"id\": 3, \"process\": {\"followed\": false, \"not_followed_reason\": "
             "\"64 runs are followed already\"}}");
    text = r ? run_report_text(r, 0) : NULL;
    CHECK(text && strstr(text, "  processes     not followed: 64 runs are followed already\n"));
    free(text);
    json_decref(r);
    r = load("{\"id\": 3, \"process\": {\"followed\": null, \"not_followed_reason\": "
             "\"perflogd stopped\"}}");
    text = r ? run_report_text(r, 0) : NULL;
    CHECK(text && strstr(text, "  processes     perflogd stopped\n"));
    free(text);
    json_decref(r);
    r = load("{\"id\": 3, \"process\": {\"followed\": true, \"not_followed_reason\": null}}");
    text = r ? run_report_text(r, 0) : NULL;
    CHECK(text && !strstr(text, "followed"));
    free(text);
    json_decref(r);

    /* An empty object renders with dashes, without crashing. */
    r = json_object();
    text = run_report_text(r, 0);
    CHECK(text != NULL && strstr(text, "run - on -: -\n") == text);
    free(text);
    json_decref(r);
}

/* The verdict lines follow the head: the limit with its rule and first measured evidence (a
 * "not measured" figure left out), the phases in seconds from the start, the tail's limit with
 * the top three when no rule held; a terminal escape in an instance is neutralised. */
static void test_report_verdict_text(void)
{
    json_t *r = load(
        "{\"id\": 7, \"verdict\": {\"limit\": \"disk\", \"instance\": \"vda\", \"utilisation\": "
        "0.97,"
        " \"rule\": \"busy\", \"evidence\": [{\"figure\": \"pressure_io_some_pct\", \"value\": "
        "null,"
        " \"unit\": \"%\", \"seconds\": 0, \"note\": \"not measured\"}, {\"figure\": \"busy_pct\","
        " \"value\": 97.2, \"unit\": \"%\", \"seconds\": 12}], \"phases\": [{\"from_ms\": 1000,"
        " \"to_ms\": 13000, \"limit\": \"none\", \"instance\": null}, {\"from_ms\": 13000, "
        "\"to_ms\":"
        " 41300, \"limit\": \"disk\", \"instance\": \"vda\"}]}, \"tail_verdict\": {\"limit\":"
        " \"none\", \"instance\": null, \"utilisation\": null, \"rule\": \"no single limit\","
        " \"evidence\": [], \"top\": [{\"limit\": \"core\", \"instance\": \"1\\u001b[2J\","
        " \"utilisation\": 0.5}], \"phases\": [{\"from_ms\": 41300, \"to_ms\": 42000, \"limit\":"
        " \"none\", \"instance\": null}]}}");
    char *text = r ? run_report_text(r, 0) : NULL;

    CHECK(text && strstr(text, "\n\n  limit         a disk vda at 97% of its limit (busy; "
                               "busy_pct 97.2% over 12 s)\n"
                               "  phases        0.0-12.0 s none; 12.0-40.3 s a disk vda\n"
                               "  tail limit    no single limit found (highest: one core 1"));
    CHECK(text && !strstr(text, "\x1b[2J"));
    if (text && !strstr(text, "vda at 97% of"))
        fprintf(stderr, "got:\n%s", text);
    free(text);
    json_decref(r);
}

/* A cold cp: the story leads - returned, on disk (durable), the tail's wait and write - and the
 * details follow; --all lists the idle devices; the process rows say why they do not add up. */
static const char cold_cp_json[] =
    "{\"id\": 5, \"command\": \"/bin/cp /var/tmp/a /var/tmp/b\", \"duration_s\": 0.88,"
    " \"throughput\": {\"claimed\": null, \"returned\": 1220161308, \"durable\": 34087042,"
    "   \"durable_ms\": 31500},"
    " \"headline\": {\"kind\": \"durable\", \"bytes_per_s\": 34087042,"
    "   \"capped_at_peak_second\": false},"
    " \"tail\": {\"wait_ms\": 29600, \"write_ms\": 1200, \"write_bytes_per_s\": 912261120,"
    "   \"peak_write_bytes_per_s\": 943718400},"
    " \"kernel\": {\"dirty_expire_centisecs\": 3000, \"dirty_threshold_bytes\": 2147483648,"
    "   \"throttled\": true},"
    " \"memory\": {\"dirty_bytes_at_end\": 1073741824, \"dirty_bytes_at_start\": 209715200,"
    "   \"dirty_high_at_start\": true},"
    " \"disks\": [{\"instance\": \"sdb\", \"read_bytes\": 0, \"write_bytes\": 0}],"
    " \"process\": {\"io_read_bytes\": 1073741824, \"storage_read_bytes\": 0,"
    "   \"storage_write_bytes\": 1073741824},"
    " \"own\": {\"read_bytes\": 1073741824, \"write_bytes\": 1073741824},"
    " \"others\": {\"read_bytes\": 0, \"write_bytes\": 134217728, \"top\": [{\"kind\": \"cgroup\","
    "   \"name\": \"system.slice/smbd.service\", \"write_bytes\": 134217728}]},"
    " \"write_amplification\": {\"ratio\": 1.125, \"own_ratio\": 1.0,"
    "   \"others_excess_bytes\": 134217728},"
    " \"processes_followed\": 2,"
    " \"processes\": [{\"instance\": \"sh:10\", \"io_read_bytes\": 1073741824,"
    "   \"storage_write_bytes\": 1073741824},"
    "  {\"instance\": \"cp:11\", \"io_read_bytes\": 1073741824,"
    "   \"storage_write_bytes\": 1073741824}]}";

/* Whether the text of the report `json` holds `needle`. */
static int text_has(const char *json, const char *needle)
{
    json_t *r = load(json);
    char *text = r ? run_report_text(r, 0) : NULL;
    int ok = text && strstr(text, needle);

    free(text);
    json_decref(r);
    return ok;
}

static void test_report_story(void)
{
    json_t *r = load(cold_cp_json);
    char *text = r ? run_report_text(r, 0) : NULL, *all = r ? run_report_text(r, 1) : NULL;
    const char *story = text ? strstr(text, "  cp returned after") : NULL;

    CHECK(story != NULL);
    CHECK(story && strstr(story, "  cp returned after 0.88 s; its data was on disk 31.5 s after "
                                 "the start (32.5 MiB/s durable).\n"
                                 "  1.0 GiB stayed dirty for 29.6 s (the kernel writes dirty "
                                 "data back after 30.0 s), then was written in 1.20 s at "
                                 "870.0 MiB/s.\n") == story);
    CHECK(text && strstr(text, "Dirty data was already high at the start (200.0 MiB"));
    CHECK(text && strstr(text, "throttled: dirty data reached the kernel's dirty threshold "
                               "(2.0 GiB)"));
    CHECK(text && story && strstr(text, "throughput") > story); /* the story first */
    CHECK(text && strstr(text, "durable 32.5 MiB/s, returned 1.1 GiB/s, claimed -"));
    CHECK(text && !strstr(text, "  sdb") && strstr(text, "(1 idle device hidden; --all"));
    CHECK(all && strstr(all, "  sdb") && !strstr(all, "idle device"));
    CHECK(text && strstr(text, "the rows add up to 0 B read from and 2.0 GiB written to "
                               "storage, the totals are 0 B and 1.0 GiB:\n                a "
                               "parent's counters include the children it reaped"));
    CHECK(text && strstr(text, "  own I/O       read 1.0 GiB, wrote 1.0 GiB; others read 0 B, "
                               "wrote 128.0 MiB: cgroup system.slice/smbd.service (wrote "
                               "128.0 MiB)\n"));
    CHECK(text && strstr(text, "  write ampl.   1.12 x the payload: the run's own 1.00 x, others' "
                               "128.0 MiB extra\n"));
    free(text);
    free(all);
    json_decref(r);

    /* without a payload the moment still shows; without the moment, the tail's end */
    CHECK(text_has("{\"command\": \"cp a b\", \"duration_s\": 1.5, \"tail_s\": 30,"
                   " \"throughput\": {\"durable_ms\": 20000}, \"headline\": {\"kind\": "
                   "\"durable\", \"bytes_per_s\": null}}",
                   "  cp returned after 1.50 s; its data was on disk 20.0 s after the start "
                   "(--payload or --bytes gives the durable rate).\n"));
    CHECK(text_has("{\"command\": \"cp a b\", \"duration_s\": 1.5, \"tail_s\": 120,"
                   " \"throughput\": {\"durable_ms\": null}, \"headline\": {\"kind\": "
                   "\"durable\", \"bytes_per_s\": null}}",
                   "; dirty data was not back to its start level when the tail ended, 2 min 02 s "
                   "after the start, so when its data was on disk is not known.\n"));

    /* rows that add up say so; rows short of the totals say the ticks missed the end */
    CHECK(text_has("{\"process\": {\"storage_read_bytes\": 100, \"storage_write_bytes\": 5000000},"
                   " \"processes_followed\": 1, \"processes\": [{\"instance\": \"dd:3\","
                   " \"storage_read_bytes\": 100, \"storage_write_bytes\": 5000000}]}",
                   "the rows add up to the totals above"));
    CHECK(text_has("{\"process\": {\"storage_read_bytes\": 0, \"storage_write_bytes\": 5000000},"
                   " \"processes_followed\": 1, \"processes\": [{\"instance\": \"dd:3\","
                   " \"storage_read_bytes\": 0, \"storage_write_bytes\": 3000000}]}",
                   "the rows come from the 1 s ticks and miss what a process did after its last "
                   "tick"));
}

/* A copy from a to b: the source's disk read and send next to the destination's receive and
 * disk write, the loopback left out of the network rows. */
static const char two_hosts_json[] =
    "{\"id\": 4, \"host\": \"a\", \"status\": \"settled\", \"duration_s\": 2, \"tail_s\": 1,"
    " \"disks\": [{\"instance\": \"vda\", \"read_bytes\": 268435456, \"write_bytes\": 0,"
    "   \"tail_write_bytes\": 0}],"
    " \"interfaces\": [{\"instance\": \"lo\", \"rx_bytes\": 5000, \"tx_bytes\": 5000,"
    "   \"rx_packets\": 50, \"tx_packets\": 50},"
    "  {\"instance\": \"eth0\", \"rx_bytes\": 660000, \"tx_bytes\": 270000000,"
    "   \"rx_packets\": 10000, \"tx_packets\": 30000}],"
    " \"tcp\": {\"retransmitted_segments\": 2},"
    " \"cpu\": {\"avg_pct\": 30, \"busiest\": {\"instance\": \"1\", \"avg_pct\": 60}},"
    " \"memory\": {\"dirty_bytes_at_end\": 0},"
    " \"headline\": {\"kind\": \"durable\", \"bytes_per_s\": 134217728},"
    " \"peers\": [{\"url\": \"http://b:9931\", \"id\": 9, \"report\": {\"id\": 9, \"host\": \"b\","
    "   \"status\": \"settled\", \"duration_s\": 2, \"tail_s\": 30,"
    "   \"disks\": [{\"instance\": \"sda\", \"read_bytes\": 0, \"write_bytes\": 100000000,"
    "     \"tail_write_bytes\": 168435456}],"
    "   \"interfaces\": [{\"instance\": \"eth0\", \"rx_bytes\": 270000000, \"tx_bytes\": 660000,"
    "     \"rx_packets\": 30000, \"tx_packets\": 10000}],"
    "   \"tcp\": {\"retransmitted_segments\": 0}, \"memory\": {\"dirty_bytes_at_end\": "
    "168435456}}}]}";

static const char two_hosts_text[] =
    "hosts side by side      this host                 http://b:9931\n"
    "  host                  a                         b\n"
    "  run                   4 (settled)               9 (settled)\n"
    "  duration + tail       2.0 s + 1.0 s             2.0 s + 30.0 s\n"
    "  disk read             256.0 MiB                 0 B\n"
    "  disk write + tail     0 B + 0 B                 95.4 MiB + 160.6 MiB\n"
    "  net tx                257.5 MiB                 644.5 KiB\n"
    "  net tx packets        30000 (9000 B/pkt)        10000 (66 B/pkt)\n"
    "  net rx                644.5 KiB                 257.5 MiB\n"
    "  net rx packets        10000 (66 B/pkt)          30000 (9000 B/pkt)\n"
    "  smb/nfs read + write  -                         -\n"
    "  tcp retransmits       2                         0\n"
    "  cpu avg (busiest)     30% (core 1: 60%)         - (core -: -)\n"
    "  dirty at exit         0 B                       160.6 MiB\n"
    "  headline throughput   128.0 MiB/s durable       -\n";

static void test_report_hosts(void)
{
    json_t *r = load(two_hosts_json);
    char *text = r ? run_report_text(r, 0) : NULL;
    const char *at = text ? strstr(text, "hosts side by side") : NULL;
    size_t n = strlen(two_hosts_text);

    CHECK(r != NULL);
    CHECK(at != NULL && strncmp(at, two_hosts_text, n) == 0 && at[n] == '\n');
    if (at && strncmp(at, two_hosts_text, n) != 0)
        fprintf(stderr, "got:\n%s", at);
    /* the table is the first host's only: the peer's own rendering below has none */
    CHECK(at != NULL && strstr(at + 1, "hosts side by side") == NULL);
    free(text);
    json_decref(r);

    /* no peers, no table */
    r = load("{\"id\": 1, \"peers\": []}");
    text = r ? run_report_text(r, 0) : NULL;
    CHECK(text != NULL && strstr(text, "side by side") == NULL);
    free(text);
    json_decref(r);
}

static void test_peer_url(void)
{
    char server[64], *u;
    long long id = 0;

    u = run_peer_url("http://b:9931/", 17);
    CHECK_STR(u, "http://b:9931/api/v1/runs/17");
    CHECK_INT(run_peer_split(u, server, sizeof(server), &id), 0);
    CHECK_STR(server, "http://b:9931");
    CHECK_INT(id, 17);
    free(u);
    CHECK_INT(run_peer_split("http://h/perflog/api/v1/runs/3", server, sizeof(server), &id), 0);
    CHECK_STR(server, "http://h/perflog");
    CHECK_INT(id, 3);
    id = 99;
    CHECK_INT(run_peer_split("http://b:9931", server, sizeof(server), &id), -1);
    CHECK_INT(run_peer_split("http://b/api/v1/runs/", server, sizeof(server), &id), -1);
    CHECK_INT(run_peer_split("http://b/api/v1/runs/1x", server, sizeof(server), &id), -1);
    CHECK_INT(run_peer_split("http://b/api/v1/runs/0", server, sizeof(server), &id), -1);
    CHECK_INT(run_peer_split("/api/v1/runs/5", server, sizeof(server), &id), -1);
    CHECK_INT(
        run_peer_split("http://b/api/v1/runs/99999999999999999999", server, sizeof(server), &id),
        -1);
    CHECK_INT(run_peer_split("http://a-rather-long-host-name/api/v1/runs/5", server, 8, &id), -1);
    CHECK_INT(id, 99);
}

/* The one form of a peer URL, as the daemon and perflog report both check it. */
static void test_peer_url_form(void)
{
    static const char *const bad[] = {
        "file:///etc/passwd",
        "javascript:alert(1)",
        "ftp://h/api/v1/runs/1",
        "http://",
        "http:///api/v1/runs/1",
        "http://u:p@h/api/v1/runs/1",
        "http://h:0/",
        "http://h:65536/",
        "http://h:/",
        "http://h:123456/",
        "http://h x/",
        "http://[::1/",
        "http://[]/",
        "http://[::1]x/",
        "http://[g::1]/",
        "http://h/a?b=1",
        "http://h/a#frag",
        "http://h/%2e%2e",
        "http://h/a b",
        "http://h/\x1b[31m",
        "http://h/\xc3\xa9",
        "http://h/api/v1/runs/",
        "http://h/api/v1/runs/0",
        "http://h/api/v1/runs/7/end",
        "http://h/api/v1/runs/99999999999999999999",
    };
    char server[64];
    const char *why = NULL;
    long long id = -5;

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        why = NULL;
        CHECK_INT(peer_url_parse(bad[i], server, sizeof(server), &id, &why), -EINVAL);
        CHECK(why != NULL);
        if (peer_url_parse(bad[i], NULL, 0, NULL, &why) == 0)
            fprintf(stderr, "accepted: %s\n", bad[i]);
    }
    CHECK_INT(id, -5);
    CHECK_INT(peer_url_parse("HTTP://Host-1.example:9931/", server, sizeof(server), &id, &why), 0);
    CHECK_STR(server, "HTTP://Host-1.example:9931");
    CHECK_INT(id, 0);
    CHECK_INT(
        peer_url_parse("https://[fe80::1]:1/p/api/v1/runs/42", server, sizeof(server), &id, &why),
        0);
    CHECK_STR(server, "https://[fe80::1]:1/p");
    CHECK_INT(id, 42);
    CHECK_INT(peer_url_parse("http://h:65535", NULL, 0, NULL, &why), 0);
    CHECK_INT(peer_url_parse("http://a-rather-long-host-name/api/v1/runs/5", server, 8, &id, &why),
              -ENOSPC);
}

static void test_peer_tokens(void)
{
    struct run_peer_tokens t = {
        .url = {"http://a:1/", "http://b:2"}, .token = {"ta", NULL}, .n = 2};
    char buf[32] = "untouched";

    CHECK_INT(
        run_peer_token_find("http://a:1=x,http://b:2/=tok=en==", "http://b:2", buf, sizeof(buf)),
        0);
    CHECK_STR(buf, "tok=en==");
    CHECK_INT(run_peer_token_find("http://a:1/=x", "http://a:1", buf, sizeof(buf)), 0);
    CHECK_STR(buf, "x");
    strcpy(buf, "untouched");
    CHECK_INT(run_peer_token_find("http://a:1=x", "http://a:12", buf, sizeof(buf)), -1);
    CHECK_INT(run_peer_token_find("http://a:1=", "http://a:1", buf, sizeof(buf)), -1);
    CHECK_INT(run_peer_token_find("http://a:1", "http://a:1", buf, sizeof(buf)), -1);
    CHECK_INT(run_peer_token_find(",,", "http://a:1", buf, sizeof(buf)), -1);
    CHECK_INT(run_peer_token_find(NULL, "http://a:1", buf, sizeof(buf)), -1);
    CHECK_INT(run_peer_token_find("http://a:1=0123456789abcdef", "http://a:1", buf, 8), -1);
    CHECK_STR(buf, "untouched");
    /* the option wins; a peer with none given gets none, whatever the local token is */
    unsetenv("PERFLOG_PEER_TOKENS");
    CHECK_STR(run_peer_token(&t, "http://a:1", buf, sizeof(buf)), "ta");
    CHECK(run_peer_token(&t, "http://b:2", buf, sizeof(buf)) == NULL);
    CHECK(run_peer_token(NULL, "http://c:3", buf, sizeof(buf)) == NULL);
    setenv("PERFLOG_PEER_TOKENS", "http://b:2=env", 1);
    CHECK_STR(run_peer_token(&t, "http://b:2", buf, sizeof(buf)), "env");
    CHECK_STR(run_peer_token(&t, "http://a:1", buf, sizeof(buf)), "ta");
    unsetenv("PERFLOG_PEER_TOKENS");
}

static void test_term_escape(void)
{
    char buf[64], *d;

    CHECK_STR(term_escape("\x1b[31m\x07", buf, sizeof(buf)), "\\x1b[31m\\x07");
    CHECK_STR(term_escape("a\tb\nc\rd\x7f", buf, sizeof(buf)), "a\\tb\\nc\\rd\\x7f");
    CHECK_STR(term_escape("caf\xc3\xa9 \xe6\x97\xa5", buf, sizeof(buf)),
              "caf\xc3\xa9 \xe6\x97\xa5");
    /* C1 controls (8-bit CSI), bidi overrides, broken UTF-8: escaped */
    CHECK_STR(term_escape("\xc2\x9b"
                          "2J",
                          buf, sizeof(buf)),
              "\\u009b2J");
    CHECK_STR(term_escape("x\xe2\x80\xaey", buf, sizeof(buf)), "x\\u202ey");
    CHECK_STR(term_escape("\x9b\xff\xc3", buf, sizeof(buf)), "\\x9b\\xff\\xc3");
    CHECK_STR(term_escape("\xed\xa0\x80", buf, sizeof(buf)), "\\xed\\xa0\\x80"); /* a surrogate */
    CHECK_STR(term_escape("\xc0\xaf", buf, sizeof(buf)), "\\xc0\\xaf");          /* overlong */
    CHECK_STR(term_escape(NULL, buf, sizeof(buf)), "-");
    /* cut at a piece boundary, with "..." */
    CHECK_STR(term_escape("abcdefghijkl", buf, 8), "abcd...");
    CHECK_STR(term_escape("abcdefg", buf, 8), "abcdefg");
    CHECK_STR(term_escape("ab\x1b\x1b", buf, 8), "ab...");
    CHECK_STR(term_escape("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", buf, 8), "\xc3\xa9\xc3\xa9...");
    d = term_escape_dup("l1\n\tl2\x1b", 7, TERM_KEEP_LINES);
    CHECK_STR(d, "l1\n\tl2\\x1b");
    free(d);
    d = term_escape_dup("\x01\x02", 2, 0);
    CHECK_STR(d, "\\x01\\x02");
    free(d);
}

static void write_file(const char *path, size_t n)
{
    FILE *f = fopen(path, "wb");

    CHECK(f != NULL);
    for (size_t i = 0; f && i < n; i++)
        fputc('x', f);
    if (f)
        fclose(f);
}

/* --payload DIR: the regular files below it, nested ones too, links not followed. */
static void test_path_size(void)
{
    char dir[] = "/tmp/perflog-test-size.XXXXXX", p[256], err[256] = "";
    int64_t bytes = -1, files = -1;

    CHECK(mkdtemp(dir) != NULL);
    snprintf(p, sizeof(p), "%s/a", dir);
    write_file(p, 100);
    snprintf(p, sizeof(p), "%s/sub", dir);
    CHECK_INT(mkdir(p, 0700), 0);
    snprintf(p, sizeof(p), "%s/sub/b", dir);
    write_file(p, 23);
    snprintf(p, sizeof(p), "%s/link", dir);
    CHECK_INT(symlink("/etc/passwd", p), 0);
    CHECK_INT(cli_path_size(dir, &bytes, &files, err, sizeof(err)), 0);
    CHECK_INT(bytes, 123);
    CHECK_INT(files, 2);
    /* a file: its size, and *files untouched */
    snprintf(p, sizeof(p), "%s/a", dir);
    files = -1;
    CHECK_INT(cli_path_size(p, &bytes, &files, err, sizeof(err)), 0);
    CHECK_INT(bytes, 100);
    CHECK_INT(files, -1);
    snprintf(p, sizeof(p), "%s/nosuch", dir);
    CHECK_INT(cli_path_size(p, &bytes, &files, err, sizeof(err)), -1);
    CHECK(strstr(err, "No such file") != NULL);
    snprintf(p, sizeof(p), "rm -rf '%s'", dir);
    CHECK_INT(system(p), 0);
}

int main(void)
{
    test_quote();
    test_win_quote();
    test_tail();
    test_tail_utf8();
    test_io();
    test_live_line();
    test_report_text();
    test_report_story();
    test_report_hosts();
    test_report_verdict_text();
    test_peer_url();
    test_peer_url_form();
    test_peer_tokens();
    test_term_escape();
    test_path_size();
    return tl_done();
}
