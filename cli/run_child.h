/*
 * run_child.h - the platform half of `perflog run` (cmd_run.c has the rest): start CMD with its
 * stdout and stderr on pipes, hand what it writes to the caller, wait for its exit a slice at a
 * time (so the caller can draw its live line between slices), and give its exit code and the
 * bytes its process tree moved through read and write calls.
 *
 * run_child_posix.c: fork and execvp, poll on the pipes and a pidfd, the totals from the
 * /proc/self/io deltas of this process (the kernel adds each reaped child's counters to its
 * parent's), less the bytes this process moved itself.
 * run_child_windows.c: CreateProcessW into a job object (the whole tree is in it, and it is ended
 * when perflog exits), a reader thread per pipe, the totals from the job's I/O accounting.
 *
 * Single-threaded use: every call, and every call of the sink, is on the caller's thread.
 */
#ifndef PERFLOG_CLI_RUN_CHILD_H
#define PERFLOG_CLI_RUN_CHILD_H

#include <stddef.h>
#include <stdint.h>

struct run_child;

/* Where CMD's output goes. */
struct run_child_sink {
    /*
     * CMD wrote buf[0..len) to its stdout (stream 1) or stderr (stream 2). Returns 0, or -1 when
     * it cannot be passed on (our side of that stream is closed): that pipe is then closed, so
     * CMD sees a broken pipe as it would have without perflog in between.
     */
    int (*output)(void *ctx, int stream, const char *buf, size_t len);
    void *ctx;
};

/* How CMD ended, and what its process tree moved. */
struct run_child_result {
    int exit_code;    /* CMD's exit status (POSIX: 128+N after signal N); 127: not found */
    int have_io;      /* io_read_bytes and io_write_bytes are known */
    int have_storage; /* storage_read_bytes and storage_write_bytes are known (Linux only) */
    uint64_t io_read_bytes, io_write_bytes;           /* through read and write calls */
    uint64_t storage_read_bytes, storage_write_bytes; /* fetched from / sent to storage */
};

/* The paragraph of `perflog run --help` about the exit status and the child on this platform. */
extern const char run_child_help[];

/*
 * CMD's words argv[0..argc) as the text stored with the run: a POSIX shell line, or the Windows
 * command line that is run. Returns a malloc'd UTF-8 string, or NULL (out of memory, or on
 * Windows a program name holding '"').
 */
char *run_child_command_text(int argc, char **argv);

/*
 * Start argv[0] (NULL-terminated argv) with its stdout and stderr on pipes and stdin shared. On
 * success returns 0 with *out set. Otherwise returns -1 with *out NULL, res filled (exit_code 127
 * when the program was not found, 126 when it could not be started, and the I/O totals when
 * known) and the reason in msg ("command not found", ...).
 */
int run_child_start(char **argv, struct run_child **out, struct run_child_result *res, char *msg,
                    size_t cap);

/*
 * Pass CMD's output to sink until CMD has exited or timeout_ms (>= 0) have passed. Returns 1 once
 * CMD has exited (call run_child_end next), else 0.
 */
int run_child_wait(struct run_child *ch, int timeout_ms, const struct run_child_sink *sink);

/*
 * After run_child_wait returned 1: pass on what CMD wrote before it exited (a descendant that
 * still holds the pipes is not waited for), and fill res. *own_written is the caller's count of
 * the bytes it has written to its own stdout and stderr since run_child_start (passed-through
 * output, the live line), which the sink keeps up to date: the POSIX totals include this
 * process's own I/O and take it off; it is read after the last output has been passed on.
 */
void run_child_end(struct run_child *ch, const struct run_child_sink *sink,
                   const uint64_t *own_written, struct run_child_result *res);

/*
 * Free ch (accepts NULL). On Windows this closes the job object, which ends any process of CMD's
 * tree still running; call it when perflog is done with the run.
 */
void run_child_free(struct run_child *ch);

#endif
