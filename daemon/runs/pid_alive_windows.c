/*
 * pid_alive_windows.c - pid_alive.h on Windows: open the process for the least access there is
 * (denied: it exists, it is another user's), then ask whether it is still active.
 */
#include "daemon/runs/pid_alive.h"

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
