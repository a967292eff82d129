/*
 * cli_os_windows.c - cli_os.h with the C runtime's signal() (it maps Ctrl+C to SIGINT), a
 * temporary file standing in for open_memstream, the console mode and FindFirstFile.
 */
#include "cli_os.h"
#include "win_error.h"

#include <io.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>

void cli_catch_interrupt(void (*fn)(int sig))
{
    signal(SIGINT, fn);
    signal(SIGTERM, fn);
}

FILE *cli_memfile_open(struct cli_memfile *m)
{
    m->buf = NULL;
    m->len = 0;
    m->f = tmpfile();
    return m->f;
}

char *cli_memfile_close(struct cli_memfile *m)
{
    long size;
    char *buf = NULL;

    if (fflush(m->f) != 0 || ferror(m->f) || (size = ftell(m->f)) < 0 ||
        fseek(m->f, 0, SEEK_SET) != 0 || !(buf = malloc((size_t)size + 1)) ||
        fread(buf, 1, (size_t)size, m->f) != (size_t)size) {
        free(buf);
        fclose(m->f);
        return NULL;
    }
    buf[size] = '\0';
    m->len = (size_t)size;
    fclose(m->f); /* tmpfile() deletes it on close */
    return buf;
}

int cli_stderr_redraws(void)
{
    HANDLE h = GetStdHandle(STD_ERROR_HANDLE);
    DWORD mode;

    /* A console (not a file or pipe, nor NUL, which _isatty calls a terminal) whose host knows
     * the VT sequences: SetConsoleMode refuses the flag before Windows 10. */
    if (!_isatty(2) || !GetConsoleMode(h, &mode))
        return 0;
    return (mode & ENABLE_VIRTUAL_TERMINAL_PROCESSING) ||
           SetConsoleMode(h, mode | ENABLE_VIRTUAL_TERMINAL_PROCESSING);
}

static uint64_t size_of(DWORD high, DWORD low)
{
    return (uint64_t)high << 32 | low;
}

/* Add the files under dir (no trailing separator) to *bytes and *files; -1 with err on a failure
 * to list dir itself. Subdirectories that are reparse points (links, junctions) are not entered,
 * as nftw's FTW_PHYS does not follow symbolic links. */
static int walk(const char *dir, int64_t *bytes, int64_t *files, char *err, size_t cap)
{
    size_t len = strlen(dir);
    char *pattern = malloc(len + 3);
    WIN32_FIND_DATAA fd;
    HANDLE h;
    int rc = 0;

    if (!pattern) {
        snprintf(err, cap, "out of memory");
        return -1;
    }
    memcpy(pattern, dir, len);
    memcpy(pattern + len, "\\*", 3);
    h = FindFirstFileA(pattern, &fd);
    free(pattern);
    if (h == INVALID_HANDLE_VALUE) {
        cli_win_error(GetLastError(), err, cap);
        return -1;
    }
    do {
        char *sub;

        if (!strcmp(fd.cFileName, ".") || !strcmp(fd.cFileName, ".."))
            continue;
        if (fd.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT)
            continue;
        if (!(fd.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY)) {
            *bytes += (int64_t)size_of(fd.nFileSizeHigh, fd.nFileSizeLow);
            (*files)++;
            continue;
        }
        sub = malloc(len + strlen(fd.cFileName) + 2);
        if (!sub) {
            snprintf(err, cap, "out of memory");
            rc = -1;
            break;
        }
        sprintf(sub, "%s\\%s", dir, fd.cFileName);
        /* An unreadable subdirectory is left out, as nftw goes on past one. */
        walk(sub, bytes, files, err, cap);
        free(sub);
    } while (FindNextFileA(h, &fd));
    FindClose(h);
    return rc;
}

int cli_path_size(const char *path, int64_t *bytes, int64_t *files, char *err, size_t cap)
{
    WIN32_FILE_ATTRIBUTE_DATA a;
    int64_t b = 0, f = 0;
    char *dir;
    size_t len;

    if (!GetFileAttributesExA(path, GetFileExInfoStandard, &a)) {
        cli_win_error(GetLastError(), err, cap);
        return -1;
    }
    if (!(a.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY)) {
        *bytes = (int64_t)size_of(a.nFileSizeHigh, a.nFileSizeLow);
        return 0;
    }
    dir = strdup(path);
    if (!dir) {
        snprintf(err, cap, "out of memory");
        return -1;
    }
    len = strlen(dir);
    while (len > 1 && (dir[len - 1] == '\\' || dir[len - 1] == '/') && dir[len - 2] != ':')
        dir[--len] = '\0';
    if (walk(dir, &b, &f, err, cap) < 0) {
        free(dir);
        return -1;
    }
    free(dir);
    *bytes = b;
    *files = f;
    return 0;
}

int cli_db_reason(const char *path, char *buf, size_t cap)
{
    DWORD attr = GetFileAttributesA(path), e = GetLastError();

    if (attr == INVALID_FILE_ATTRIBUTES) {
        if (e == ERROR_PATH_NOT_FOUND)
            snprintf(buf, cap, "no such directory");
        else if (e == ERROR_FILE_NOT_FOUND)
            snprintf(buf, cap, "no such file");
        else if (e == ERROR_ACCESS_DENIED)
            snprintf(buf, cap, "permission denied");
        else
            return 0;
        return 1;
    }
    if (attr & FILE_ATTRIBUTE_DIRECTORY) {
        snprintf(buf, cap, "is a directory");
        return 1;
    }
    return 0;
}

int cli_cold_check(char *err, size_t cap)
{
    /* The standby list can be purged on Windows only through an undocumented call
     * (NtSetSystemInformation); perflog does not use it. */
    snprintf(err, cap, "--cold empties the Linux page cache; perflog on Windows cannot");
    return -1;
}

int cli_cold_drop(char *err, size_t cap)
{
    return cli_cold_check(err, cap);
}
