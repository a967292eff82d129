/*
 * run_child_windows.c - run_child.h with CreateProcessW and a job object.
 *
 * CMD is created suspended, put in a job object and only then resumed, so every process it starts
 * is in the job from its first instruction. The job has JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE: when
 * perflog exits, however it exits, what is left of the tree is ended instead of orphaned. The
 * totals are the job's I/O accounting (JobObjectBasicAndIoAccountingInformation): the bytes the
 * whole tree moved through read and write calls (files, pipes and sockets alike, like Linux's
 * rchar and wchar). perflog itself is not in the job, so nothing needs taking off; Windows has no
 * per-process split of storage I/O, so have_storage stays 0.
 *
 * Anonymous pipes do not do overlapped I/O: one reader thread per pipe reads into its own buffer
 * and hands it over (its "ready" event), then waits until the main thread has passed it on (its
 * "consumed" event). So the sink is only ever called on the main thread, and a CMD that writes
 * faster than we pass on blocks on its pipe, as on POSIX. The main thread waits on the process and
 * the ready events with WaitForMultipleObjects, at most the caller's timeout.
 *
 * The command line itself is made by run_cmdline_windows.c.
 */
#include "cli/run.h"
#include "cli/run_child.h"
#include "cli/win_error.h"

#include <errno.h>
#include <fcntl.h>
#include <io.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>

#define READ_BUF_BYTES  65536
#define PIPE_BUF_BYTES  65536
#define DRAIN_QUIET_MS  200  /* after CMD's exit, a pipe silent this long is not waited for */
#define DRAIN_MAX_MS    2000 /* nor any pipe longer than this */
#define READER_STOP_MS  1000 /* the longest wait for a reader thread told to stop */
#define CMDLINE_MAX_LEN 32767

const char run_child_help[] =
    "If the daemon cannot be reached, CMD is not run and the exit status is 1. Otherwise the exit\n"
    "status is CMD's exit code (127 when it was not found, 126 when it could not be started),\n"
    "whatever became of the report; report problems go to stderr.\n"
    "\n"
    "On Windows CMD is started with CreateProcess, not a shell: a cmd.exe built-in needs\n"
    "cmd /c (perflog run -- cmd /c \"copy a b\"), a script its extension. CMD and every\n"
    "process it starts run in a job object: the bytes they read and write are sent with the\n"
    "run, and those still running when perflog exits are ended with it. Ctrl+C goes to CMD,\n"
    "whose exit is then reported.\n";

/* One of CMD's two output pipes and the thread that reads it. */
struct stream {
    int stream;      /* 1: stdout, 2: stderr */
    HANDLE rd;       /* our end of the pipe (the reader's while it runs) */
    HANDLE thread;   /* the reader */
    HANDLE ready;    /* auto-reset, set by the reader: buf holds len bytes, or eof */
    HANDLE consumed; /* auto-reset, set by us: buf may be refilled (or quit is set) */
    volatile LONG quit;
    int open; /* its output is being passed on */
    int eof;
    DWORD len;
    char buf[READ_BUF_BYTES];
};

struct run_child {
    HANDLE process, job; /* job NULL: CMD could not be put in one */
    struct stream s[2];
    int old_mode[2]; /* fd 1 and 2's modes before binary, -1: not changed */
};

/* The reader thread: hand over each read, until EOF (every writer has closed the pipe), an error,
 * or quit. Wakes the main thread with ready in every case. */
static DWORD WINAPI reader(void *arg)
{
    struct stream *st = arg;

    for (;;) {
        DWORD n = 0;
        BOOL ok = !st->quit && ReadFile(st->rd, st->buf, sizeof(st->buf), &n, NULL);

        if (ok && n == 0)
            continue; /* a zero-byte write */
        st->len = n;
        st->eof = !ok;
        SetEvent(st->ready);
        if (!ok)
            return 0;
        WaitForSingleObject(st->consumed, INFINITE);
        if (st->quit)
            return 0;
    }
}

/* The UTF-8 line as the wide string CreateProcessW takes, malloc'd; NULL on failure. */
static wchar_t *wide_line(const char *line)
{
    int n = MultiByteToWideChar(CP_UTF8, 0, line, -1, NULL, 0);
    wchar_t *w = n > 0 ? malloc((size_t)n * sizeof(wchar_t)) : NULL;

    if (w && MultiByteToWideChar(CP_UTF8, 0, line, -1, w, n) != n) {
        free(w);
        w = NULL;
    }
    return w;
}

/* Ctrl+C and Ctrl+Break reach every process of the console: CMD acts on them and we report its
 * exit, as system(3) does on POSIX. A handler rather than SetConsoleCtrlHandler(NULL, TRUE), whose
 * "ignore" children inherit. Closing the console still ends us, and the job then ends CMD. */
static BOOL WINAPI ignore_interrupt(DWORD type)
{
    return type == CTRL_C_EVENT || type == CTRL_BREAK_EVENT;
}

/* A pipe whose write end (for CMD) is inheritable and read end (ours) is not. */
static int make_pipe(HANDLE *rd, HANDLE *wr)
{
    SECURITY_ATTRIBUTES sa = {.nLength = sizeof(sa), .bInheritHandle = TRUE};

    if (!CreatePipe(rd, wr, &sa, PIPE_BUF_BYTES))
        return -1;
    if (!SetHandleInformation(*rd, HANDLE_FLAG_INHERIT, 0)) {
        CloseHandle(*rd);
        CloseHandle(*wr);
        return -1;
    }
    return 0;
}

/* The job: its processes are ended when its last handle (ours, not inherited) closes. NULL when
 * it cannot be made. */
static HANDLE make_job(void)
{
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION li = {0};
    HANDLE job = CreateJobObjectW(NULL, NULL);

    li.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
    if (job && !SetInformationJobObject(job, JobObjectExtendedLimitInformation, &li, sizeof(li))) {
        CloseHandle(job);
        job = NULL;
    }
    return job;
}

/*
 * CreateProcessW of line, suspended, with the three standard handles. Only those three are
 * inherited (PROC_THREAD_ATTRIBUTE_HANDLE_LIST, Vista and later), so no socket or other handle of
 * ours leaks into CMD; where the list cannot be used (e.g. a Windows 7 console handle), every
 * inheritable handle is, which here are only the pipe ends and stdin. Returns 0 or the error.
 */
static DWORD create(wchar_t *line, HANDLE in, HANDLE out, HANDLE err, PROCESS_INFORMATION *pi)
{
    STARTUPINFOEXW si = {0};
    HANDLE list[3];
    DWORD n = 0, flags = CREATE_SUSPENDED, e;
    SIZE_T size = 0;
    void *attrs = NULL;

    si.StartupInfo.cb = sizeof(si.StartupInfo);
    si.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
    si.StartupInfo.hStdInput = in;
    si.StartupInfo.hStdOutput = out;
    si.StartupInfo.hStdError = err;
    if (in)
        list[n++] = in;
    list[n++] = out;
    list[n++] = err;
    InitializeProcThreadAttributeList(NULL, 1, 0, &size);
    attrs = size ? malloc(size) : NULL;
    if (attrs && InitializeProcThreadAttributeList(attrs, 1, 0, &size)) {
        if (UpdateProcThreadAttribute(attrs, 0, PROC_THREAD_ATTRIBUTE_HANDLE_LIST, list,
                                      n * sizeof(HANDLE), NULL, NULL)) {
            si.StartupInfo.cb = sizeof(si);
            si.lpAttributeList = attrs;
            if (CreateProcessW(NULL, line, NULL, NULL, TRUE, flags | EXTENDED_STARTUPINFO_PRESENT,
                               NULL, NULL, &si.StartupInfo, pi))
                e = 0;
            else
                e = GetLastError();
            DeleteProcThreadAttributeList(attrs);
            free(attrs);
            if (e != ERROR_INVALID_PARAMETER)
                return e;
            si.StartupInfo.cb = sizeof(si.StartupInfo);
            si.lpAttributeList = NULL;
        } else {
            DeleteProcThreadAttributeList(attrs);
            free(attrs);
        }
    } else {
        free(attrs);
    }
    if (CreateProcessW(NULL, line, NULL, NULL, TRUE, flags, NULL, NULL, &si.StartupInfo, pi))
        return 0;
    return GetLastError();
}

static int start_failed(DWORD e, struct run_child_result *res, char *msg, size_t cap)
{
    int not_found = e == ERROR_FILE_NOT_FOUND || e == ERROR_PATH_NOT_FOUND;

    res->exit_code = not_found ? 127 : 126;
    if (not_found)
        snprintf(msg, cap, "command not found");
    else
        cli_win_error(e, msg, cap);
    return -1;
}

/* Our stdin as an inheritable handle for CMD, or NULL (CMD then has none). */
static HANDLE inheritable_stdin(void)
{
    HANDLE in = GetStdHandle(STD_INPUT_HANDLE), dup = NULL;

    if (in && in != INVALID_HANDLE_VALUE &&
        !DuplicateHandle(GetCurrentProcess(), in, GetCurrentProcess(), &dup, 0, TRUE,
                         DUPLICATE_SAME_ACCESS))
        dup = NULL;
    return dup;
}

static void close_handle(HANDLE *h)
{
    if (*h)
        CloseHandle(*h);
    *h = NULL;
}

/* Our end of stream st and its reader: events made and the thread started. */
static int stream_start(struct stream *st, int stream)
{
    st->stream = stream;
    st->ready = CreateEventW(NULL, FALSE, FALSE, NULL);
    st->consumed = CreateEventW(NULL, FALSE, FALSE, NULL);
    if (st->ready && st->consumed)
        st->thread = CreateThread(NULL, 0, reader, st, 0, NULL);
    st->open = st->thread != NULL;
    return st->open ? 0 : -1;
}

/* Close what stream st holds once its reader has returned (or never started); 0, or -1 when the
 * reader is still running after wait_ms, its handles then left to it. */
static int stream_close(struct stream *st, DWORD wait_ms)
{
    st->open = 0;
    if (st->thread) {
        if (WaitForSingleObject(st->thread, wait_ms) != WAIT_OBJECT_0)
            return -1;
        close_handle(&st->thread);
    }
    close_handle(&st->rd);
    close_handle(&st->ready);
    close_handle(&st->consumed);
    return 0;
}

/*
 * Tell st's reader to stop and close our end, so CMD's next write to it fails as a closed pipe
 * does. A reader blocked in ReadFile is woken with CancelSynchronousIo; one that does not stop in
 * time (a CancelSynchronousIo that missed it) keeps its handles until run_child_free.
 */
static void stream_stop(struct stream *st)
{
    InterlockedExchange(&st->quit, 1);
    if (st->thread) {
        CancelSynchronousIo(st->thread);
        SetEvent(st->consumed);
    }
    stream_close(st, READER_STOP_MS);
}

/* The reader of st handed something over: pass it on (or, at its end, close the stream). */
static void stream_take(struct stream *st, const struct run_child_sink *sink)
{
    if (st->eof)
        stream_close(st, INFINITE); /* the reader has returned or is returning */
    else if (sink->output(sink->ctx, st->stream, st->buf, st->len) < 0)
        stream_stop(st);
    else
        SetEvent(st->consumed);
}

/* fd 1 and 2 in binary mode while CMD's bytes pass through (its line ends are its own). */
static void binary_output(struct run_child *ch)
{
    fflush(NULL);
    for (int fd = 1; fd <= 2; fd++)
        ch->old_mode[fd - 1] = _setmode(fd, _O_BINARY);
}

static void restore_output(struct run_child *ch)
{
    for (int fd = 1; fd <= 2; fd++)
        if (ch->old_mode[fd - 1] >= 0)
            _setmode(fd, ch->old_mode[fd - 1]);
}

int run_child_start(char **argv, struct run_child **out, struct run_child_result *res, char *msg,
                    size_t cap)
{
    struct run_child *ch = calloc(1, sizeof(*ch));
    HANDLE in = NULL, wr[2] = {NULL, NULL};
    PROCESS_INFORMATION pi = {0};
    char *line8 = NULL;
    wchar_t *line = NULL;
    int argc = 0, rc = -1;
    DWORD e = 0;

    *out = NULL;
    *res = (struct run_child_result){.exit_code = 126};
    while (argv[argc])
        argc++;
    if (!ch) {
        snprintf(msg, cap, "out of memory");
        return -1;
    }
    ch->old_mode[0] = ch->old_mode[1] = -1;
    line8 = run_child_command_text(argc, argv);
    line = line8 ? wide_line(line8) : NULL;
    if (!line8 && argc > 0 && strchr(argv[0], '"')) {
        snprintf(msg, cap, "a program name cannot hold '\"'");
        goto out;
    }
    if (!line || wcslen(line) > CMDLINE_MAX_LEN) {
        snprintf(msg, cap, "%s",
                 line ? "longer than the 32767 characters of a command line" : "out of memory");
        goto out;
    }
    if (make_pipe(&ch->s[0].rd, &wr[0]) < 0 || make_pipe(&ch->s[1].rd, &wr[1]) < 0) {
        cli_win_error(GetLastError(), msg, cap);
        goto out;
    }
    in = inheritable_stdin();
    fflush(NULL);
    e = create(line, in, wr[0], wr[1], &pi);
    if (e) {
        rc = start_failed(e, res, msg, cap);
        goto out;
    }
    ch->process = pi.hProcess;
    ch->job = make_job();
    if (!ch->job || !AssignProcessToJobObject(ch->job, pi.hProcess)) {
        /* E.g. Windows 7, where a process already in a job cannot be put in another. */
        fprintf(stderr,
                "perflog run: %s cannot be put in a job object (error %lu): its I/O totals are "
                "not sent, and processes it leaves running are not ended\n",
                argv[0], (unsigned long)GetLastError());
        close_handle(&ch->job);
    }
    SetConsoleCtrlHandler(ignore_interrupt, TRUE);
    if (ResumeThread(pi.hThread) == (DWORD)-1) {
        e = GetLastError();
        TerminateProcess(pi.hProcess, 126);
        SetConsoleCtrlHandler(ignore_interrupt, FALSE);
        rc = start_failed(e, res, msg, cap);
        goto out;
    }
    close_handle(&wr[0]);
    close_handle(&wr[1]);
    binary_output(ch);
    for (int i = 0; i < 2; i++)
        if (stream_start(&ch->s[i], i + 1) < 0)
            stream_stop(&ch->s[i]); /* its output is lost, CMD gets a closed pipe */
    rc = 0;
out:
    close_handle(&pi.hThread);
    close_handle(&in);
    close_handle(&wr[0]);
    close_handle(&wr[1]);
    free(line);
    free(line8);
    if (rc == 0) {
        *out = ch;
    } else {
        run_child_free(ch); /* no reader was started: this closes the pipes' read ends */
    }
    return rc;
}

/* The handles to wait on: the process (unless only the streams are wanted) and the ready event
 * of each open stream, whose index goes in who[]. Returns their count. */
static DWORD wait_set(struct run_child *ch, int with_process, HANDLE h[3], int who[3])
{
    DWORD n = 0;

    if (with_process) {
        h[n] = ch->process;
        who[n++] = -1;
    }
    for (int i = 0; i < 2; i++)
        if (ch->s[i].open) {
            h[n] = ch->s[i].ready;
            who[n++] = i;
        }
    return n;
}

int run_child_wait(struct run_child *ch, int timeout_ms, const struct run_child_sink *sink)
{
    ULONGLONG deadline = GetTickCount64() + (ULONGLONG)timeout_ms;

    for (;;) {
        HANDLE h[3];
        int who[3];
        DWORD n = wait_set(ch, 1, h, who), r;
        ULONGLONG now = GetTickCount64();

        r = WaitForMultipleObjects(n, h, FALSE, now >= deadline ? 0 : (DWORD)(deadline - now));
        /* The process comes first: its exit wins, and end passes on what is left. */
        if (r == WAIT_OBJECT_0)
            return 1;
        if (r > WAIT_OBJECT_0 && r < WAIT_OBJECT_0 + n)
            stream_take(&ch->s[who[r - WAIT_OBJECT_0]], sink);
        else if (r != WAIT_TIMEOUT)
            return WaitForSingleObject(ch->process, INFINITE) == WAIT_OBJECT_0; /* WAIT_FAILED */
        if (GetTickCount64() >= deadline)
            return 0;
    }
}

void run_child_end(struct run_child *ch, const struct run_child_sink *sink,
                   const uint64_t *own_written, struct run_child_result *res)
{
    JOBOBJECT_BASIC_AND_IO_ACCOUNTING_INFORMATION acct;
    ULONGLONG stop = GetTickCount64() + DRAIN_MAX_MS;
    DWORD code = 1;

    (void)own_written; /* perflog is not in the job: its own I/O is not in the totals */
    /* The pipes reach their end as soon as no process holds them; one that a descendant still
     * holds stays quiet, and is not waited for. */
    for (;;) {
        HANDLE h[3];
        int who[3];
        DWORD n = wait_set(ch, 0, h, who), r;

        if (n == 0)
            break;
        r = WaitForMultipleObjects(n, h, FALSE, DRAIN_QUIET_MS);
        if (r >= WAIT_OBJECT_0 + n)
            break;
        stream_take(&ch->s[who[r - WAIT_OBJECT_0]], sink);
        if (GetTickCount64() >= stop)
            break;
    }
    for (int i = 0; i < 2; i++)
        if (ch->s[i].open)
            stream_stop(&ch->s[i]);
    restore_output(ch);
    SetConsoleCtrlHandler(ignore_interrupt, FALSE);
    *res = (struct run_child_result){0};
    if (GetExitCodeProcess(ch->process, &code))
        res->exit_code = (int)code;
    else
        res->exit_code = 1;
    if (!ch->job)
        return;
    /* Wine 8 fails this query (ERROR_INVALID_FUNCTION): the run then has no totals from here, not
     * zeros. TotalProcesses counts CMD at least; a job that says 0 keeps no accounts either. */
    if (!QueryInformationJobObject(ch->job, JobObjectBasicAndIoAccountingInformation, &acct,
                                   sizeof(acct), NULL)) {
        fprintf(stderr,
                "perflog run: the job object's I/O accounting is not available (error %lu): the "
                "run is ended without CMD's I/O totals\n",
                (unsigned long)GetLastError());
        return;
    }
    if (acct.BasicInfo.TotalProcesses > 0) {
        res->have_io = 1;
        res->io_read_bytes = acct.IoInfo.ReadTransferCount;
        res->io_write_bytes = acct.IoInfo.WriteTransferCount;
    }
}

void run_child_free(struct run_child *ch)
{
    if (!ch)
        return;
    /* Ends what is left of CMD's tree; a reader still stuck on a pipe such a process held then
     * sees its end. */
    close_handle(&ch->job);
    close_handle(&ch->process);
    for (int i = 0; i < 2; i++)
        if (stream_close(&ch->s[i], READER_STOP_MS) < 0)
            return; /* a reader still runs on ch: leave it to the process's exit */
    free(ch);
}
