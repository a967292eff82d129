/*
 * run_child_posix.c - run_child.h with fork and execvp, poll on the two pipes and a pidfd.
 *
 * The totals are this process's /proc/self/io deltas: they include CMD and every descendant this
 * process reaped (the kernel adds a waited-for child's counters to its parent's:
 * Documentation/filesystems/proc.rst, 3.3). The bytes this process itself moves while passing the
 * output through (pipe reads here, the caller's writes to stdout/stderr) are taken off, so rchar
 * and wchar describe CMD, not the pass-through.
 */
#include "cli/run.h"
#include "cli/run_child.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

const char run_child_help[] =
    "If the daemon cannot be reached, CMD is not run and the exit status is 1. Otherwise the exit\n"
    "status is CMD's (128+N when a signal N killed it, 127 when it was not found, 126 when it\n"
    "could not be executed), whatever became of the report; report problems go to stderr.\n";

struct run_child {
    pid_t pid;
    int out, err, pidfd; /* -1: closed (or, for pidfd, not available) */
    int wstatus;
    int have_io0;
    struct run_io io0;
    uint64_t own_read; /* bytes read from the pipes, taken off rchar */
};

char *run_child_command_text(int argc, char **argv)
{
    return run_shell_quote(argc, argv);
}

static double mono_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int read_self_io(struct run_io *io)
{
    char buf[1024];
    int fd = open("/proc/self/io", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf));

    if (fd >= 0)
        close(fd);
    return n < 0 ? -1 : run_parse_io(buf, (size_t)n, io);
}

static uint64_t minus(uint64_t a, uint64_t b)
{
    return a > b ? a - b : 0;
}

/* The totals since io0, less own_read and own_written; have_io stays 0 when /proc/self/io could
 * not be read at either end. */
static void fill_io(struct run_child_result *res, const struct run_child *ch, uint64_t own_written)
{
    struct run_io io1;

    if (!ch->have_io0 || read_self_io(&io1) < 0)
        return;
    res->have_io = res->have_storage = 1;
    res->io_read_bytes = minus(io1.rchar - ch->io0.rchar, ch->own_read);
    res->io_write_bytes = minus(io1.wchar - ch->io0.wchar, own_written);
    res->storage_read_bytes = io1.read_bytes - ch->io0.read_bytes;
    res->storage_write_bytes = io1.write_bytes - ch->io0.write_bytes;
}

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

/*
 * Move what one pipe has to the sink. Returns 0, or -1 at the end of the stream (EOF, or the sink
 * refused it: our side is closed, so CMD sees EPIPE as it would have without us).
 */
static int pass_through(struct run_child *ch, const struct run_child_sink *sink, int from,
                        int stream)
{
    char buf[65536];
    ssize_t n = read(from, buf, sizeof(buf));

    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return 0;
    if (n <= 0)
        return -1;
    ch->own_read += (uint64_t)n;
    return sink->output(sink->ctx, stream, buf, (size_t)n);
}

/* The child: stdout and stderr to the pipes, then CMD; errno to the status pipe if exec fails. */
static void child(char **argv, const int out[2], const int err[2], const int status[2])
{
    int e;

    close(out[0]);
    close(err[0]);
    close(status[0]);
    if (dup2(out[1], 1) < 0 || dup2(err[1], 2) < 0) {
        e = errno;
        goto fail;
    }
    close(out[1]);
    close(err[1]);
    execvp(argv[0], argv);
    e = errno;
fail:
    if (write(status[1], &e, sizeof(e)) < 0)
        _exit(127);
    _exit(127);
}

static int exec_failure_code(int e)
{
    return e == ENOENT || e == ENOTDIR ? 127 : 126;
}

/* pidfd_open: a descriptor that polls readable when the child exits (Linux 5.3); -1 without. */
static int open_pidfd(pid_t pid)
{
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    (void)pid;
    return -1;
#endif
}

static int exit_code_of(int wstatus)
{
    if (WIFEXITED(wstatus))
        return WEXITSTATUS(wstatus);
    if (WIFSIGNALED(wstatus))
        return 128 + WTERMSIG(wstatus);
    return 1;
}

/* A start that failed with errno e: the code, the message and the totals of what did happen. */
static int start_failed(struct run_child *ch, int e, int code, struct run_child_result *res,
                        char *msg, size_t cap)
{
    res->exit_code = code;
    fill_io(res, ch, 0);
    snprintf(msg, cap, "%s", e == ENOENT ? "command not found" : strerror(e));
    free(ch);
    return -1;
}

int run_child_start(char **argv, struct run_child **out, struct run_child_result *res, char *msg,
                    size_t cap)
{
    struct run_child *ch = calloc(1, sizeof(*ch));
    int po[2] = {-1, -1}, pe[2] = {-1, -1}, status[2] = {-1, -1}, e = 0, wstatus;
    ssize_t n;

    *out = NULL;
    *res = (struct run_child_result){0};
    if (!ch) {
        res->exit_code = 126;
        snprintf(msg, cap, "out of memory");
        return -1;
    }
    ch->have_io0 = read_self_io(&ch->io0) == 0;
    if (pipe2(po, O_CLOEXEC) < 0 || pipe2(pe, O_CLOEXEC) < 0 || pipe2(status, O_CLOEXEC) < 0) {
        e = errno;
        for (int i = 0; i < 2; i++) {
            close_fd(&po[i]);
            close_fd(&pe[i]);
            close_fd(&status[i]);
        }
        return start_failed(ch, e, exec_failure_code(e), res, msg, cap);
    }
    fflush(NULL);
    ch->pid = fork();
    if (ch->pid < 0) {
        e = errno;
        for (int i = 0; i < 2; i++) {
            close(po[i]);
            close(pe[i]);
            close(status[i]);
        }
        return start_failed(ch, e, 126, res, msg, cap);
    }
    if (ch->pid == 0)
        child(argv, po, pe, status);
    /* Ctrl-C reaches CMD, whose exit we then report, as system(3) does; a closed stdout becomes
     * EPIPE on our write, and CMD's own when we close its pipe. */
    signal(SIGINT, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    close(po[1]);
    close(pe[1]);
    close(status[1]);
    do
        n = read(status[0], &e, sizeof(e));
    while (n < 0 && errno == EINTR);
    close(status[0]);
    if (n == (ssize_t)sizeof(e)) {
        close(po[0]);
        close(pe[0]);
        waitpid(ch->pid, &wstatus, 0);
        signal(SIGINT, SIG_DFL);
        signal(SIGQUIT, SIG_DFL);
        return start_failed(ch, e, exec_failure_code(e), res, msg, cap);
    }
    ch->out = po[0];
    ch->err = pe[0];
    ch->pidfd = open_pidfd(ch->pid);
    *out = ch;
    return 0;
}

int run_child_wait(struct run_child *ch, int timeout_ms, const struct run_child_sink *sink)
{
    double deadline = mono_s() + timeout_ms / 1000.0;

    for (;;) {
        struct pollfd p[3] = {{.fd = ch->out, .events = POLLIN},
                              {.fd = ch->err, .events = POLLIN},
                              {.fd = ch->pidfd, .events = POLLIN}};
        double now = mono_s();
        int wait_ms = now >= deadline ? 0 : (int)((deadline - now) * 1000) + 1;
        int r = poll(p, 3, wait_ms), closed;

        if (r < 0 && errno != EINTR) {
            /* Nothing left to watch with: wait for CMD itself. */
            waitpid(ch->pid, &ch->wstatus, 0);
            return 1;
        }
        if (p[0].revents && pass_through(ch, sink, ch->out, 1) < 0)
            close_fd(&ch->out);
        if (p[1].revents && pass_through(ch, sink, ch->err, 2) < 0)
            close_fd(&ch->err);
        now = mono_s();
        /* Both pipes closed and no pidfd: the child is ending, a blocking wait is short. */
        closed = ch->out < 0 && ch->err < 0 && ch->pidfd < 0;
        if ((p[2].revents || closed || (ch->pidfd < 0 && now >= deadline)) &&
            waitpid(ch->pid, &ch->wstatus, closed ? 0 : WNOHANG) == ch->pid)
            return 1;
        if (now >= deadline)
            return 0;
    }
}

void run_child_end(struct run_child *ch, const struct run_child_sink *sink,
                   const uint64_t *own_written, struct run_child_result *res)
{
    /* What CMD wrote just before it exited; a descendant still holding the pipes is not waited
     * for. */
    for (int i = 0; i < 2; i++) {
        int *fd = i ? &ch->err : &ch->out;

        if (*fd < 0)
            continue;
        fcntl(*fd, F_SETFL, O_NONBLOCK);
        while (pass_through(ch, sink, *fd, i ? 2 : 1) == 0 &&
               poll(&(struct pollfd){.fd = *fd, .events = POLLIN}, 1, 0) > 0)
            ;
        close_fd(fd);
    }
    close_fd(&ch->pidfd);
    signal(SIGINT, SIG_DFL);
    signal(SIGQUIT, SIG_DFL);
    *res = (struct run_child_result){.exit_code = exit_code_of(ch->wstatus)};
    fill_io(res, ch, *own_written);
}

void run_child_free(struct run_child *ch)
{
    free(ch);
}
