/*
 * service_windows.c - perflogd as a Windows service: installation in the service control manager
 * (SCM), the service's main function and control handler, and logging to the Event Log.
 *
 * The SCM starts "perflogd.exe --service OPTIONS...". main hands its thread to the dispatcher
 * (StartServiceCtrlDispatcher), which calls service_main on a new thread; service_main runs the
 * ordinary daemon there. READY=1 from the daemon (notify_windows.c) reports SERVICE_RUNNING. A
 * stop or shutdown control posts the same stop request Ctrl+C does, so the daemon flushes and
 * returns, and service_main reports SERVICE_STOPPED with its exit code. References: "Service
 * Programs", "Writing a ServiceMain Function", "SERVICE_FAILURE_ACTIONS" (learn.microsoft.com).
 */
#include "daemon/service_windows.h"

#include "base/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>
#include <windows.h>

#define CMDLINE_MAX    8192
#define STOP_WAIT_HINT 15000 /* ms the SCM waits after STOP_PENDING: the 5 s flush, and margin */
#define EVENTLOG_KEY   L"SYSTEM\\CurrentControlSet\\Services\\EventLog\\Application\\perflogd"
#define EVENT_ID       1 /* the one message of perflogd_msg.mc: "%1" */

/* Written by service_dispatch before the dispatcher starts the service thread, then read only. */
static int (*service_run)(int argc, char **argv);
static int service_argc;
static char **service_argv;
static volatile LONG active;
static SERVICE_STATUS_HANDLE status_handle;
static HANDLE event_source;
static CRITICAL_SECTION status_lock; /* guards current, the status last reported */
static SERVICE_STATUS current;

int service_active(void)
{
    return active != 0;
}

static void report(DWORD state, DWORD exit_code, DWORD wait_hint)
{
    if (!status_handle)
        return;
    EnterCriticalSection(&status_lock);
    if (current.dwCurrentState != SERVICE_STOPPED) {
        current.dwServiceType = SERVICE_WIN32_OWN_PROCESS;
        current.dwCurrentState = state;
        current.dwControlsAccepted =
            state == SERVICE_RUNNING
                ? SERVICE_ACCEPT_STOP | SERVICE_ACCEPT_SHUTDOWN | SERVICE_ACCEPT_PARAMCHANGE
                : 0;
        current.dwWin32ExitCode = exit_code ? ERROR_SERVICE_SPECIFIC_ERROR : NO_ERROR;
        current.dwServiceSpecificExitCode = exit_code;
        current.dwCheckPoint =
            state == SERVICE_RUNNING || state == SERVICE_STOPPED ? 0 : current.dwCheckPoint + 1;
        current.dwWaitHint = wait_hint;
        SetServiceStatus(status_handle, &current);
    }
    LeaveCriticalSection(&status_lock);
}

void service_report_running(void)
{
    report(SERVICE_RUNNING, 0, 0);
}

void service_report_stopping(void)
{
    report(SERVICE_STOP_PENDING, 0, STOP_WAIT_HINT);
}

/* The log sink of a service: one Event Log entry per line. */
static void eventlog_sink(enum log_level lvl, const char *msg)
{
    WCHAR wide[1024];
    const WCHAR *strings[1] = {wide};
    WORD type = lvl == LOG_LVL_ERROR  ? EVENTLOG_ERROR_TYPE
                : lvl == LOG_LVL_WARN ? EVENTLOG_WARNING_TYPE
                                      : EVENTLOG_INFORMATION_TYPE;

    if (!MultiByteToWideChar(CP_UTF8, 0, msg, -1, wide, (int)(sizeof(wide) / sizeof(wide[0]))))
        wcscpy(wide, L"(a message that is not valid UTF-8)");
    ReportEventW(event_source, type, 0, EVENT_ID, NULL, 1, 0, strings, NULL);
}

static DWORD WINAPI on_control(DWORD control, DWORD type, void *data, void *ctx)
{
    (void)type;
    (void)data;
    (void)ctx;
    switch (control) {
    case SERVICE_CONTROL_STOP:
    case SERVICE_CONTROL_SHUTDOWN:
        service_report_stopping();
        platform_request_post(PLATFORM_STOP,
                              control == SERVICE_CONTROL_STOP ? "service stop" : "system shutdown");
        return NO_ERROR;
    case SERVICE_CONTROL_PARAMCHANGE:
        platform_request_post(PLATFORM_RELOAD, "service parameters changed");
        return NO_ERROR;
    case SERVICE_CONTROL_INTERROGATE:
        return NO_ERROR;
    default:
        return ERROR_CALL_NOT_IMPLEMENTED;
    }
}

static void WINAPI service_main(DWORD argc, LPWSTR *argv)
{
    int rc;

    (void)argc;
    (void)argv; /* the options are those of the service's command line (service_argv) */
    status_handle = RegisterServiceCtrlHandlerExW(SERVICE_NAME_W, on_control, NULL);
    if (!status_handle)
        return;
    report(SERVICE_START_PENDING, 0, 30000);
    rc = service_run(service_argc, service_argv);
    report(SERVICE_STOPPED, (DWORD)rc, 0);
}

int service_dispatch(int argc, char **argv, int (*run)(int argc, char **argv))
{
    SERVICE_TABLE_ENTRYW table[] = {{(LPWSTR)SERVICE_NAME_W, service_main}, {NULL, NULL}};

    service_run = run;
    service_argc = argc;
    service_argv = argv;
    InitializeCriticalSection(&status_lock);
    active = 1;
    event_source = RegisterEventSourceW(NULL, SERVICE_NAME_W);
    if (event_source)
        log_set_sink(eventlog_sink);
    if (!StartServiceCtrlDispatcherW(table)) {
        DWORD e = GetLastError();
        log_set_sink(NULL);
        if (e == ERROR_FAILED_SERVICE_CONTROLLER_CONNECT)
            fprintf(stderr, "perflogd: --service is for the service control manager; run "
                            "perflogd without it in a console\n");
        else
            fprintf(stderr, "perflogd: cannot start the service dispatcher (error %lu)\n",
                    (unsigned long)e);
        return 1;
    }
    return (int)current.dwServiceSpecificExitCode;
}

/* Append " \"arg\"" to cmd, with the quoting rules of CommandLineToArgvW: backslashes before a
 * quote are doubled, the quote escaped. Returns 0, or -1 when it does not fit. */
static int append_arg(WCHAR *cmd, size_t cap, const WCHAR *arg)
{
    size_t len = wcslen(cmd);

    if (len + 3 >= cap)
        return -1;
    cmd[len++] = L' ';
    cmd[len++] = L'"';
    for (const WCHAR *p = arg;; p++) {
        size_t slashes = 0;
        while (*p == L'\\') {
            slashes++;
            p++;
        }
        size_t times = *p == L'"' || *p == L'\0' ? 2 * slashes : slashes;
        if (len + times + 3 >= cap)
            return -1;
        for (size_t i = 0; i < times; i++)
            cmd[len++] = L'\\';
        if (*p == L'\0')
            break;
        if (*p == L'"')
            cmd[len++] = L'\\';
        cmd[len++] = *p;
    }
    cmd[len++] = L'"';
    cmd[len] = L'\0';
    return 0;
}

static int append_arg_mb(WCHAR *cmd, size_t cap, const char *arg)
{
    WCHAR wide[4096];

    if (!MultiByteToWideChar(CP_ACP, 0, arg, -1, wide, (int)(sizeof(wide) / sizeof(wide[0]))))
        return -1;
    return append_arg(cmd, cap, wide);
}

/* The service's command line: "EXE" --service ARGS [--db %ProgramData%\perflog\perflog.db]. A
 * service starts in System32, so the checkout default ./perflog.db would land there. */
static int build_cmdline(int argc, char **argv, WCHAR *cmd, size_t cap, WCHAR *exe, size_t exe_cap)
{
    WCHAR dir[MAX_PATH], db[MAX_PATH + 32];
    int has_db = 0;

    if (!GetModuleFileNameW(NULL, exe, (DWORD)exe_cap))
        return -1;
    cmd[0] = L'\0';
    if (append_arg(cmd, cap, exe) < 0)
        return -1;
    memmove(cmd, cmd + 1, (wcslen(cmd) + 1) * sizeof(WCHAR)); /* no leading space */
    wcsncat(cmd, L" --service", cap - wcslen(cmd) - 1);
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--db") == 0 || strncmp(argv[i], "--db=", 5) == 0)
            has_db = 1;
        if (append_arg_mb(cmd, cap, argv[i]) < 0)
            return -1;
    }
    if (has_db)
        return 0;
    if (!ExpandEnvironmentStringsW(L"%ProgramData%\\perflog", dir, MAX_PATH))
        return -1;
    CreateDirectoryW(dir, NULL);
    swprintf(db, sizeof(db) / sizeof(db[0]), L"%ls\\perflog.db", dir);
    if (append_arg(cmd, cap, L"--db") < 0 || append_arg(cmd, cap, db) < 0)
        return -1;
    return 0;
}

/* The Event Log source, so the Event Viewer shows the messages (from perflogd_msg.mc in the exe).
 */
static void register_event_source(const WCHAR *exe)
{
    HKEY key;
    DWORD types = EVENTLOG_ERROR_TYPE | EVENTLOG_WARNING_TYPE | EVENTLOG_INFORMATION_TYPE;

    if (RegCreateKeyExW(HKEY_LOCAL_MACHINE, EVENTLOG_KEY, 0, NULL, 0, KEY_SET_VALUE, NULL, &key,
                        NULL) != ERROR_SUCCESS) {
        fprintf(stderr, "perflogd: cannot register the Event Log source; messages will show "
                        "without their text in the Event Viewer\n");
        return;
    }
    RegSetValueExW(key, L"EventMessageFile", 0, REG_SZ, (const BYTE *)exe,
                   (DWORD)((wcslen(exe) + 1) * sizeof(WCHAR)));
    RegSetValueExW(key, L"TypesSupported", 0, REG_DWORD, (const BYTE *)&types, sizeof(types));
    RegCloseKey(key);
}

/* Delayed automatic start (after the boot rush), and restart on failure: 5 s, 5 s, then 60 s,
 * counting afresh after a day without failure; the flag makes a non-zero exit count as a failure
 * too, not only a crash. */
static void configure_recovery(SC_HANDLE svc)
{
    SERVICE_DELAYED_AUTO_START_INFO delayed = {TRUE};
    SC_ACTION actions[3] = {
        {SC_ACTION_RESTART, 5000}, {SC_ACTION_RESTART, 5000}, {SC_ACTION_RESTART, 60000}};
    SERVICE_FAILURE_ACTIONSW failure = {86400, NULL, NULL, 3, actions};
    SERVICE_FAILURE_ACTIONS_FLAG flag = {TRUE};
    SERVICE_DESCRIPTIONW desc = {
        (LPWSTR)L"Samples disk, network, CPU and memory counters into an SQLite database and "
                L"serves them over HTTP (perflog)."};

    if (!ChangeServiceConfig2W(svc, SERVICE_CONFIG_DELAYED_AUTO_START_INFO, &delayed))
        fprintf(stderr, "perflogd: warning: cannot set delayed automatic start (error %lu)\n",
                (unsigned long)GetLastError());
    if (!ChangeServiceConfig2W(svc, SERVICE_CONFIG_FAILURE_ACTIONS, &failure) ||
        !ChangeServiceConfig2W(svc, SERVICE_CONFIG_FAILURE_ACTIONS_FLAG, &flag))
        fprintf(stderr, "perflogd: warning: cannot set restart on failure (error %lu)\n",
                (unsigned long)GetLastError());
    ChangeServiceConfig2W(svc, SERVICE_CONFIG_DESCRIPTION, &desc);
}

int service_install(int argc, char **argv)
{
    static WCHAR cmd[CMDLINE_MAX];
    WCHAR exe[MAX_PATH];
    SC_HANDLE scm, svc;

    if (build_cmdline(argc, argv, cmd, CMDLINE_MAX, exe, MAX_PATH) < 0) {
        fprintf(stderr, "perflogd: the service's command line is too long\n");
        return 2;
    }
    scm = OpenSCManagerW(NULL, NULL, SC_MANAGER_CREATE_SERVICE);
    if (!scm) {
        fprintf(stderr, "perflogd: cannot open the service control manager (error %lu)%s\n",
                (unsigned long)GetLastError(),
                GetLastError() == ERROR_ACCESS_DENIED ? ": run as Administrator" : "");
        return 1;
    }
    svc = CreateServiceW(scm, SERVICE_NAME_W, SERVICE_DISPLAY_W, SERVICE_ALL_ACCESS,
                         SERVICE_WIN32_OWN_PROCESS, SERVICE_AUTO_START, SERVICE_ERROR_NORMAL, cmd,
                         NULL, NULL, NULL, NULL, NULL);
    if (!svc) {
        DWORD e = GetLastError();
        fprintf(stderr, "perflogd: cannot create the service (error %lu)%s\n", (unsigned long)e,
                e == ERROR_SERVICE_EXISTS ? ": it exists; --uninstall-service first" : "");
        CloseServiceHandle(scm);
        return 1;
    }
    configure_recovery(svc);
    register_event_source(exe);
    CloseServiceHandle(svc);
    CloseServiceHandle(scm);
    printf("perflogd: service installed: %ls\n", cmd);
    return 0;
}

/* Ask a running service to stop and wait for it, up to 30 s. */
static void stop_and_wait(SC_HANDLE svc)
{
    SERVICE_STATUS st;

    if (!ControlService(svc, SERVICE_CONTROL_STOP, &st))
        return; /* not running */
    for (int i = 0; i < 300 && st.dwCurrentState != SERVICE_STOPPED; i++) {
        Sleep(100);
        if (!QueryServiceStatus(svc, &st))
            break;
    }
}

int service_uninstall(void)
{
    SC_HANDLE scm = OpenSCManagerW(NULL, NULL, SC_MANAGER_CONNECT), svc;
    int rc = 0;

    if (!scm) {
        fprintf(stderr, "perflogd: cannot open the service control manager (error %lu)\n",
                (unsigned long)GetLastError());
        return 1;
    }
    svc = OpenServiceW(scm, SERVICE_NAME_W, SERVICE_STOP | SERVICE_QUERY_STATUS | DELETE);
    if (!svc) {
        fprintf(stderr, "perflogd: cannot open the service (error %lu)%s\n",
                (unsigned long)GetLastError(),
                GetLastError() == ERROR_SERVICE_DOES_NOT_EXIST ? ": it is not installed" : "");
        CloseServiceHandle(scm);
        return 1;
    }
    stop_and_wait(svc);
    if (!DeleteService(svc)) {
        fprintf(stderr, "perflogd: cannot delete the service (error %lu)\n",
                (unsigned long)GetLastError());
        rc = 1;
    } else {
        RegDeleteKeyW(HKEY_LOCAL_MACHINE, EVENTLOG_KEY);
        printf("perflogd: service removed\n");
    }
    CloseServiceHandle(svc);
    CloseServiceHandle(scm);
    return rc;
}
