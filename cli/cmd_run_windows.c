/*
 * cmd_run_windows.c - perflog run on Windows: not supported yet. The POSIX version (cmd_run.c)
 * runs the command with fork/exec and follows it with a pidfd; on Windows that needs
 * CreateProcess in a job object (so the whole process tree is followed and its I/O counted), and
 * the daemon needs the Process object from PDH. Until then this says so, instead of pretending.
 */
#include "cli.h"

#include <stdio.h>
#include <string.h>

int cmd_run(const struct cli *c, int argc, char **argv)
{
    (void)c;
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        printf("usage: perflog run [OPTIONS] -- CMD [ARGS...]\n\n"
               "Not supported on Windows yet: start and end a run through the API instead\n"
               "(POST /api/v1/runs, then POST /api/v1/runs/ID/end; docs/api.md).\n");
        return CLI_EXIT_OK;
    }
    fprintf(stderr,
            "perflog run: not supported on Windows yet; start and end a run through the "
            "API instead (POST /api/v1/runs, then POST /api/v1/runs/ID/end; docs/api.md)\n");
    return CLI_EXIT_USAGE;
}
