/*
 * pid_alive_posix.c - pid_alive.h on POSIX: ask with signal 0 (EPERM: it exists, it is another
 * user's).
 */
#include "daemon/runs/pid_alive.h"

#include <errno.h>
#include <signal.h>

int pid_alive(int pid)
{
    if (pid <= 0)
        return 0;
    return kill((pid_t)pid, 0) == 0 || errno == EPERM;
}
