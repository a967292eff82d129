/*
 * run_cmdline_windows.c - run_child_command_text of run_child.h on Windows: CMD's words as the
 * command line CreateProcessW gets, in UTF-8.
 *
 * The words come from the wide command line (GetCommandLineW), not from main's argv, which the C
 * runtime has converted to the ANSI code page (a name outside it would come out as '?'); they are
 * joined with run_win_quote (run_util.c), whose quoting CommandLineToArgvW and the C runtime undo.
 */
#include "cli/run.h"
#include "cli/run_child.h"

#include <stdlib.h>
#include <string.h>
#include <windows.h>
/* shellapi.h needs windows.h first */
#include <shellapi.h>

/* w as malloc'd UTF-8, and s (in code page cp) as a malloc'd wide string; NULL on failure. */
static char *to_utf8(const wchar_t *w)
{
    int n = WideCharToMultiByte(CP_UTF8, 0, w, -1, NULL, 0, NULL, NULL);
    char *s = n > 0 ? malloc((size_t)n) : NULL;

    if (s && WideCharToMultiByte(CP_UTF8, 0, w, -1, s, n, NULL, NULL) != n) {
        free(s);
        s = NULL;
    }
    return s;
}

static wchar_t *from_mb(UINT cp, const char *s)
{
    int n = MultiByteToWideChar(cp, 0, s, -1, NULL, 0);
    wchar_t *w = n > 0 ? malloc((size_t)n * sizeof(wchar_t)) : NULL;

    if (w && MultiByteToWideChar(cp, 0, s, -1, w, n) != n) {
        free(w);
        w = NULL;
    }
    return w;
}

/* Whether the C runtime's ANSI word `narrow` is the wide word `wide` (converted as the runtime
 * converts the command line, best fit included). */
static int same_word(const wchar_t *wide, const char *narrow)
{
    int n = WideCharToMultiByte(CP_ACP, 0, wide, -1, NULL, 0, NULL, NULL);
    char *s = n > 0 ? malloc((size_t)n) : NULL;
    int same = s && WideCharToMultiByte(CP_ACP, 0, wide, -1, s, n, NULL, NULL) == n &&
               strcmp(s, narrow) == 0;

    free(s);
    return same;
}

static void free_words(char **w, int n)
{
    for (int i = 0; w && i < n; i++)
        free(w[i]);
    free(w);
}

/*
 * CMD's words in UTF-8. They are the last argc words of the process's command line: each is taken
 * from CommandLineToArgvW when it matches the C runtime's word there (the two split alike but in
 * odd cases), else converted from the ANSI code page. NULL when out of memory.
 */
static char **utf8_words(int argc, char **argv)
{
    int wargc = 0, base;
    wchar_t **wargv = CommandLineToArgvW(GetCommandLineW(), &wargc);
    char **words = calloc((size_t)argc + 1, sizeof(char *));

    base = wargv ? wargc - argc : -1;
    for (int i = 0; words && i < argc; i++) {
        if (base >= 1 && same_word(wargv[base + i], argv[i])) {
            words[i] = to_utf8(wargv[base + i]);
        } else {
            wchar_t *w = from_mb(CP_ACP, argv[i]);

            words[i] = w ? to_utf8(w) : NULL;
            free(w);
        }
        if (!words[i]) {
            free_words(words, i);
            words = NULL;
        }
    }
    if (wargv)
        LocalFree(wargv);
    return words;
}

char *run_child_command_text(int argc, char **argv)
{
    char **words = utf8_words(argc, argv), *line = NULL;

    if (words && run_win_quote(argc, words, &line) < 0)
        line = NULL;
    free_words(words, argc);
    return line;
}
