/*
 * win_error.h - a Windows error code as text for the client's messages (win_error_windows.c;
 * Windows builds only).
 */
#ifndef PERFLOG_CLI_WIN_ERROR_H
#define PERFLOG_CLI_WIN_ERROR_H

#include <stddef.h>

/* The system's message for error e (GetLastError()), without its trailing period and line
 * break, in buf (cap bytes); "Windows error N" when there is none. */
void cli_win_error(unsigned long e, char *buf, size_t cap);

#endif
