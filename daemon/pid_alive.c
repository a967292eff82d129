/*
 * pid_alive.c - see pid_alive.h. POSIX asks with signal 0 (EPERM: it exists, it is another
 * user's); Windows opens the process for the least access there is (denied: it exists).
 */
#include "pid_alive.h"

#ifdef _WIN32
#include <windows.h>

int pid_alive(int pid)
{
    HANDLE h;
    DWORD code = 0;
    int alive;

    if (pid <= 0)
        return 0;
    h = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, (DWORD)pid);
    if (!h)
        return GetLastError() == ERROR_ACCESS_DENIED;
    alive = !GetExitCodeProcess(h, &code) || code == STILL_ACTIVE;
    CloseHandle(h);
    return alive;
}
#else
#include <errno.h>
#include <signal.h>

int pid_alive(int pid)
{
    if (pid <= 0)
        return 0;
    return kill((pid_t)pid, 0) == 0 || errno == EPERM;
}
#endif
